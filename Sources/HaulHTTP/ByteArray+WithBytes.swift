import HaulCore
extension [UInt8] {
    /// `withUnsafeBytes` for a body with a typed error.
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws(HTTPClientError) -> Result) throws(HTTPClientError) -> Result {
        var outcome: Swift.Result<Result, HTTPClientError>?
        withUnsafeBytes { bytes in outcome = Swift.Result { () throws(HTTPClientError) in try body(bytes) } }
        return try outcome!.get()
    }
}

extension [UInt8] {
    /// Appends the UTF-8 bytes of `text`, copied at once from its storage (`append(contentsOf:
    /// text.utf8)` walks the view byte by byte: it showed in profiles of small files).
    package mutating func appendUTF8(_ text: String) {
        if let done: Void = text.utf8.withContiguousStorageIfAvailable({ append(contentsOf: $0) }) { return done }
        append(contentsOf: text.utf8)
    }
}
