import Foundation
import Testing
import Haul
import HaulModel
import HaulCore
import HaulTestSupport

/// A `DownloadModel` that mirrors a download something else runs (`init(observing:)`), driven
/// by a scripted source: no server, no files.
@MainActor
@Suite("DownloadModel observing a source", .timeLimit(.minutes(1)))
struct DownloadModelSourceTests {
    @Test func theModelFollowsTheSnapshotsAndCallsTheSourcesControls() async throws {
        let source = ScriptedSource()
        let model = DownloadModel(observing: source)
        #expect(model.state == .idle)
        #expect(model.request.url == source.request.url)

        model.start()
        source.send(.init(state: .running, completedBytes: 250, totalBytes: 1000, bytesPerSecond: 50))
        #expect(await eventually { model.completedBytes == 250 })
        #expect(model.state == .running)
        #expect(model.progress == 0.25)
        #expect(model.bytesPerSecond == 50)

        model.pause()
        #expect(source.calls == ["pause"])
        source.send(.init(state: .paused, completedBytes: 300, totalBytes: 1000))
        #expect(await eventually { model.state == .paused })
        model.resume()
        model.cancel()
        #expect(source.calls == ["pause", "resume", "cancel"])

        let file = URL(fileURLWithPath: "/tmp/done.bin")
        source.send(.init(state: .finished, completedBytes: 1000, totalBytes: 1000, fileURL: file))
        #expect(await eventually { model.state == .finished })
        #expect(model.fileURL == file)
        #expect(model.progress == 1)
    }

    @Test func aFailureShowsItsError() async throws {
        let source = ScriptedSource()
        let model = DownloadModel(observing: source)
        model.start()
        source.send(.init(state: .failed, error: DownloadError(.httpStatus, "the server answered 404", httpStatus: 404)))
        #expect(await eventually { model.state == .failed })
        #expect(model.error?.httpStatus == 404)
    }
}

/// A source whose snapshots the test sends, and which records the controls called.
private final class ScriptedSource: DownloadModelSource {
    let request = DownloadRequest(url: URL(string: "http://127.0.0.1:1/file.bin")!)
    let destination = Destination.directory(URL(fileURLWithPath: "/tmp"))
    private let stream: AsyncStream<DownloadModel.Snapshot>
    private let continuation: AsyncStream<DownloadModel.Snapshot>.Continuation
    private let recorded = SharedStateLock<[String]>([])

    init() {
        (stream, continuation) = AsyncStream.makeStream()
        continuation.yield(.init(state: .queued))
    }

    var calls: [String] { recorded.withLock { $0 } }
    func send(_ snapshot: DownloadModel.Snapshot) { continuation.yield(snapshot) }
    func snapshots() -> AsyncStream<DownloadModel.Snapshot> { stream }
    func pause() { recorded.withLock { $0.append("pause") } }
    func resume() { recorded.withLock { $0.append("resume") } }
    func cancel() { recorded.withLock { $0.append("cancel") } }
}
