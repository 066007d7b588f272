import HaulCore

/// Character data, attribute values and references.
extension XMLReader {
    /// The character data up to the next `<` (or the end), references replaced and line ends
    /// normalized, and whether it is only whitespace.
    mutating func characterData() throws(MetalinkError) -> (text: String, whitespaceOnly: Bool) {
        let start = index
        var end = index
        var plain = true
        var whitespaceOnly = true
        while end < bytes.count, bytes[end] != UInt8(ascii: "<") {
            let byte = bytes[end]
            if byte == UInt8(ascii: "&") || byte == 0x0D { plain = false }
            if !Self.isWhitespace(byte) { whitespaceOnly = false }
            end += 1
        }
        guard !plain else {
            index = end
            return (String(decoding: bytes[start..<end], as: UTF8.self), whitespaceOnly)
        }
        var out: [UInt8] = []
        out.reserveCapacity(end - start)
        try decode(until: end, into: &out, attribute: false)
        return (String(decoding: out, as: UTF8.self), whitespaceOnly)
    }

    /// A quoted attribute value (single or double quotes), references replaced, and tabs and
    /// line ends made spaces (XML 1.0 section 3.3.3, for CDATA-typed attributes).
    mutating func attributeValue() throws(MetalinkError) -> String {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
            throw failure(.malformed, "an attribute value without quotes")
        }
        let quote = bytes[index]
        let start = index
        index += 1
        var end = index
        while end < bytes.count, bytes[end] != quote {
            guard bytes[end] != UInt8(ascii: "<") else { throw failure(.malformed, "a '<' in an attribute value", at: end) }
            end += 1
        }
        guard end < bytes.count else { throw failure(.malformed, "an unterminated attribute value", at: start) }
        guard end - index <= Metalink.Limits.textBytesPerElement else {
            throw failure(.limitExceeded, "an attribute value longer than \(Metalink.Limits.textBytesPerElement) bytes", at: start)
        }
        var out: [UInt8] = []
        out.reserveCapacity(end - index)
        try decode(until: end, into: &out, attribute: true)
        index = end + 1
        return String(decoding: out, as: UTF8.self)
    }

    /// Copies `bytes[index..<end]` into `out`, replacing references and normalizing line ends
    /// (in an attribute value, every tab and line end becomes a space); leaves the cursor at `end`.
    mutating func decode(until end: Int, into out: inout [UInt8], attribute: Bool) throws(MetalinkError) {
        while index < end {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "&"):
                let scalar = try reference(before: end)
                out.append(contentsOf: String(scalar).utf8)
                continue
            case 0x0D:
                if index + 1 < end, bytes[index + 1] == 0x0A { index += 1 }
                out.append(attribute ? 0x20 : 0x0A)
            case 0x09, 0x0A:
                out.append(attribute ? 0x20 : byte)
            default:
                out.append(byte)
            }
            index += 1
        }
    }

    /// The scalar the reference at the cursor (`&...;`, ending before `end`) stands for; moves
    /// past it.
    ///
    /// - Throws: `refused` for an entity other than `lt`, `gt`, `amp`, `apos`, `quot`;
    ///   `malformed` for an unterminated reference or a character reference to a scalar XML
    ///   does not allow (NUL, other C0 controls but tab and line ends, surrogates, U+FFFE,
    ///   U+FFFF, beyond U+10FFFF).
    mutating func reference(before end: Int) throws(MetalinkError) -> Unicode.Scalar {
        let start = index
        let longest = 40
        var semicolon = index + 1
        while semicolon < end, semicolon - start <= longest, bytes[semicolon] != UInt8(ascii: ";") { semicolon += 1 }
        guard semicolon < end, bytes[semicolon] == UInt8(ascii: ";") else {
            throw failure(.malformed, "an '&' that does not start a reference ending in ';'")
        }
        let body = bytes[(start + 1)..<semicolon]
        index = semicolon + 1
        if body.first == UInt8(ascii: "#") {
            return try characterReference(body.dropFirst(), at: start)
        }
        switch String(decoding: body, as: UTF8.self) {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "apos": return "'"
        case "quot": return "\""
        case let name:
            throw failure(.refused, "the entity &\(Redaction.safe(name)); is not defined (only the five of XML are)", at: start)
        }
    }

    /// The scalar of a character reference's digits (`65` or `x41`).
    func characterReference(_ digits: ArraySlice<UInt8>, at offset: Int) throws(MetalinkError) -> Unicode.Scalar {
        let hexadecimal = digits.first == UInt8(ascii: "x")
        let text = hexadecimal ? digits.dropFirst() : digits
        var value: UInt32 = 0
        for byte in text {
            let digit: UInt32?
            if hexadecimal {
                digit = Hex.value(of: byte).map(UInt32.init)
            } else {
                digit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? UInt32(byte - UInt8(ascii: "0")) : nil
            }
            guard let digit else { throw failure(.malformed, "a character reference with a non-digit", at: offset) }
            value = value * (hexadecimal ? 16 : 10) + digit
            guard value <= 0x10FFFF else { throw failure(.malformed, "a character reference beyond U+10FFFF", at: offset) }
        }
        guard !text.isEmpty, let scalar = Unicode.Scalar(value), UTF8Check.isXMLCharacter(value) else {
            let shown = String(value, radix: 16, uppercase: true)
            throw failure(.malformed, "a character reference to U+\(shown), which XML does not allow", at: offset)
        }
        return scalar
    }
}
