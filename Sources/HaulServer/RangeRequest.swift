/// How a `Range` request with an optional `If-Range` applies to a body of known length.
enum RangeRequest {
    /// What a `Range` header asks of a representation of a known length.
    enum Decision: Equatable {
        /// Send everything (no, invalid, or multiple ranges).
        case full
        /// Send these bytes with 206.
        case partial(Range<Int64>)
        /// 416 with `Content-Range: bytes */N`.
        case unsatisfiable
    }

    /// Interprets `header` (`bytes=a-b`, `bytes=a-`, `bytes=-n`) for a body of `length` bytes.
    ///
    /// A last position at or beyond the end is clamped to the last byte (RFC 9110 14.1.1), also
    /// when it does not fit in 64 bits. Several ranges are answered with everything, which the
    /// RFC allows and which keeps clients that cannot parse `multipart/byteranges` safe.
    static func decide(range header: String, length: Int64) -> Decision {
        let text = header.trimmingSpaces()
        guard text.lowercased().hasPrefix("bytes=") else { return .full }
        let specs = text.dropFirst(6).split(separator: ",")
        guard specs.count == 1 else { return .full }
        let parts = specs[0].trimmingSpaces().split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .full }
        let first = parts[0], second = parts[1]
        if first.isEmpty {
            guard let suffix = position(second) else { return .full }
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .partial(max(0, length - suffix)..<length)
        }
        guard let start = position(first) else { return .full }
        if second.isEmpty {
            return start < length ? .partial(start..<length) : .unsatisfiable
        }
        guard let last = position(second), last >= start else { return .full }
        guard start < length else { return .unsatisfiable }
        return .partial(start..<min(last, length - 1) + 1)
    }

    /// Whether an `If-Range` value lets the `Range` apply (RFC 9110 13.1.5).
    ///
    /// An entity tag matches only by strong comparison: a weak tag on either side never
    /// matches. Anything else is taken as a date and must equal `lastModified` exactly.
    ///
    /// - Parameters:
    ///   - value: the `If-Range` field value.
    ///   - etag: the representation's `ETag` as sent (`"x"` or `W/"x"`), or `nil`.
    ///   - lastModified: the representation's `Last-Modified` as sent, or `nil`.
    static func ifRange(_ value: String, matchesETag etag: String?, lastModified: String?) -> Bool {
        let value = value.trimmingSpaces()
        if value.hasPrefix("\"") || value.hasPrefix("W/") {
            guard let etag, etag.hasPrefix("\""), value.hasPrefix("\"") else { return false }
            return value == etag
        }
        guard let lastModified else { return false }
        return value == lastModified
    }

    /// A byte position: ASCII digits only, saturating at `Int64.max` instead of overflowing.
    private static func position(_ text: Substring) -> Int64? {
        guard !text.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            value = overflow1 || overflow2 ? Int64.max : sum
        }
        return value
    }
}
