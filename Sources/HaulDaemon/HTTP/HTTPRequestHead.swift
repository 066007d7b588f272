/// A parsed HTTP/1.x request head.
public struct HTTPRequestHead: Sendable, Equatable {
    /// The method, as sent (case-sensitive: `POST`, `GET`...).
    public var method: String
    /// The request target in origin form (`/jsonrpc?x=1`), or `*`.
    public var target: String
    /// The minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// The header fields in order, names as sent, values trimmed.
    public var fields: [(name: String, value: String)]

    /// Creates a head.
    public init(method: String, target: String, minorVersion: Int = 1, fields: [(name: String, value: String)] = []) {
        self.method = method
        self.target = target
        self.minorVersion = minorVersion
        self.fields = fields
    }

    /// The target's path, without the query.
    public var path: Substring {
        target[..<(target.firstIndex(of: "?") ?? target.endIndex)]
    }

    /// The value of the first field named `name` (ASCII case-insensitive).
    public subscript(name: String) -> String? {
        fields.first { $0.name.lowercasedASCII() == name.lowercasedASCII() }?.value
    }

    /// The values of every field named `name`.
    public func values(_ name: String) -> [String] {
        let wanted = name.lowercasedASCII()
        return fields.filter { $0.name.lowercasedASCII() == wanted }.map(\.value)
    }

    /// Whether a comma-separated field holds `token` (ASCII case-insensitive), as `Connection:
    /// keep-alive, Upgrade` holds `upgrade`.
    public func hasToken(_ token: String, in name: String) -> Bool {
        let wanted = token.lowercasedASCII()
        return values(name).contains { value in
            value.split(separator: ",").contains { $0.trimmingSpaces().lowercasedASCII() == wanted }
        }
    }

    /// Whether the connection stays open after the response (HTTP/1.1 unless `Connection:
    /// close`; HTTP/1.0 only with `Connection: keep-alive`).
    public var keepsAlive: Bool {
        minorVersion >= 1 ? !hasToken("close", in: "Connection") : hasToken("keep-alive", in: "Connection")
    }

    /// Heads are equal when method, target, version and fields are.
    public static func == (lhs: HTTPRequestHead, rhs: HTTPRequestHead) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.minorVersion == rhs.minorVersion
            && lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }
}

extension StringProtocol {
    /// The text with ASCII letters lowercased (other characters as they are).
    func lowercasedASCII() -> String {
        String(decoding: utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// The text without leading and trailing spaces and tabs.
    func trimmingSpaces() -> Substring {
        let text = self[...]
        let start = text.firstIndex { $0 != " " && $0 != "\t" } ?? text.endIndex
        let end = text.lastIndex { $0 != " " && $0 != "\t" }.map { text.index(after: $0) } ?? start
        return Substring(text[start..<Swift.max(start, end)])
    }
}
