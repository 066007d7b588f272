import HaulHTTP
import Testing

/// The one authority parser, by bytes: hosts, IPv6 literals and ports, for URLs and proxies.
@Suite struct AuthorityTests {
    static func parse(_ text: String, emptyPortAllowed: Bool = true) throws(Authority.Failure) -> Authority {
        try Authority.parse(Array(text.utf8)[...], emptyPortAllowed: emptyPortAllowed)
    }

    @Test func hostsLiteralsAndPorts() throws {
        #expect(try Self.parse("Example.COM:8080") == Authority(host: "example.com", isIPv6Literal: false, port: 8080))
        #expect(try Self.parse("[::1]") == Authority(host: "::1", isIPv6Literal: true, port: nil))
        #expect(try Self.parse("[FE80::1]:443") == Authority(host: "fe80::1", isIPv6Literal: true, port: 443))
        #expect(try Self.parse("h:") == Authority(host: "h", isIPv6Literal: false, port: nil))
        #expect(try Self.parse("127.0.0.1:65535").port == 65535)
    }

    @Test(arguments: [
        ("[::1", Authority.Failure.unclosedBracket), ("[zz::1]", .notIPv6("zz::1")), ("[::1\u{0}]", .notIPv6("::1\u{0}")),
        ("[127.0.0.1]", .notIPv6("127.0.0.1")), ("[::1]x", .junkAfterBracket), (":80", .emptyHost), ("", .emptyHost),
        ("é.example", .nonASCIIHost), ("a b", .badHostCharacter), ("host!", .badHostCharacter), ("h:0", .badPort),
        ("h:65536", .badPort), ("h:8o", .badPort), ("h:000080", .badPort),
    ])
    func refused(_ text: String, _ failure: Authority.Failure) {
        #expect(throws: failure) { try Self.parse(text) }
    }

    @Test func anEmptyPortIsRefusedWhereItIsNotAllowed() {
        #expect(throws: Authority.Failure.badPort) { try Self.parse("proxy:", emptyPortAllowed: false) }
        #expect(throws: Authority.Failure.badPort) { try Self.parse("[::1]:", emptyPortAllowed: false) }
    }
}
