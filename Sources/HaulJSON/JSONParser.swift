/// Why JSON text was refused, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset of the problem.
    public var offset: Int
    /// What is wrong.
    public var reason: String

    /// `reason at byte offset`.
    public var description: String { "\(reason) at byte \(offset)" }
}

/// A strict, bounded JSON parser (RFC 8259): one value, surrounded by optional whitespace.
///
/// Refuses what the grammar does not allow (comments, trailing commas, single quotes, leading
/// zeros, `NaN`, control characters in strings, lone surrogates, invalid UTF-8) and nesting
/// deeper than ``maximumDepth``. Input size is the caller's bound (the daemon reads at most
/// 2 MiB). Never traps on any input: every read is bounds-checked.
public struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    public var maximumDepth: Int

    /// Creates a parser.
    ///
    /// - Parameter maximumDepth: the deepest nesting accepted (default 64).
    public init(maximumDepth: Int = 64) {
        self.maximumDepth = maximumDepth
    }

    /// Parses `bytes` as one JSON value.
    ///
    /// - Throws: ``JSONParseError`` at the first problem.
    public func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let buffer = Array(bytes)
        var reader = Reader(bytes: buffer, maximumDepth: maximumDepth)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == buffer.count else { throw reader.failure("unexpected text after the value") }
        return value
    }
}

/// The parser's cursor over the input.
private struct Reader {
    let bytes: [UInt8]
    let maximumDepth: Int
    var index = 0

    init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    func failure(_ reason: String) -> JSONParseError {
        JSONParseError(offset: index, reason: reason)
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    mutating func expect(_ literal: StaticString, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count,
              bytes[index..<(index + count)].elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: count)) else {
            throw failure("invalid literal")
        }
        index += count
        return value
    }

    mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard let byte = current else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("unexpected character")
        }
    }

    mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maximumDepth else { throw failure("nested too deeply") }
        index += 1
        var values: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(values)
        }
        while true {
            skipWhitespace()
            values.append(try value(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ",")?: index += 1
            case UInt8(ascii: "]")?:
                index += 1
                return .array(values)
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maximumDepth else { throw failure("nested too deeply") }
        index += 1
        var object = JSONObject()
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let key = try string()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            object.append(key, try value(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ",")?: index += 1
            case UInt8(ascii: "}")?:
                index += 1
                return .object(object)
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    mutating func number() throws(JSONParseError) -> JSONNumber {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw failure("invalid number") }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let digit = current, isDigit(digit) else { throw failure("invalid number") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let digit = current, isDigit(digit) else { throw failure("invalid number") }
            skipDigits()
        }
        guard index - start <= 400 else { throw failure("number too long") }
        return JSONNumber(text: String(decoding: bytes[start..<index], as: UTF8.self))
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }

    /// A string from its opening quote; escapes decoded, UTF-8 checked.
    mutating func string() throws(JSONParseError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        while true {
            guard let byte = current else { throw failure("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                try appendRun(from: runStart, to: &scalars)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try appendRun(from: runStart, to: &scalars)
                scalars.append(try escape())
                runStart = index
            case 0..<0x20:
                throw failure("control character in a string")
            default:
                index += 1
            }
        }
    }

    /// Appends the raw bytes of `start..<index`, which must be valid UTF-8.
    func appendRun(from start: Int, to scalars: inout String.UnicodeScalarView) throws(JSONParseError) {
        guard start < index else { return }
        var decoder = UTF8()
        var iterator = bytes[start..<index].makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: return
            case .error: throw JSONParseError(offset: start, reason: "invalid UTF-8 in a string")
            }
        }
    }

    mutating func escape() throws(JSONParseError) -> Unicode.Scalar {
        index += 1
        guard let byte = current else { throw failure("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"): return try unicodeEscape()
        default: throw failure("invalid escape")
        }
    }

    /// `\uXXXX`, with a surrogate pair taken as one scalar.
    mutating func unicodeEscape() throws(JSONParseError) -> Unicode.Scalar {
        let high = try hex4()
        if (0xD800...0xDBFF).contains(high) {
            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure("lone surrogate")
            }
            index += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw failure("lone surrogate") }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
        }
        guard let scalar = Unicode.Scalar(high) else { throw failure("lone surrogate") }
        return scalar
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}
