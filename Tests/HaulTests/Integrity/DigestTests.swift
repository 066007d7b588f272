import Foundation
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulCrypto

@Suite struct DigestTests {
    // Known answers.
    // SHA-256, SHA-512, SHA-1: the "abc" and two-block messages are the examples of FIPS 180-2,
    // appendix B/C/A (also NIST's example files SHA256.pdf, SHA512.pdf, SHA1.pdf); the empty
    // message is the Len = 0 vector of NIST CAVP SHA*ShortMsg.rsp.
    // MD5: the test suite of RFC 1321, appendix A.5.
    @Test(arguments: [
        (ChecksumAlgorithm.sha256, "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (.sha256, "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (.sha256, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        (.sha512, "", "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
            + "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"),
        (.sha512, "abc", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
            + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
        (.sha512, "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
            + "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"),
        (.sha1, "", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        (.sha1, "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        (.sha1, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
        (.md5, "", "d41d8cd98f00b204e9800998ecf8427e"),
        (.md5, "a", "0cc175b9c0f1b6a831c399e269772661"),
        (.md5, "abc", "900150983cd24fb0d6963f7d28e17f72"),
        (.md5, "message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        (.md5, "abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
        (.md5, "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
         "57edf4a22be3c955ac49da2e2107b67a"),
    ])
    func knownAnswers(algorithm: ChecksumAlgorithm, message: String, digest: String) {
        #expect(Hex.encode(Digest.hash(algorithm, Array(message.utf8))) == digest)
        Array(message.utf8).withUnsafeBytes { #expect(Hex.encode(Digest.hash(algorithm, $0)) == digest) }
    }

    // FIPS 180-2 "one million a" examples, fed in uneven pieces.
    @Test(arguments: [
        (ChecksumAlgorithm.sha256, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
        (.sha1, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"),
    ])
    func millionAs(algorithm: ChecksumAlgorithm, digest: String) {
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 999)
        let hasher = Digest(algorithm)
        for _ in 0..<1001 { hasher.update(piece) }    // 999 999 bytes
        hasher.update([UInt8(ascii: "a")])
        #expect(Hex.encode(hasher.finalize()) == digest)
    }

    /// The one-shot digest (low-level calls for SHA-256) equals the streaming one (EVP) for
    /// messages that end around the 64- and 128-byte block boundaries and their padding.
    @Test(arguments: ChecksumAlgorithm.allCases, [0, 1, 55, 56, 63, 64, 65, 111, 112, 119, 120, 127, 128, 129, 1000])
    func oneShotEqualsStreamingAtEveryBlockBoundary(algorithm: ChecksumAlgorithm, length: Int) {
        let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 5) }
        let hasher = Digest(algorithm)
        message.withUnsafeBytes { hasher.update($0) }
        let streamed = hasher.finalize()
        #expect(streamed.count == algorithm.byteCount)
        #expect(Digest.hash(algorithm, message) == streamed)
    }

    @Test(arguments: ChecksumAlgorithm.allCases, [0, 1, 3, 55, 56, 63, 64, 111, 112, 128, 1000])
    func piecesEqualOneShot(algorithm: ChecksumAlgorithm, split: Int) {
        let message = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let hasher = Digest(algorithm)
        message[..<split].withUnsafeBytes { hasher.update($0) }
        message[split...].withUnsafeBytes { hasher.update($0) }
        let digest = hasher.finalize()
        #expect(digest.count == algorithm.byteCount)
        #expect(digest == Digest.hash(algorithm, message))
    }

    @Test func manyChunksOfUnevenSizesEqualOneShot() {
        let message = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let hasher = Digest(.sha512)
        var offset = 0
        var size = 1
        while offset < message.count {
            let end = min(offset + size, message.count)
            message[offset..<end].withUnsafeBytes { hasher.update($0) }
            offset = end
            size = size * 3 + 7
        }
        #expect(hasher.finalize() == Digest.hash(.sha512, message))
    }

    @Test(arguments: ChecksumAlgorithm.allCases)
    func finalizeStartsOver(algorithm: ChecksumAlgorithm) {
        let hasher = Digest(algorithm)
        hasher.update(Array("abc".utf8))
        #expect(hasher.finalize() == Digest.hash(algorithm, Array("abc".utf8)))
        #expect(hasher.finalize() == Digest.hash(algorithm, []))
        hasher.update(Array("xyz".utf8))
        #expect(hasher.finalize() == Digest.hash(algorithm, Array("xyz".utf8)))
    }

    /// One-shot digests (SHA-256 on the stack, the others through a context per thread):
    /// alternating algorithms on one thread, and on eight threads started together, each still
    /// gets the streaming digest of its own message; the threads then end, which frees their
    /// contexts.
    @Test func oneShotDigestsAlternateAlgorithmsAndRunOnSeveralThreadsAtOnce() {
        let messages = (0..<64).map { index in (0..<(index * 37)).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ index) } }
        func streamed(_ algorithm: ChecksumAlgorithm, _ message: [UInt8]) -> [UInt8] {
            let hasher = Digest(algorithm)
            hasher.update(message)
            return hasher.finalize()
        }
        let expected = messages.map { message in ChecksumAlgorithm.allCases.map { streamed($0, message) } }
        let threads = 8
        let ready = DispatchSemaphore(value: 0), start = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let mismatches = SharedStateLock(0)
        for worker in 0..<threads {
            Thread {
                ready.signal()
                start.wait()
                var wrong = 0
                for round in 0..<200 {
                    let index = (worker * 7 + round) % messages.count
                    for (which, algorithm) in ChecksumAlgorithm.allCases.enumerated()
                    where Digest.hash(algorithm, messages[index]) != expected[index][which] {
                        wrong += 1
                    }
                }
                mismatches.withLock { $0 += wrong }
                done.signal()
            }.start()
        }
        for _ in 0..<threads { ready.wait() }
        for _ in 0..<threads { start.signal() }
        for _ in 0..<threads { done.wait() }
        #expect(mismatches.withLock { $0 } == 0)
    }

    @Test func sha256HexShortcutMatchesDigest() {
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.byteCount == 32)
    }

    @Test func hexRoundTripsAndRejectsNonHex() {
        let bytes: [UInt8] = [0x00, 0x0f, 0xa0, 0xff, 0x5c]
        #expect(Hex.encode(bytes) == "000fa0ff5c")
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode(bytes[1...3]) == "0fa0ff")
        #expect(Hex.encode(bytes.lazy.map { $0 }) == "000fa0ff5c")   // not contiguous: copied first
        #expect(Hex.decode("000FA0fF5c") == bytes)
        #expect(Hex.decode("") == [])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("0g") == nil)
        #expect(Hex.decode("0x00") == nil)
        #expect(Hex.decode(" 00") == nil)
    }
}
