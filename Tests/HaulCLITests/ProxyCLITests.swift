import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// Proxies, logins and cookies with the real `haul` binary: the environment rules, exit
/// statuses, warnings, and secrets kept out of every output and file.
@Suite("proxies, logins and cookies (CLI)", .throttled)
struct ProxyCLITests {
    func run(_ arguments: [String], in dir: URL, environment: [String: String] = [:]) async throws -> HaulBinary.Outcome {
        try await HaulProcess(arguments, in: dir, environment: environment).finish()
    }

    @Test("http_proxy is read, HTTP_PROXY is not; --proxy= and --noproxy turn the proxy off")
    func environmentRules() async throws {
        let server = try HaulServer()
        let proxy = try ProxyServer()
        try await withTemporaryDirectory { dir in
            let target = server.url("/bytes/1000/e.bin")
            var outcome = try await run(["-q", "-o", "a.bin", target], in: dir, environment: ["http_proxy": proxy.url])
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(proxy.requests.count == 1)
            outcome = try await run(["-q", "-o", "b.bin", target], in: dir, environment: ["HTTP_PROXY": proxy.url])
            #expect(outcome.status == 0)
            outcome = try await run(["-q", "--proxy=", "-o", "c.bin", target], in: dir, environment: ["http_proxy": proxy.url])
            #expect(outcome.status == 0)
            outcome = try await run(["-q", "--noproxy=127.0.0.0/8", "-o", "d.bin", target], in: dir,
                                    environment: ["http_proxy": proxy.url])
            #expect(outcome.status == 0)
            outcome = try await run(["-q", "--noproxy=", "-o", "f.bin", target], in: dir,
                                    environment: ["http_proxy": proxy.url, "no_proxy": "127.0.0.1"])
            #expect(outcome.status == 0)
            #expect(proxy.requests.count == 2, "only http_proxy and the cancelled no_proxy went through the proxy")
            #expect(server.requests.count == 5)
        }
    }

    @Test("a bad proxy URL exits 2 before any connection, without repeating its password", arguments: [
        ["--proxy=ftp://u:pxsecret@127.0.0.1:1"], ["--proxy=http://u:pxsecret@127.0.0.1:70000"], ["--proxy=http://h\r\n:1"],
        ["--proxy=socks4://127.0.0.1:1"],
    ])
    func badProxy(_ arguments: [String]) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let outcome = try await run(arguments + [server.url("/bytes/10")], in: dir)
            #expect(outcome.status == 2)
            #expect(!outcome.standardError.contains("pxsecret"))
            #expect(server.connectionCount == 0)
        }
    }

    @Test("a bad proxy in the environment exits 2 too")
    func badEnvironmentProxy() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let outcome = try await run([server.url("/bytes/10")], in: dir, environment: ["all_proxy": "gopher://x"])
            #expect(outcome.status == 2)
            #expect(server.connectionCount == 0)
        }
    }

    @Test("secrets never reach stderr, --json, the resume record or the partial's folder", arguments: [false, true])
    func secretsStaySecret(json: Bool) async throws {
        let server = try HaulServer()
        let proxy = try ProxyServer(configuration: .init(user: "pu", password: "pxsecret"))
        try await withTemporaryDirectory { dir in
            let netrc = dir.appendingPathComponent("netrc")
            try "machine other.test login nu password nsecret\n".write(to: netrc, atomically: true, encoding: .utf8)
            chmod(netrc.path, 0o600)
            let cookies = dir.appendingPathComponent("cookies.txt")
            try "127.0.0.1\tFALSE\t/\tFALSE\t0\tsid\tcksecret\n".write(to: cookies, atomically: true, encoding: .utf8)
            let arguments = (json ? ["--json"] : []) + [
                "--retries=0", "--proxy=http://pu:pxsecret@127.0.0.1:\(proxy.port)", "-u", "ou:usecret", "--netrc-file", netrc.path,
                "-b", cookies.path, "-d", dir.appendingPathComponent("out").path, server.url("/bytes/400000/s.bin?drop-after=100000"),
            ]
            let outcome = try await run(arguments, in: dir)
            #expect(outcome.status == 4, "\(outcome.standardError)")
            var texts = [outcome.standardOutput, outcome.standardError]
            for name in listFiles(dir.appendingPathComponent("out")) where !name.hasSuffix(".part") {
                texts.append((try? String(contentsOf: dir.appendingPathComponent("out/\(name)"), encoding: .utf8)) ?? "")
            }
            #expect(listFiles(dir.appendingPathComponent("out")).contains("s.bin.resume"))
            for text in texts {
                for secret in ["pxsecret", "usecret", "cksecret", "nsecret", Data("pu:pxsecret".utf8).base64EncodedString()] {
                    #expect(!text.contains(secret), "\(secret) leaked: \(text)")
                }
            }
            // They did reach where they belong.
            #expect(proxy.requests.first?.header("proxy-authorization") == "Basic " + Data("pu:pxsecret".utf8).base64EncodedString())
            #expect(server.requests.first?.header("cookie") == "sid=cksecret")
            #expect(server.requests.first?.header("proxy-authorization") == nil)
        }
    }

    @Test("a netrc file others may read is refused with a warning; a private one is used")
    func netrcPermissions() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let netrc = dir.appendingPathComponent(".netrc")
            try "machine 127.0.0.1 login nu password np".write(to: netrc, atomically: true, encoding: .utf8)
            chmod(netrc.path, 0o644)
            var outcome = try await run(["-n", "-o", "a.bin", server.url("/bytes/10")], in: dir, environment: ["HOME": dir.path])
            #expect(outcome.status == 0)
            #expect(outcome.standardError.contains("warning:") && outcome.standardError.contains("chmod 600"))
            #expect(server.requests.last?.header("authorization") == nil)
            chmod(netrc.path, 0o600)
            outcome = try await run(["-q", "-n", "-o", "b.bin", server.url("/bytes/10")], in: dir, environment: ["HOME": dir.path])
            #expect(outcome.status == 0)
            #expect(server.requests.last?.header("authorization") == "Basic " + Data("nu:np".utf8).base64EncodedString())
            outcome = try await run(["-q", "-o", "c.bin", server.url("/bytes/10")], in: dir,
                                    environment: ["HOME": "/nonexistent", "NETRC": netrc.path])
            #expect(server.requests.last?.header("authorization") == nil, "without -n no netrc is read")
            outcome = try await run(["-q", "-n", "-o", "d.bin", server.url("/bytes/10")], in: dir,
                                    environment: ["HOME": "/nonexistent", "NETRC": netrc.path])
            #expect(server.requests.last?.header("authorization") == "Basic " + Data("nu:np".utf8).base64EncodedString())
        }
    }

    @Test("-b: malformed lines are skipped with one warning; -u goes to the origin")
    func cookiesAndUser() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let cookies = dir.appendingPathComponent("c.txt")
            try "bad line\nalso bad\n127.0.0.1\tFALSE\t/\tFALSE\t0\ta\tb\n".write(to: cookies, atomically: true, encoding: .utf8)
            let outcome = try await run(["-b", cookies.path, "-u", "me:pw", "-o", "x.bin", server.url("/bytes/10")], in: dir)
            #expect(outcome.status == 0)
            #expect(outcome.errorLines.filter { $0.contains("warning:") && $0.contains("cookies.txt") }.count == 1)
            #expect(server.requests.last?.header("cookie") == "a=b")
            #expect(server.requests.last?.header("authorization") == "Basic " + Data("me:pw".utf8).base64EncodedString())
            let missing = try await run(["-b", dir.appendingPathComponent("none").path, server.url("/bytes/10")], in: dir)
            #expect(missing.status == 2)
        }
    }

    @Test("407 exits 6 with no file; the urlsession engine refuses a proxy it cannot honour (exit 2)")
    func refusals() async throws {
        let server = try HaulServer()
        let proxy = try ProxyServer(configuration: .init(user: "pu", password: "pp"))
        try await withTemporaryDirectory { dir in
            let refused = try await run(["--retries=0", "--proxy=\(proxy.url)", server.url("/bytes/10/n.bin")], in: dir)
            #expect(refused.status == 6)
            #expect(listFiles(dir) == [])
            let session = try await run(["--engine=urlsession", "--proxy=\(proxy.url)", server.url("/bytes/10/u.bin")], in: dir)
            #expect(session.status == 2, "\(session.standardError)")
            #expect(session.standardError.contains("does not support proxies"))
        }
    }
}
