import HaulHTTP
import HaulCore
/// A Structured Field Dictionary (RFC 8941 section 3.2), parsed just far enough for the
/// digest fields of RFC 9530: every member is checked against the grammar, and byte-sequence
/// values are decoded; other values are only recognised.
///
/// Parsing follows section 4.2: a field that does not match the grammar fails as a whole,
/// and when a key appears twice the last member wins.
struct StructuredFieldDictionary: Equatable {
    /// A member's value, reduced to what the digest fields need.
    enum Value: Equatable {
        /// A byte sequence (`:base64:`), decoded.
        case bytes([UInt8])
        /// Any other item, or an inner list.
        case other
    }

    /// The members by key (lowercase, as the grammar requires).
    private(set) var members: [String: Value] = [:]

    /// The value of a member, or `nil`.
    subscript(key: String) -> Value? { members[key] }

    /// The member keys in the order of their last occurrence.
    private(set) var keys: [String] = []

    /// Parses a field value (several field lines joined with `,`).
    ///
    /// - Parameter text: the field value.
    /// - Returns: `nil` when the text is not a valid dictionary.
    init?(parsing text: String) {
        var parser = Parser(Array(text.utf8))
        parser.skip(while: Parser.isSpace)
        while !parser.atEnd {
            guard let key = parser.key() else { return nil }
            var value = Value.other
            if parser.consume(UInt8(ascii: "=")) {
                guard let parsed = parser.itemOrInnerList() else { return nil }
                value = parsed
            } else {
                guard parser.parameters() else { return nil }   // a bare key is the Boolean true
            }
            if members.updateValue(value, forKey: key) != nil { keys.removeAll { $0 == key } }
            keys.append(key)
            parser.skip(while: Parser.isOptionalWhitespace)
            if parser.atEnd { break }
            guard parser.consume(UInt8(ascii: ",")) else { return nil }
            parser.skip(while: Parser.isOptionalWhitespace)
            if parser.atEnd { return nil }   // a trailing comma
        }
    }
}

extension StructuredFieldDictionary {
    /// A cursor over the field's bytes with one method per grammar rule.
    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) {
            // Leading and trailing spaces are discarded (section 4.2).
            var trimmed = bytes[...]
            while trimmed.last == UInt8(ascii: " ") { trimmed.removeLast() }
            self.bytes = Array(trimmed)
        }

        var atEnd: Bool { index >= bytes.count }
        var current: UInt8? { atEnd ? nil : bytes[index] }

        static func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") }
        static func isOptionalWhitespace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == 0x09 }
        static func isLowercaseAlpha(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
        static func isAlpha(_ byte: UInt8) -> Bool { isLowercaseAlpha(byte | 0x20) }
        static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        static func isTokenCharacter(_ byte: UInt8) -> Bool {
            isAlpha(byte) || isDigit(byte) || Array("!#$%&'*+-.^_`|~:/".utf8).contains(byte)
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        mutating func skip(while predicate: (UInt8) -> Bool) {
            while let byte = current, predicate(byte) { index += 1 }
        }

        /// key = ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" )
        mutating func key() -> String? {
            guard let first = current, Self.isLowercaseAlpha(first) || first == UInt8(ascii: "*") else { return nil }
            let start = index
            skip { Self.isLowercaseAlpha($0) || Self.isDigit($0) || Array("_-.*".utf8).contains($0) }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// member-value = sf-item / inner-list
        mutating func itemOrInnerList() -> Value? {
            if consume(UInt8(ascii: "(")) {
                while true {
                    skip(while: Self.isSpace)
                    if consume(UInt8(ascii: ")")) { break }
                    guard item() != nil else { return nil }
                    guard current == UInt8(ascii: " ") || current == UInt8(ascii: ")") else { return nil }
                }
                return parameters() ? .other : nil
            }
            return item()
        }

        /// sf-item = bare-item parameters
        mutating func item() -> Value? {
            guard let value = bareItem(), parameters() else { return nil }
            return value
        }

        /// parameters = *( ";" *SP param-key [ "=" param-value ] )
        mutating func parameters() -> Bool {
            while consume(UInt8(ascii: ";")) {
                skip(while: Self.isSpace)
                guard key() != nil else { return false }
                if consume(UInt8(ascii: "=")) && bareItem() == nil { return false }
            }
            return true
        }

        /// bare-item = integer / decimal / string / token / byte-sequence / boolean
        mutating func bareItem() -> Value? {
            guard let first = current else { return nil }
            switch first {
            case UInt8(ascii: ":"): return byteSequence()
            case UInt8(ascii: "\""): return string() ? .other : nil
            case UInt8(ascii: "?"):
                index += 1
                guard consume(UInt8(ascii: "0")) || consume(UInt8(ascii: "1")) else { return nil }
                return .other
            default:
                if first == UInt8(ascii: "-") || Self.isDigit(first) { return number() ? .other : nil }
                guard first == UInt8(ascii: "*") || Self.isAlpha(first) else { return nil }
                skip(while: Self.isTokenCharacter)
                return .other
            }
        }

        /// byte-sequence = ":" *(base64) ":"
        mutating func byteSequence() -> Value? {
            index += 1
            let start = index
            skip { Self.isAlpha($0) || Self.isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "=") }
            let end = index
            guard consume(UInt8(ascii: ":")), let decoded = Base64.decode(bytes[start..<end]) else { return nil }
            return .bytes(decoded)
        }

        /// sf-string = DQUOTE *( unescaped / "%" / escaped ) DQUOTE, printable ASCII only.
        mutating func string() -> Bool {
            index += 1
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return true
                case UInt8(ascii: "\\"):
                    guard current == UInt8(ascii: "\"") || current == UInt8(ascii: "\\") else { return false }
                    index += 1
                case 0x20...0x7E: continue
                default: return false
                }
            }
            return false
        }

        /// sf-integer (at most 15 digits) or sf-decimal (at most 12 + 3 digits).
        mutating func number() -> Bool {
            _ = consume(UInt8(ascii: "-"))
            let start = index
            skip(while: Self.isDigit)
            let integerDigits = index - start
            guard integerDigits > 0 else { return false }
            guard consume(UInt8(ascii: ".")) else { return integerDigits <= 15 }
            let fractionStart = index
            skip(while: Self.isDigit)
            let fractionDigits = index - fractionStart
            return integerDigits <= 12 && (1...3).contains(fractionDigits)
        }
    }
}
