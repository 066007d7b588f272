import Testing
@testable import HaulHTTP

/// ``SOCKS5Handshake``: RFC 1928/1929 byte by byte, without sockets.
@Suite("SOCKS5 handshake")
struct SOCKS5HandshakeTests {
    func machine(_ target: SOCKS5Handshake.Target = .name("origin.test"), port: Int = 443, user: String? = nil,
                 password: String? = nil) throws -> SOCKS5Handshake {
        try SOCKS5Handshake(target: target, port: port, user: user, password: password, proxy: "socks5h://p:1080")
    }

    @Test("no credentials: offers only no-authentication, sends the name as ATYP 3")
    func nameWithoutCredentials() throws {
        var socks = try machine()
        #expect(socks.greeting == [5, 1, 0])
        #expect(socks.bytesWanted == 2)
        guard case .send(let request) = socks.received([5, 0]) else { Issue.record("no request"); return }
        #expect(request == [5, 1, 0, 3, 11] + Array("origin.test".utf8) + [1, 187])
        #expect(socks.bytesWanted == 4)
        guard case .needMore = socks.received([5, 0, 0, 1]) else { Issue.record("head"); return }
        #expect(socks.bytesWanted == 6)
        guard case .done = socks.received([127, 0, 0, 1, 0, 80]) else { Issue.record("not done"); return }
        #expect(socks.bytesWanted == 0)
    }

    @Test("with credentials: offers both, then RFC 1929")
    func credentials() throws {
        var socks = try machine(.address(IPAddress("127.0.0.1")!), port: 8080, user: "bob", password: "pw")
        #expect(socks.greeting == [5, 2, 0, 2])
        guard case .send(let auth) = socks.received([5, 2]) else { Issue.record("no auth"); return }
        #expect(auth == [1, 3] + Array("bob".utf8) + [2] + Array("pw".utf8))
        guard case .send(let request) = socks.received([1, 0]) else { Issue.record("no request"); return }
        #expect(request == [5, 1, 0, 1, 127, 0, 0, 1, 0x1F, 0x90])
        // The proxy may still choose no authentication when both were offered.
        var other = try machine(user: "bob", password: "pw")
        guard case .send = other.received([5, 0]) else { Issue.record("no request"); return }
    }

    @Test("IPv6 targets go as ATYP 4")
    func ipv6() throws {
        var socks = try machine(.address(IPAddress("::1")!), port: 1)
        guard case .send(let request) = socks.received([5, 0]) else { Issue.record("no request"); return }
        #expect(request == [5, 1, 0, 4] + [UInt8](repeating: 0, count: 15) + [1, 0, 1])
    }

    @Test("a reply with a name as bound address is read to its exact length")
    func variableLengthReply() throws {
        var socks = try machine()
        _ = socks.received([5, 0])
        _ = socks.received([5, 0, 0, 3])
        #expect(socks.bytesWanted == 1)
        _ = socks.received([9])
        #expect(socks.bytesWanted == 11)
        guard case .needMore = socks.received(Array("localhos".utf8)) else { Issue.record("early"); return }
        #expect(socks.bytesWanted == 3)
        guard case .done = socks.received(Array("t".utf8) + [0, 80]) else { Issue.record("not done"); return }
    }

    func failure(_ steps: [[UInt8]], user: String? = nil) throws -> HTTPClientError? {
        var socks = try machine(user: user, password: user == nil ? nil : "pw")
        for step in steps {
            if case .failed(let error) = socks.received(step) { return error }
        }
        return nil
    }

    @Test("a method that was not offered is refused")
    func unofferedMethod() throws {
        #expect(try failure([[5, 2]])?.kind == .proxyFailure)
        #expect(try failure([[5, 0x80]], user: "bob")?.kind == .proxyFailure)
        #expect(try failure([[5, 1]])?.kind == .proxyFailure)
    }

    @Test("no acceptable method and refused credentials are authentication failures")
    func authentication() throws {
        #expect(try failure([[5, 0xFF]])?.kind == .proxyAuthenticationRefused)
        #expect(try failure([[5, 2], [1, 1]], user: "bob")?.kind == .proxyAuthenticationRefused)
    }

    @Test("reply codes become clear errors", arguments: Array(UInt8(1)...9))
    func replyCodes(_ code: UInt8) throws {
        let error = try failure([[5, 0], [5, code, 0, 1]])
        #expect(error?.kind == .proxyFailure)
        #expect(error?.message.contains(SOCKS5Handshake.replyText(code)) == true)
    }

    @Test("malformed replies fail", arguments: [
        [[4, 0]], [[5, 0], [4, 0, 0, 1]], [[5, 0], [5, 0, 0, 9]], [[5, 0], [5, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7]],
    ] as [[[UInt8]]])
    func malformed(_ steps: [[UInt8]]) throws {
        #expect(try failure(steps)?.kind == .proxyFailure)
    }

    @Test("a truncated reply only ever asks for the rest, and a close fails")
    func truncated() throws {
        var socks = try machine()
        _ = socks.received([5, 0])
        guard case .needMore = socks.received([5, 0]) else { Issue.record("should wait"); return }
        #expect(socks.bytesWanted == 2)
        #expect(socks.inputEnded().kind == .proxyFailure)
    }

    @Test("fields over 255 bytes are refused locally")
    func longFields() throws {
        #expect(throws: HTTPClientError.self) { try machine(.name(String(repeating: "a", count: 256))) }
        #expect(throws: Never.self) { try machine(.name(String(repeating: "a", count: 255))) }
        #expect(throws: HTTPClientError.self) { try machine(user: String(repeating: "u", count: 256), password: "p") }
        #expect(throws: HTTPClientError.self) { try machine(user: "u", password: String(repeating: "p", count: 256)) }
        #expect(throws: HTTPClientError.self) { try machine(user: "", password: "p") }
    }
}
