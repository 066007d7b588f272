import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// Issue 4, "Naming": hostile names from a server or a URL, through the whole library.
///
/// Every download goes into `root/inside`; each test checks the exact name, that `inside` holds
/// exactly that file (no partial, record or lock left), that nothing appeared beside `inside`,
/// and the bytes.
@Suite("Hostile names never leave the folder", .throttled, .timeLimit(.minutes(1)))
struct HostileNamingTests {
    /// Downloads `path` of `server` into `root/inside` and checks the folder holds only the result.
    static func download(_ server: HaulServer, _ path: String, in root: URL, size: Int = 64,
                         sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let dir = root.appendingPathComponent("inside")
        let result = try await testDownloader().file(from: url(server, path), to: .directory(dir))
        let name = result.fileURL.lastPathComponent
        #expect(result.fileURL.deletingLastPathComponent().path == dir.path, sourceLocation: sourceLocation)
        #expect(listFiles(root) == ["inside"], sourceLocation: sourceLocation)
        #expect(listFiles(dir) == [name], sourceLocation: sourceLocation)
        #expect(try contents(result.fileURL) == expectedContent(size), sourceLocation: sourceLocation)
        return name
    }

    @Test("Content-Disposition names are sanitised", arguments: [
        ("attachment; filename=\"../../x\"", "x"),
        ("attachment; filename=\"/abs/x\"", "x"),
        (#"attachment; filename="..\\..\\x""#, "x"),  // backslashes escaped inside the quoted string
        (#"attachment; filename="..\..\x""#, "_...x"),  // quoted-pairs: `\.` is `.`, so `....x`
        ("attachment; filename=\".\"", "cd.bin"),
        ("attachment; filename=\"..\"", "cd.bin"),
        ("attachment; filename*=UTF-8''a%00b.txt", "ab.txt"),
        ("attachment; filename*=UTF-8''%1B%5B31mred%07.txt", "[31mred.txt"),
        ("attachment; filename=\"esc\u{1B}.txt\"", "cd.bin"),  // a raw control character: the header is unusable
        ("attachment; filename*=UTF-8''%2e%2e%2fescaped.txt", "escaped.txt"),
        ("attachment; filename*=UTF-8''..%5C..%5Cwin.txt", "win.txt"),
        ("attachment; filename*=UTF-8''%2Fetc%2Fpasswd", "passwd"),
        ("attachment; filename*=UTF-8''%E2%82%AC%20rates.txt", "€ rates.txt"),
        ("attachment; filename=\"plain.txt\"; filename*=UTF-8''%E2%82%AC.txt", "€.txt"),
        ("attachment; filename*=UTF-8''%E2%82%AC.txt; filename=\"plain.txt\"", "€.txt"),
        ("attachment; filename*=UTF-8''%FF%FE.txt; filename=\"fallback.txt\"", "fallback.txt"),
        ("attachment; filename*=UTF-8''%C3", "cd.bin"),
        (#"attachment; filename="q\"uote.txt""#, "q\"uote.txt"),
        (#"attachment; filename="a\"b\\c.txt""#, "c.txt"),
        (#"attachment; filename="\e\v\i\l.txt""#, "evil.txt"),
        ("attachment; filename=\"cd.bin.part\"", "cd.bin.part_"),
        ("attachment; filename=\"x.resume\"", "x.resume_"),
        ("attachment; filename=\"x.LOCK\"", "x.LOCK_"),
        ("attachment; filename=\".part\"", "_part"),
        ("attachment; filename=\".bashrc\"", "_bashrc"),
        ("attachment; filename=\"...hidden\"", "_..hidden"),
        ("attachment; filename=\"  trailing dots...  \"", "trailing dots"),
        ("attachment; filename=\"evil\u{202E}txt.exe\"", "eviltxt.exe"),
    ])
    func contentDisposition(disposition: String, expected: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let name = try await Self.download(server, "/bytes/64/cd.bin?cd=\(encodedQueryValue(disposition))", in: root)
            #expect(name == expected)
        }
    }

    @Test("names from the URL path are decoded, then sanitised", arguments: [
        ("/bytes/64/a%2Fb.bin", "b.bin"),
        ("/bytes/64/..%2F..%2Fup.bin", "up.bin"),
        ("/bytes/64/..%5C..%5Cwin.bin", "win.bin"),
        ("/bytes/64/%2E%2E%2F%2E%2E%2Fx", "x"),
        ("/bytes/64/%2E%2E", "download"),
        ("/bytes/64/", "download"),
        ("/bytes/64/%00nul%1B.bin", "nul.bin"),
        ("/bytes/64/caf%FF.bin", "caf_.bin"),
        ("/bytes/64/.profile", "_profile"),
        ("/bytes/64/n.bin.part", "n.bin.part_"),
        ("/bytes/64/n.bin?cd=attachment", "n.bin"),
    ])
    func urlPath(path: String, expected: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let name = try await Self.download(server, path, in: root)
            #expect(name == expected)
        }
    }

    @Test("a MIME type adds an extension only from the allow-list, never an executable one", arguments: [
        ("application/x-msdownload", "tool"), ("application/x-sh", "tool"), ("application/x-msi", "tool"),
        ("application/java-archive", "tool"), ("application/vnd.android.package-archive", "tool"),
        ("application/octet-stream", "tool"), ("text/plain; charset=utf-8", "tool.txt"), ("application/pdf", "tool.pdf"),
    ])
    func mimeExtension(type: String, expected: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let name = try await Self.download(server, "/bytes/64/tool?type=\(encodedQueryValue(type))", in: root)
            #expect(name == expected)
        }
    }

    @Test("an executable MIME type adds nothing to a name from Content-Disposition")
    func mimeNeverReplacesAnExtension() async throws {
        let server = try HaulServer()
        let disposition = encodedQueryValue("attachment; filename=\"setup\"")
        try await withTemporaryDirectory { root in
            let name = try await Self.download(server, "/bytes/64/x.bin?cd=\(disposition)&type=application%2Fx-msdownload", in: root)
            #expect(name == "setup")
        }
    }

    @Test("a 300-byte filename* of two-byte characters is cut to whole characters, keeping the extension")
    func longExtendedName() async throws {
        let server = try HaulServer()
        let encoded = String(repeating: "%C3%A9", count: 150) + ".txt"
        try await withTemporaryDirectory { root in
            let name = try await Self.download(server, "/bytes/64/x.bin?cd=\(encodedQueryValue("attachment; filename*=UTF-8''" + encoded))", in: root)
            #expect(name.utf8.count <= 255 - ".resume".utf8.count)
            #expect(name.utf8.count + ".resume".utf8.count > 250)
            #expect(name.hasSuffix(".txt"))
            #expect(name.dropLast(4).allSatisfy { $0 == "é" })
        }
    }

    @Test("a 300-byte URL segment is shortened too")
    func longURLName() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let name = try await Self.download(server, "/bytes/64/" + String(repeating: "u", count: 300) + ".iso", in: root)
            #expect(name == String(repeating: "u", count: 248 - 4) + ".iso")
        }
    }


    @Test("a hostile name that matches an existing file is renamed by default; the file is untouched",
          arguments: ["attachment; filename=\"../victim.txt\"", "attachment; filename*=UTF-8''%2Fvictim.txt"])
    func existingFileIsNeverOverwritten(disposition: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let dir = root.appendingPathComponent("inside")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try Data("mine".utf8).write(to: dir.appendingPathComponent("victim.txt"))
            try FileManager.default.createDirectory(at: dir.appendingPathComponent("victim.1.txt"), withIntermediateDirectories: false)
            let path = "/bytes/64/x.bin?cd=\(encodedQueryValue(disposition))"
            let result = try await testDownloader().file(from: url(server, path), to: .directory(dir))
            #expect(result.fileURL.lastPathComponent == "victim.2.txt")
            #expect(listFiles(dir) == ["victim.1.txt", "victim.2.txt", "victim.txt"])
            #expect(try contents(dir.appendingPathComponent("victim.txt")) == Array("mine".utf8))
            #expect(listFiles(dir.appendingPathComponent("victim.1.txt")) == [])
            #expect(try contents(result.fileURL) == expectedContent(64))
            #expect(listFiles(root) == ["inside"])
        }
    }

    @Test("a redirect never chooses the name: the URL the user gave does")
    func redirectDoesNotName() async throws {
        let origin = try HaulServer()
        let other = try HaulServer()
        let target = encodedQueryValue(other.url("/bytes/64/evil.exe"))
        try await withTemporaryDirectory { root in
            let name = try await Self.download(origin, "/redirect-to?url=\(target)&status=301", in: root)
            #expect(name == "redirect-to")
            #expect(other.requests.map(\.path) == ["/bytes/64/evil.exe"])
        }
    }

    @Test("Content-Disposition of the final response names the file, sanitised, after redirects")
    func dispositionAfterARedirect() async throws {
        let origin = try HaulServer()
        let other = try HaulServer()
        let target = encodedQueryValue(other.url("/bytes/64/evil.exe?cd=" + encodedQueryValue("attachment; filename=\"../report.pdf\"")))
        try await withTemporaryDirectory { root in
            let name = try await Self.download(origin, "/redirect/3?to=\(target)", in: root)
            #expect(name == "report.pdf")
        }
    }

    @Test("header bytes that are not UTF-8 are read as ISO-8859-1: the name is still valid UTF-8")
    func invalidUTF8InTheHeader() async throws {
        let server = try HaulServer()
        server.route("/latin1") { _, connection in
            try connection.write(Array("HTTP/1.1 200 OK\r\nContent-Length: 64\r\nContent-Disposition: attachment; filename=\"caf".utf8)
                + [0xE9, 0xFF] + Array(".txt\"\r\nConnection: close\r\n\r\n".utf8) + expectedContent(64))
        }
        try await withTemporaryDirectory { root in
            let name = try await Self.download(server, "/latin1", in: root)
            #expect(name == "caf\u{E9}\u{FF}.txt")
        }
    }

    @Test("a raw NUL in Content-Disposition makes the reply malformed: exit 7, nothing written")
    func rawNUL() async throws {
        let server = try HaulServer()
        server.route("/nul") { _, connection in
            try connection.write(Array("HTTP/1.1 200 OK\r\nContent-Length: 64\r\nContent-Disposition: attachment; filename=\"a".utf8)
                + [0] + Array("b.txt\"\r\nConnection: close\r\n\r\n".utf8) + expectedContent(64))
        }
        await withTemporaryDirectory { root in
            let dir = root.appendingPathComponent("inside")
            let error = await expectFailure(testDownloader(), DownloadRequest(url: url(server, "/nul")), to: .directory(dir))
            #expect(error?.code == .malformedResponse)
            #expect(error?.code.exitStatus == 7)
            #expect(listFiles(dir) == [])
            #expect(listFiles(root).allSatisfy { $0 == "inside" })
        }
    }
}
