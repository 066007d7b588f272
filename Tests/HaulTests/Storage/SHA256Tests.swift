import Testing
@testable import Haul

@Suite struct SHA256Tests {
    // Known answers. "abc" and the 448-bit message are the examples of FIPS 180-2, appendix B.1
    // and B.2 (also in NIST's "SHA256.pdf" example file); the empty message is the Len = 0
    // vector of NIST CAVP SHA256ShortMsg.rsp.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func knownAnswers(message: String, digest: String) {
        #expect(SHA256.hex(Array(message.utf8)) == digest)
        Array(message.utf8).withUnsafeBytes { #expect(SHA256.hex($0) == digest) }
    }

    @Test(arguments: [0, 1, 3, 55, 56, 63, 64, 1000])
    func incrementalPiecesEqualOneShot(split: Int) {
        let message = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var hasher = SHA256.Hasher()
        message[..<split].withUnsafeBytes { hasher.update($0) }
        message[split...].withUnsafeBytes { hasher.update($0) }
        #expect(SHA256.hexString(hasher.finalize()) == SHA256.hex(message))
    }

    @Test func finalizeStartsOver() {
        var hasher = SHA256.Hasher()
        hasher.update(Array("abc".utf8))
        #expect(hasher.finalize().count == 32)
        #expect(SHA256.hexString(hasher.finalize()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func copiesAreIndependent() {
        var first = SHA256.Hasher()
        first.update(Array("ab".utf8))
        var second = first
        second.update(Array("c".utf8))
        first.update(Array("x".utf8))
        #expect(SHA256.hexString(second.finalize()) == SHA256.hex(Array("abc".utf8)))
        #expect(SHA256.hexString(first.finalize()) == SHA256.hex(Array("abx".utf8)))
    }
}
