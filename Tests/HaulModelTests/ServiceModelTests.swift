import Foundation
import Haul
import HaulModel
import HaulServer
import HaulTestSupport
import Testing
@testable import HaulService

/// How a `DownloadModel` shows a service's download: each status as a model state, with no
/// service, file or socket.
@Suite struct ServiceSnapshotMappingTests {
    /// A download of the service with `status`, 100 bytes long.
    static func download(_ status: ServiceDownload.Status, completed: Int64 = 0, speed: Double = 0,
                         failure: ServiceFailure? = nil) -> ServiceDownload {
        ServiceDownload(id: DownloadID(rawValue: 1)!, urls: ["http://127.0.0.1:1/f"], options: .init(), status: status,
                        directoryPath: "/r", filePath: "/r/f", totalBytes: 100, completedBytes: completed, completedRanges: [],
                        bytesPerSecond: speed, connections: 0, failure: failure)
    }

    @Test(arguments: [
        (ServiceDownload.Status.waiting, DownloadModel.State.queued), (.paused, .paused), (.complete, .finished),
        (.error, .failed), (.removed, .cancelled),
    ])
    func aStatusIsShownAsAModelState(status: ServiceDownload.Status, state: DownloadModel.State) {
        #expect(DownloadModel.Snapshot(Self.download(status)).state == state)
    }

    @Test func anActiveDownloadIsQueuedUntilItsFirstByte() {
        #expect(DownloadModel.Snapshot(Self.download(.active)).state == .queued)
        #expect(DownloadModel.Snapshot(Self.download(.active, completed: 10)).state == .running)
        #expect(DownloadModel.Snapshot(Self.download(.active, speed: 5)).state == .running)
    }

    @Test func onlyACompleteDownloadHasAFileAndAFailedOneHasItsMessage() {
        #expect(DownloadModel.Snapshot(Self.download(.complete, completed: 100)).fileURL?.path == "/r/f")
        #expect(DownloadModel.Snapshot(Self.download(.active, completed: 10)).fileURL == nil)
        let failure = ServiceFailure(code: "httpError", exitStatus: 22, httpStatus: 404, message: "404 Not Found")
        let failed = DownloadModel.Snapshot(Self.download(.error, failure: failure))
        #expect(failed.error?.message == "404 Not Found")
        #expect(failed.error?.httpStatus == 404)
    }
}

/// A `DownloadModel` mirroring a download a `DownloadService` runs, against the loopback server.
/// Exclusive: a paced download is mirrored while it runs.
@Suite("DownloadModel over the service", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct ServiceModelTests {
    @Test func aDownloadModelMirrorsAServiceDownload() async throws {
        let server = try HaulServer()
        let resource = HaulServer.Resource(size: 1_000_000, seed: 8, etag: "\"d1\"", rate: 2_000_000)
        server.setResource("/model.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let service = try DownloadService(configuration: Self.configuration(dir))
            defer { service.shutDown() }
            let id = try service.add(ServiceRequest(urls: [server.url("/model.bin")]))
            let source = try service.modelSource(for: id)
            let (state, bytes, name) = await Self.mirror(source)
            #expect(state == .finished)
            #expect(bytes == resource.size)
            #expect(name == "model.bin")
        }
    }

    @Test func aModelOfADownloadForgottenSinceEndsCancelled() async throws {
        try await withTemporaryDirectory { (dir) async throws in
            // Given a model of a paused download
            let service = try DownloadService(configuration: Self.configuration(dir))
            defer { service.shutDown() }
            let id = try service.add(ServiceRequest(urls: ["http://127.0.0.1:1/gone.bin"], paused: true))
            let source = try service.modelSource(for: id)
            // When the download is removed and its result forgotten before the model starts
            try service.remove(id)
            try service.forgetResult(id)
            // Then the model ends cancelled
            let (state, _, _) = await Self.mirror(source)
            #expect(state == .cancelled)
        }
    }

    /// A service with its root and state file in `dir`, short timeouts and no retries.
    static func configuration(_ dir: URL) -> DownloadService.Configuration {
        var engine = Downloader.Configuration()
        engine.connectTimeout = .seconds(5)
        engine.headerTimeout = .seconds(5)
        engine.stallTimeout = .seconds(5)
        engine.retry = RetryPolicy(maximumRetries: 0)
        engine.proxy = .none
        return DownloadService.Configuration(root: dir.appendingPathComponent("downloads"),
                                             stateFile: dir.appendingPathComponent("state.db"), downloader: engine)
    }

    /// Runs a model over `source` until it is over; its final state, bytes and file name.
    ///
    /// The model lives on the main actor, which the first seconds of a full `swift test` keep
    /// busy (12 s seen on an idle 2-core machine, more under load): the wait is long for that.
    @MainActor
    static func mirror(_ source: some DownloadModelSource) async -> (DownloadModel.State, Int64, String?) {
        let model = DownloadModel(observing: source)
        model.start()
        let deadline = ContinuousClock.now + .seconds(45)
        while !model.state.isOver && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return (model.state, model.completedBytes, model.fileURL?.lastPathComponent)
    }
}
