import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulCrypto

@Suite struct HMACTests {
    // HMAC-SHA256: RFC 4231 section 4 (test cases 1, 2, 3, 4, 6, 7; case 5 is truncated output).
    // HMAC-SHA1: RFC 2202 section 3 (test cases 1, 2, 6).
    static let cases: [(ChecksumAlgorithm, [UInt8], [UInt8], String)] = [
        (.sha256, [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (.sha256, Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (.sha256, [UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        (.sha256, Array(1...25), [UInt8](repeating: 0xcd, count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (.sha256, [UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (.sha256, [UInt8](repeating: 0xaa, count: 131),
         Array(("This is a test using a larger than block-size key and a larger than block-size data. "
            + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
        (.sha1, [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
         "b617318655057264e28bc0b6fb378c8ef146be00"),
        (.sha1, Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
         "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
        (.sha1, [UInt8](repeating: 0xaa, count: 80), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
    ]

    @Test(arguments: cases)
    func publishedVectors(algorithm: ChecksumAlgorithm, key: [UInt8], message: [UInt8], code: String) {
        #expect(Hex.encode(HMAC.code(algorithm, key: key, message: message)) == code)
    }

    @Test func emptyKeyAndMessage() {
        // Well-known value of HMAC-SHA256 with an empty key over an empty message.
        #expect(Hex.encode(HMAC.code(.sha256, key: [], message: "")) ==
                "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func stringMessageIsItsUTF8() {
        #expect(HMAC.code(.sha1, key: Array("k".utf8), message: "é") == HMAC.code(.sha1, key: Array("k".utf8), message: [0xc3, 0xa9]))
    }
}
