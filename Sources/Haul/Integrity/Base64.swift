import HaulHTTP
/// Standard base64 (RFC 4648 section 4) decoding, for digests carried in HTTP fields.
enum Base64 {
    /// The bytes `text` encodes.
    ///
    /// The `=` padding may be missing (RFC 8941 asks parsers to tolerate that); anything else
    /// outside the standard alphabet, or padding in the middle, is rejected.
    ///
    /// - Parameter text: base64 text with no whitespace.
    /// - Returns: the bytes, or `nil` when `text` is not base64.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var body = Array(text)
        var padding = 0
        while body.last == UInt8(ascii: "=") && padding < 2 {
            body.removeLast()
            padding += 1
        }
        guard body.count % 4 != 1, padding == 0 || (body.count + padding) % 4 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(body.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in body {
            guard let value = value(of: character) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // The unused low bits of the last character must be zero (canonical encoding).
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return bytes
    }

    private static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
