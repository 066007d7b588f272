import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

@Suite("Secrets and names never leak or escape", .throttled)
struct SecurityTests {
    static let secrets: [(name: String, value: String)] = [
        ("Authorization", "Bearer secret-token"), ("Cookie", "session=secret-cookie"),
        ("Proxy-Authorization", "Basic c2VjcmV0"), ("X-Api-Key", "secret-key"),
    ]

    @Test("a redirect to another port drops Authorization, Cookie, user headers and userinfo")
    func crossOriginRedirect() async throws {
        let origin = try HaulServer()
        let other = try HaulServer()
        let target = other.url("/bytes/100/file.bin")
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        var components = URLComponents(string: origin.url("/redirect-to?url=\(encoded)&status=302"))!
        components.user = "alice"
        components.password = "pw-secret"
        try await withTemporaryDirectory { dir in
            let request = DownloadRequest(url: components.url!, headers: Self.secrets)
            let result = try await testDownloader().file(from: request, to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(100))
            let first = try #require(origin.requests.first)
            #expect(first.header("Authorization") == "Bearer secret-token")
            #expect(first.header("X-Api-Key") == "secret-key")
            let second = try #require(other.requests.first)
            for (name, _) in Self.secrets { #expect(second.header(name) == nil, "\(name) reached another origin") }
            #expect(second.headers.allSatisfy { !$0.value.contains("secret") })
        }
    }

    @Test("userinfo becomes Basic auth for its own origin only")
    func userinfoOwnOrigin() async throws {
        let server = try HaulServer()
        var components = URLComponents(string: server.url("/bytes/10/u.bin"))!
        components.user = "alice"
        components.password = "pw"
        try await withTemporaryDirectory { dir in
            _ = try await testDownloader().file(from: components.url!, to: .directory(dir))
            #expect(server.requests.first?.header("Authorization") == "Basic " + Data("alice:pw".utf8).base64EncodedString())
        }
    }

    @Test("a redirect to a non-HTTP scheme is refused", arguments: ["file:///etc/passwd", "ftp://127.0.0.1/x", "data:text/plain,hi", "gopher://x/"])
    func schemeRefused(location: String) async throws {
        let server = try HaulServer()
        let encoded = location.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        await withTemporaryDirectory { dir in
            let error = await expectFailure(testDownloader(), DownloadRequest(url: url(server, "/redirect-to?url=\(encoded)")), to: .directory(dir))
            #expect(error?.code == .redirectRefused)
            #expect(error?.code.exitStatus == 7)
            #expect(listFiles(dir) == [])
        }
    }

    @Test("hostile Content-Disposition names never leave the folder", arguments: [
        ("attachment; filename=\"../../x\"", "x"),
        ("attachment; filename=\"/abs/x\"", "x"),
        ("attachment; filename=\"..\\\\..\\\\x\"", "x"),
        ("attachment; filename=\"..\"", "cd.bin"),
        ("attachment; filename*=UTF-8''%2e%2e%2fescaped.txt", "escaped.txt"),
        ("attachment; filename*=UTF-8''a%00b.txt", "ab.txt"),
        ("attachment; filename=\".hidden\"", "_hidden"),
    ])
    func hostileNames(disposition: String, expected: String) async throws {
        let server = try HaulServer()
        let encoded = disposition.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        try await withTemporaryDirectory { root in
            let dir = root.appendingPathComponent("inside")
            let result = try await testDownloader().file(from: url(server, "/bytes/64/cd.bin?cd=\(encoded)"), to: .directory(dir))
            #expect(result.fileURL.lastPathComponent == expected)
            #expect(listFiles(root) == ["inside"])
            #expect(listFiles(dir) == [expected])
        }
    }

    @Test("a 300-byte name is shortened to fit with its partial suffix")
    func longName() async throws {
        let server = try HaulServer()
        let long = String(repeating: "n", count: 300) + ".bin"
        try await withTemporaryDirectory { dir in
            let result = try await testDownloader().file(from: url(server, "/bytes/64?cd=attachment%3B%20filename%3D\(long)"), to: .directory(dir))
            let name = result.fileURL.lastPathComponent
            #expect(name.utf8.count + ".resume".utf8.count <= 255)
            #expect(name.hasSuffix(".bin"))
            #expect(listFiles(dir) == [name])
        }
    }

    @Test("a redirect never chooses the name; Content-Disposition of the final response does")
    func redirectNaming() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let plain = try await testDownloader().file(from: url(server, "/redirect/2?to=%2Fbytes%2F10%2Fevil.sh"), to: .directory(dir))
            #expect(plain.fileURL.lastPathComponent == "2")
        }
    }

    @Test("conflict policies", arguments: [ConflictPolicy.rename, .overwrite, .skip, .fail])
    func conflicts(policy: ConflictPolicy) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            try Data("mine".utf8).write(to: dir.appendingPathComponent("c.bin"))
            let request = DownloadRequest(url: url(server, "/bytes/50/c.bin"), conflictPolicy: policy)
            switch policy {
            case .rename:
                let result = try await testDownloader().file(from: request, to: .directory(dir))
                #expect(result.fileURL.lastPathComponent == "c.1.bin")
                #expect(try contents(dir.appendingPathComponent("c.bin")) == Array("mine".utf8))
            case .overwrite:
                _ = try await testDownloader().file(from: request, to: .directory(dir))
                #expect(try contents(dir.appendingPathComponent("c.bin")) == expectedContent(50))
            case .skip:
                let result = try await testDownloader().file(from: request, to: .directory(dir))
                #expect(result.skipped)
                #expect(try contents(dir.appendingPathComponent("c.bin")) == Array("mine".utf8))
            case .fail:
                let error = await expectFailure(testDownloader(), request, to: .directory(dir))
                #expect(error?.code == .destinationExists)
                #expect(error?.code.exitStatus == 10)
                #expect(try contents(dir.appendingPathComponent("c.bin")) == Array("mine".utf8))
            }
            #expect(listFiles(dir).allSatisfy { !$0.hasSuffix(".part") })
        }
    }

    @Test("error messages never contain URL secrets")
    func redactedErrors() async throws {
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            var components = URLComponents(string: server.url("/status/404"))!
            components.user = "bob"
            components.password = "hunter2"
            components.queryItems = [URLQueryItem(name: "X-Amz-Signature", value: "deadbeefsig")]
            let download = testDownloader().download(DownloadRequest(url: components.url!), to: .directory(dir))
            do throws(DownloadError) {
                _ = try await download.result()
                Issue.record("expected a failure")
            } catch {
                #expect(!error.message.contains("hunter2"))
                #expect(!error.message.contains("deadbeefsig"))
            }
        }
    }
}
