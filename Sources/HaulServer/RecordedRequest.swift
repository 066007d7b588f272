/// One request as the server received it: method, target, parsed query and headers.
///
/// `HaulServer.requests` keeps every request in arrival order so tests can assert what a
/// client sent (a `Range`, an `If-Range`, a user's header, the absence of `Authorization`).
public struct RecordedRequest: Sendable {
    /// The method, e.g. `GET` or `HEAD`.
    public var method: String
    /// The request target exactly as sent, e.g. `/bytes/10?seed=2`.
    public var target: String
    /// The target's path, without the query (not percent-decoded).
    public var path: String
    /// The query items in order, names and values percent-decoded (`+` is kept as is).
    ///
    /// An item without `=` has an empty value, so flags such as `no-ranges` are present.
    public var query: [(name: String, value: String)]
    /// The header fields in order, as sent.
    public var headers: [(name: String, value: String)]
    /// The protocol version from the request line, e.g. `HTTP/1.1`.
    public var version: String
    /// The request body (read when `Content-Length` announced one), usually empty.
    public var body: [UInt8] = []

    /// Creates a request record.
    public init(method: String, target: String, headers: [(name: String, value: String)], version: String = "HTTP/1.1") {
        self.method = method
        self.target = target
        self.headers = headers
        self.version = version
        var pathPart = Substring(target)
        // Absolute form (`http://host/path`): keep only the path and query.
        if !target.hasPrefix("/"), let colon = target.firstIndex(of: ":"),
           target[colon...].hasPrefix("://") {
            let afterAuthority = target[target.index(colon, offsetBy: 3)...]
            pathPart = afterAuthority.firstIndex(of: "/").map { afterAuthority[$0...] } ?? "/"
        }
        let pieces = pathPart.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        self.path = String(pieces[0])
        self.query = pieces.count > 1 ? Self.parseQuery(pieces[1]) : []
    }

    /// The value of the first header named `name` (compared case-insensitively), trimmed.
    ///
    /// - Parameter name: a field name such as `range`.
    /// - Returns: the value, or `nil` when the header is absent.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// The value of the first query item named `name`, percent-decoded.
    ///
    /// - Parameter name: an item name such as `seed` (case-sensitive).
    /// - Returns: the value (empty for a bare flag), or `nil` when absent.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// Every value of the query items named `name`, in order (for repeatable options).
    public func queryValues(_ name: String) -> [String] {
        query.filter { $0.name == name }.map(\.value)
    }

    /// Whether the client asked to close after this response (`Connection: close`, or
    /// HTTP/1.0 without `keep-alive`).
    var wantsClose: Bool {
        let tokens = (header("connection") ?? "").lowercased()
            .split(separator: ",").map { $0.trimmingSpaces() }
        if version == "HTTP/1.0" { return !tokens.contains("keep-alive") }
        return tokens.contains("close")
    }

    static func parseQuery(_ text: Substring) -> [(name: String, value: String)] {
        text.split(separator: "&").map { item in
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (percentDecode(pair[0]), pair.count > 1 ? percentDecode(pair[1]) : "")
        }
    }

    /// Decodes `%XX` escapes; invalid escapes are kept literally.
    static func percentDecode(_ text: Substring) -> String {
        let bytes = Array(text.utf8)
        var result = [UInt8]()
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                result.append(high << 4 | low)
                index += 3
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}

/// Parses a request head (request line and header fields, without the final blank line).
enum RequestHeadParser {
    /// Parses `head`, the bytes before `\r\n\r\n`.
    ///
    /// - Returns: the request, or `nil` when the request line or a field is malformed.
    static func parse(_ head: ArraySlice<UInt8>) -> RecordedRequest? {
        // Split bytes, not Characters: "\r\n" is one Character in Swift.
        var lines = head.split(separator: 10, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
        }
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, !requestLine[0].isEmpty, !requestLine[1].isEmpty,
              requestLine[2].hasPrefix("HTTP/1.") else { return nil }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon]
            guard !name.isEmpty, !name.contains(" "), !name.contains("\t") else { return nil }
            headers.append((String(name), line[line.index(after: colon)...].trimmingSpaces()))
        }
        return RecordedRequest(method: String(requestLine[0]), target: String(requestLine[1]),
                               headers: headers, version: String(requestLine[2]))
    }
}
