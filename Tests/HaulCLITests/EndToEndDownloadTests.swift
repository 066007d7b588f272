import Foundation
@testable import HaulCLI
import HaulServer
import HaulTestSupport
import Testing

/// The real `haul` binary downloading from a `HaulServer`: bytes, names, `-o`, several URLs.
///
/// Exclusive: one download is paced at 200 kB/s so that it prints its progress lines.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(1)))
struct EndToEndDownloadTests {
    @Test(arguments: [0, 1, 300_001, 2 * 1024 * 1024 + 7])
    func directoryDownloadIsByteIdentical(size: Int) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let dir = root.appendingPathComponent("out")
            let outcome = try await haul(["-d", dir.path, server.url("/bytes/\(size)/data.bin")], in: root)
            #expect(outcome.status == 0)
            #expect(outcome.standardOutput.isEmpty)
            #expect(listFiles(dir) == ["data.bin"])
            #expect(listFiles(root) == ["out"])
            #expect(fileContents(dir.appendingPathComponent("data.bin")) == served(size))
            // stderr is a file, not a TTY: plain lines, no escape codes.
            #expect(!outcome.standardError.contains("\u{1B}"))
            #expect(!outcome.standardError.contains("\r"))
            let lines = outcome.errorLines
            #expect(lines.first == "data.bin: started (\(HumanFormat.bytes(Int64(size))))")
            #expect(lines.last?.hasPrefix("data.bin: done, \(HumanFormat.bytes(Int64(size))) in ") == true, "\(lines)")
            #expect(lines.allSatisfy { $0.hasPrefix("data.bin: ") }, "\(lines)")
        }
    }

    /// Plain progress lines come every 5 seconds, so this download is paced to last about 6.
    @Test func progressLinesArePlainWhenStandardErrorIsNotATerminal() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let size = 1_200_000
            let outcome = try await haul(["-d", dir.path, server.url("/bytes/\(size)/slow.bin?rate=200000")], in: dir)
            #expect(outcome.status == 0)
            #expect(!outcome.standardError.contains("\u{1B}") && !outcome.standardError.contains("\r"))
            let lines = outcome.errorLines
            #expect(lines.count >= 3, "\(lines)")
            #expect(lines.first == "slow.bin: started (\(HumanFormat.bytes(Int64(size))))")
            for line in lines.dropFirst().dropLast() {
                #expect(line.hasPrefix("slow.bin: ") && line.contains("% of \(HumanFormat.bytes(Int64(size))) (") && line.contains(", ETA "),
                        "\(line)")
            }
            #expect(lines.last?.hasPrefix("slow.bin: done, \(HumanFormat.bytes(Int64(size))) in ") == true, "\(lines)")
            #expect(fileContents(dir.appendingPathComponent("slow.bin")) == served(size))
        }
    }

    @Test func relativeDirectoryAndDefaultDirectoryAreTheWorkingDirectory() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let here = try await haul(["-q", server.url("/bytes/1000/here.bin")], in: root)
            #expect(here.status == 0 && here.standardError.isEmpty && here.standardOutput.isEmpty)
            let relative = try await haul(["-q", "-d", "sub/deeper", server.url("/bytes/10/rel.bin")], in: root)
            #expect(relative.status == 0 && relative.standardError.isEmpty)
            #expect(listFiles(root) == ["here.bin", "sub"])
            #expect(listFiles(root.appendingPathComponent("sub/deeper")) == ["rel.bin"])
            #expect(fileContents(root.appendingPathComponent("here.bin")) == served(1000))
        }
    }

    @Test func outputWritesTheFileAndReplacesAnExistingOneOnSuccess() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("chosen.dat")
            let first = try await haul(["-q", "-o", file.path, server.url("/bytes/70000/ignored.bin?seed=1")], in: dir)
            #expect(first.status == 0)
            #expect(first.standardError.isEmpty && first.standardOutput.isEmpty)
            #expect(listFiles(dir) == ["chosen.dat"])
            #expect(fileContents(file) == served(70000, seed: 1))

            let second = try await haul(["-q", "-o", "chosen.dat", server.url("/bytes/5000/other.bin?seed=2")], in: dir)
            #expect(second.status == 0)
            #expect(listFiles(dir) == ["chosen.dat"])
            #expect(fileContents(file) == served(5000, seed: 2))
        }
    }

    @Test func outputIsLeftUntouchedWhenTheDownloadFails() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("keep.txt")
            try Data("precious\n".utf8).write(to: file)
            let url = server.url("/status/404")
            let outcome = try await haul(["-o", file.path, url], in: dir)
            #expect(outcome.status == 8)
            #expect(outcome.standardOutput.isEmpty)
            #expect(outcome.errorLines == ["haul: \(url): the server answered 404 Not Found"])
            #expect(listFiles(dir) == ["keep.txt"])
            #expect(fileContents(file) == Data("precious\n".utf8))
        }
    }

    @Test func severalURLsAndA404ExitEight() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let missing = server.url("/status/404")
            let urls = [server.url("/bytes/1000/a.bin"), missing, server.url("/bytes/2000/c.bin?seed=3")]
            let outcome = try await haul(["-d", dir.path] + urls, in: dir)
            #expect(outcome.status == 8)
            #expect(outcome.standardOutput.isEmpty)
            #expect(listFiles(dir) == ["a.bin", "c.bin"])
            #expect(fileContents(dir.appendingPathComponent("a.bin")) == served(1000))
            #expect(fileContents(dir.appendingPathComponent("c.bin")) == served(2000, seed: 3))
            #expect(outcome.errorLines.filter { $0.hasPrefix("haul: ") } == ["haul: \(missing): the server answered 404 Not Found"])
            // Several downloads: plain event lines and a final total, no escape codes.
            #expect(!outcome.standardError.contains("\u{1B}") && !outcome.standardError.contains("\r"))
            #expect(outcome.errorLines.contains("a.bin: started (1000 B)"), "\(outcome.errorLines)")
            #expect(outcome.errorLines.contains { $0.hasPrefix("c.bin: done, 2.0 KiB in ") }, "\(outcome.errorLines)")
            #expect(outcome.errorLines.last?.hasPrefix("Total: 2/3 done, 1 failed, 2.9 KiB in ") == true, "\(outcome.errorLines)")
        }
    }

    @Test func anInputFileListsTheURLs() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let list = "# downloads\n\n  \(server.url("/bytes/10/one.bin"))  \n\t# skipped\n\(server.url("/bytes/20/two.bin?seed=4"))\n"
            try Data(list.utf8).write(to: root.appendingPathComponent("list.txt"))
            let outcome = try await haul(["--json", "-i", "list.txt", "-d", "dl", server.url("/bytes/30/zero.bin")], in: root)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(outcome.standardError.isEmpty)
            let dir = root.appendingPathComponent("dl")
            #expect(listFiles(dir) == ["one.bin", "two.bin", "zero.bin"])
            #expect(fileContents(dir.appendingPathComponent("two.bin")) == served(20, seed: 4))
            // Arguments first, then the list, in order: the ids say so (the downloads run at once).
            var names: [String: String] = [:]
            for event in outcome.jsonEvents() where event["event"] as? String == "finished" {
                names[event["id"] as? String ?? "?"] = (event["file"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent }
            }
            #expect(names == ["1": "zero.bin", "2": "one.bin", "3": "two.bin"])
            #expect(Set(server.requests.map(\.path)) == ["/bytes/30/zero.bin", "/bytes/10/one.bin", "/bytes/20/two.bin"])
        }
    }

    @Test func theLowestNonZeroStatusWins() async throws {
        let server = try HaulServer()
        let refusing = try RefusingPort()
        let untrusted = try HaulServer(configuration: .init(tls: TestCertificates.shared.selfSignedIdentity))
        try await withTemporaryDirectory { dir in
            let options = ["-d", dir.path, "--retries=0", "--connect-timeout=2", "--stall-timeout=2"]
            let withRefused = try await haul(options + [
                server.url("/status/404"), refusing.url("/r.bin"), server.url("/bytes/10/ok.bin"),
            ], in: dir)
            #expect(withRefused.status == 4, "\(withRefused.standardError)")
            #expect(listFiles(dir) == ["ok.bin"])

            let withTLS = try await haul(options + [
                server.url("/status/404"), untrusted.url("/bytes/10/t.bin"), server.url("/bytes/20/ok2.bin"),
            ], in: dir)
            #expect(withTLS.status == 5, "\(withTLS.standardError)")
            #expect(listFiles(dir) == ["ok.bin", "ok2.bin"])
            #expect(withTLS.errorLines.filter { $0.hasPrefix("haul: ") }.count == 2)
        }
    }

    @Test(arguments: ["http://127.0.0.1:99999/x.bin", "http://a b/", "ftp://127.0.0.1/f"])
    func aBadURLExitsTwoBeforeAnyRequest(bad: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["-d", dir.path, server.url("/bytes/10/first.bin"), bad], in: dir)
            #expect(outcome.status == 2)
            #expect(outcome.standardOutput.isEmpty)
            #expect(outcome.errorLines.count == 1)
            #expect(outcome.errorLines.first?.hasPrefix("haul: \(bad): ") == true, "\(outcome.standardError)")
            #expect(server.requests.isEmpty)
            #expect(listFiles(dir) == [])
        }
    }
}
