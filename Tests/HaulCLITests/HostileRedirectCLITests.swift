import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// Issue 4, "Redirects and secrets", with the real `haul` binary.
@Suite(.throttled, .timeLimit(.minutes(1)))
struct HostileRedirectCLITests {
    /// `-H` secrets, one per header that must stay with the original origin.
    static let headerArguments = ["-H", "Authorization: Bearer hdr-secret-auth", "-H", "Cookie: sid=hdr-secret-cookie",
                                  "-H", "Proxy-Authorization: Basic hdr-secret-proxy", "-H", "X-Api-Key: hdr-secret-apikey"]
    /// Every planted secret.
    static let secrets = ["hdr-secret-auth", "hdr-secret-cookie", "hdr-secret-proxy", "hdr-secret-apikey",
                          "pw-secret-userinfo", "amzsig-secret", "token-secret", "cfsig-secret"]
    /// A signed-URL query carrying three secrets.
    static let signedQuery = "X-Amz-Signature=amzsig-secret&token=token-secret&Signature=cfsig-secret"

    /// `http://alice:<secret>@127.0.0.1:PORT` + `path`.
    static func withUserinfo(_ server: HaulServer, _ path: String) -> String {
        "http://alice:pw-secret-userinfo@127.0.0.1:\(server.port)\(path)"
    }

    /// Records an issue for every request carrying a planted secret.
    static func expectClean(_ requests: [RecordedRequest], sourceLocation: SourceLocation = #_sourceLocation) {
        for request in requests {
            for name in ["Authorization", "Cookie", "Proxy-Authorization", "X-Api-Key"] {
                #expect(request.header(name) == nil, "\(name) sent to \(request.target)", sourceLocation: sourceLocation)
            }
            #expect(request.headers.allSatisfy { header in !secrets.contains { header.value.contains($0) } },
                    sourceLocation: sourceLocation)
        }
    }

    /// Every secret found in `texts`.
    static func leaks(_ texts: [String]) -> [String] {
        secrets.filter { secret in texts.contains { $0.contains(secret) } }
    }

    @Test(arguments: ["otherHostSamePort", "sameHostOtherPort", "httpsThenOtherHost"])
    func headersAndUserinfoStayWithTheOrigin(route: String) async throws {
        let certificates = TestCertificates.shared
        let origin = try HaulServer()
        let other = try HaulServer()
        let secure = try HaulServer(configuration: .init(tls: certificates.serverIdentity))
        let target = switch route {
        case "otherHostSamePort": "http://localhost:\(origin.port)/bytes/1000/t.bin"
        case "sameHostOtherPort": other.url("/bytes/1000/t.bin")
        default: secure.url("/redirect-to?url=\(queryEncoded("https://127.0.0.1:\(secure.port)/bytes/1000/t.bin"))")
        }
        try await withTemporaryDirectory { dir in
            let url = Self.withUserinfo(origin, "/redirect-to?url=\(queryEncoded(target))")
            let outcome = try await haul(["-q", "--cacert", certificates.caFile] + Self.headerArguments + ["-d", dir.path, url], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(listFiles(dir) == ["redirect-to"])
            #expect(fileContents(dir.appendingPathComponent("redirect-to")) == served(1000))
            let all = origin.requests + other.requests + secure.requests
            #expect(all.count == (route == "httpsThenOtherHost" ? 3 : 2))
            #expect(all.first?.header("Authorization") == "Bearer hdr-secret-auth")
            #expect(all.first?.header("Cookie") == "sid=hdr-secret-cookie")
            Self.expectClean(Array(all.dropFirst()))
        }
    }

    @Test func userinfoWithoutAnAuthorizationHeaderStaysWithTheOrigin() async throws {
        let origin = try HaulServer()
        try await withTemporaryDirectory { dir in
            let url = Self.withUserinfo(origin, "/redirect-to?url=\(queryEncoded("http://localhost:\(origin.port)/bytes/10/u.bin"))")
            let outcome = try await haul(["-q", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 0)
            let requests = origin.requests
            #expect(requests.count == 2)
            #expect(requests.first?.header("Authorization") == "Basic " + Data("alice:pw-secret-userinfo".utf8).base64EncodedString())
            Self.expectClean(Array(requests.dropFirst()))
        }
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1/x", "data:text/plain,hi", "x-unknown://h/", "javascript:alert(1)"])
    func aRedirectToAnotherSchemeExitsSeven(location: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let url = server.url("/redirect-to?url=\(queryEncoded(location))")
            let outcome = try await haul(["--retries=0", "--json", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 7)
            #expect(outcome.errorLines.count == 1)
            #expect(outcome.errorLines.first?.hasPrefix("haul: \(url): redirect to ") == true, "\(outcome.standardError)")
            let failed = outcome.jsonEvents().last
            #expect((failed?["error"] as? [String: Any])?["code"] as? String == "redirectRefused")
            #expect(server.requests.count == 1)
            #expect(listFiles(dir) == [])
        }
    }

    @Test func httpsToHTTPExitsSeven() async throws {
        let certificates = TestCertificates.shared
        let secure = try HaulServer(configuration: .init(tls: certificates.serverIdentity))
        let plain = try HaulServer()
        try await withTemporaryDirectory { dir in
            let url = secure.url("/redirect-to?url=\(queryEncoded(plain.url("/bytes/10/d.bin")))")
            let outcome = try await haul(["--retries=0", "--cacert", certificates.caFile] + Self.headerArguments + ["-d", dir.path, url],
                                         in: dir)
            #expect(outcome.status == 7)
            #expect(outcome.errorLines.count == 1)
            #expect(outcome.errorLines.first?.contains("from https to http refused") == true, "\(outcome.standardError)")
            #expect(plain.requests.isEmpty)
            #expect(listFiles(dir) == [])
        }
    }

    @Test(arguments: [(20, Int32(0)), (21, 7)])
    func twentyHopsAreFollowedNotTwentyOne(hops: Int, status: Int32) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["--retries=0", "-q", "-d", dir.path, server.url("/redirect/\(hops)?to=%2Fbytes%2F100")], in: dir)
            #expect(outcome.status == status)
            #expect(listFiles(dir) == (status == 0 ? ["\(hops)"] : []))
            #expect(server.requests.count == 21)
        }
    }

    @Test func anAPIRedirectingToSignedStorageWorks() async throws {
        let api = try HaulServer()
        let storage = try HaulServer()
        let body = served(3000, seed: 7)
        storage.route("/bucket/report.bin") { request, connection in
            guard request.header("Authorization") == nil else {
                return try connection.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            }
            guard request.queryValue("X-Amz-Signature") == "amzsig-secret" else {
                return try connection.write("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            }
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n")
            try connection.write(body)
        }
        let signed = "http://localhost:\(storage.port)/bucket/report.bin?\(Self.signedQuery)"
        api.route("/api/report") { request, connection in
            let answer = request.header("Authorization") == "Bearer hdr-secret-auth"
                ? "307 Temporary Redirect\r\nLocation: \(signed)" : "401 Unauthorized"
            try connection.write("HTTP/1.1 \(answer)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["--json"] + Self.headerArguments + ["-d", dir.path, api.url("/api/report")], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(listFiles(dir) == ["report"])
            #expect(fileContents(dir.appendingPathComponent("report")) == body)
            #expect(storage.requests.count == 1)
            Self.expectClean(storage.requests)
            #expect(Self.leaks([outcome.standardOutput, outcome.standardError]).isEmpty)
        }
    }

    @Test(arguments: [false, true])
    func noSecretInStderrJSONOrTheResumeRecord(json: Bool) async throws {
        let api = try HaulServer()
        let storage = try HaulServer()
        let signed = "http://localhost:\(storage.port)/bytes/300000/obj.bin?\(Self.signedQuery)&drop-after=100000"
        api.route("/dl/file.bin") { _, connection in
            try connection.write("HTTP/1.1 302 Found\r\nLocation: \(signed)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        try await withTemporaryDirectory { dir in
            let url = Self.withUserinfo(api, "/dl/file.bin?token=token-secret&Policy=policy-secret")
            let outcome = try await haul((json ? ["--json"] : []) + ["--retries=0"] + Self.headerArguments + ["-d", dir.path, url],
                                         in: dir)
            #expect(outcome.status == 4)
            let shown = "http://127.0.0.1:\(api.port)/dl/file.bin?token=REDACTED&Policy=REDACTED"
            // Without --json, stderr also has the progress lines (which name the file, not the URL).
            let failures = outcome.errorLines.filter { $0.hasPrefix("haul: ") }
            #expect(failures.count == 1, "\(outcome.standardError)")
            #expect(failures.first?.hasPrefix("haul: \(shown): ") == true, "\(outcome.standardError)")
            if json {
                let events = outcome.jsonEvents()
                #expect(events.first?["url"] as? String == shown)
                #expect(events.last?["event"] as? String == "failed")
                #expect(jsonInteger(events.last?["exitCode"]) == 4)
            }
            #expect(listFiles(dir) == ["file.bin.part", "file.bin.resume"])
            let record = try String(contentsOf: dir.appendingPathComponent("file.bin.resume"), encoding: .utf8)
            #expect(record.contains("X-Amz-Signature=REDACTED"))
            let texts = [outcome.standardOutput, outcome.standardError, record]
            #expect(Self.leaks(texts).isEmpty, "\(texts)")
            #expect(texts.allSatisfy { !$0.contains("policy-secret") && !$0.contains("alice") })
            Self.expectClean(storage.requests)
        }
    }
}
