/// Hexadecimal digits, the one home of their encoding and decoding: lowercase out, either case
/// in (digests, checksums, escapes).
package enum Hex {
    /// Lowercase hexadecimal digits for `bytes`, two per byte.
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        let done = bytes.withContiguousStorageIfAvailable { encode($0) }
        return done ?? Array(bytes).withUnsafeBufferPointer { encode($0) }
    }

    private static func encode(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            for (index, byte) in bytes.enumerated() {
                text[2 * index] = digit(byte >> 4)
                text[2 * index + 1] = digit(byte & 0x0F)
            }
            return bytes.count * 2
        }
    }

    /// The lowercase digit for `value` (0...15).
    private static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// The bytes spelled by `text`: an even number of hex digits in either case; `nil` when
    /// `text` has an odd length or anything else (no `0x`, no spaces).
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(of: utf8[index]), let low = value(of: utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// The value of one ASCII hexadecimal digit in either case, or `nil`.
    package static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
