/// The document's encoding, checked once over all its bytes before any is read as XML.
enum UTF8Check {
    /// Refuses the first byte that is not well-formed UTF-8 (overlong forms, surrogates and
    /// values beyond U+10FFFF included) or that starts a scalar XML 1.0 does not allow.
    ///
    /// - Throws: `malformed` at that byte's offset.
    static func validate(_ bytes: [UInt8]) throws(MetalinkError) {
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            if lead < 0x80 {
                guard isXMLCharacter(UInt32(lead)) else {
                    throw MetalinkError(.malformed, "a control byte 0x\(String(lead, radix: 16)) XML does not allow", offset: index)
                }
                index += 1
                continue
            }
            guard let (scalar, length) = decode(bytes, at: index) else {
                throw MetalinkError(.malformed, "invalid UTF-8", offset: index)
            }
            guard isXMLCharacter(scalar) else {
                throw MetalinkError(.malformed, "U+\(String(scalar, radix: 16, uppercase: true)), which XML does not allow", offset: index)
            }
            index += length
        }
    }

    /// The scalar value and length of the multi-byte sequence at `index`, or `nil` when it is
    /// not the shortest well-formed encoding of a scalar.
    static func decode(_ bytes: [UInt8], at index: Int) -> (UInt32, Int)? {
        let lead = bytes[index]
        let length: Int
        let smallest: UInt32
        switch lead {
        case 0xC2...0xDF: (length, smallest) = (2, 0x80)
        case 0xE0...0xEF: (length, smallest) = (3, 0x800)
        case 0xF0...0xF4: (length, smallest) = (4, 0x10000)
        default: return nil
        }
        guard index + length <= bytes.count else { return nil }
        var value = UInt32(lead) & (0xFF >> UInt32(length + 1))
        for offset in 1..<length {
            let byte = bytes[index + offset]
            guard byte & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        guard value >= smallest, value <= 0x10FFFF, !(0xD800...0xDFFF).contains(value) else { return nil }
        return (value, length)
    }

    /// Whether `value` matches XML 1.0's `Char`: tab, line feed, carriage return, and the
    /// scalars from U+0020 except surrogates, U+FFFE and U+FFFF.
    static func isXMLCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }
}
