import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// Ctrl-C (SIGINT) sent to the real `haul` binary in the middle of a download, and the resume
/// that rerunning the same command performs.
///
/// Exclusive: Ctrl-C lands in the middle of downloads paced by the server.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(1)))
struct EndToEndSignalTests {
    /// The size of `path`, or 0 when it does not exist.
    static func size(_ url: URL) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Starts `arguments`, waits until `partial` exists and the server sent at least `bytes` body
    /// bytes, sends SIGINT.
    static func interrupt(_ arguments: [String], in dir: URL, partial: URL, server: HaulServer,
                          after bytes: Int64 = 1) async throws -> HaulBinary.Outcome {
        let process = try HaulProcess(arguments, in: dir)
        let downloading = await eventually { server.bodyBytesSent >= bytes && size(partial) > 0 }
        #expect(downloading, "no bytes arrived in \(partial.lastPathComponent): \(process.standardErrorSoFar)")
        #expect(process.isRunning, "haul ended before Ctrl-C: \(process.standardErrorSoFar)")
        process.interrupt()
        return try await process.finish(timeout: .seconds(20))
    }

    @Test(arguments: [false, true])
    func ctrlCExits130AndKeepsThePartial(json: Bool) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let url = server.url("/bytes/50000000/big.bin?rate=2000000")
            let partial = dir.appendingPathComponent("big.bin.part")
            let outcome = try await Self.interrupt((json ? ["--json"] : []) + ["-d", dir.path, url], in: dir,
                                                   partial: partial, server: server)
            #expect(outcome.status == 130)
            #expect(outcome.errorLines.last == "haul: \(url): interrupted; the partial file is kept", "\(outcome.standardError)")
            #expect(outcome.errorLines.filter { $0.hasPrefix("haul: ") }.count == 1)
            #expect(!outcome.standardError.contains("\u{1B}"))
            let files = listFiles(dir)
            #expect(files.contains("big.bin.part"))
            #expect(!files.contains("big.bin"))
            #expect(files.allSatisfy { $0.hasPrefix("big.bin.") }, "\(files)")
            #expect(Self.size(partial) > 0)
            if json {
                let events = outcome.jsonEvents()
                #expect(events.count == outcome.outputLines.count)
                #expect(eventNames(events).first == "started")
                let failed = try #require(events.last)
                #expect(failed["event"] as? String == "failed")
                #expect(jsonInteger(failed["exitCode"]) == 130)
                #expect((failed["error"] as? [String: Any])?["code"] as? String == "cancelled")
                #expect(failed["partial"] as? String == partial.path)
            } else {
                #expect(outcome.standardOutput.isEmpty)
            }
        }
    }

    /// Interrupts a `--json` download of `size` bytes once some of it arrived, then reruns the
    /// same command to its end.
    ///
    /// The file is a resource paced at 100 kB/s per connection for the interrupted run (7.5 s
    /// for 3 MB even with four connections, while Ctrl-C comes after 200 kB), and unpaced for
    /// the rerun: same URL, same validators.
    ///
    /// - Returns: the rerun and the requests the server received during it.
    static func interruptAndRerun(size: Int, server: HaulServer, in dir: URL) async throws
        -> (outcome: HaulBinary.Outcome, requests: [RecordedRequest]) {
        let slow = HaulServer.Resource(size: Int64(size), etag: "\"r1\"", rate: 100_000)
        server.setResource("/resume.bin", slow)
        let url = server.url("/resume.bin")
        let arguments = ["--json", "-d", dir.path, url]
        let interrupted = try await interrupt(arguments, in: dir, partial: dir.appendingPathComponent("resume.bin.part"),
                                              server: server, after: 200_000)
        #expect(interrupted.status == 130, "\(interrupted.standardError)")
        #expect(listFiles(dir).contains("resume.bin.part"))
        let requestsBefore = server.requests.count
        var fast = slow
        fast.rate = 0
        server.setResource("/resume.bin", fast)
        let rerun = try await haul(arguments, in: dir)
        return (rerun, Array(server.requests.dropFirst(requestsBefore)))
    }

    @Test func rerunningAfterCtrlCFinishesByteIdentical() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let size = 3_000_000
            let (rerun, _) = try await Self.interruptAndRerun(size: size, server: server, in: dir)
            #expect(rerun.status == 0, "\(rerun.standardError)")
            #expect(rerun.standardError.isEmpty)
            #expect(eventNames(rerun.jsonEvents()).last == "finished")
            #expect(listFiles(dir) == ["resume.bin"])
            #expect(fileContents(dir.appendingPathComponent("resume.bin")) == served(size))
        }
    }

    @Test func rerunningAfterCtrlCResumesFromThePartial() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let size = 6_000_000
            let (rerun, requests) = try await Self.interruptAndRerun(size: size, server: server, in: dir)
            #expect(rerun.status == 0, "\(rerun.standardError)")
            let started = try #require(rerun.jsonEvents().first)
            #expect(started["event"] as? String == "started")
            let resumedFrom = try #require(jsonInteger(started["resumedFrom"]))
            #expect(resumedFrom > 0 && resumedFrom < Int64(size))
            #expect(listFiles(dir) == ["resume.bin"])
            #expect(fileContents(dir.appendingPathComponent("resume.bin")) == served(size))
            #expect(!requests.isEmpty && requests.allSatisfy { $0.header("Range") != nil }, "the rerun asks only for missing bytes")
        }
    }
}
