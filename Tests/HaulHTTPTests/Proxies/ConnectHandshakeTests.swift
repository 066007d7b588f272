import Testing
@testable import HaulHTTP
import HaulCore

/// ``ConnectHandshake``: the CONNECT request and every kind of answer, without sockets.
@Suite("CONNECT handshake")
struct ConnectHandshakeTests {
    func handshake(_ proxy: String = "http://p:3128", host: String = "origin.test", port: Int = 443) throws -> ConnectHandshake {
        let url = try HTTPURL.parse("https://\(host.contains(":") ? "[\(host)]" : host):\(port)/")
        return ConnectHandshake(host: url.host, isIPv6Literal: url.isIPv6Literal, port: port, userAgent: "haul/1",
                                proxy: try ProxyURL.parse(proxy))
    }

    func feed(_ machine: inout ConnectHandshake, _ text: String) -> ConnectHandshake.Action {
        Array(text.utf8).withUnsafeBytes { machine.received($0) }
    }

    @Test("the request carries Host, User-Agent and Proxy-Authorization only")
    func request() throws {
        #expect(String(decoding: try handshake().request, as: UTF8.self)
                == "CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\nUser-Agent: haul/1\r\n\r\n")
        let withCredentials = String(decoding: try handshake("http://al%20ice:s3cret@p:1").request, as: UTF8.self)
        #expect(withCredentials == "CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\nUser-Agent: haul/1\r\n"
                + "Proxy-Authorization: Basic \(Base64.encode(Array("al ice:s3cret".utf8)))\r\n\r\n")
        let v6 = String(decoding: try handshake(host: "::1", port: 8443).request, as: UTF8.self)
        #expect(v6.hasPrefix("CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n"))
    }

    @Test("any 2xx opens the tunnel; its Content-Length and Transfer-Encoding are ignored", arguments: [
        "HTTP/1.1 200 Connection established\r\n\r\n",
        "HTTP/1.0 200 OK\r\n\r\n",
        "HTTP/1.1 204 No Content\r\n\r\n",
        "HTTP/1.1 299 Odd\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
    ])
    func opens(_ answer: String) throws {
        var machine = try handshake()
        guard case .established = feed(&machine, answer) else { Issue.record("not established"); return }
    }

    @Test("the answer may come a byte at a time")
    func byteByByte() throws {
        var machine = try handshake()
        let answer = Array("HTTP/1.1 200 OK\r\nVia: x\r\n\r\n".utf8)
        for (index, byte) in answer.enumerated() {
            let action = [byte].withUnsafeBytes { machine.received($0) }
            if index < answer.count - 1 {
                guard case .needMore = action else { Issue.record("early at \(index)"); return }
            } else {
                guard case .established = action else { Issue.record("not established"); return }
            }
        }
    }

    func failure(_ answer: String, proxy: String = "http://p:3128") throws -> HTTPClientError? {
        var machine = try handshake(proxy)
        if case .failed(let error) = feed(&machine, answer) { return error }
        return nil
    }

    @Test("a 2xx followed by bytes is not a tunnel")
    func bodyAfter200() throws {
        let error = try failure("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        #expect(error?.kind == .tunnelRefused)
    }

    @Test("other answers are refusals or not a tunnel", arguments: [
        ("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n", HTTPClientError.Kind.proxyAuthenticationRefused),
        ("HTTP/1.1 403 Forbidden\r\n\r\n", .proxyAuthenticationRefused),
        ("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=x\r\n\r\n", .proxyAuthenticationRefused),
        ("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 4\r\n\r\nfile", .tunnelRefused),
        ("HTTP/1.1 301 Moved\r\nLocation: http://x/\r\n\r\n", .tunnelRefused),
        ("HTTP/1.1 500 Oops\r\n\r\n", .tunnelRefused),
        ("SSH-2.0-OpenSSH\r\n\r\n", .tunnelRefused),
    ] as [(String, HTTPClientError.Kind)])
    func refusals(_ answer: String, _ kind: HTTPClientError.Kind) throws {
        #expect(try failure(answer)?.kind == kind)
    }

    @Test("407 says what to do: give credentials, they were refused, or Basic is not offered")
    func proxyAuthenticationMessages() throws {
        let basic = "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"x\"\r\n\r\n"
        #expect(try failure(basic)?.message.contains("requires authentication") == true)
        let refused = try failure(basic, proxy: "http://u:secret@p:1")
        #expect(refused?.message.contains("refused the credentials") == true)
        #expect(refused?.message.contains("secret") == false)
        let negotiate = "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Negotiate\r\nProxy-Authenticate: NTLM\r\n\r\n"
        let other = try failure(negotiate, proxy: "http://u:secret@p:1")
        #expect(other?.message.contains("Negotiate, NTLM") == true)
        #expect(other?.message.contains("Basic only") == true)
    }

    @Test("a close before the answer is a reset")
    func closed() throws {
        var machine = try handshake()
        _ = feed(&machine, "HTTP/1.1 200")
        #expect(machine.inputEnded().kind == .connectionReset)
    }
}
