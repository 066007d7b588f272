import Foundation
import HaulServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `kill -9` in the middle of many small downloads (whose files are committed in batches on Linux)
/// never leaves a file under its final name that is not the whole, right file; the same command
/// run again (default `--on-conflict=rename`) recognises the files finished before a kill
/// instead of writing `fN.1.bin` beside them, and ends with every file in place, once.
///
/// Exclusive: it kills `haul` at random moments of downloads paced at 200 kB/s.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(2)))
struct EndToEndKillManyTests {
    static let count = 40
    static let size: Int64 = 100_000

    @Test func sigkillDuringManySmallDownloadsNeverLeavesAWrongFileUnderItsName() async throws {
        let server = try HaulServer()
        // 200 kB/s per connection: a file takes about half a second, 8 at once, 2.5 s for all.
        for index in 0..<Self.count {
            server.setResource("/m/f\(index).bin", .init(size: Self.size, seed: UInt64(100 + index), etag: "\"m\(index)\"",
                                                         rate: 200_000))
        }
        try await withTemporaryDirectory { (dir) async throws in
            let list = dir.appendingPathComponent("list.txt")
            try (0..<Self.count).map { server.url("/m/f\($0).bin") }.joined(separator: "\n")
                .write(to: list, atomically: true, encoding: .utf8)
            let out = dir.appendingPathComponent("out", isDirectory: true)
            let arguments = ["-q", "-j", "8", "-i", list.path, "-d", out.path]
            var random = SplitMix64(seed: 0xB47C_2026)
            var killedWithFinishedFiles = false, killedWithPartialFiles = false, killed = 0
            for round in 0..<4 {
                let process = try KillableProcess(arguments, in: dir)
                try await Task.sleep(for: .milliseconds(Int(150 + 450 * random.nextUnitDouble())))
                if await process.sigkill() == 128 + SIGKILL { killed += 1 }
                killedWithPartialFiles = killedWithPartialFiles || listFiles(out).contains { $0.hasSuffix(".part") }
                for name in listFiles(out) where !name.hasSuffix(".part") && !name.hasSuffix(".resume") && !name.hasSuffix(".rtmp") {
                    let index = try #require(Int(name.dropFirst().dropLast(4)), "round \(round): unexpected file \(name)")
                    killedWithFinishedFiles = true
                    #expect(fileContents(out.appendingPathComponent(name)) == Self.expected(index),
                            "round \(round): \(name) is under its final name without being the whole file")
                }
            }

            // The kills fell mid-run: after some files were named and while others were written.
            #expect(killed >= 2 && killedWithFinishedFiles && killedWithPartialFiles, "\(killed) kills")

            let final = try await haul(arguments, in: dir, timeout: .seconds(60))
            #expect(final.status == 0, "\(final.standardError)")
            let names = (0..<Self.count).map { "f\($0).bin" }
            #expect(listFiles(out) == names.sorted())
            for index in 0..<Self.count {
                #expect(fileContents(out.appendingPathComponent("f\(index).bin")) == Self.expected(index))
            }
        }
    }

    static func expected(_ index: Int) -> Data {
        Data(HaulServer.content(seed: UInt64(100 + index)).bytes(0..<size))
    }
}
