import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// Issue 4, "Redirects and secrets": where redirects may go and what follows them, through the library.
///
/// Exclusive: one redirect target is paced at 4 MB/s.
@Suite("Hostile redirects", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct HostileRedirectTests {
    /// Where a redirect from `http://127.0.0.1:A` sends the client.
    enum Elsewhere: String, CaseIterable, Sendable {
        case otherHostSamePort, sameHostOtherPort, otherHostOtherPort
    }

    /// `original` with user `alice` and the planted password.
    static func withUserinfo(_ original: String) -> URL {
        var components = URLComponents(string: original)!
        components.user = "alice"
        components.percentEncodedPassword = PlantedSecret.password
        return components.url!
    }

    /// The Basic credentials the planted userinfo becomes.
    static let basic = "Basic " + Data("alice:\(PlantedSecret.password)".utf8).base64EncodedString()

    /// Checks `request` carries every planted header in `headers`; without an `Authorization`
    /// header there, the userinfo's Basic credentials must have been sent instead.
    static func expectAllSecrets(_ request: RecordedRequest?, headers: [(name: String, value: String)] = PlantedSecret.headers,
                                 sourceLocation: SourceLocation = #_sourceLocation) {
        for (name, value) in headers {
            #expect(request?.header(name) == value, sourceLocation: sourceLocation)
        }
        if !headers.contains(where: { $0.name == "Authorization" }) {
            #expect(request?.header("Authorization") == basic, sourceLocation: sourceLocation)
        }
    }

    /// The planted headers without `Authorization`, so the userinfo's credentials are sent.
    static let headersLeavingRoomForUserinfo = PlantedSecret.headers.filter { $0.name != "Authorization" }

    @Test("the user's headers and userinfo reach the original origin only", arguments: Elsewhere.allCases)
    func secretsStayWithTheOrigin(elsewhere: Elsewhere) async throws {
        let origin = try HaulServer()
        let other = try HaulServer()
        let target = switch elsewhere {
        case .otherHostSamePort: "http://localhost:\(origin.port)/bytes/1000/t.bin"
        case .sameHostOtherPort: other.url("/bytes/1000/t.bin")
        case .otherHostOtherPort: "http://localhost:\(other.port)/bytes/1000/t.bin"
        }
        let request = DownloadRequest(url: Self.withUserinfo(origin.url("/redirect-to?url=\(encodedQueryValue(target))&status=307")),
                                      headers: Self.headersLeavingRoomForUserinfo)
        try await withTemporaryDirectory { dir in
            let result = try await testDownloader().file(from: request, to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(1000))
            #expect(listFiles(dir) == ["redirect-to"])
            let all = origin.requests + other.requests
            #expect(all.count == 2)
            #expect(all.first?.path == "/redirect-to")
            Self.expectAllSecrets(all.first, headers: Self.headersLeavingRoomForUserinfo)
            let second = try #require(all.last)
            #expect(second.path == "/bytes/1000/t.bin")
            #expect(second.header("Host") == (elsewhere == .sameHostOtherPort ? "127.0.0.1" : "localhost") + ":\(URL(string: target)!.port!)")
            expectNoSecrets(in: [second], "\(elsewhere)")
        }
    }

    @Test("an http -> https -> other host chain strips every secret at the first hop, for good")
    func httpToHTTPSToOtherHost() async throws {
        let certificates = TestCertificates.shared
        let origin = try HaulServer()
        let secure = try HaulServer(configuration: .init(tls: certificates.serverIdentity))  // https://localhost:P
        let last = try HaulServer(configuration: .init(tls: certificates.serverIdentity))
        let final = "https://127.0.0.1:\(last.port)/bytes/2000/chain.bin"
        let middle = secure.url("/redirect-to?url=\(encodedQueryValue(final))&status=308")
        let request = DownloadRequest(url: Self.withUserinfo(origin.url("/redirect-to?url=\(encodedQueryValue(middle))")),
                                      headers: PlantedSecret.headers)
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.tls = .init(extraCAFile: certificates.caFile) }
            let result = try await downloader.file(from: request, to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(2000))
            #expect(origin.requests.count == 1)
            Self.expectAllSecrets(origin.requests.first)
            #expect(secure.requests.count == 1)
            #expect(last.requests.count == 1)
            expectNoSecrets(in: secure.requests, "the https hop")
            expectNoSecrets(in: last.requests, "the other host")
        }
    }

    @Test("secrets dropped on leaving the origin stay dropped when a later hop comes back")
    func comingBackDoesNotRestoreSecrets() async throws {
        let origin = try HaulServer()
        let other = try HaulServer()
        let back = origin.url("/bytes/500/back.bin")
        let away = other.url("/redirect-to?url=\(encodedQueryValue(back))")
        let request = DownloadRequest(url: Self.withUserinfo(origin.url("/redirect-to?url=\(encodedQueryValue(away))")),
                                      headers: Self.headersLeavingRoomForUserinfo)
        try await withTemporaryDirectory { dir in
            _ = try await testDownloader().file(from: request, to: .directory(dir))
            #expect(origin.requests.map(\.path) == ["/redirect-to", "/bytes/500/back.bin"])
            Self.expectAllSecrets(origin.requests.first, headers: Self.headersLeavingRoomForUserinfo)
            expectNoSecrets(in: Array(origin.requests.dropFirst()) + other.requests, "a hop after leaving the origin")
        }
    }

    @Test("every connection of a split download follows the redirect without carrying secrets across")
    func segmentedDownloadAcrossOrigins() async throws {
        let origin = try HaulServer()
        let other = try HaulServer()
        let size = 2 << 20
        let target = other.url("/bytes/\(size)/split.bin?rate=4000000")
        let request = DownloadRequest(url: Self.withUserinfo(origin.url("/redirect-to?url=\(encodedQueryValue(target))")),
                                      headers: PlantedSecret.headers)
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.minimumSegmentSize = 128 << 10 }
            let result = try await downloader.file(from: request, to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(size))
            #expect(other.requests.count > 1, "the download was not split")
            #expect(origin.requests.count == other.requests.count)
            for sent in origin.requests { Self.expectAllSecrets(sent) }
            expectNoSecrets(in: other.requests, "a segment on the other origin")
        }
    }

    @Test("a redirect to a scheme other than http(s) is refused (exit 7) and never followed", arguments: [
        "file:///etc/passwd", "FILE:/etc/passwd", "ftp://127.0.0.1/x", "data:text/plain,hi", "javascript:alert(1)",
        "x-unknown://127.0.0.1/x", "mailto:a@b.example",
    ])
    func schemeRefused(location: String) async throws {
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            let request = DownloadRequest(url: url(server, "/redirect-to?url=\(encodedQueryValue(location))"))
            let error = await expectFailure(testDownloader(), request, to: .directory(dir))
            #expect(error?.code == .redirectRefused)
            #expect(error?.code.exitStatus == 7)
            #expect(server.requests.count == 1)
            #expect(listFiles(dir) == [])
        }
    }

    @Test("https -> http is refused (exit 7); the plain server never hears from us")
    func downgradeRefused() async throws {
        let certificates = TestCertificates.shared
        let secure = try HaulServer(configuration: .init(tls: certificates.serverIdentity))
        let plain = try HaulServer()
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.tls = .init(extraCAFile: certificates.caFile) }
            let request = DownloadRequest(url: url(secure, "/redirect-to?url=\(encodedQueryValue(plain.url("/bytes/10/d.bin")))"),
                                          headers: PlantedSecret.headers)
            let error = await expectFailure(downloader, request, to: .directory(dir))
            #expect(error?.code == .redirectRefused)
            #expect(error?.code.exitStatus == 7)
            #expect(plain.requests.isEmpty)
            #expect(listFiles(dir) == [])
        }
    }

    @Test("a redirect loop between two servers stops at the first repeat (exit 7)")
    func pingPongLoop() async throws {
        let first = try HaulServer()
        let second = try HaulServer()
        let ping = first.url("/ping"), pong = second.url("/pong")
        first.route("/ping") { _, connection in
            try connection.write("HTTP/1.1 302 Found\r\nLocation: \(pong)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        second.route("/pong") { _, connection in
            try connection.write("HTTP/1.1 302 Found\r\nLocation: \(ping)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        await withTemporaryDirectory { dir in
            let error = await expectFailure(testDownloader(), DownloadRequest(url: URL(string: ping)!), to: .directory(dir))
            #expect(error?.code == .tooManyRedirects)
            #expect(error?.code.exitStatus == 7)
            #expect(first.requests.count == 1)
            #expect(second.requests.count == 1)
            #expect(listFiles(dir) == [])
        }
    }

    @Test("20 redirects are followed; the 21st is refused (exit 7)", arguments: [(20, true), (21, false)])
    func hopLimit(hops: Int, succeeds: Bool) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let request = DownloadRequest(url: url(server, "/redirect/\(hops)?to=%2Fbytes%2F100"))
            if succeeds {
                let result = try await testDownloader().file(from: request, to: .directory(dir))
                #expect(result.fileURL.lastPathComponent == "\(hops)")
                #expect(listFiles(dir) == ["\(hops)"])
            } else {
                let error = await expectFailure(testDownloader(), request, to: .directory(dir))
                #expect(error?.code == .tooManyRedirects)
                #expect(error?.code.exitStatus == 7)
                #expect(listFiles(dir) == [])
            }
            #expect(server.requests.count == 21)
        }
    }

    @Test("an API that redirects to signed storage works because the API's credentials are not sent there")
    func apiToSignedStorage() async throws {
        let api = try HaulServer()
        let storage = try SignedStorage()
        let signed = "http://localhost:\(storage.server.port)/bucket/report.bin?\(PlantedSecret.signedQuery)&X-Amz-Expires=60"
        api.route("/api/files/42/content") { request, connection in
            guard request.header("Authorization") == "Bearer hdr-secret-auth" else {
                return try connection.write("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            }
            try connection.write("HTTP/1.1 307 Temporary Redirect\r\nLocation: \(signed)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        try await withTemporaryDirectory { dir in
            let request = DownloadRequest(url: url(api, "/api/files/42/content"), headers: PlantedSecret.headers)
            let result = try await testDownloader().file(from: request, to: .directory(dir))
            #expect(result.fileURL.lastPathComponent == "report.bin")  // the storage's Content-Disposition
            #expect(try contents(result.fileURL) == SignedStorage.body)
            #expect(listFiles(dir) == ["report.bin"])
            #expect(storage.server.requests.count == 1)
            expectNoSecrets(in: storage.server.requests, "the storage")
        }
    }
}

/// A storage server that, like S3, refuses a request carrying both a signed URL and an
/// `Authorization` header (400), refuses a wrong signature (403), and serves the object otherwise.
struct SignedStorage {
    /// The object's bytes.
    static let body = expectedContent(3000, seed: 7)
    /// The server.
    let server: HaulServer

    init() throws {
        server = try HaulServer()
        server.route("/bucket/report.bin") { request, connection in
            let status: String
            if request.header("Authorization") != nil {
                status = "400 Bad Request"  // "Only one auth mechanism allowed"
            } else if request.queryValue("X-Amz-Signature") != "amzsig-secret" {
                status = "403 Forbidden"
            } else {
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(Self.body.count)\r\nContent-Type: application/octet-stream\r\n"
                    + "Content-Disposition: attachment; filename=\"report.bin\"\r\nConnection: close\r\n\r\n")
                return try connection.write(Self.body)
            }
            try connection.write("HTTP/1.1 \(status)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
    }
}
