import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// `-i -`: the URL list read from standard input, comments and blank lines skipped, every URL
/// downloaded.
@Suite(.throttled, .timeLimit(.minutes(1)))
struct EndToEndStandardInputListTests {
    @Test func aListOnStandardInputIsDownloaded() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { (dir) async throws in
            let downloads = dir.appendingPathComponent("downloads")
            try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: false)
            let list = dir.appendingPathComponent("list.txt")
            let text = """
                # three files, one per line
                \(server.url("/bytes/100000/one.bin?seed=1"))

                \(server.url("/bytes/200000/two.bin?seed=2"))
                   \(server.url("/bytes/300000/three.bin?seed=3"))
                """
            try Data(text.utf8).write(to: list)

            let outcome = try await HaulProcess(["-q", "-j", "2", "-i", "-", "-d", downloads.path], in: dir,
                                                standardInput: list).finish()

            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(listFiles(downloads) == ["one.bin", "three.bin", "two.bin"])
            #expect(fileContents(downloads.appendingPathComponent("one.bin")) == served(100_000, seed: 1))
            #expect(fileContents(downloads.appendingPathComponent("two.bin")) == served(200_000, seed: 2))
            #expect(fileContents(downloads.appendingPathComponent("three.bin")) == served(300_000, seed: 3))
            #expect(server.requests.filter { $0.path.hasPrefix("/bytes/") }.count == 3)
        }
    }
}
