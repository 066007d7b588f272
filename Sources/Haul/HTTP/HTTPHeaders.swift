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
        for field in fields where field.name.asciiCaseInsensitiveEquals(name) { return field.value }
        return nil
    }

    /// Every value of the named field, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.asciiCaseInsensitiveEquals(name) }.map(\.value)
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
        for (x, y) in zip(a, b) where x != y {
            let lx = (x >= 65 && x <= 90) ? x + 32 : x
            let ly = (y >= 65 && y <= 90) ? y + 32 : y
            if lx != ly { return false }
        }
        return true
    }
}
