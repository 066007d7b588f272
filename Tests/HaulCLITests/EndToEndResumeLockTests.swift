import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// A second `haul` process aimed at the file another one is downloading exits 11 with one
/// clear line and touches nothing; the first goes on, and its rerun resumes byte-identical.
///
/// Exclusive: a download paced at 500 kB/s is held running while a second process starts.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(1)))
struct EndToEndResumeLockTests {
    static let size: Int64 = 20_000_000

    @Test(arguments: [false, true])
    func aSecondProcessOnTheSameFileExits11AndTouchesNothing(exactFile: Bool) async throws {
        let server = try HaulServer()
        // 4 connections at 500 kB/s: about ten seconds, a wide window for the second process.
        server.setResource("/locked.bin", HaulServer.Resource(size: Self.size, seed: 12, etag: "\"l1\"", rate: 500_000))
        try await withTemporaryDirectory { (dir) async throws in
            let destination = exactFile ? ["-o", dir.appendingPathComponent("locked.bin").path] : ["-d", dir.path]
            let address = server.url("/locked.bin")
            let first = try HaulProcess(["-q", "-x", "4"] + destination + [address], in: dir)
            let flowing = await eventually { server.bodyBytesSent >= 300_000 && listFiles(dir).contains("locked.bin.resume") }
            #expect(flowing, "the first haul does not progress: \(first.standardErrorSoFar)")
            let filesBefore = Self.files(in: dir)

            let secondURL = server.url("/locked.bin?second=1")
            let second = try await haul(["--json"] + destination + [secondURL], in: dir, timeout: .seconds(20))

            #expect(second.status == 11, "\(second.standardError)")
            #expect(second.errorLines.count == 1, "\(second.standardError)")
            #expect(second.errorLines.first?.hasPrefix("haul: \(secondURL): ") == true, "\(second.standardError)")
            #expect(second.standardError.contains("locked.bin"))
            let failed = second.jsonEvents().last
            #expect(failed?["event"] as? String == "failed")
            #expect(jsonInteger(failed?["exitCode"]) == 11)
            #expect((failed?["error"] as? [String: Any])?["code"] as? String == "locked")
            #expect(!server.requests.contains { $0.target.contains("second=1") }, "the second haul sent a request")
            #expect(Self.files(in: dir) == filesBefore)
            #expect(first.isRunning, "the first haul stopped: \(first.standardErrorSoFar)")

            // The first is unharmed: interrupt it, rerun it against a fast server, compare.
            first.interrupt()
            let interrupted = try await first.finish(timeout: .seconds(20))
            #expect(interrupted.status == 130, "\(interrupted.standardError)")
            server.setResource("/locked.bin", HaulServer.Resource(size: Self.size, seed: 12, etag: "\"l1\"", rate: 0))
            let rerun = try await haul(["--json"] + destination + [address], in: dir)
            #expect(rerun.status == 0, "\(rerun.standardError)")
            let started = rerun.jsonEvents().first
            #expect((jsonInteger(started?["resumedFrom"]) ?? 0) > 0, "\(rerun.standardOutput)")
            #expect(listFiles(dir) == ["locked.bin"])
            #expect(fileContents(dir.appendingPathComponent("locked.bin")) == Data(HaulServer.content(seed: 12).bytes(0..<Self.size)))
        }
    }

    /// The files in `dir`, without the record's temporary file (`NAME.rtmp` exists for an
    /// instant each time the running download writes its record).
    static func files(in dir: URL) -> [String] {
        listFiles(dir).filter { !$0.hasSuffix(".rtmp") }
    }
}
