import Foundation
import HaulServer
import HaulTestSupport
import Observation
import Testing
import Haul
import HaulModel
import HaulCore

/// `DownloadModel` seen the way SwiftUI sees it: through `withObservationTracking`, against the
/// loopback server.
///
/// Exclusive: paced downloads are observed, paused and cancelled while they run.
@MainActor
@Suite("DownloadModel observed", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct DownloadModelTests {
    static let size: Int64 = 3_000_000

    @Test func observersSeeProgressGrowThenTheFinishedFile() async throws {
        let server = try HaulServer()
        // 2 MB/s over the four connections: 1.5 s, some fifteen progress ticks to observe even
        // when a busy machine runs a few of them late.
        server.setResource("/model.bin", .init(size: Self.size, etag: "\"m1\"", rate: 500_000))
        try await inTemporaryFolder { dir in
            let model = DownloadModel(url: url(server, "/model.bin"), to: .directory(dir), downloader: testDownloader())
            #expect(model.state == .idle)
            let recorder = ObservationRecorder(model)

            model.start()
            #expect(model.state == .queued)
            #expect(await model.changes(until: { $0.state.isOver }))

            #expect(model.state == .finished, "\(model.error?.description ?? "")")
            #expect(model.error == nil)
            #expect(model.progress == 1)
            #expect(model.completedBytes == Self.size)
            #expect(model.totalBytes == Self.size)
            #expect(model.bytesPerSecond == 0)
            let file = try #require(model.fileURL)
            #expect(file.lastPathComponent == "model.bin")
            #expect(try contents(file) == expectedContent(Int(Self.size)))
            #expect(listFiles(dir) == ["model.bin"])

            let progress = recorder.progressValues
            #expect(progress.contains { $0 > 0 && $0 < 1 }, "no intermediate progress was observed: \(progress)")
            #expect(progress == progress.sorted(), "progress went backwards: \(progress)")
            #expect(recorder.states.contains(.running), "\(recorder.states)")
            #expect(await settles { recorder.states.last == .finished }, "\(recorder.states)")
            #expect(recorder.sawSpeed, "bytesPerSecond never rose above 0")
        }
    }

    @Test func pauseStopsTheTransferAndResumeFinishesIt() async throws {
        let server = try HaulServer()
        server.setResource("/paused.bin", .init(size: Self.size, etag: "\"p1\"", rate: 1_000_000))
        try await inTemporaryFolder { dir in
            let model = DownloadModel(url: url(server, "/paused.bin"), to: .directory(dir), downloader: testDownloader())
            model.start()
            #expect(await model.changes(until: { $0.completedBytes >= 300_000 }))

            model.pause()
            #expect(await model.changes(until: { $0.state == .paused }))
            #expect(model.bytesPerSecond == 0)
            #expect(listFiles(dir) == ["paused.bin.part", "paused.bin.resume"])
            let atPause = model.completedBytes
            #expect(atPause > 0 && atPause < Self.size)

            model.resume()
            #expect(await model.changes(until: { $0.state.isOver }))
            #expect(model.state == .finished, "\(model.error?.description ?? "")")
            let file = try #require(model.fileURL)
            #expect(try contents(file) == expectedContent(Int(Self.size)))
            #expect(server.bodyBytesSent < Self.size * 11 / 10, "the resume fetched the file again")
        }
    }

    @Test func cancelKeepsThePartialAndStartContinuesIt() async throws {
        let server = try HaulServer()
        server.setResource("/cancel.bin", .init(size: Self.size, etag: "\"c1\"", rate: 1_000_000))
        try await inTemporaryFolder { dir in
            let model = DownloadModel(url: url(server, "/cancel.bin"), to: .directory(dir), downloader: testDownloader())
            model.start()
            #expect(await model.changes(until: { $0.completedBytes >= 300_000 }))

            model.cancel()
            #expect(model.state == .cancelled)
            #expect(model.error == nil)
            #expect(model.fileURL == nil)
            #expect(await settles { listFiles(dir) == ["cancel.bin.part", "cancel.bin.resume"] }, "\(listFiles(dir))")

            let requestsBefore = server.requests.count
            server.setResource("/cancel.bin", .init(size: Self.size, etag: "\"c1\"", rate: 0))
            model.start()
            #expect(await model.changes(until: { $0.state.isOver }))
            #expect(model.state == .finished, "\(model.error?.description ?? "")")
            let file = try #require(model.fileURL)
            #expect(try contents(file) == expectedContent(Int(Self.size)))
            let again = server.requests.dropFirst(requestsBefore).compactMap { $0.header("Range") }
            #expect(!again.isEmpty && !again.contains("bytes=0-"), "the second start did not resume: \(again)")
        }
    }

    @Test func startAndCancelInQuickSuccessionEndInOneVerifiedFile() async throws {
        let server = try HaulServer()
        server.setResource("/quick.bin", .init(size: Self.size, etag: "\"q1\"", rate: 1_000_000))
        try await inTemporaryFolder { dir in
            let model = DownloadModel(url: url(server, "/quick.bin"), to: .directory(dir), downloader: testDownloader())
            model.start()
            #expect(await model.changes(until: { $0.completedBytes > 0 }))
            for _ in 0..<3 {   // each start waits for the cancelled run to let go of the partial file
                model.cancel()
                #expect(model.state == .cancelled)
                model.start()
                #expect(model.state == .queued)
            }
            server.setResource("/quick.bin", .init(size: Self.size, etag: "\"q1\"", rate: 0))
            #expect(await model.changes(until: { $0.state.isOver }))
            #expect(model.state == .finished, "\(model.error?.description ?? "")")
            let file = try #require(model.fileURL)
            #expect(try contents(file) == expectedContent(Int(Self.size)))
            #expect(listFiles(dir) == ["quick.bin"])
        }
    }

    @Test func aMissingFileFailsWithTheStatusAndWritesNothing() async throws {
        let server = try HaulServer()
        try await inTemporaryFolder { dir in
            let model = DownloadModel(url: url(server, "/nothing-here.bin"), to: .directory(dir), downloader: testDownloader())
            model.start()
            #expect(await model.changes(until: { $0.state.isOver }))
            #expect(model.state == .failed)
            #expect(model.error?.code == .httpStatus)
            #expect(model.error?.httpStatus == 404)
            #expect(model.fileURL == nil)
            #expect(listFiles(dir).isEmpty)

            model.pause()   // ignored once over
            model.cancel()
            #expect(model.state == .failed)
        }
    }

    @Test func aModelWaitingInTheQueueCanBePausedAndResumed() async throws {
        let server = try HaulServer()
        server.setResource("/first.bin", .init(size: Self.size, etag: "\"f1\"", rate: 3_000_000))
        server.setResource("/second.bin", .init(size: 1_000_000, etag: "\"s1\""))
        try await inTemporaryFolder { dir in
            let downloader = testDownloader { $0.maximumActiveDownloads = 1 }
            let first = DownloadModel(url: url(server, "/first.bin"), to: .directory(dir), downloader: downloader)
            let second = DownloadModel(url: url(server, "/second.bin"), to: .directory(dir), downloader: downloader)
            first.start()   // each start calls the downloader from a task of its own: one at a time
            #expect(await first.changes(until: { $0.state == .running }))
            second.start()
            #expect(second.state == .queued)

            second.pause()   // still waiting for the first to end
            #expect(await second.changes(until: { $0.state == .paused }), "\(second.state)")
            #expect(await first.changes(until: { $0.state.isOver }))
            #expect(first.state == .finished)
            #expect(second.state == .paused)
            #expect(!server.requests.contains { $0.path == "/second.bin" }, "a paused download sent a request")

            second.resume()
            #expect(await second.changes(until: { $0.state.isOver }))
            #expect(second.state == .finished, "\(second.error?.description ?? "")")
            let file = try #require(second.fileURL)
            #expect(try contents(file) == expectedContent(1_000_000))
        }
    }

    @Test func controlsDoNothingBeforeStart() async throws {
        let server = try HaulServer()
        try await inTemporaryFolder { dir in
            let model = DownloadModel(url: url(server, "/bytes/10/x.bin"), to: .directory(dir), downloader: testDownloader())
            model.pause()
            model.resume()
            model.cancel()
            #expect(model.state == .idle)
            #expect(server.requests.isEmpty)
        }
    }
}

extension DownloadModel {
    /// Waits, observing the model the way SwiftUI does, until `condition` holds.
    ///
    /// - Returns: `false` when it still does not hold after `timeout` (checked at each change,
    ///   and at the deadline when nothing changes any more).
    fileprivate func changes(timeout: Duration = .seconds(30), until condition: @escaping @MainActor (DownloadModel) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            var timer: Task<Void, Never>?
            let holds = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let once = OnceContinuation(continuation)
                timer = Task {
                    try? await Task.sleep(until: deadline)
                    once.resume(returning: false)
                }
                let holds = withObservationTracking {
                    condition(self)
                } onChange: {
                    once.resume(returning: false)
                }
                if holds { once.resume(returning: true) }
            }
            timer?.cancel()
            if holds { return true }
            if ContinuousClock.now > deadline { return false }
        }
    }
}

/// A continuation resumed by whichever comes first; later calls are ignored.
private final class OnceContinuation: Sendable {
    private let continuation: SharedStateLock<CheckedContinuation<Bool, Never>?>

    init(_ continuation: CheckedContinuation<Bool, Never>) {
        self.continuation = SharedStateLock(continuation)
    }

    func resume(returning value: Bool) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}

/// Runs `body` on the main actor with a fresh folder, removed afterwards.
@MainActor
private func inTemporaryFolder(_ body: @MainActor (URL) async throws -> Void) async throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("haul-model-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    try await body(dir)
}

/// Checks `condition` on the main actor every 10 ms until it holds or `timeout` passes.
@MainActor
private func settles(timeout: Duration = .seconds(5), _ condition: @MainActor () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// Records every value of `state`, `progress` and `bytesPerSecond` observers are told about.
@MainActor
private final class ObservationRecorder {
    private(set) var states: [DownloadModel.State] = []
    private(set) var progressValues: [Double] = []
    private(set) var sawSpeed = false
    private let model: DownloadModel

    init(_ model: DownloadModel) {
        self.model = model
        track()
    }

    private func track() {
        withObservationTracking {
            record()
        } onChange: { [weak self] in
            // onChange runs before the new value is stored: read it on the next turn.
            Task { @MainActor in self?.track() }
        }
    }

    private func record() {
        if states.last != model.state { states.append(model.state) }
        if progressValues.last != model.progress { progressValues.append(model.progress) }
        if model.bytesPerSecond > 0 { sawSpeed = true }
    }
}
