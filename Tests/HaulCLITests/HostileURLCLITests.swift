import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// Issue 4, "URLs and TLS", with the real `haul` binary.
@Suite(.throttled, .timeLimit(.minutes(1)))
struct HostileURLCLITests {
    /// An invalid URL for a server on `port`, and the start of the one line haul prints for it.
    static func invalidURL(_ kind: String, port: Int) -> (url: String, line: String) {
        switch kind {
        case "portTooLarge": ("http://127.0.0.1:\(port)0/x", "haul: http://127.0.0.1:\(port)0/x: invalid URL")
        case "portZero": ("http://127.0.0.1:0/x", "haul: http://127.0.0.1:0/x: invalid URL")
        case "space": ("http://127.0.0.1:\(port)/a b", "haul: http://127.0.0.1:\(port)/a b: invalid URL")
        case "unclosedBracket": ("http://[::1:\(port)/x", "haul: http://[::1:\(port)/x: invalid URL")
        case "crlf": ("http://127.0.0.1:\(port)/a\r\nX-Injected: 1", "haul: http://127.0.0.1:\(port)/a")
        case "badHost": ("http://host!:\(port)/x", "haul: http://host!:\(port)/x: invalid URL")
        case "badIPv6": ("http://[zz::1]:\(port)/x", "haul: http://[zz::1]:\(port)/x: invalid URL")
        case "badEscape": ("http://127.0.0.1:\(port)/%zz", "haul: http://127.0.0.1:\(port)/%zz: invalid URL")
        default: ("ftp://127.0.0.1:\(port)/x", "haul: ftp://127.0.0.1:\(port)/x: unsupported URL scheme 'ftp'")
        }
    }

    @Test(arguments: ["portTooLarge", "portZero", "space", "unclosedBracket", "crlf", "badHost", "badIPv6", "badEscape", "ftp"])
    func anInvalidURLExitsTwoBeforeAnyNetworkIO(kind: String) async throws {
        let server = try HaulServer()
        let (bad, line) = Self.invalidURL(kind, port: server.port)
        try await withTemporaryDirectory { dir in
            // A valid URL first: it must not be fetched either.
            let outcome = try await haul(["--json", "-d", dir.path, server.url("/bytes/100/ok.bin"), bad], in: dir)
            #expect(outcome.status == 2)
            #expect(outcome.standardOutput.isEmpty)
            #expect(outcome.errorLines.count == 1, "\(outcome.standardError)")
            #expect(outcome.errorLines.first?.hasPrefix(line) == true, "\(outcome.standardError)")
            #expect(!outcome.standardError.contains("\r"))
            #expect(server.requests.isEmpty)
            #expect(server.connectionCount == 0)
            #expect(listFiles(dir) == [])
        }
    }

    @Test func theSecretsOfAnInvalidURLAreNotPrinted() async throws {
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["http://alice:pw/secret-userinfo@host:x/?token=token-secret&Signature=cfsig-secret",
                                          "http://alice:pw-secret-userinfo@ho st/#access_token=token-secret"], in: dir)
            #expect(outcome.status == 2)
            #expect(outcome.errorLines.count == 2, "\(outcome.standardError)")
            #expect(outcome.errorLines.first?.hasPrefix("haul: http://host:x/?token=REDACTED&Signature=REDACTED: invalid URL") == true,
                    "\(outcome.standardError)")
            #expect(outcome.errorLines.last?.hasPrefix("haul: http://ho st/#access_token=REDACTED: invalid URL") == true,
                    "\(outcome.standardError)")
            for secret in ["secret-userinfo", "pw/", "token-secret", "cfsig-secret", "alice"] {
                #expect(!outcome.standardError.contains(secret), "\(outcome.standardError)")
            }
            #expect(listFiles(dir) == [])
        }
    }

    @Test func anIPv6LiteralWorksWithUserinfo() async throws {
        let server = try HaulServer(configuration: .init(host: "::1"))
        try await withTemporaryDirectory { dir in
            let url = "http://alice:pw-secret-userinfo@[::1]:\(server.port)/bytes/5000/six.bin"
            let outcome = try await haul(["--json", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(outcome.jsonEvents().first?["url"] as? String == "http://[::1]:\(server.port)/bytes/5000/six.bin")
            #expect(!outcome.standardOutput.contains("pw-secret-userinfo"))
            #expect(listFiles(dir) == ["six.bin"])
            #expect(fileContents(dir.appendingPathComponent("six.bin")) == served(5000))
            let sent = try #require(server.requests.first)
            #expect(sent.header("Host") == "[::1]:\(server.port)")
            #expect(sent.header("Authorization") == "Basic " + Data("alice:pw-secret-userinfo".utf8).base64EncodedString())
        }
    }

    @Test(arguments: [
        ("selfSigned", [String](), Int32(5)), ("selfSigned", ["-k"], 0),
        ("caSigned", [], 5), ("caSigned", ["--cacert", "CA"], 0),
        ("wrongHost", ["--cacert", "CA"], 5), ("wrongHost", [], 5), ("wrongHost", ["--cacert", "CA", "-k"], 0),
    ])
    func certificatesExitFiveUnlessTrustedOrInsecure(certificate: String, options: [String], status: Int32) async throws {
        let certificates = TestCertificates.shared
        let identity = switch certificate {
        case "selfSigned": certificates.selfSignedIdentity
        case "caSigned": certificates.serverIdentity
        default: certificates.wrongHostIdentity
        }
        let server = try HaulServer(configuration: .init(tls: identity))
        try await withTemporaryDirectory { dir in
            let arguments = options.map { $0 == "CA" ? certificates.caFile : $0 }
            let url = server.url("/bytes/3000/tls.bin")
            let outcome = try await haul(["-q", "--retries=0", "-H", "Authorization: Bearer hdr-secret-auth"] + arguments
                                         + ["-d", dir.path, url], in: dir)
            #expect(outcome.status == status, "\(outcome.standardError)")
            if status == 0 {
                #expect(listFiles(dir) == ["tls.bin"])
                #expect(fileContents(dir.appendingPathComponent("tls.bin")) == served(3000))
            } else {
                #expect(outcome.errorLines.count == 1)
                #expect(outcome.errorLines.first?.hasPrefix("haul: \(url): ") == true, "\(outcome.standardError)")
                #expect(server.requests.isEmpty, "the request and its Authorization went to an unverified server")
                #expect(listFiles(dir) == [])
            }
        }
    }
}
