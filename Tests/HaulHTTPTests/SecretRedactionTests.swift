import Testing
@testable import HaulHTTP

/// A known secret is removed from a log line wherever it appears, raw or percent-encoded.
@Suite struct SecretRedactionTests {
    @Test(arguments: [
        ("http://h/abc123/x.bin", "http://h/REDACTED/x.bin"),
        ("http://h/x?q=abc123&r=abc123", "http://h/x?q=REDACTED&r=REDACTED"),
        ("http://h/%61%62%63%31%32%33.bin", "http://h/REDACTED.bin"),
        ("http://h/%61bc%312%33", "http://h/REDACTED"),
        ("http://h/%61%62%63%31%32%3", "http://h/%61%62%63%31%32%3"),
        ("http://h/abc12/abc1234", "http://h/abc12/REDACTED4"),
        ("no secret here", "no secret here"),
        ("aabc123", "aREDACTED"),
    ])
    func theSecretIsReplaced(text: String, expected: String) {
        #expect(redactingSecret("abc123", in: text) == expected)
    }

    @Test func aSecretBeyondASCIIIsComparedByBytes() {
        let secret = "s\u{E9}cr\u{E8}t/\u{301}"
        #expect(redactingSecret(secret, in: "x " + secret + " y") == "x REDACTED y")
        #expect(redactingSecret(secret, in: "x s%C3%A9cr%c3%a8t%2F%CC%81 y") == "x REDACTED y")
        #expect(redactingSecret("", in: "abc") == "abc")
    }
}
