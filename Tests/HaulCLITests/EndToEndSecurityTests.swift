import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// Secrets, hostile names and TLS with the real `haul` binary.
@Suite(.throttled, .timeLimit(.minutes(1)))
struct EndToEndSecurityTests {
    @Test func userHeadersReachTheOriginOnlyNotARedirectTarget() async throws {
        let origin = try HaulServer()
        let other = try HaulServer()
        try await withTemporaryDirectory { dir in
            let target = other.url("/bytes/1000/moved.bin")
            let url = origin.url("/redirect-to?url=\(queryEncoded(target))")
            let outcome = try await haul(["-q", "-H", "Authorization: Bearer s3cr3t", "-H", "X-Key: k3y",
                                          "-H", "Cookie: c00kie=1", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            // Named from the URL the user gave (no Content-Disposition).
            #expect(listFiles(dir) == ["redirect-to"])
            #expect(fileContents(dir.appendingPathComponent("redirect-to")) == served(1000))

            let first = try #require(origin.requests.first)
            #expect(first.header("Authorization") == "Bearer s3cr3t")
            #expect(first.header("X-Key") == "k3y")
            #expect(first.header("Cookie") == "c00kie=1")
            #expect(!other.requests.isEmpty)
            for request in other.requests {
                #expect(request.header("Authorization") == nil)
                #expect(request.header("X-Key") == nil)
                #expect(request.header("Cookie") == nil)
                #expect(request.headers.allSatisfy { !$0.value.contains("s3cr3t") && !$0.value.contains("k3y") && !$0.value.contains("c00kie") })
            }
        }
    }

    @Test(arguments: [false, true])
    func secretsInTheURLAreRedactedInEveryMessage(json: Bool) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let url = "http://user:pw-secret@127.0.0.1:\(server.port)/status/404?X-Amz-Signature=sigsecret&name=n"
            let outcome = try await haul((json ? ["--json"] : []) + ["--retries=0", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 8)
            let redacted = "http://127.0.0.1:\(server.port)/status/404?X-Amz-Signature=REDACTED&name=n"
            #expect(outcome.errorLines == ["haul: \(redacted): the server answered 404 Not Found"])
            for text in [outcome.standardOutput, outcome.standardError] {
                #expect(!text.contains("pw-secret") && !text.contains("sigsecret"), "\(text)")
            }
            if json {
                #expect(eventNames(outcome.jsonEvents()) == ["failed"])
            }
            // The password still reached its own origin, as Basic authentication.
            let sent = try #require(server.requests.first)
            #expect(sent.header("Authorization") == "Basic " + Data("user:pw-secret".utf8).base64EncodedString())
            #expect(listFiles(dir) == [])
        }
    }

    @Test func userinfoStaysWithItsOriginAndOutOfTheEvents() async throws {
        let origin = try HaulServer()
        let other = try HaulServer()
        try await withTemporaryDirectory { dir in
            let target = other.url("/bytes/100/f.bin")
            let query = "url=\(queryEncoded(target))&token=toksecret"
            let url = "http://alice:pw-secret@127.0.0.1:\(origin.port)/redirect-to?\(query)"
            let outcome = try await haul(["--json", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 0)
            #expect(outcome.standardError.isEmpty)
            let started = try #require(outcome.jsonEvents().first)
            #expect(started["url"] as? String
                        == "http://127.0.0.1:\(origin.port)/redirect-to?url=\(queryEncoded(target))&token=REDACTED")
            #expect(!outcome.standardOutput.contains("pw-secret") && !outcome.standardOutput.contains("toksecret"))
            #expect(origin.requests.first?.header("Authorization") == "Basic " + Data("alice:pw-secret".utf8).base64EncodedString())
            #expect(!other.requests.isEmpty)
            #expect(other.requests.allSatisfy { $0.header("Authorization") == nil })
            #expect(listFiles(dir) == ["redirect-to"])
        }
    }

    @Test func aRedirectLoopThroughSignedURLsIsRedacted() async throws {
        let server = try HaulServer()
        server.route("/self") { _, connection in
            try connection.write("HTTP/1.1 302 Found\r\nLocation: /self?X-Amz-Signature=sigsecret&token=toksecret\r\n"
                + "Content-Length: 0\r\nConnection: close\r\n\r\n")
        }
        try await withTemporaryDirectory { dir in
            let url = "http://user:pw-secret@127.0.0.1:\(server.port)/self?X-Amz-Signature=sigsecret&token=toksecret"
            let outcome = try await haul(["--json", "--retries=0", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 7)
            let redacted = "http://127.0.0.1:\(server.port)/self?X-Amz-Signature=REDACTED&token=REDACTED"
            #expect(outcome.errorLines == ["haul: \(redacted): redirect loop at \(redacted)"])
            for text in [outcome.standardOutput, outcome.standardError] {
                #expect(!text.contains("pw-secret") && !text.contains("sigsecret") && !text.contains("toksecret"), "\(text)")
            }
            #expect(listFiles(dir) == [])
        }
    }

    @Test(arguments: [("evil.bin.part", "evil.bin.part_"), ("evil.bin.resume", "evil.bin.resume_"), ("evil.lock", "evil.lock_"),
                      (".part", "_part"), ("a.PART", "a.PART_")])
    func namesThatLookLikeOurOwnFilesAreChanged(name: String, saved: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let disposition = "attachment; filename=\"\(name)\""
            let outcome = try await haul(["-q", "-d", dir.path, server.url("/bytes/100/x.bin?cd=\(queryEncoded(disposition))")], in: dir)
            #expect(outcome.status == 0)
            #expect(listFiles(dir) == [saved])
        }
    }

    @Test(arguments: ["attachment; filename=\"../../x\"", "attachment; filename=\"/abs/x\"",
                      "attachment; filename=\"..\\\\x\"", "attachment; filename=\"..\\\\..\\\\x\"",
                      "attachment; filename*=UTF-8''..%2F..%2Fx"])
    func hostileContentDispositionStaysInTheFolder(disposition: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let dir = root.appendingPathComponent("a/inside")
            let url = server.url("/bytes/64/cd.bin?cd=\(queryEncoded(disposition))")
            let outcome = try await haul(["-q", "-d", dir.path, url], in: root)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(listFiles(dir) == ["x"])
            #expect(listFiles(root.appendingPathComponent("a")) == ["inside"])
            #expect(listFiles(root) == ["a"])
            #expect(fileContents(dir.appendingPathComponent("x")) == served(64))
        }
    }

    @Test func tlsTrustsTheGivenCA() async throws {
        let certificates = TestCertificates.shared
        let server = try HaulServer(configuration: .init(tls: certificates.serverIdentity))
        try await withTemporaryDirectory { dir in
            let url = server.url("/bytes/200000/secure.bin")
            let trusted = try await haul(["--cacert", certificates.caFile, "-d", dir.path, url], in: dir)
            #expect(trusted.status == 0, "\(trusted.standardError)")
            #expect(!trusted.standardError.contains("warning"))
            #expect(listFiles(dir) == ["secure.bin"])
            #expect(fileContents(dir.appendingPathComponent("secure.bin")) == served(200_000))

            let untrusted = try await haul(["--retries=0", "-d", dir.path, server.url("/bytes/10/no.bin")], in: dir)
            #expect(untrusted.status == 5)
            #expect(untrusted.errorLines.count == 1)
            #expect(untrusted.errorLines.first?.hasPrefix("haul: \(server.url("/bytes/10/no.bin")): ") == true)
            #expect(listFiles(dir) == ["secure.bin"])
        }
    }

    @Test func aCAFileThatCannotBeReadIsOneErrorLine() async throws {
        // The context is freed once: a CA file that fails to load used to abort the process
        // with a double free (exit 134).
        let server = try HaulServer(configuration: .init(tls: TestCertificates.shared.serverIdentity))
        try await withTemporaryDirectory { dir in
            let missing = dir.appendingPathComponent("missing-ca.pem").path
            let outcome = try await haul(["--cacert", missing, "-d", dir.path, server.url("/bytes/10/ca.bin")], in: dir)
            #expect(outcome.status == 2, "\(outcome.standardError)")
            #expect(outcome.errorLines.count == 1)
            #expect(outcome.standardError.contains("cannot load CA certificates from '\(missing)'"))
            #expect(listFiles(dir).isEmpty)
        }
    }

    @Test func insecureAcceptsAnyCertificateAndWarnsOnce() async throws {
        let server = try HaulServer(configuration: .init(tls: TestCertificates.shared.selfSignedIdentity))
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["-k", "-d", dir.path, server.url("/bytes/1000/k1.bin"), server.url("/bytes/2000/k2.bin")],
                                         in: dir)
            #expect(outcome.status == 0)
            let warnings = outcome.errorLines.filter { $0.contains("warning") }
            #expect(warnings == ["haul: warning: TLS certificates are not verified (--insecure)"])
            #expect(listFiles(dir) == ["k1.bin", "k2.bin"])
            #expect(fileContents(dir.appendingPathComponent("k2.bin")) == served(2000))
        }
    }
}
