import Testing
@testable import HaulHTTP
import HaulCore

/// ``ProxyURL/parse(_:)``: schemes, default ports, userinfo, and what is refused.
@Suite("proxy URLs")
struct ProxyURLTests {
    @Test("valid proxy URLs", arguments: [
        ("127.0.0.1:3128", "http://127.0.0.1:3128"),
        ("proxy.test", "http://proxy.test:1080"),
        ("http://proxy.test", "http://proxy.test:1080"),
        ("HTTP://Proxy.Test:8080/", "http://proxy.test:8080"),
        ("https://proxy.test", "https://proxy.test:443"),
        ("socks5://proxy.test", "socks5://proxy.test:1080"),
        ("socks5h://[::1]:9050", "socks5h://[::1]:9050"),
        ("http://[::1]", "http://[::1]:1080"),
    ])
    func valid(_ text: String, _ expected: String) throws {
        #expect(try ProxyURL.parse(text).description == expected)
    }

    @Test("userinfo is percent-decoded and becomes Proxy-Authorization, never the description")
    func credentials() throws {
        let proxy = try ProxyURL.parse("http://us%40er:p%3Ass@proxy.test:3128")
        #expect(proxy.user == "us@er")
        #expect(proxy.password == "p:ss")
        #expect(proxy.proxyAuthorization == "Basic " + Base64.encode(Array("us@er:p:ss".utf8)))
        #expect(!proxy.description.contains("us"))
        #expect(try ProxyURL.parse("http://user@p").proxyAuthorization == "Basic " + Base64.encode(Array("user:".utf8)))
        #expect(try ProxyURL.parse("http://p").proxyAuthorization == nil)
    }

    @Test("refused before any connection", arguments: [
        "ftp://proxy.test", "socks4://proxy.test", "socks://p", "http://proxy.test:0", "http://proxy.test:65536",
        "http://proxy.test:80a", "http://proxy.test:", "http://", "http://:8080", "http://p\r\nX: y", "http://p\n",
        "http://p:1\r", "http://u:p\r\n@p", "http://pro xy", "http://p/path", "http://p?q", "http://[::1", "http://[zz]:1",
        "http://u:%zz@p", "http://p_a$:1",
    ])
    func refused(_ text: String) {
        #expect(throws: HTTPClientError.self) { try ProxyURL.parse(text) }
        if let error = (try? ProxyURL.parse(text)).map({ _ in nil }) ?? capture(text) {
            #expect(error.kind == .invalidProxy)
            #expect(!error.message.contains("\r") && !error.message.contains("\n"))
        }
    }

    private func capture(_ text: String) -> HTTPClientError? {
        do { _ = try ProxyURL.parse(text); return nil } catch { return error }
    }

    @Test("the password never appears in a refusal")
    func passwordNotInMessage() {
        let error = capture("ftp://user:hunter2@p")
        #expect(error != nil)
        #expect(error?.message.contains("hunter2") == false)
    }
}
