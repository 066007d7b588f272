import Foundation
import Haul
import HaulCore
import HaulHTTP
import HaulTestSupport
import Testing
@testable import HaulService

/// A transport that fails every request at once, before any byte: a server that is down, met
/// as fast as the engine can meet it.
final class RefusingTransport: AlternateTransport {
    func open(url: HTTPURL, userHeaders: [(name: String, value: String)], range: ByteRangeRequest?, ifRange: String?,
              configuration: Downloader.Configuration, cancellation: CancellationSignal,
              buffer: UnsafeMutableRawBufferPointer) throws(DownloadError) -> (any AlternateResponse, ResponseHead, HTTPURL) {
        throw DownloadError(.connectionRefused, "connection refused (test transport)")
    }
}

/// Downloads that fail as soon as they start, one after another: each failure starts the next
/// download, and no chain of them grows a stack.
///
/// Nothing here is timed, so the suite runs beside the exclusive ones (most of its minute is CPU
/// the paced suites leave idle).
/// Serialized: one service's threads at a time (100,000 downloads run through the engine's).
@Suite("Quick failures in a row", .throttled, .serialized, .timeLimit(.minutes(8)))
struct QuickFailureTests {
    static func configuration(_ dir: URL) -> DownloadService.Configuration {
        var configuration = serviceConfiguration(dir, active: 1, connections: 1)
        configuration.downloader.transport = Downloader.Transport(name: "refusing") { _ in RefusingTransport() }
        return configuration
    }

    @Test func aHundredThousandFailuresInARowUseAConstantStack() async throws {
        try await withTemporaryDirectory { (dir) async throws in
            // Given a service that runs one download at a time over a transport that refuses all
            let service = try DownloadService(configuration: Self.configuration(dir))
            defer { service.shutDown() }
            let deepest = SharedStateLock((failures: 0, frames: 0))
            service.addObserver { event in
                guard event.kind == .failed else { return }
                let sampled = deepest.withLock { state -> Bool in
                    state.failures += 1
                    return state.failures % 50 == 1
                }
                guard sampled else { return }
                let frames = Thread.callStackReturnAddresses.count
                deepest.withLock { $0.frames = max($0.frames, frames) }
            }
            // When 100,000 downloads are queued in one go (fewer under ThreadSanitizer, which
            // looks for races, not depth: Scripts/sanitize.sh sets HAUL_QUICK_FAILURES)
            let count = Int(ProcessInfo.processInfo.environment["HAUL_QUICK_FAILURES"] ?? "").map { max(2_000, $0) } ?? 100_000
            var last: UInt64?
            for index in 0..<count {
                last = try service.enqueueAdd(ServiceRequest(urls: ["http://127.0.0.1:9/f\(index).bin"])).ticket ?? last
            }
            try service.waitUntilDurable(last)
            // Then every one ends as a failure with its code, and no stack grew with the chain
            await eventually(timeout: .seconds(420)) { service.statistics.stopped == count }
            #expect(service.statistics.active == 0)
            #expect(service.statistics.waiting == 0)
            let results = service.stoppedDownloads { 0..<$0 }
            #expect(results.count == count)
            #expect(results.allSatisfy { $0.status == .error && $0.failure?.code == "connectionRefused" })
            let frames = deepest.withLock { $0.frames }
            #expect(frames > 0 && frames < 150, "deepest stack at a failure: \(frames) frames")
            #expect(service.state.withLock { $0.queue.entries.count } == 1_000, "memory holds the newest 1,000 results")
        }
    }

    @Test func resultsBeyondTheWindowAreListedReadAndForgottenFromTheStateFile() async throws {
        try await withTemporaryDirectory { (dir) async throws in
            var configuration = Self.configuration(dir)
            configuration.residentResults = 10
            var ids: [DownloadID] = []
            do {
                let service = try DownloadService(configuration: configuration)
                for index in 0..<40 { ids.append(try service.add(ServiceRequest(urls: ["http://127.0.0.1:9/\(index)"]))) }
                await eventually { service.statistics.stopped == 40 }
                #expect(service.stoppedDownloads { 0..<$0 }.map(\.id) == ids, "the results in the order they ended")
                service.shutDown()
            }
            // A new service on the same file holds ten in memory and reads the rest when asked.
            let service = try DownloadService(configuration: configuration)
            defer { service.shutDown() }
            #expect(service.state.withLock { $0.queue.entries.count } == 10)
            #expect(service.statistics.stopped == 40)
            let page = service.stoppedDownloads { _ in 25..<35 }
            #expect(page.map(\.id) == Array(ids[25..<35]))
            #expect(page.allSatisfy { $0.status == .error && $0.failure?.code == "connectionRefused" })
            #expect(service.download(ids[0])?.urls == ["http://127.0.0.1:9/0"])
            #expect(throws: ServiceError.self) { try service.pause(ids[0]) }
            try service.forgetResult(ids[0])
            #expect(service.download(ids[0]) == nil)
            #expect(service.statistics.stopped == 39)
            #expect(service.identifiers(withPrefix: ids[1].hex) == [ids[1]])
            try service.forgetResults()
            #expect(service.stoppedDownloads { 0..<$0 }.isEmpty)
        }
    }
}
