import HaulCore
// Status line, header fields and framing rules of the response parser.

extension ResponseParser {
    /// What every status line starts with.
    package static let versionPrefix = Array("HTTP/1.".utf8)
    /// What a reply that is HTTP starts with.
    package static let protocolPrefix = Array("HTTP/".utf8)

    /// `HTTP/1.0` or `HTTP/1.1`, SP, three digits, and an optional SP and reason phrase.
    package func parseStatusLine(_ line: UnsafeRawBufferPointer) throws(HTTPClientError) -> (minorVersion: Int, status: Int, reason: String) {
        try checkLooksLikeHTTP(line)
        guard line.count >= 12, line.starts(with: Self.versionPrefix), line[7] == UInt8(ascii: "0") || line[7] == UInt8(ascii: "1"),
              line[8] == UInt8(ascii: " "), line[9...11].allSatisfy(isDigit), line[9] != UInt8(ascii: "0"),
              line.count == 12 || line[12] == UInt8(ascii: " ")
        else {
            throw HTTPClientError(.malformedResponse, "malformed status line '\(Self.printable(line))'")
        }
        let reasonBytes = line.dropFirst(13)
        guard reasonBytes.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw HTTPClientError(.malformedResponse, "the status line contains a control character")
        }
        let status = line[9...11].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        return (Int(line[7] - UInt8(ascii: "0")), status, Self.decodeFieldText(UnsafeRawBufferPointer(rebasing: reasonBytes)))
    }

    /// Fails fast when the first bytes of a reply cannot start an HTTP/1.x status line.
    package func checkLooksLikeHTTP(_ bytes: some Collection<UInt8>) throws(HTTPClientError) {
        let prefix = Self.protocolPrefix
        let count = min(bytes.count, prefix.count)
        guard bytes.prefix(count).elementsEqual(prefix[..<count]) else {
            throw HTTPClientError(.malformedResponse, "the server's reply is not HTTP (it starts with '\(Self.printable(bytes))')")
        }
    }

    /// `name: OWS value OWS`; the name a token, no whitespace before the colon, no obs-fold.
    package func parseField(_ line: UnsafeRawBufferPointer) throws(HTTPClientError) -> (name: String, value: String) {
        if line.first == 0x20 || line.first == 0x09 {
            throw HTTPClientError(.malformedResponse, "a response header line starts with whitespace (obsolete line folding)")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0, line[..<colon].allSatisfy(isTokenByte) else {
            throw HTTPClientError(.malformedResponse, "malformed response header line '\(Self.printable(line))'")
        }
        var start = colon + 1, end = line.count
        while start < end, line[start] == 0x20 || line[start] == 0x09 { start += 1 }
        while end > start, line[end - 1] == 0x20 || line[end - 1] == 0x09 { end -= 1 }
        let name = UnsafeRawBufferPointer(rebasing: line[..<colon]).withMemoryRebound(to: UInt8.self) {
            String(decoding: $0, as: UTF8.self)
        }
        return (name, Self.decodeFieldText(UnsafeRawBufferPointer(rebasing: line[start..<end])))
    }

    /// UTF-8 when valid, else ISO-8859-1 (each byte one character).
    package static func decodeFieldText(_ bytes: UnsafeRawBufferPointer) -> String {
        // ASCII (the usual case) needs no validation beyond the check: `String(validating:)` takes
        // a generic path that cost ~1,200 instructions per field.
        if !bytes.contains(where: { $0 >= 0x80 }) {
            return bytes.withMemoryRebound(to: UInt8.self) { String(decoding: $0, as: UTF8.self) }
        }
        if let text = bytes.withMemoryRebound(to: UInt8.self, { String(validating: $0, as: UTF8.self) }) { return text }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
        return String(scalars)
    }

    /// At most 40 bytes, printable ASCII kept, anything else as `?`.
    package static func printable(_ bytes: some Collection<UInt8>) -> String {
        let shown = bytes.prefix(40).map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }
        return String(decoding: shown, as: UTF8.self) + (bytes.count > 40 ? "..." : "")
    }

    /// The body framing of a final response (RFC 9112 §6.3).
    ///
    /// - Throws: `.malformedResponse` for a transfer coding other than `chunked`;
    ///   `.invalidContentLength` for a bad `Content-Length`.
    package static func framing(of head: ResponseHead, method: HTTPMethod) throws(HTTPClientError) -> Framing {
        if method == .head || head.status < 200 || head.status == 204 || head.status == 304 { return .none }
        let codings = head.headers.values(for: "Transfer-Encoding")
        if !codings.isEmpty {
            let list = codings.flatMap { $0.split(separator: ",") }
                .map { $0.trimmingOWS().lowercased() }
                .filter { !$0.isEmpty }
            guard list == ["chunked"] else {
                let shown = printable(Array(codings.joined(separator: ", ").utf8))
                throw HTTPClientError(.malformedResponse, "unsupported Transfer-Encoding '\(shown)' (only chunked is supported)")
            }
            return .chunked  // Content-Length, if any, is ignored: chunked wins
        }
        if let length = try contentLength(in: head.headers) { return .length(length) }
        return .untilClose
    }

    /// The `Content-Length` of a header block, `nil` when absent.
    ///
    /// Digits only (no sign), no overflow; a comma list or repeated field is fine when every
    /// value is the same.
    ///
    /// - Throws: `.invalidContentLength` otherwise.
    package static func contentLength(in headers: HTTPHeaders) throws(HTTPClientError) -> Int64? {
        guard let first = headers.firstIndex(of: "Content-Length", from: 0) else { return nil }
        let only = headers.fields[first].value
        let repeated = headers.firstIndex(of: "Content-Length", from: first + 1) != nil
        // The usual case: one value of digits only, too short to overflow.
        if !repeated, (1...18).contains(only.utf8.count), only.utf8.allSatisfy(isDigit) { return Int64(only) }
        let values = headers.values(for: "Content-Length")
        var result: Int64?
        for element in values.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let text = element.trimmingOWS()
            guard !text.isEmpty, text.utf8.allSatisfy(isDigit), let value = Int64(text) else {
                throw HTTPClientError(.invalidContentLength, "invalid Content-Length '\(printable(Array(values.joined(separator: ", ").utf8)))'")
            }
            if let result, result != value {
                throw HTTPClientError(.invalidContentLength, "conflicting Content-Length values '\(values.joined(separator: ", "))'")
            }
            result = value
        }
        return result
    }
}
