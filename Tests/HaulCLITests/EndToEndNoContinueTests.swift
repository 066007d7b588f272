import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// `--no-continue`: a partial download with a valid record is discarded and the file is fetched
/// again from byte 0, where a plain rerun would resume it.
///
/// Exclusive: a download paced at 400 kB/s is interrupted mid-way.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(1)))
struct EndToEndNoContinueTests {
    static let size: Int64 = 4_000_000

    @Test func noContinueStartsOverWhereARerunWouldResume() async throws {
        let server = try HaulServer()
        server.setResource("/again.bin", HaulServer.Resource(size: Self.size, seed: 31, etag: "\"a1\"", rate: 400_000))
        try await withTemporaryDirectory { (dir) async throws in
            let address = server.url("/again.bin")
            let first = try HaulProcess(["-q", "-x", "1", "-d", dir.path, address], in: dir)
            let flowing = await eventually { server.bodyBytesSent >= 500_000 && listFiles(dir).contains("again.bin.resume") }
            #expect(flowing, "the first haul does not progress: \(first.standardErrorSoFar)")
            first.interrupt()
            let interrupted = try await first.finish(timeout: .seconds(20))
            #expect(interrupted.status == 130, "\(interrupted.standardError)")
            let partial = try #require(fileContents(dir.appendingPathComponent("again.bin.part")))
            try #require(partial.count >= 500_000, "the partial holds \(partial.count) bytes")

            // The first run's connection may still be sending for a moment after the exit.
            #expect(await eventually { server.openConnectionCount == 0 }, "the server still serves the first run")
            server.setResource("/again.bin", HaulServer.Resource(size: Self.size, seed: 31, etag: "\"a1\"", rate: 0))
            let requestsBefore = server.requests.count
            let bytesBefore = server.bodyBytesSent
            let rerun = try await haul(["--json", "--no-continue", "-x", "1", "-d", dir.path, address], in: dir)

            #expect(rerun.status == 0, "\(rerun.standardError)")
            let started = rerun.jsonEvents().first { $0["event"] as? String == "started" }
            #expect(jsonInteger(started?["resumedFrom"]) == 0, "\(rerun.standardOutput)")
            let asked = server.requests.dropFirst(requestsBefore)
            #expect(asked.count == 1, "\(asked.map(\.target))")
            let range = asked.first?.header("Range")
            #expect(range == nil || range == "bytes=0-", "the rerun asked for \(range ?? "no range")")
            #expect(asked.first?.header("If-Range") == nil, "a fresh start has nothing to match")
            #expect(server.bodyBytesSent - bytesBefore == Self.size, "the whole file is fetched again")
            #expect(listFiles(dir) == ["again.bin"])
            #expect(fileContents(dir.appendingPathComponent("again.bin")) == Data(HaulServer.content(seed: 31).bytes(0..<Self.size)))
        }
    }
}
