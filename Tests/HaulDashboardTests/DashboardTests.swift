@testable import HaulDashboard
import HaulDaemon
import Testing

/// The lookup the daemon's HTTP server calls: exact embedded paths only, GET and HEAD, 304 on a
/// matching tag, and the security headers on every answer.
@Suite struct DashboardTests {
    @Test func theRootAndIndexServeThePage() throws {
        let root = try #require(Dashboard.response(method: "GET", path: "/", ifNoneMatch: nil))
        let index = try #require(Dashboard.response(method: "GET", path: "/index.html", ifNoneMatch: nil))
        #expect(root.status == 200 && root.reason == "OK")
        #expect(root.value(forHeader: "content-type") == "text/html; charset=utf-8")
        #expect(root.body == index.body && root.value(forHeader: "ETag") == index.value(forHeader: "ETag"))
        #expect(String(decoding: root.body, as: UTF8.self).hasPrefix("<!doctype html>"))
    }

    @Test(arguments: Dashboard.paths)
    func everyPathServesItsFileWithItsType(path: String) throws {
        let response = try #require(Dashboard.response(method: "GET", path: path, ifNoneMatch: nil))
        let asset = try #require(Dashboard.asset(at: path))
        #expect(response.status == 200)
        #expect(response.body == asset.body)
        #expect(response.value(forHeader: "Content-Length") == String(asset.body.count))
        let types = ["html": "text/html", "js": "text/javascript", "css": "text/css", "svg": "image/svg+xml"]
        let fileName = path == "/" ? "index.html" : path
        let type = try #require(types[String(fileName.split(separator: ".").last ?? "")])
        #expect(response.value(forHeader: "Content-Type") == "\(type); charset=utf-8")
    }

    @Test(arguments: [
        "/jsonrpc", "/jsonrpc?tm=1", "/nope", "/app.js/", "//app.js", "/../app.js", "/./app.js",
        "/%2e%2e/app.js", "/app%2Ejs", "/%2Fapp.js", "/Assets/app.js", "/APP.JS", "app.js", "",
        "/static/../app.js", "/app.js%00", "/app.js;x", "http://127.0.0.1:6800/app.js",
        "/Dashboard.swift", "/Dashboard+Assets.swift", "/Assets", "/index.html/..",
    ])
    func aPathThatIsNotAnEmbeddedFileIsLeftToTheDaemon(path: String) {
        #expect(Dashboard.response(method: "GET", path: path, ifNoneMatch: nil) == nil)
        #expect(Dashboard.response(method: "POST", path: path, ifNoneMatch: nil) == nil)
    }

    @Test(arguments: ["/?token=x", "/index.html?", "/app.js?v=2&x=%2F..%2F", "/#fragment"])
    func aQueryStringIsIgnored(path: String) throws {
        let plainPath = String(path.prefix { $0 != "?" && $0 != "#" })
        let response = try #require(Dashboard.response(method: "GET", path: path, ifNoneMatch: nil))
        let plain = try #require(Dashboard.response(method: "GET", path: plainPath, ifNoneMatch: nil))
        #expect(response.body == plain.body)
    }

    @Test func headAnswersTheSameHeadWithoutABody() throws {
        let get = try #require(Dashboard.response(method: "GET", path: "/app.js", ifNoneMatch: nil))
        let head = try #require(Dashboard.response(method: "HEAD", path: "/app.js", ifNoneMatch: nil))
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.fields == get.fields)
        #expect(head.value(forHeader: "Content-Length") == String(get.body.count))
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "OPTIONS", "get", "TRACE", "CONNECT"])
    func otherMethodsAreRefused(method: String) throws {
        let response = try #require(Dashboard.response(method: method, path: "/", ifNoneMatch: nil))
        #expect(response.status == 405 && response.reason == "Method Not Allowed")
        #expect(response.value(forHeader: "Allow") == "GET, HEAD")
        #expect(response.value(forHeader: "Content-Length") == String(response.body.count))
        #expect(response.value(forHeader: "ETag") == nil)
    }

    @Test func aMatchingEntityTagAnswersNotModified() throws {
        let first = try #require(Dashboard.response(method: "GET", path: "/style.css", ifNoneMatch: nil))
        let tag = try #require(first.value(forHeader: "ETag"))
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && !tag.hasPrefix("W/"), "a strong tag")
        for header in [tag, "W/\(tag)", "\"other\", \(tag)", " \(tag) ", "*"] {
            let response = try #require(Dashboard.response(method: "GET", path: "/style.css", ifNoneMatch: header))
            #expect(response.status == 304 && response.body.isEmpty, "\(header)")
            #expect(response.value(forHeader: "ETag") == tag)
            #expect(response.value(forHeader: "Content-Length") == nil)
        }
        for header in ["\"other\"", "", tag.replacingFirstQuote(), "W/\"x\""] {
            let response = try #require(Dashboard.response(method: "GET", path: "/style.css", ifNoneMatch: header))
            #expect(response.status == 200, "\(header)")
        }
        let other = try #require(Dashboard.response(method: "GET", path: "/app.js", ifNoneMatch: nil))
        #expect(other.value(forHeader: "ETag") != tag, "each file its own tag")
    }

    @Test func asAPageProviderItJoinsTheRequestsEntityTags() throws {
        let tag = try #require(Dashboard.response(method: "GET", path: "/app.js", ifNoneMatch: nil)?.value(forHeader: "ETag"))
        let fields = [(name: "Host", value: "127.0.0.1"), (name: "If-None-Match", value: "\"other\""),
                      (name: "if-none-match", value: tag)]
        let head = HTTPRequestHead(method: "GET", target: "/app.js?v=1", fields: fields)
        #expect(Dashboard().response(to: head)?.status == 304, "the tag is in the second field")
        let plain = HTTPRequestHead(method: "HEAD", target: "/app.js", fields: [(name: "Host", value: "127.0.0.1")])
        let answer = try #require(Dashboard().response(to: plain))
        #expect(answer.status == 200 && answer.body.isEmpty && answer.value(forHeader: "ETag") == tag)
        #expect(Dashboard().response(to: HTTPRequestHead(method: "GET", target: "/jsonrpc")) == nil)
    }

    @Test(arguments: [("GET", nil), ("HEAD", nil), ("GET", "*"), ("POST", nil)] as [(String, String?)])
    func everyAnswerCarriesTheSecurityHeaders(method: String, ifNoneMatch: String?) throws {
        let response = try #require(Dashboard.response(method: method, path: "/", ifNoneMatch: ifNoneMatch))
        #expect(response.value(forHeader: "Content-Security-Policy")
            == "default-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
        #expect(response.value(forHeader: "X-Content-Type-Options") == "nosniff")
        #expect(response.value(forHeader: "Referrer-Policy") == "no-referrer")
        #expect(response.value(forHeader: "Cache-Control") != nil)
        let names = response.fields.map { $0.name.lowercased() }
        #expect(Set(names).count == names.count, "no header twice")
    }

    @Test func theAddressCarriesTheSecretInItsFragment() {
        #expect(Dashboard.address(host: "127.0.0.1", port: 6800, secret: "s3cret") == "http://127.0.0.1:6800/#token=s3cret")
        #expect(Dashboard.address(host: "::1", port: 6801, secret: "a b/c+d%é")
            == "http://[::1]:6801/#token=a%20b%2Fc%2Bd%25%C3%A9")
        #expect(Dashboard.address(host: "[::1]", port: 1, secret: nil) == "http://[::1]:1/")
        #expect(Dashboard.address(host: "localhost", port: 6800, secret: "") == "http://localhost:6800/")
    }
}

private extension String {
    /// The tag without its opening quote: not a tag at all, so it matches nothing.
    func replacingFirstQuote() -> String { String(dropFirst()) }
}
