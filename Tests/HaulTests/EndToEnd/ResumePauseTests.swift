import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul

/// `pause()` closes the connections and keeps the partial file and its record; `resume()`
/// continues from the record, asking only for what is missing.
///
/// Exclusive: paced downloads are paused mid-way.
@Suite("Pause and resume in process", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct ResumePauseTests {
    static let size: Int64 = 6_000_000

    @Test(arguments: [1, 3])
    func pauseStopsTheBytesAndResumeContinuesFromTheRecord(connections: Int) async throws {
        let server = try HaulServer()
        let resource = Validators.etag.resource(size: Self.size, rate: 600_000)
        server.setResource("/file.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let download = resumeDownloader(connections: connections).download(url(server, "/file.bin"), to: .directory(dir))
            let log = EventLog()
            let running = Task { await collect(download) { log.append($0) } }

            #expect(await eventually { server.bodyBytesSent >= 300_000 })
            download.pause()
            #expect(await eventually { log.contains { if case .paused = $0 { true } else { false } } }, "no .paused event")
            #expect(await waitForIdle(server), "the connections stay open while paused")
            let sentWhenPaused = server.bodyBytesSent
            let eventsWhenPaused = log.all.count
            let requestsWhenPaused = server.requests.count
            try await Task.sleep(for: .milliseconds(800))
            #expect(server.bodyBytesSent == sentWhenPaused, "bytes arrive while paused")
            #expect(server.requests.count == requestsWhenPaused)
            #expect(log.all.count == eventsWhenPaused, "events while paused: \(log.all.dropFirst(eventsWhenPaused))")
            #expect(listFiles(dir) == ["file.bin.part", "file.bin.resume"])
            let record = try #require(loadResumeRecord("file.bin", in: dir))
            #expect(record.completed.byteCount > 0)
            try expectRecordClaimsOnlyWrittenBytes(record, name: "file.bin", in: dir, resource: resource)

            server.setResource("/file.bin", Validators.etag.resource(size: Self.size, rate: 24_000_000))
            download.resume()
            let outcome = await running.value

            #expect(outcome.error == nil, "\(outcome.error?.description ?? "")")
            let names = outcome.names
            let paused = try #require(names.firstIndex(of: "paused"))
            #expect(names[paused...].prefix(2) == ["paused", "resumed"], "\(names)")
            #expect(names.filter { $0 == "started" }.count == 2, "\(names)")
            #expect(names.last == "finished")
            let restarted = outcome.events.compactMap { if case .started(let start) = $0 { start } else { nil } }.last
            #expect(restarted?.resumedFrom == record.completed.byteCount)
            let afterResume = requests(of: server, after: requestsWhenPaused)
            #expect(afterResume.first?.header("Range") == "bytes=\(firstMissingByte(record))-")
            #expect(afterResume.allSatisfy { $0.header("If-Range") == "\"v1\"" })
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == resource.bytes(0..<Self.size))
            #expect(server.bodyBytesSent < Self.size * 11 / 10, "sent \(server.bodyBytesSent) for \(Self.size)")
        }
    }

    @Test func cancellingAPausedDownloadEndsItAndKeepsThePartial() async throws {
        let server = try HaulServer()
        server.setResource("/file.bin", Validators.etag.resource(size: Self.size, rate: 1_000_000))
        try await withTemporaryDirectory { (dir) async throws in
            let download = resumeDownloader().download(url(server, "/file.bin"), to: .directory(dir))
            let log = EventLog()
            let running = Task { await collect(download) { log.append($0) } }
            #expect(await eventually { server.bodyBytesSent >= 300_000 })
            download.pause()
            #expect(await eventually { log.contains { if case .paused = $0 { true } else { false } } })
            download.cancel()
            let outcome = await running.value
            #expect(outcome.error?.code == .cancelled)
            #expect(!outcome.names.contains("resumed"))
            #expect(listFiles(dir) == ["file.bin.part", "file.bin.resume"])
        }
    }

    /// `pause()` then `resume()` at once, while the first attempt is under way: the attempt
    /// ends with its (cancelled) run signal, but the job finds the download no longer paused and
    /// throws `cancelled` (DownloadJob.run: `if signal.isCancelled { throw ... }`).
    @Test
    func pauseThenResumeAtOnceStillFinishes() async throws {
        let server = try HaulServer()
        let resource = Validators.etag.resource(size: 2_000_000, rate: 1_000_000)
        server.setResource("/file.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let download = resumeDownloader(connections: 2).download(url(server, "/file.bin"), to: .directory(dir))
            var toggled = false
            let outcome = await collect(download) { event in
                if case .started = event, !toggled {
                    toggled = true
                    download.pause()
                    download.resume()
                }
            }
            #expect(outcome.error == nil, "\(outcome.error?.description ?? "")")
            #expect(try contents(dir.appendingPathComponent("file.bin")) == resource.bytes(0..<resource.size))
        }
    }
}
