import Foundation
@testable import Haul
@testable import HaulCLI
#if canImport(Glibc)
import Glibc
#endif
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

    @Test func theJSONFinishedEventCarriesEachServersBytesAndWhyOneWasSetAside() async throws {
        let (first, second, missing) = (try HaulServer(), try HaulServer(), try HaulServer())
        try await withTemporaryDirectory { dir in
            // The server that answers 404 is the URL given: its answer comes first, always (as a
            // mirror it may never be asked when the other two finish the file first).
            let outcome = try await haul(["--json", "-x", "2", "-d", dir.path, "--mirror", first.url(Self.path),
                                          "--mirror", second.url(Self.path), missing.url(Self.path + "&status=404")], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            let started = outcome.jsonEvents().first { $0["event"] as? String == "started" }
            #expect(started?["servers"] as? Int == 3, "the started event counts the servers")
            let finished = try #require(outcome.jsonEvents().last)
            #expect(finished["event"] as? String == "finished")
            let sources = try #require(finished["sources"] as? [[String: Any]])
            #expect(sources.count == 3)
            #expect(sources.compactMap { $0["bytes"] as? Int }.reduce(0, +) >= Self.size, "the servers' bytes cover the file")
            #expect((sources[0]["setAside"] as? String)?.contains("404") == true, "\(sources)")
            #expect(sources[1]["setAside"] == nil && sources[2]["setAside"] == nil)
            let warnings = outcome.jsonEvents().filter { $0["event"] as? String == "warning" }
            #expect(warnings.contains { ($0["message"] as? String)?.contains("source 1") == true }, "\(warnings)")
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

/// `haul FILE.meta4`: every file of a Metalink document, from its servers, checked against its
/// hash, named as the document says (below `-d`, never outside it).
/// Serialized: each test runs the binary against two servers.
@Suite(.throttled, .serialized, .timeLimit(.minutes(1)))
struct MetalinkCLITests {
    /// A Metalink 4 document of `files` (name, size, seed, servers' URLs, sha-256 hex).
    static func document(_ files: [(name: String, urls: [String], sha256: String, size: Int)]) -> String {
        let entries = files.map { file in
            "<file name=\"\(file.name)\"><size>\(file.size)</size><hash type=\"sha-256\">\(file.sha256)</hash>"
                + file.urls.enumerated().map { "<url priority=\"\($0.offset + 1)\">\($0.element.replacingOccurrences(of: "&", with: "&amp;"))</url>" }.joined()
                + "</file>"
        }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">"
            + entries.joined() + "</metalink>\n"
    }

    @Test func everyFileOfTheDocumentComesFromItsServersAndIsChecked() async throws {
        let (first, second) = (try HaulServer(), try HaulServer())
        let sizes = [2 << 20, 300_000]
        let digests = try sizes.enumerated().map { try #require(HaulServer.content(seed: UInt64($0.offset + 1)).sha256Hex(length: Int64($0.element))) }
        try await withTemporaryDirectory { dir in
            let files = [("a.bin", sizes[0], 1), ("sub/b.bin", sizes[1], 2)].enumerated().map { index, file in
                (name: file.0, urls: [first, second].map { $0.url("/bytes/\(file.1)/x?seed=\(file.2)") }, sha256: digests[index], size: file.1)
            }
            try Self.document(files).write(to: dir.appendingPathComponent("set.meta4"), atomically: true, encoding: .utf8)
            let outcome = try await haul(["-x", "2", "-d", "out", "set.meta4"], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            let out = dir.appendingPathComponent("out")
            #expect(fileContents(out.appendingPathComponent("a.bin")) == served(sizes[0], seed: 1))
            #expect(fileContents(out.appendingPathComponent("sub/b.bin")) == served(sizes[1], seed: 2))
            #expect(first.bodyBytesSent > 0 && second.bodyBytesSent > 0)
        }
    }

    @Test func aWrongHashFailsWithExit9AndAHostileNameIsSkipped() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let wrong = String(repeating: "0", count: 64)
            let files = [(name: "c.bin", urls: [server.url("/bytes/1000/c")], sha256: wrong, size: 1000),
                         (name: "../escape.bin", urls: [server.url("/bytes/1000/e")], sha256: wrong, size: 1000)]
            try Self.document(files).write(to: dir.appendingPathComponent("bad.meta4"), atomically: true, encoding: .utf8)
            let outcome = try await haul(["-d", "out", "bad.meta4"], in: dir)
            #expect(outcome.status == 9, "\(outcome.standardError)")
            #expect(outcome.standardError.contains("warning"), "the traversal name is reported")
            #expect(listFiles(dir) == ["bad.meta4", "out"], "nothing lands outside -d")
            #expect(listFiles(dir.appendingPathComponent("out")) == [])
            #expect(server.requests.allSatisfy { $0.path.hasSuffix("/c") }, "the hostile file is never fetched")
        }
    }

    @Test func piecesOfTheDocumentSetAsideAServerThatSendsOtherBytes() async throws {
        let (good, other) = (try HaulServer(), try HaulServer())
        let size = 2 << 20, length = 256 << 10
        let content = served(size, seed: 1)
        var hashes = ""
        for offset in stride(from: 0, to: size, by: length) {
            hashes += "<hash>" + (try await EndToEndVerificationTests.sha256Hex(content[offset..<min(size, offset + length)])) + "</hash>"
        }
        let whole = try #require(HaulServer.content(seed: 1).sha256Hex(length: Int64(size)))
        let urls = [good.url("/bytes/\(size)/x?seed=1"), other.url("/bytes/\(size)/x?seed=2")]
            .enumerated().map { "<url priority=\"\($0.offset + 1)\">\($0.element.replacingOccurrences(of: "&", with: "&amp;"))</url>" }.joined()
        let document = #"<?xml version="1.0"?><metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="p.bin">"#
            + #"<size>\#(size)</size><hash type="sha-256">\#(whole)</hash><pieces length="\#(length)" type="sha-256">\#(hashes)</pieces>"#
            + urls + "</file></metalink>"
        try await withTemporaryDirectory { dir in
            try document.write(to: dir.appendingPathComponent("p.meta4"), atomically: true, encoding: .utf8)
            let outcome = try await haul(["-x", "2", "-d", "out", "p.meta4"], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(fileContents(dir.appendingPathComponent("out/p.bin")) == content)
            #expect(outcome.standardError.contains("do not match piece"), "\(outcome.errorLines)")
            #expect(outcome.standardError.contains("source 2"), "\(outcome.errorLines)")
        }
    }

    /// A URL whose answer is a Metalink document (by its type, whatever its name): the document
    /// is saved like any download, then every file it describes is fetched into `-d` and checked.
    @Test func aDocumentFetchedByURLIsFollowedOnce() async throws {
        let server = try HaulServer()
        let sizes = [300_000, 1000]
        let digests = try sizes.enumerated().map { try #require(HaulServer.content(seed: UInt64($0.offset + 1)).sha256Hex(length: Int64($0.element))) }
        let files = [("a.bin", sizes[0], 1), ("sub/b.bin", sizes[1], 2)].enumerated().map { index, file in
            (name: file.0, urls: [server.url("/bytes/\(file.1)/x?seed=\(file.2)")], sha256: digests[index], size: file.1)
        }
        // Its own URL among its files: a document is followed once, never again from what it describes.
        let body = Array(Self.document(files + [(name: "again", urls: [server.url("/list")], sha256: "", size: 0)])
            .replacingOccurrences(of: "<size>0</size><hash type=\"sha-256\"></hash>", with: "").utf8)
        server.route("/list") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Type: Application/Metalink4+XML; charset=utf-8\r\n"
                                 + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n")
            try connection.write(body)
        }
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["-d", "out", server.url("/list")], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            let out = dir.appendingPathComponent("out")
            #expect(listFiles(out) == ["again", "a.bin", "list", "sub"].sorted())
            #expect(fileContents(out.appendingPathComponent("a.bin")) == served(sizes[0], seed: 1))
            #expect(fileContents(out.appendingPathComponent("sub/b.bin")) == served(sizes[1], seed: 2))
            #expect(fileContents(out.appendingPathComponent("list")) == Data(body), "the document is kept as fetched")
            #expect(server.requests.filter { $0.path == "/list" }.count == 2, "the document, then its copy as a file")
        }
    }

    /// `--metalink=follow`: a download whose server names a Metalink document (`Link:
    /// rel=describedby`) gives way to it as it starts; the document is saved and its file comes
    /// from its servers, checked against its hash. Without the flag the link is only a link.
    @Test func aDescribedByLinkIsFollowedOnlyWhenAsked() async throws {
        let (origin, mirror) = (try HaulServer(), try HaulServer())
        let size = 300_000
        let digest = try #require(HaulServer.content(seed: 3).sha256Hex(length: Int64(size)))
        let document = Array(Self.document([(name: "file.iso", urls: [mirror.url("/bytes/\(size)/a?seed=3")], sha256: digest, size: size)]).utf8)
        let link = "Link: <\(origin.url("/file.meta4"))>; rel=describedby; type=\"application/metalink4+xml\"\r\n"
        // The file itself never comes: its answer is a head, then silence until the client leaves.
        origin.route("/file.iso") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 50000000\r\n" + link + "\r\n")
            connection.waitUntilClosed()
        }
        origin.route("/small.iso") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n" + link + "Connection: close\r\n\r\nhello")
        }
        origin.route("/file.meta4") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/metalink4+xml\r\nContent-Length: \(document.count)\r\n"
                                 + "Connection: close\r\n\r\n")
            try connection.write(document)
        }
        try await withTemporaryDirectory { dir in
            let followed = try await haul(["--metalink=follow", "-d", "out", origin.url("/file.iso")], in: dir)
            #expect(followed.status == 0, "\(followed.standardError)")
            #expect(followed.standardError.contains("described by a Metalink document"), "\(followed.errorLines)")
            let out = dir.appendingPathComponent("out")
            #expect(fileContents(out.appendingPathComponent("file.iso")) == served(size, seed: 3))
            #expect(fileContents(out.appendingPathComponent("file.meta4")) == Data(document))
            #expect(listFiles(out) == ["file.iso", "file.meta4"], "the partial of the download that gave way is gone")
            let json = try await haul(["--metalink=follow", "--json", "-d", "again", origin.url("/file.iso")], in: dir)
            #expect(json.jsonEvents().contains { $0["event"] as? String == "described" && ($0["metalink"] as? String)?.hasSuffix("/file.meta4") == true })
            let plain = try await haul(["-d", "plain", origin.url("/small.iso")], in: dir)
            #expect(plain.status == 0 && listFiles(dir.appendingPathComponent("plain")) == ["small.iso"], "off by default")
        }
    }

    @Test func aDocumentThatIsNotMetalinkIsAClearError() async throws {
        try await withTemporaryDirectory { dir in
            try "<!DOCTYPE x [<!ENTITY a \"b\">]><metalink/>".write(to: dir.appendingPathComponent("x.meta4"), atomically: true, encoding: .utf8)
            let outcome = try await haul(["x.meta4"], in: dir)
            #expect(outcome.status == 2)
            #expect(outcome.errorLines.count == 1 && outcome.standardError.contains("not a usable Metalink document"), "\(outcome.errorLines)")
        }
    }
}

/// `kill -9` in the middle of a download from two servers (each with an ETag of its own)
/// described by a Metalink document with piece hashes, then the same file from a document that
/// lists the servers the other way round:
/// the rerun finds the record (the file's key is its content, not its first URL), asks for no
/// byte of a piece the record lists as verified, and the file is byte-identical.
///
/// Exclusive: the servers are paced (1 MB/s a connection) and `haul` is killed mid-transfer.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(2)))
struct MirrorResumeTests {
    static let size = 4 << 20, length = 256 << 10

    /// A document for `k.bin` with its size, piece hashes and `urls` in priority order.
    static func document(_ urls: [String], pieces: String) -> String {
        #"<?xml version="1.0"?><metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="k.bin">"#
            + #"<size>\#(size)</size><pieces length="\#(length)" type="sha-256">\#(pieces)</pieces>"#
            + urls.enumerated().map { "<url priority=\"\($0.offset + 1)\">\($0.element)</url>" }.joined() + "</file></metalink>"
    }

    @Test func aKilledDownloadResumesWithTheServersInAnotherOrder() async throws {
        let servers = try [HaulServer(), HaulServer()]
        // Each server has an ETag of its own, as mirrors do: the file is named by its pieces.
        for (index, server) in servers.enumerated() {
            server.setResource("/k.bin", HaulServer.Resource(size: Int64(Self.size), seed: 6, etag: "\"k\(index)\"", rate: 1_000_000))
        }
        let content = served(Self.size, seed: 6)
        var pieces = ""
        for offset in stride(from: 0, to: Self.size, by: Self.length) {
            pieces += "<hash>" + (try await EndToEndVerificationTests.sha256Hex(content[offset..<(offset + Self.length)])) + "</hash>"
        }
        let urls = servers.map { $0.url("/k.bin") }
        try await withTemporaryDirectory { dir in
            try Self.document(urls, pieces: pieces).write(to: dir.appendingPathComponent("a.meta4"), atomically: true, encoding: .utf8)
            try Self.document(urls.reversed(), pieces: pieces).write(to: dir.appendingPathComponent("b.meta4"), atomically: true, encoding: .utf8)
            let first = try KillableProcess(["-q", "-x", "2", "-d", "out", "a.meta4"], in: dir)
            #expect(await eventually(timeout: .seconds(20)) { servers.map(\.bodyBytesSent).reduce(0, +) >= Int64(Self.size / 3) })
            #expect(await first.sigkill() == 128 + SIGKILL, "killed mid-transfer")
            #expect(await eventually(timeout: .seconds(10)) { servers.allSatisfy { $0.openConnectionCount == 0 } })
            let folder = try DestinationFolder(path: dir.appendingPathComponent("out").path)
            guard case .valid(let record) = ResumeRecord.load(for: "k.bin", in: folder) else {
                Issue.record("no record after the kill")
                return
            }
            #expect(!record.verifiedPieces.ranges.isEmpty, "the record lists the pieces that passed their checks")
            #expect(record.verifiedPieces.ranges.allSatisfy(record.completed.contains))
            let asked = servers.map(\.requests.count)
            let outcome = try await haul(["--json", "-x", "2", "-d", "out", "b.meta4"], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(fileContents(dir.appendingPathComponent("out/k.bin")) == content)
            // While both servers send, the progress events say what each gave and on how many connections.
            let perServer = outcome.jsonEvents().filter { $0["event"] as? String == "progress" }.compactMap { $0["sources"] as? [[String: Any]] }
            #expect(!perServer.isEmpty, "no progress event listed the servers")
            for sources in perServer {
                #expect(Set(sources.compactMap { $0["url"] as? String }) == Set(urls), "\(sources)")
                #expect(sources.allSatisfy { $0["bytes"] is Int && $0["connections"] is Int && $0["setAside"] == nil }, "\(sources)")
            }
            for (server, before) in zip(servers, asked) {
                for request in server.requests.dropFirst(before) {
                    let start = Int64(request.header("Range").flatMap { $0.split(separator: "=").last?.split(separator: "-").first }.flatMap { Int64($0) } ?? 0)
                    #expect(!record.verifiedPieces.contains(start..<(start + 1)), "asked again for byte \(start) of a verified piece")
                }
            }
        }
    }
}

/// The file from two mirrors together, a third set aside with a warning.
/// Exclusive: paces the servers (`rate=`) so that each is asked before the file is done.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(1)))
struct MirrorSharingCLITests {
    @Test func mirrorsGiveTheFileTogetherAndABadOneIsSetAsideWithAWarning() async throws {
        let (first, second, missing) = (try HaulServer(), try HaulServer(), try HaulServer())
        try await withTemporaryDirectory { dir in
            // Paced, so that the file is not done by one server before the others are asked.
            let paced = MirrorCLITests.path + "&rate=4000000"
            let outcome = try await haul(["-x", "2", "-d", dir.path, "--mirror", second.url(paced), "--mirror", missing.url(paced + "&status=404"),
                                            first.url(paced)], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(fileContents(dir.appendingPathComponent("m.bin")) == served(MirrorCLITests.size, seed: 3))
            #expect(first.bodyBytesSent > 0 && second.bodyBytesSent > 0, "both servers gave part of the file")
            #expect(outcome.errorLines.contains { $0.contains("warning") && $0.contains("source 3") && $0.contains("404") },
                    "\(outcome.errorLines)")
            #expect(outcome.errorLines.first == "m.bin: started (\(HumanFormat.bytes(Int64(MirrorCLITests.size))), from 3 servers)",
                    "\(outcome.errorLines)")
        }
    }
}
