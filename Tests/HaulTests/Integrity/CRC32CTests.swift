import CHaulSys
import HaulTestSupport
import Testing
@testable import Haul

/// `haul_crc32c` against published values and against a bit-at-a-time reference, at the lengths
/// where its three-stream rounds (streams of 8 KiB down to 64 bytes, three per round) begin and
/// end, at every start alignment, and continued across slices.
@Suite struct CRC32CTests {
    /// The reflected Castagnoli polynomial.
    static let polynomial: UInt32 = 0x82F6_3B78

    /// The stream lengths of the rounds in crc32c.c; a round covers three streams.
    static let streams = [8192, 4096, 2048, 1024, 512, 256, 128, 64]

    /// 2 MiB + 16 pseudo-random bytes (splitmix64, fixed seed), so any start offset 0...15 has 2 MiB after it.
    static let buffer: [UInt8] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var bytes = [UInt8]()
        bytes.reserveCapacity(2 << 20 + 16)
        while bytes.count < 2 << 20 + 16 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: z >> UInt64(shift))) }
        }
        return bytes
    }()

    /// The lengths to check: all of 0...1100, each round's length (3 * stream), sums of rounds
    /// (one 24 KiB round plus every shorter one, several 24 KiB rounds), each ±1, ±7, ±8, ±9, and
    /// 100 000 and its neighbours.
    static let lengths: [Int] = {
        var bases = streams.map { 3 * $0 }
        bases += (1...4).map { $0 * 3 * 8192 }
        bases += (1..<streams.count).map { first in streams[first...].reduce(3 * 8192) { $0 + 3 * $1 } }
        bases += [16 << 10, 64 << 10, 3 * 8192 + 3 * 64, 2 * 3 * 8192 + 3 * 1024 + 3 * 128, 100_000]
        var lengths = Set(0...1100)
        for base in bases {
            for delta in [-9, -8, -7, -1, 0, 1, 7, 8, 9] where (0...100_000).contains(base + delta) {
                lengths.insert(base + delta)
            }
        }
        return lengths.sorted()
    }()

    /// The CRC-32C of every prefix of `bytes`, one bit at a time: element n is the CRC of the first n bytes.
    static func referencePrefixCRCs(_ bytes: ArraySlice<UInt8>) -> [UInt32] {
        var register: UInt32 = 0xFFFF_FFFF
        var crcs = [~register]
        crcs.reserveCapacity(bytes.count + 1)
        for byte in bytes {
            register ^= UInt32(byte)
            for _ in 0..<8 {
                register = register & 1 == 1 ? (register >> 1) ^ polynomial : register >> 1
            }
            crcs.append(~register)
        }
        return crcs
    }

    /// `haul_crc32c` of `buffer[offset..<offset + count]` continued from `crc`.
    static func crc(_ crc: UInt32 = 0, offset: Int, count: Int) -> UInt32 {
        buffer.withUnsafeBytes { haul_crc32c(crc, $0.baseAddress! + offset, count) }
    }

    @Test func checkValue() {
        #expect(BlockHashes.crc(of: Array("123456789".utf8)) == 0xE306_9283)
        #expect(Self.referencePrefixCRCs(ArraySlice("123456789".utf8)).last == 0xE306_9283)
    }

    /// RFC 3720 (iSCSI) appendix B.4: 32 bytes of 0x00, of 0xFF, counting up, counting down.
    /// The RFC lists each CRC's bytes least significant first.
    static let iSCSIVectors: [(bytes: [UInt8], crc: UInt32)] = [
        ([UInt8](repeating: 0x00, count: 32), 0x8A91_36AA),
        ([UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
        ((0..<32).map { UInt8($0) }, 0x46DD_794E),
        ((0..<32).reversed().map { UInt8($0) }, 0x113F_DB5C),
    ]

    @Test(arguments: 0..<iSCSIVectors.count)
    func iSCSIVector(index: Int) {
        let (bytes, expected) = Self.iSCSIVectors[index]
        #expect(BlockHashes.crc(of: bytes) == expected)
        #expect(Self.referencePrefixCRCs(bytes[...]).last == expected)
    }

    @Test func emptyInputLeavesTheCRCAsItIs() {
        for crc: UInt32 in [0, 1, 0xE306_9283, 0xFFFF_FFFF] {
            #expect(Self.crc(crc, offset: 3, count: 0) == crc)
        }
    }

    @Test(arguments: 0..<16)
    func matchesBitwiseReferenceAtRoundBoundaries(offset: Int) {
        let reference = Self.referencePrefixCRCs(Self.buffer[offset..<offset + 100_000])
        let mismatches = Self.lengths.filter { Self.crc(offset: offset, count: $0) != reference[$0] }
        #expect(mismatches.count == 0, "offset \(offset): wrong CRC for lengths \(mismatches.prefix(20)) ...")
    }

    @Test(arguments: [0, 5, 8, 15])
    func matchesBitwiseReferenceOverTwoMebibytes(offset: Int) async throws {
        let counts = [2 << 20, (2 << 20) - 1, (2 << 20) - 193, 1 << 20, (1 << 20) + 12_345]
        // The bit-at-a-time reference takes a while: on a thread of its own, not the cooperative pool's.
        let (reference, crcs) = try await onOwnThread {
            let reference = Self.referencePrefixCRCs(Self.buffer[offset..<offset + (2 << 20)])
            return (counts.map { reference[$0] }, counts.map { Self.crc(offset: offset, count: $0) })
        }
        for (index, count) in counts.enumerated() {
            #expect(crcs[index] == reference[index], "offset \(offset), length \(count)")
        }
    }

    /// The CRC of A continued over B is the CRC of A followed by B, wherever the cut falls.
    @Test(arguments: [0, 3, 8, 13])
    func continuingEqualsOneCall(offset: Int) {
        let total = 100_000
        let whole = Self.crc(offset: offset, count: total)
        #expect(whole == Self.referencePrefixCRCs(Self.buffer[offset..<offset + total]).last)
        let cuts = [0, 1, 7, 8, 191, 192, 193, 3 * 64, 3 * 8192 - 1, 3 * 8192, 3 * 8192 + 1, 50_000, 99_999, total]
        for cut in cuts {
            let first = Self.crc(offset: offset, count: cut)
            let continued = Self.crc(first, offset: offset + cut, count: total - cut)
            #expect(continued == whole, "offset \(offset), cut at \(cut)")
        }
    }

    /// Slices of many sizes (as the receive loop hands them over) add up to the one-call CRC.
    @Test func manySlicesEqualOneCall() {
        let total = 1 << 20
        var crc: UInt32 = 0
        var position = 0
        var size = 1
        while position < total {
            let count = min(size, total - position)
            crc = Self.crc(crc, offset: position, count: count)
            position += count
            size = size * 7 % 70_001 + 1
        }
        #expect(crc == Self.crc(offset: 0, count: total))
    }
}
