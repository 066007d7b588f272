import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// ``redactedURLString(_:aggressive:)``.
@Suite struct URLRedactionTests {
    @Test(arguments: [
        ("https://user:pass@host/x", "https://host/x"),
        ("https://user@host", "https://host"),
        ("https://user:pass@host:8080/x?y=1", "https://host:8080/x?y=1"),
        ("//user:pass@host/", "//host/"),
        ("https://host/path@x", "https://host/path@x"),
        ("https://host/p?sig=abc&x=1", "https://host/p?sig=REDACTED&x=1"),
        ("https://host/p?x=1&X-Amz-Signature=abc", "https://host/p?x=1&X-Amz-Signature=REDACTED"),
        ("https://host/p?a=1;token=2", "https://host/p?a=1;token=REDACTED"),
        ("https://host/#access_token=x&state=1", "https://host/#access_token=REDACTED&state=1"),
        ("https://host/p?token", "https://host/p?token"),
        ("https://host/p?token=", "https://host/p?token="),
        ("https://host/p?token=a=b", "https://host/p?token=REDACTED"),
        ("https://host/p?%74oken=abc", "https://host/p?%74oken=REDACTED"),
        ("not a url ?token=abc", "not a url ?token=REDACTED"),
        ("ht tp://u:p@h/?key=1", "ht tp://h/?key=REDACTED"),
        ("", ""),
        ("https://host/caf\u{E9}?pwd=\u{E9}", "https://host/caf\u{E9}?pwd=REDACTED"),
    ])
    func redacts(_ input: String, expected: String) {
        #expect(redactedURLString(input) == expected)
    }

    @Test(arguments: [
        "sig", "Signature", "X-Goog-Signature", "token", "access_token", "api_key", "APIKEY", "Key-Pair-Id", "secret",
        "client_secret", "password", "passwd", "pwd", "credential", "X-Amz-Credential", "auth", "Authorization",
        "session", "sessionid", "Policy", "X-Amz-Date", "x-amz-expires", "X-OSS-Expires", "x-oss-access-key-id",
    ])
    func redactsSecretNames(_ name: String) {
        #expect(redactedURLString("https://h/?\(name)=s3cr3t&a=1") == "https://h/?\(name)=REDACTED&a=1")
    }

    @Test(arguments: ["x", "page", "file", "name", "amz", "x-amzn", "expires", "response-content-type"])
    func keepsOtherNames(_ name: String) {
        #expect(redactedURLString("https://h/?\(name)=visible") == "https://h/?\(name)=visible")
    }

    @Test func aggressiveModeAlsoRemovesAUserinfoContainingASlash() {
        #expect(redactedURLString("http://u:pa/ss@host/", aggressive: true) == "http://host/")
        // The normal mode ends the authority at the first "/": "u:pa" has no "@", nothing is removed.
        #expect(redactedURLString("http://u:pa/ss@host/") == "http://u:pa/ss@host/")
    }
}
