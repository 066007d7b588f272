/// A JSON value (RFC 8259), as the daemon's JSON-RPC and the CLI's `--json` events read and write it.
///
/// Numbers keep the text they were written with, so an `id` is echoed exactly as the client
/// sent it; objects keep their members in order (the first member of a repeated name wins
/// when looked up, as aria2's parser keeps it).
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as its text.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object(JSONObject)

    /// An integer number.
    public static func integer(_ value: some BinaryInteger) -> JSONValue {
        .number(JSONNumber(text: String(value)))
    }

    /// A floating-point number in Swift's shortest form that reads back the same (`0.04`,
    /// `12000000.0`); `null` for NaN and the infinities, which JSON cannot write.
    public static func double(_ value: Double) -> JSONValue {
        value.isFinite ? .number(JSONNumber(text: "\(value)")) : .null
    }

    /// An object of these members, in this order.
    public static func object(_ members: [(String, JSONValue)]) -> JSONValue {
        .object(JSONObject(members.map { JSONObject.Member($0.0, $0.1) }))
    }

    /// The string, if this is one.
    public var string: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// The array, if this is one.
    public var array: [JSONValue]? {
        if case .array(let values) = self { values } else { nil }
    }

    /// The object, if this is one.
    public var object: JSONObject? {
        if case .object(let object) = self { object } else { nil }
    }

    /// The number as a 64-bit integer, if this is an integer number that fits.
    public var integer: Int64? {
        if case .number(let number) = self { number.integer } else { nil }
    }
}

/// A JSON number as its text (valid JSON number syntax).
public struct JSONNumber: Sendable, Equatable {
    /// The text, as written.
    public let text: String

    /// Wraps number text; the caller guarantees the syntax.
    public init(text: String) {
        self.text = text
    }

    /// The value when the text is an integer (no fraction or exponent) that fits 64 bits.
    public var integer: Int64? { Int64(text) }
}

/// A JSON object: members in order.
public struct JSONObject: Sendable, Equatable {
    /// One member.
    public struct Member: Sendable, Equatable {
        /// Its name.
        public var key: String
        /// Its value.
        public var value: JSONValue

        /// Creates a member.
        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members, in order.
    public var members: [Member]

    /// Creates an object.
    public init(_ members: [Member] = []) {
        self.members = members
    }

    /// The value of the first member named `key`.
    public subscript(key: String) -> JSONValue? {
        members.first { $0.key == key }?.value
    }

    /// Whether a member is named `key`.
    public func contains(_ key: String) -> Bool {
        members.contains { $0.key == key }
    }

    /// Appends a member.
    public mutating func append(_ key: String, _ value: JSONValue) {
        members.append(Member(key, value))
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByIntegerLiteral {
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object, members in the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { JSONObject.Member($0.0, $0.1) }))
    }
    /// An integer.
    public init(integerLiteral value: Int64) { self = .integer(value) }
}
