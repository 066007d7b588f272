import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP
import HaulCrypto

@Suite struct ServerDigestTests {
    // The examples of RFC 9530 appendix B (https://www.rfc-editor.org/rfc/rfc9530#appendix-B):
    // the representation is `{"hello": "world"}` plus LF (19 bytes); B.3 answers `Range: bytes=1-7`
    // with the partial content `"hello"`; the sha-512 value is the one of the same representation
    // in the examples that select sha-512 (appendix C).
    static let representation = Array("{\"hello\": \"world\"}\n".utf8)
    static let partial = Array("\"hello\"".utf8)
    static let sha256 = "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:"
    static let partialSHA256 = "sha-256=:Wqdirjg/u3J688ejbUlApbjECpiUUtIwT8lY/z81Tno=:"
    static let sha512 = "sha-512=:YMAam51Jz/jOATT6/zvHrLVgOYTGFy1d6GJiOHTohq4yP+pgk4vf2aCsyRZOtw8MjkM7iw7yZ/WkppmM44T3qg==:"

    static func headers(_ fields: (String, String)...) -> HTTPHeaders {
        HTTPHeaders(fields.map { (name: $0.0, value: $0.1) })
    }

    @Test func rfc9530IdenticalContentAndReprDigest() throws {
        // Appendix B.1: a 200 with both fields equal.
        let digest = try #require(ServerDigest(status: 200, headers: Self.headers(
            ("Content-Digest", Self.sha256), ("Repr-Digest", Self.sha256))))
        #expect(digest.field == .reprDigest)
        #expect(digest.checksum.algorithm == .sha256)
        #expect(digest.checksum.matches(Digest.hash(.sha256, Self.representation)))
    }

    @Test func rfc9530PartialContentUsesReprDigestOnly() throws {
        // Appendix B.3: a 206 whose Content-Digest covers only the 7 bytes sent.
        let headers = Self.headers(("Content-Range", "bytes 1-7/19"),
                                   ("Repr-Digest", Self.sha256), ("Content-Digest", Self.partialSHA256))
        let digest = try #require(ServerDigest(status: 206, headers: headers))
        #expect(digest.field == .reprDigest)
        #expect(digest.checksum.matches(Digest.hash(.sha256, Self.representation)))
        // The partial Content-Digest really is the digest of the partial content.
        let partial = try #require(ServerDigest(status: 200, headers: Self.headers(("Content-Digest", Self.partialSHA256))))
        #expect(partial.checksum.matches(Digest.hash(.sha256, Self.partial)))
    }

    @Test func contentDigestOfA206IsIgnored() {
        #expect(ServerDigest(status: 206, headers: Self.headers(("Content-Digest", Self.sha256))) == nil)
    }

    @Test func legacyDigestOfA206IsIgnored() {
        #expect(ServerDigest(status: 206, headers: Self.headers(("Digest", "SHA-256=RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg="))) == nil)
    }

    @Test(arguments: [204, 301, 304, 404, 416, 500])
    func otherStatusesHaveNoFileDigest(status: Int) {
        #expect(ServerDigest(status: status, headers: Self.headers(("Repr-Digest", Self.sha256))) == nil)
    }

    @Test func strongestAlgorithmWinsInOneField() throws {
        // The RFC 9530 examples list several algorithms in one dictionary.
        let digest = try #require(ServerDigest(status: 200, headers: Self.headers(
            ("Repr-Digest", "\(Self.sha256), \(Self.sha512)"))))
        #expect(digest.checksum.algorithm == .sha512)
        #expect(digest.checksum.matches(Digest.hash(.sha512, Self.representation)))
    }

    @Test func strongestAlgorithmWinsAcrossFieldsAndLinesAreJoined() throws {
        let digest = try #require(ServerDigest(status: 200, headers: Self.headers(
            ("Repr-Digest", Self.sha256), ("Digest", "sha-512=" + Self.sha512.dropFirst(9).dropLast()))))
        #expect(digest.field == .digest)
        #expect(digest.checksum.algorithm == .sha512)
        let twoLines = try #require(ServerDigest(status: 200, headers: Self.headers(
            ("Content-Digest", Self.sha256), ("Content-Digest", Self.sha512))))
        #expect(twoLines.checksum.algorithm == .sha512)
    }

    @Test func reprDigestPreferredOverContentDigestForTheSameAlgorithm() throws {
        let digest = try #require(ServerDigest(status: 200, headers: Self.headers(
            ("Content-Digest", Self.partialSHA256), ("Repr-Digest", Self.sha256))))
        #expect(digest.field == .reprDigest)
        #expect(digest.checksum.matches(Digest.hash(.sha256, Self.representation)))
    }

    @Test func rfc3230DigestIsCaseInsensitive() throws {
        // RFC 3230 section 4.3.2 example form; the value is base64 of the SHA-256 (RFC 5843).
        let digest = try #require(ServerDigest(status: 200, headers: Self.headers(
            ("Digest", "MD5=HUXZLQLMuI/KZ5KDcJPcOA==, SHA-256=RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg="))))
        #expect(digest.field == .digest)
        #expect(digest.checksum.matches(Digest.hash(.sha256, Self.representation)))
    }

    @Test(arguments: [
        "md5=:HUXZLQLMuI/KZ5KDcJPcOA==:, sha=:rmLyN3OR1hpqCvaKySfuVXsQTIs=:",   // unsupported algorithms only
        "unixsum=1234, unixcksum=5678",
        "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabD:",                // truncated: 31 bytes
        "sha-256=:AAAA:",                                                       // wrong length
        "sha-256=RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=",                 // a token, not a byte sequence
        "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:,",             // trailing comma: the field fails
        "SHA-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:",              // keys are lowercase in SF
        "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=",               // unterminated
        "",
    ])
    func unusableStructuredValuesGiveNothing(value: String) {
        #expect(ServerDigest(status: 200, headers: Self.headers(("Repr-Digest", value))) == nil)
    }

    @Test func unknownAlgorithmsAndParametersAreSkipped() throws {
        let digest = try #require(ServerDigest(status: 200, headers: Self.headers(
            ("Repr-Digest", "unixsum=30637, sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:;note=\"x\", blake3=(1 2)"))))
        #expect(digest.checksum.matches(Digest.hash(.sha256, Self.representation)))
    }

    @Test func missingBase64PaddingIsTolerated() throws {
        // RFC 8941 section 4.2.7: parsers should not fail when "=" padding is absent.
        let digest = try #require(ServerDigest(status: 200, headers: Self.headers(
            ("Repr-Digest", "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg:"))))
        #expect(digest.checksum.matches(Digest.hash(.sha256, Self.representation)))
    }

    @Test func lastDuplicateKeyWins() throws {
        let digest = try #require(ServerDigest(status: 200, headers: Self.headers(
            ("Repr-Digest", "\(Self.partialSHA256), \(Self.sha256)"))))
        #expect(digest.checksum.matches(Digest.hash(.sha256, Self.representation)))
    }

    @Test func fromAResponseHead() {
        let head = ResponseHead(status: 200, headers: Self.headers(("repr-digest", Self.sha256)))
        #expect(ServerDigest(head: head)?.field == .reprDigest)
    }
}
