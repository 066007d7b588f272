/// Why a request head was refused, with the status to answer.
public struct HTTPRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The status to answer: 400, 431, 501 or 505.
    public var status: Int
    /// What is wrong.
    public var reason: String

    /// `status reason`.
    public var description: String { "\(status) \(reason)" }
}

/// Finds and parses an HTTP/1.x request head in bytes that arrive in pieces: pure, bounded,
/// strict.
///
/// Feed it everything received so far; it answers ``Step/needMore`` until the blank line that
/// ends the head, then the head and how many bytes it took (the body follows). Refused: a head
/// over ``maximumHeadBytes`` (431), more than ``maximumFields`` fields (431), bare LF line
/// ends, a method that is not a token, a target that is not in origin form or `*`, a version
/// other than HTTP/1.0 and 1.1 (505), a field name with spaces or non-token characters, folded
/// lines, control characters in a value, a missing or repeated `Host` in HTTP/1.1, an invalid
/// or conflicting `Content-Length` (400), any `Transfer-Encoding` (501: bodies come with a
/// length here, which rules request smuggling out).
public struct HTTPRequestParser: Sendable {
    /// The largest head accepted, in bytes.
    public var maximumHeadBytes: Int
    /// The most header fields accepted.
    public var maximumFields: Int

    /// What a look at the bytes so far found.
    public enum Step: Sendable, Equatable {
        /// The head is not complete yet.
        case needMore
        /// The head, and the bytes it took (its blank line included).
        case head(HTTPRequestHead, consumed: Int)
    }

    /// Creates a parser.
    ///
    /// - Parameters:
    ///   - maximumHeadBytes: the largest head accepted (default 16 KiB).
    ///   - maximumFields: the most fields accepted (default 100).
    public init(maximumHeadBytes: Int = 16 << 10, maximumFields: Int = 100) {
        self.maximumHeadBytes = maximumHeadBytes
        self.maximumFields = maximumFields
    }

    /// Looks for a complete head at the start of `bytes`.
    ///
    /// - Throws: ``HTTPRequestError`` with the status to answer.
    public func parse(_ bytes: some RandomAccessCollection<UInt8>) throws(HTTPRequestError) -> Step {
        let buffer = Array(bytes.prefix(maximumHeadBytes + 4))
        guard let end = Self.headEnd(buffer) else {
            if buffer.count > maximumHeadBytes { throw HTTPRequestError(status: 431, reason: "the request head is too large") }
            if let lf = buffer.firstIndex(of: 0x0A), lf == 0 || buffer[lf - 1] != 0x0D {
                throw HTTPRequestError(status: 400, reason: "a line ends without CR")
            }
            return .needMore
        }
        guard end <= maximumHeadBytes else { throw HTTPRequestError(status: 431, reason: "the request head is too large") }
        let lines = try Self.lines(buffer[..<end])
        guard let first = lines.first else { throw HTTPRequestError(status: 400, reason: "empty request") }
        var head = try Self.requestLine(first)
        guard lines.count - 1 <= maximumFields else { throw HTTPRequestError(status: 431, reason: "too many header fields") }
        for line in lines.dropFirst() { head.fields.append(try Self.field(line)) }
        try Self.validate(head)
        return .head(head, consumed: end + 4)
    }

    /// The body length `head` announces (0 without `Content-Length`).
    ///
    /// - Throws: 400 for a malformed or conflicting length.
    public static func contentLength(_ head: HTTPRequestHead) throws(HTTPRequestError) -> Int {
        let values = head.values("Content-Length").flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingSpaces() }
        guard let first = values.first else { return 0 }
        guard values.allSatisfy({ $0 == first }), !first.isEmpty, first.count <= 15,
              first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(first) else {
            throw HTTPRequestError(status: 400, reason: "invalid Content-Length")
        }
        return length
    }

    /// The index of the CR of the first CRLF CRLF, if any.
    static func headEnd(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        var index = 0
        while index + 3 < buffer.count {
            if buffer[index] == 0x0D, buffer[index + 1] == 0x0A, buffer[index + 2] == 0x0D, buffer[index + 3] == 0x0A {
                return index
            }
            index += 1
        }
        return nil
    }

    /// The head's lines, split at CRLF; a bare CR or LF is refused.
    private static func lines(_ head: ArraySlice<UInt8>) throws(HTTPRequestError) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        var index = head.startIndex
        while index < head.endIndex {
            let byte = head[index]
            if byte == 0x0D {
                guard index + 1 < head.endIndex, head[index + 1] == 0x0A else {
                    throw HTTPRequestError(status: 400, reason: "a bare CR in the head")
                }
                lines.append(head[start..<index])
                index += 2
                start = index
                continue
            }
            if byte == 0x0A { throw HTTPRequestError(status: 400, reason: "a line ends without CR") }
            index += 1
        }
        lines.append(head[start..<head.endIndex])
        return lines
    }

    private static func requestLine(_ line: ArraySlice<UInt8>) throws(HTTPRequestError) -> HTTPRequestHead {
        let parts = line.split(separator: 0x20, maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(isTokenByte) else {
            throw HTTPRequestError(status: 400, reason: "malformed request line")
        }
        let target = parts[1]
        guard !target.isEmpty, target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
              target.first == UInt8(ascii: "/") || target.elementsEqual("*".utf8) else {
            throw HTTPRequestError(status: 400, reason: "the request target is not a path")
        }
        let minor: Int
        switch String(decoding: parts[2], as: UTF8.self) {
        case "HTTP/1.1": minor = 1
        case "HTTP/1.0": minor = 0
        case let version where version.hasPrefix("HTTP/") && version.count == 8:
            throw HTTPRequestError(status: 505, reason: "HTTP version not supported")
        default: throw HTTPRequestError(status: 400, reason: "malformed request line")
        }
        return HTTPRequestHead(method: String(decoding: parts[0], as: UTF8.self),
                               target: String(decoding: target, as: UTF8.self), minorVersion: minor)
    }

    private static func field(_ line: ArraySlice<UInt8>) throws(HTTPRequestError) -> (name: String, value: String) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
            throw HTTPRequestError(status: 400, reason: "malformed header field")
        }
        let name = line[..<colon]
        guard name.allSatisfy(isTokenByte) else { throw HTTPRequestError(status: 400, reason: "malformed header field name") }
        let value = line[(colon + 1)...]
        guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw HTTPRequestError(status: 400, reason: "control character in a header field")
        }
        let text = String(decoding: value, as: UTF8.self).trimmingSpaces()
        return (String(decoding: name, as: UTF8.self), String(text))
    }

    private static func validate(_ head: HTTPRequestHead) throws(HTTPRequestError) {
        if !head.values("Transfer-Encoding").isEmpty {
            throw HTTPRequestError(status: 501, reason: "Transfer-Encoding is not supported; send Content-Length")
        }
        let hosts = head.values("Host")
        if head.minorVersion == 1, hosts.count != 1 {
            throw HTTPRequestError(status: 400, reason: "an HTTP/1.1 request needs exactly one Host")
        }
        if hosts.count > 1 { throw HTTPRequestError(status: 400, reason: "more than one Host") }
        _ = try contentLength(head)
    }

    /// `!#$%&'*+-.^_`|~`, digits and letters (RFC 9110 tchar).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
