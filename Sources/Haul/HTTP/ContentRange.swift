/// A parsed `Content-Range` response header (RFC 9110 §14.4), bytes only.
package enum ContentRange: Equatable, Sendable {
    /// `bytes first-last/complete` (206), `complete` is `nil` for `*`.
    case satisfied(first: Int64, last: Int64, complete: Int64?)
    /// `bytes */complete` (416).
    case unsatisfied(complete: Int64)

    /// Parses a `Content-Range` value strictly.
    ///
    /// The unit must be `bytes` (case-insensitive) followed by one space; numbers are digits
    /// only and must not overflow; `first <= last`, and `last < complete` when complete is known.
    ///
    /// - Parameter value: the field value.
    /// - Returns: the range, or `nil` when the value is not valid.
    package static func parse(_ value: String) -> ContentRange? {
        let text = Substring(value).utf8.trimmingOWS()
        guard text.count > 6, text.prefix(5).lazy.map({ $0 | 0x20 }).elementsEqual("bytes".utf8),
              text.dropFirst(5).first == UInt8(ascii: " ")
        else { return nil }
        let rest = text.dropFirst(6)
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let rangePart = rest[..<slash]
        let completePart = rest[rest.index(after: slash)...]

        if rangePart.elementsEqual("*".utf8) {
            guard let complete = number(completePart) else { return nil }
            return .unsatisfied(complete: complete)
        }
        guard let dash = rangePart.firstIndex(of: UInt8(ascii: "-")),
              let first = number(rangePart[..<dash]),
              let last = number(rangePart[rangePart.index(after: dash)...]),
              first <= last
        else { return nil }
        if completePart.elementsEqual("*".utf8) {
            return .satisfied(first: first, last: last, complete: nil)
        }
        guard let complete = number(completePart), last < complete else { return nil }
        return .satisfied(first: first, last: last, complete: complete)
    }

    /// Digits only, at least one, no overflow.
    private static func number(_ bytes: Substring.UTF8View.SubSequence) -> Int64? {
        guard !bytes.isEmpty, bytes.allSatisfy(isDigit) else { return nil }
        return Int64(Substring(bytes))
    }
}
