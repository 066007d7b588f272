import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// `-u`, netrc and cookies end to end: what each origin of a redirect chain received.
@Suite("credentials and cookies on the wire", .throttled)
struct CredentialsCookiesTests {
    static func basic(_ text: String) -> String { "Basic " + Data(text.utf8).base64EncodedString() }

    @Test("netrc is looked up again for each host; -u and URL userinfo win on the first origin")
    func netrcPerHost() async throws {
        let second = try origin(), first = try origin()
        try await withTemporaryDirectory { dir in
            let netrc = NetrcFile(parsing: "machine 127.0.0.1 login one password p1\nmachine localhost login two password p2")
            let downloader = testDownloader { $0.netrc = netrc }
            let hop = "http://localhost:\(second.port)/bytes/100/n.bin"
            _ = try await downloader.file(from: url(first, "/redirect-to?url=\(hop)"), to: .directory(dir))
            #expect(first.requests.last?.header("authorization") == Self.basic("one:p1"))
            #expect(second.requests.last?.header("authorization") == Self.basic("two:p2"))
            var request = DownloadRequest(url: url(first, "/redirect-to?url=\(hop)"))
            request.credentials = Credentials(user: "cli", password: "cp")
            request.key = "again"
            _ = try await downloader.file(from: request, to: .file(dir.appendingPathComponent("m.bin")))
            #expect(first.requests.last?.header("authorization") == Self.basic("cli:cp"))
            #expect(second.requests.last?.header("authorization") == Self.basic("two:p2"), "-u never follows to another origin")
            let userOnly = URL(string: "http://one@127.0.0.1:\(first.port)/bytes/10/u.bin")!
            _ = try await downloader.file(from: userOnly, to: .directory(dir))
            #expect(first.requests.last?.header("authorization") == Self.basic("one:p1"))
        }
    }

    @Test("cookies go where they match, redirects included; secure ones to loopback too")
    func cookies() async throws {
        let second = try origin(), first = try origin()
        try await withTemporaryDirectory { dir in
            let jar = CookieFile(parsing: """
                127.0.0.1\tFALSE\t/\tFALSE\t0\tfirst\t1
                localhost\tFALSE\t/bytes\tTRUE\t0\tsecond\t2
                localhost\tFALSE\t/other\tFALSE\t0\tnever\t3
                example.com\tTRUE\t/\tFALSE\t0\telsewhere\t4
                """)
            let downloader = testDownloader { $0.cookies = jar }
            let hop = "http://localhost:\(second.port)/bytes/100/c.bin"
            _ = try await downloader.file(from: url(first, "/redirect-to?url=\(hop)"), to: .directory(dir))
            #expect(first.requests.last?.header("cookie") == "first=1")
            #expect(second.requests.last?.header("cookie") == "second=2")
        }
    }
}
