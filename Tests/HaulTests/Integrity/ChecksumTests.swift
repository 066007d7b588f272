import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulCrypto

@Suite struct ChecksumTests {
    static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    @Test(arguments: [
        ("sha256", ChecksumAlgorithm.sha256), ("SHA256", .sha256), ("sha-256", .sha256), ("SHA-512", .sha512),
        ("sha512", .sha512), ("sha1", .sha1), ("sha-1", .sha1), ("MD5", .md5),
    ])
    func algorithmNames(name: String, algorithm: ChecksumAlgorithm) {
        #expect(ChecksumAlgorithm(name: name) == algorithm)
    }

    @Test(arguments: ["", "sha", "sha-", "sha384", "sha3-256", "crc32", "md-5", "sha--256", " sha256"])
    func unknownAlgorithmNames(name: String) {
        #expect(ChecksumAlgorithm(name: name) == nil)
    }

    @Test func byteCounts() {
        #expect(ChecksumAlgorithm.allCases.map(\.byteCount) == [32, 64, 20, 16])
    }

    @Test func parsesAlgoEqualsHexInEitherCase() throws {
        let lower = try Checksum(parsing: "sha256=\(Self.emptySHA256)")
        let upper = try Checksum(parsing: "SHA-256=\(Self.emptySHA256.uppercased())")
        #expect(lower == upper)
        #expect(lower.algorithm == .sha256)
        #expect(lower.expected == Digest.hash(.sha256, []))
        #expect(lower.description == "sha256=\(Self.emptySHA256)")
        #expect(lower.matches(Digest.hash(.sha256, [])))
        #expect(!lower.matches(Digest.hash(.sha256, [0])))
    }

    @Test(arguments: ChecksumAlgorithm.allCases)
    func eachAlgorithmParsesItsOwnLength(algorithm: ChecksumAlgorithm) throws {
        let digest = Digest.hash(algorithm, Array("haul".utf8))
        let checksum = try Checksum(parsing: "\(algorithm)=\(Hex.encode(digest))")
        #expect(checksum.matches(digest))
        #expect(!checksum.matches(Digest.hash(algorithm, Array("hau1".utf8))))
    }

    @Test(arguments: [
        "sha256",                                  // no '='
        "=\(emptySHA256)",                         // no algorithm
        "sha384=\(emptySHA256)",                   // unknown algorithm
        "sha256=",                                 // no digest
        "sha256=\(emptySHA256.dropLast())",        // odd length
        "sha256=\(emptySHA256.dropLast(2))",       // one byte short
        "sha256=\(emptySHA256)00",                 // one byte long
        "sha512=\(emptySHA256)",                   // a sha256 digest for sha512
        "md5=\(emptySHA256)",
        "sha256=\(emptySHA256.dropLast())g",       // not hex
        "sha256= \(emptySHA256)",                  // space
        "sha256=0x\(emptySHA256.dropFirst(2))",
    ])
    func rejectsBadInputWithInvalidArgument(text: String) {
        let error = #expect(throws: DownloadError.self) { try Checksum(parsing: text) }
        #expect(error?.code == .invalidArgument)
    }

    @Test func rawBytesMustHaveTheAlgorithmsLength() throws {
        #expect(throws: DownloadError.self) { try Checksum(algorithm: .md5, expected: [UInt8](repeating: 0, count: 20)) }
        let checksum = try Checksum(algorithm: .md5, expected: [UInt8](repeating: 0xab, count: 16))
        #expect(checksum.hex == String(repeating: "ab", count: 16))
    }
}
