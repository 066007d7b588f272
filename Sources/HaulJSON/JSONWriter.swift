/// Writes JSON text: compact, members in their order, strings escaped as RFC 8259 requires
/// (`"`, `\` and control characters, and DEL so no terminal acts on it; everything else as UTF-8).
public struct JSONWriter {
    /// The text so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty writer, with room for `capacity` bytes.
    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// The JSON text of `value` as a string.
    public static func text(_ value: JSONValue) -> String {
        String(decoding: encode(value), as: UTF8.self)
    }

    /// The JSON text of `value`.
    public static func encode(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(value)
        return writer.bytes
    }

    /// Appends `value`.
    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .number(let number): bytes.append(contentsOf: number.text.utf8)
        case .string(let text): write(string: text)
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(string: member.key)
                bytes.append(UInt8(ascii: ":"))
                write(member.value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Appends a string literal with its quotes.
    public mutating func write(string: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = string
        text.withUTF8 { utf8 in
            var runStart = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                appendEscape(byte)
                runStart = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): append("\\\"")
        case UInt8(ascii: "\\"): append("\\\\")
        case 0x0A: append("\\n")
        case 0x0D: append("\\r")
        case 0x09: append("\\t")
        case 0x08: append("\\b")
        case 0x0C: append("\\f")
        default:
            let digits: [UInt8] = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                      digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }
    }

    private mutating func append(_ literal: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}
