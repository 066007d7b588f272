/// Whether an error response says that a signed URL has expired, so signing again (and
/// resuming) can succeed where other 403s cannot.
///
/// Recognised, on a 403 only:
/// - S3 (and S3-compatible servers): `<Code>AccessDenied</Code>` with `<Message>Request has expired</Message>`.
/// - Aliyun OSS: the same code and message (`Request has expired.`), or the error codes
///   `<EC>0002-00000069</EC>` (V1/V4 URL signature expired) and `<EC>0002-00000418</EC>`
///   (S3-compatible V4 signature expired).
///
/// - Parameters:
///   - status: the response status.
///   - body: the start of the response body (the XML error document; 4 KiB is plenty).
/// - Returns: `true` when the signature expired.
func isExpiredSignature(status: Int, body: some Collection<UInt8>) -> Bool {
    guard status == 403 else { return false }
    let text = String(decoding: body, as: UTF8.self)
    if let code = xmlElementText("EC", in: text), expiredOSSErrorCodes.contains(code) { return true }
    guard xmlElementText("Code", in: text) == "AccessDenied", let message = xmlElementText("Message", in: text) else { return false }
    return message.lowercased().hasPrefix("request has expired")
}

/// Whether an error response says that a signed URL has expired (see the byte version).
///
/// - Parameters:
///   - status: the response status.
///   - body: the response body as text.
/// - Returns: `true` when the signature expired.
func isExpiredSignature(status: Int, body: String) -> Bool {
    isExpiredSignature(status: status, body: Array(body.utf8))
}

/// OSS error codes (`<EC>`) meaning "the signed URL has expired".
private let expiredOSSErrorCodes: Set<String> = ["0002-00000069", "0002-00000418"]

/// The trimmed text of the first `<name>…</name>` element, or `nil`.
private func xmlElementText(_ name: String, in text: String) -> String? {
    let bytes = Array(text.utf8)
    guard let open = firstIndex(of: Array("<\(name)>".utf8), in: bytes, from: 0),
          let close = firstIndex(of: Array("</\(name)>".utf8), in: bytes, from: open.upperBound) else { return nil }
    let inner = String(decoding: bytes[open.upperBound..<close.lowerBound], as: UTF8.self)
    return String(inner.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
}

/// Where `needle` first occurs in `haystack` at or after `start`.
private func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Range<Int>? {
    guard needle.count <= haystack.count else { return nil }
    var index = start
    while index + needle.count <= haystack.count {
        if haystack[index..<(index + needle.count)].elementsEqual(needle) { return index..<(index + needle.count) }
        index += 1
    }
    return nil
}
