import HaulCore
/// An ordered list of header fields with case-insensitive lookup.
public struct HTTPHeaders: Sendable, Equatable, Sequence {
    /// The fields in the order they were received or added.
    public private(set) var fields: [(name: String, value: String)]

    /// Creates a header list.
    ///
    /// - Parameter fields: name/value pairs, in order.
    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
    }

    /// The first value of the named field (case-insensitive), or `nil`.
    public subscript(name: String) -> String? {
        firstIndex(of: name, from: 0).map { fields[$0].value }
    }

    /// Every value of the named field, in order.
    public func values(for name: String) -> [String] {
        var values: [String] = []
        var next = firstIndex(of: name, from: 0)
        while let index = next {
            values.append(fields[index].value)
            next = firstIndex(of: name, from: index + 1)
        }
        return values
    }

    /// The position of the first field named `name` (case-insensitive) at or after `start`.
    ///
    /// Reads each name where it is: a `for field in fields` loop copies every field it passes,
    /// retaining and releasing both of its strings (a response's head is looked up ~15 times,
    /// ~130 retains of strings per response).
    package func firstIndex(of name: String, from start: Int) -> Int? {
        var index = start
        while index < fields.count {
            if fields[index].name.asciiCaseInsensitiveEquals(name) { return index }
            index += 1
        }
        return nil
    }

    /// Whether any field `name`, read as a comma-separated list (RFC 9110 §5.6.1), holds `token`
    /// (ASCII case ignored, optional whitespace around elements). Allocates nothing.
    package func list(_ name: String, contains token: String) -> Bool {
        var next = firstIndex(of: name, from: 0)
        while let index = next {
            let value = fields[index].value.utf8
            var start = value.startIndex
            while true {
                let end = value[start...].firstIndex(of: UInt8(ascii: ",")) ?? value.endIndex
                if Self.element(value[start..<end], is: token) { return true }
                guard end < value.endIndex else { break }
                start = value.index(after: end)
            }
            next = firstIndex(of: name, from: index + 1)
        }
        return false
    }

    /// Whether one list element, once trimmed, is `token` (ASCII case ignored).
    private static func element(_ bytes: Substring.UTF8View, is token: String) -> Bool {
        let element = bytes.trimmingOWS()
        return element.count == token.utf8.count
            && zip(element, token.utf8).allSatisfy { asciiLowercased($0) == asciiLowercased($1) }
    }

    /// Makes room for `count` fields in all, so that adding them allocates once.
    package mutating func reserveCapacity(_ count: Int) {
        fields.reserveCapacity(count)
    }

    /// Appends a field.
    public mutating func add(name: String, value: String) {
        fields.append((name, value))
    }

    /// Removes every field with this name (case-insensitive).
    public mutating func remove(name: String) {
        fields.removeAll { $0.name.asciiCaseInsensitiveEquals(name) }
    }

    /// Whether a field with this name is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    /// Field-by-field equality (names compared case-insensitively, values exactly).
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name.asciiCaseInsensitiveEquals($1.name) && $0.value == $1.value }
    }
}

extension String {
    /// ASCII case-insensitive comparison, as HTTP field names require.
    package func asciiCaseInsensitiveEquals(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        // Native strings compare their stored bytes (a `zip` of the two views showed in profiles).
        if let same = a.withContiguousStorageIfAvailable({ x in
            b.withContiguousStorageIfAvailable { y in Self.asciiCaseInsensitiveEquals(x, y) }
        }), let same {
            return same
        }
        for (x, y) in zip(a, b) where asciiLowercased(x) != asciiLowercased(y) { return false }
        return true
    }

    private static func asciiCaseInsensitiveEquals(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        for index in 0..<a.count where a[index] != b[index] && asciiLowercased(a[index]) != asciiLowercased(b[index]) {
            return false
        }
        return true
    }
}

/// `byte` with an ASCII capital letter made small.
private func asciiLowercased(_ byte: UInt8) -> UInt8 {
    (byte >= 65 && byte <= 90) ? byte + 32 : byte
}
