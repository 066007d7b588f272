/// An HTTP/1.1 response the daemon sends: a status, fields and a body of known length.
public struct HTTPResponse: Sendable, Equatable {
    /// The status code.
    public var status: Int
    /// Header fields besides `Content-Length` and `Connection`, which ``serialized(keepAlive:)`` adds.
    public var fields: [HTTPField]
    /// The body.
    public var body: [UInt8]

    /// One header field.
    public struct HTTPField: Sendable, Equatable {
        /// The name.
        public var name: String
        /// The value (no CR or LF).
        public var value: String

        /// Creates a field.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Creates a response; every one carries `Cache-Control: no-store` and
    /// `X-Content-Type-Options: nosniff`.
    ///
    /// - Parameters:
    ///   - status: the status code.
    ///   - contentType: the body's type, if it has one.
    ///   - fields: more fields.
    ///   - body: the body.
    public init(status: Int, contentType: String? = nil, fields: [HTTPField] = [], body: [UInt8] = []) {
        self.status = status
        self.body = body
        var all = [HTTPField("Cache-Control", "no-store"), HTTPField("X-Content-Type-Options", "nosniff")]
        if let contentType { all.append(HTTPField("Content-Type", contentType)) }
        self.fields = all + fields
    }

    /// A short text response (errors: `403 Forbidden: the Host ... is not allowed`).
    public static func text(_ status: Int, _ message: String, fields: [HTTPField] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", fields: fields,
                     body: Array("\(status) \(reasonPhrase(status)): \(message)\n".utf8))
    }

    /// The bytes on the wire.
    ///
    /// - Parameter keepAlive: whether the connection stays open (else `Connection: close`).
    public func serialized(keepAlive: Bool) -> [UInt8] {
        var head = Self.statusLineAndFields(status, fields)
        if status != 101 && status != 204 && status != 304 { head += "Content-Length: \(body.count)\r\n" }
        if !keepAlive && status != 101 { head += "Connection: close\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    /// The status line and the fields, each line ending in CRLF; a field whose value holds CR or
    /// LF is left out (checked by bytes: `"\r\n"` is one Character, equal to neither).
    static func statusLineAndFields(_ status: Int, _ fields: [HTTPField]) -> String {
        var head = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n"
        for field in fields where !field.value.utf8.contains(where: { $0 == 13 || $0 == 10 }) {
            head += "\(field.name): \(field.value)\r\n"
        }
        return head
    }

    /// The standard reason phrase of a status the daemon sends.
    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 101: "Switching Protocols"
        case 200: "OK"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 426: "Upgrade Required"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status"
        }
    }
}
