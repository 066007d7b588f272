import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// Issue 4, "Naming", with the real `haul` binary: every file lands in `root/inside` under its
/// sanitised name, and nothing else appears anywhere.
@Suite(.throttled, .timeLimit(.minutes(1)))
struct HostileNamingCLITests {
    /// Runs `haul --json -d root/inside URL` and checks the run saved exactly one file of `size`
    /// served bytes; returns its name.
    static func save(_ url: String, in root: URL, size: Int = 64, extra: [String] = [],
                     sourceLocation: SourceLocation = #_sourceLocation) async throws -> String? {
        let dir = root.appendingPathComponent("inside")
        let outcome = try await haul(extra + ["--json", "-d", dir.path, url], in: root, sourceLocation: sourceLocation)
        #expect(outcome.status == 0, "\(outcome.standardError)", sourceLocation: sourceLocation)
        #expect(outcome.standardError.isEmpty, sourceLocation: sourceLocation)
        let finished = outcome.jsonEvents(sourceLocation: sourceLocation).last
        #expect(finished?["event"] as? String == "finished", sourceLocation: sourceLocation)
        let file = try #require(finished?["file"] as? String, sourceLocation: sourceLocation)
        let name = URL(fileURLWithPath: file).lastPathComponent
        #expect(file == dir.appendingPathComponent(name).path, sourceLocation: sourceLocation)
        #expect(listFiles(root) == ["inside"], sourceLocation: sourceLocation)
        #expect(listFiles(dir) == [name], sourceLocation: sourceLocation)
        #expect(fileContents(dir.appendingPathComponent(name)) == served(size), sourceLocation: sourceLocation)
        return name
    }

    @Test(arguments: [
        ("attachment; filename=\"../../x\"", "x"),
        ("attachment; filename=\"/abs/x\"", "x"),
        (#"attachment; filename="..\\..\\x""#, "x"),
        ("attachment; filename=\".\"", "cd.bin"),
        ("attachment; filename=\"..\"", "cd.bin"),
        ("attachment; filename*=UTF-8''a%00b%1B.txt", "ab.txt"),
        ("attachment; filename=\"esc\u{1B}.txt\"", "cd.bin"),
        ("attachment; filename*=UTF-8''..%2F..%2Fescaped.txt", "escaped.txt"),
        ("attachment; filename=\"plain.txt\"; filename*=UTF-8''%E2%82%AC.txt", "€.txt"),
        (#"attachment; filename="q\"uote.txt""#, "q\"uote.txt"),
        ("attachment; filename*=UTF-8''%FF.txt; filename=\"fallback.txt\"", "fallback.txt"),
        ("attachment; filename=\"cd.bin.part\"", "cd.bin.part_"),
        ("attachment; filename=\"cd.bin.resume\"", "cd.bin.resume_"),
        ("attachment; filename=\".bashrc\"", "_bashrc"),
    ])
    func contentDispositionNames(disposition: String, expected: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let name = try await Self.save(server.url("/bytes/64/cd.bin?cd=\(queryEncoded(disposition))"), in: root)
            #expect(name == expected)
        }
    }

    @Test(arguments: [
        ("/bytes/64/a%2Fb.bin", "b.bin"), ("/bytes/64/..%5C..%5Cwin.bin", "win.bin"), ("/bytes/64/%2E%2E", "download"),
        ("/bytes/64/caf%FF.bin", "caf_.bin"), ("/bytes/64/.profile", "_profile"),
        ("/bytes/64/tool?type=application%2Fx-msdownload", "tool"), ("/bytes/64/tool?type=application%2Fx-sh", "tool"),
        ("/bytes/64/notes?type=text%2Fplain", "notes.txt"),
    ])
    func urlAndMIMENames(path: String, expected: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let name = try await Self.save(server.url(path), in: root)
            #expect(name == expected)
        }
    }

    @Test func a300ByteNameIsShortenedSoItsResumeRecordFits() async throws {
        let server = try HaulServer()
        let disposition = "attachment; filename=\"" + String(repeating: "n", count: 300) + ".bin\""
        try await withTemporaryDirectory { root in
            let name = try await Self.save(server.url("/bytes/64/x?cd=\(queryEncoded(disposition))"), in: root)
            #expect(name == String(repeating: "n", count: 244) + ".bin")
        }
    }

    @Test func aRedirectNeverChoosesTheName() async throws {
        let origin = try HaulServer()
        let other = try HaulServer()
        try await withTemporaryDirectory { root in
            let name = try await Self.save(origin.url("/redirect-to?url=\(queryEncoded(other.url("/bytes/64/evil.exe")))"), in: root)
            #expect(name == "redirect-to")
            #expect(other.requests.map(\.path) == ["/bytes/64/evil.exe"])
        }
    }

    @Test(arguments: [("rename", Int32(0), ["victim.1.txt", "victim.txt"]), ("skip", 0, ["victim.txt"]),
                      ("fail", 10, ["victim.txt"])])
    func aHostileNameMatchingAnExistingFileNeverReplacesIt(policy: String, status: Int32, files: [String]) async throws {
        let server = try HaulServer()
        let disposition = "attachment; filename=\"../victim.txt\""
        try await withTemporaryDirectory { dir in
            try Data("mine".utf8).write(to: dir.appendingPathComponent("victim.txt"))
            let url = server.url("/bytes/64/x.bin?cd=\(queryEncoded(disposition))")
            let outcome = try await haul(["-q", "--on-conflict=\(policy)", "-d", dir.path, url], in: dir)
            #expect(outcome.status == status, "\(outcome.standardError)")
            #expect(outcome.errorLines.count == (status == 0 ? 0 : 1))
            #expect(listFiles(dir) == files)
            #expect(fileContents(dir.appendingPathComponent("victim.txt")) == Data("mine".utf8))
            if policy == "rename" { #expect(fileContents(dir.appendingPathComponent("victim.1.txt")) == served(64)) }
        }
    }

    @Test func aRawNULInTheHeaderIsAMalformedReply() async throws {
        let server = try HaulServer()
        server.route("/nul") { _, connection in
            try connection.write(Array("HTTP/1.1 200 OK\r\nContent-Length: 64\r\nContent-Disposition: attachment; filename=\"a".utf8)
                + [0] + Array("b.txt\"\r\nConnection: close\r\n\r\n".utf8) + served(64))
        }
        try await withTemporaryDirectory { dir in
            let url = server.url("/nul")
            let outcome = try await haul(["--retries=0", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 7)
            #expect(outcome.errorLines == ["haul: \(url): a response header line contains a NUL byte"])
            #expect(listFiles(dir) == [])
        }
    }
}
