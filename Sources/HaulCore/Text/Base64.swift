/// Standard base64 (RFC 4648 section 4), the one home of its encoding and decoding: the
/// `Authorization: Basic` value, digests in HTTP fields, the WebSocket handshake.
package enum Base64 {
    /// Whether the `=` padding must be there when decoding.
    package enum Padding: Sendable {
        /// A length that is not a multiple of 4 is refused (the WebSocket key).
        case required
        /// The padding may be missing (RFC 8941 asks parsers of structured fields to allow it).
        case optional
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The padded base64 text of `bytes`.
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        var text: [UInt8] = []
        text.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let triple = UInt32(bytes[index]) << 16 | (remaining > 1 ? UInt32(bytes[index + 1]) << 8 : 0)
                | (remaining > 2 ? UInt32(bytes[index + 2]) : 0)
            text.append(alphabet[Int(triple >> 18 & 63)])
            text.append(alphabet[Int(triple >> 12 & 63)])
            text.append(remaining > 1 ? alphabet[Int(triple >> 6 & 63)] : UInt8(ascii: "="))
            text.append(remaining > 2 ? alphabet[Int(triple & 63)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes `text` encodes, or `nil` when it is not canonical base64: a character outside
    /// the standard alphabet, padding in the middle or of the wrong length, or unused low bits
    /// that are not zero (so each byte string has exactly one accepted text).
    ///
    /// - Parameters:
    ///   - text: base64 text with no whitespace.
    ///   - padding: whether the `=` padding must be there.
    package static func decode(_ text: some Collection<UInt8>, padding: Padding = .optional) -> [UInt8]? {
        var body = Array(text)
        var pads = 0
        while body.last == UInt8(ascii: "=") && pads < 2 {
            body.removeLast()
            pads += 1
        }
        let whole = (body.count + pads) % 4 == 0
        guard body.count % 4 != 1, whole || (padding == .optional && pads == 0) else { return nil }
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
