import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// `haul --mirror`, `--max-sources` and tab-separated servers in `-i` lists, run as the real
/// binary against loopback servers standing in for mirrors.
/// Serialized: each test runs the binary against several servers.
@Suite(.throttled, .serialized, .timeLimit(.minutes(1)))
struct MirrorCLITests {
    static let size = 3 << 20
    static let path = "/bytes/\(size)/m.bin?seed=3"

    @Test func mirrorsGiveTheFileTogetherAndABadOneIsSetAsideWithAWarning() async throws {
        let (first, second, missing) = (try HaulServer(), try HaulServer(), try HaulServer())
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["-x", "2", "-d", dir.path, "--mirror", second.url(Self.path), "--mirror", missing.url(Self.path + "&status=404"),
                                            first.url(Self.path)], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(fileContents(dir.appendingPathComponent("m.bin")) == served(Self.size, seed: 3))
            #expect(first.bodyBytesSent > 0 && second.bodyBytesSent > 0, "both servers gave part of the file")
            #expect(outcome.errorLines.contains { $0.contains("warning") && $0.contains("source 3") && $0.contains("404") },
                    "\(outcome.errorLines)")
        }
    }

    @Test func mirrorNeedsASingleURLAndMaxSourcesItsRange() async throws {
        try await withTemporaryDirectory { dir in
            let two = try await haul(["--mirror", "http://127.0.0.1:1/a", "http://127.0.0.1:1/a", "http://127.0.0.1:1/b"], in: dir)
            #expect(two.status == 2)
            #expect(two.standardError.contains("--mirror can only be used with a single URL"))
            let zero = try await haul(["--max-sources=0", "http://127.0.0.1:1/a"], in: dir)
            #expect(zero.status == 2)
            let bad = try await haul(["--mirror", "ftp://127.0.0.1/a", "http://127.0.0.1:1/a"], in: dir)
            #expect(bad.status == 2, "a mirror is checked like any URL before any connection")
        }
    }

    @Test func tabSeparatedURLsInAListAreServersOfOneFile() async throws {
        let (first, second) = (try HaulServer(), try HaulServer())
        try await withTemporaryDirectory { dir in
            let list = dir.appendingPathComponent("list.txt")
            try "  \(first.url(Self.path))\t\(second.url(Self.path))  \n".write(to: list, atomically: true, encoding: .utf8)
            let outcome = try await haul(["-x", "2", "-d", dir.appendingPathComponent("out").path, "-i", list.path], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(listFiles(dir.appendingPathComponent("out")) == ["m.bin"], "one file, not two")
            #expect(first.bodyBytesSent > 0 && second.bodyBytesSent > 0)
            let asked = second.requests.count
            let alone = try await haul(["--max-sources=1", "-d", dir.appendingPathComponent("alone").path, "-i", list.path], in: dir)
            #expect(alone.status == 0)
            #expect(second.requests.count == asked, "--max-sources=1 asks the first URL alone")
        }
    }
}
