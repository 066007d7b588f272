/// What the daemon serves at paths other than `/jsonrpc`: the web dashboard (HaulDashboard's
/// `Dashboard`, which `haul daemon` hands in), or any other set of pages. Only what a provider
/// holds in memory, never a path on disk.
///
/// The server asks the providers of ``DaemonServer/Configuration/pages`` in order, for every
/// `GET` or `HEAD` outside `/jsonrpc` that passed its rules (Host, Origin, size, method), and
/// writes the first answer as it is; when none answers, 404.
public protocol PageProvider: Sendable {
    /// The answer to one request, or `nil` when its path is not this provider's.
    ///
    /// - Parameter head: the request's head; its method is `GET` or `HEAD`, its target in
    ///   origin form as sent (a query string included, nothing decoded).
    /// - Returns: the complete response, or `nil` to leave the request to the next provider.
    func response(to head: HTTPRequestHead) -> PageResponse?
}

/// A page provider's answer, complete: the daemon writes its status line, its fields as given
/// (`Content-Length` included, the file's size for `HEAD`), then its body, and adds only
/// `Connection: close` when the connection ends.
public struct PageResponse: Sendable, Equatable {
    /// The status code (200, 304, 405, ...).
    public var status: Int
    /// The header fields in order, `Content-Length` included.
    public var fields: [HTTPResponse.HTTPField]
    /// The body; empty for `HEAD` and 304.
    public var body: [UInt8]

    /// A response from its parts.
    ///
    /// - Parameters:
    ///   - status: the status code.
    ///   - fields: the header fields in order, `Content-Length` included.
    ///   - body: the body bytes.
    public init(status: Int, fields: [HTTPResponse.HTTPField], body: [UInt8]) {
        self.status = status
        self.fields = fields
        self.body = body
    }

    /// The reason phrase of ``status``, for the status line.
    public var reason: String { HTTPResponse.reasonPhrase(status) }

    /// The value of the first field named `name` (compared without regard to case).
    ///
    /// - Parameter name: a field name, such as `Content-Type`.
    /// - Returns: its value, or `nil` when the response has no such field.
    public func value(forHeader name: String) -> String? {
        fields.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The bytes on the wire: the status line, the fields as given, then the body.
    ///
    /// - Parameter keepAlive: whether the connection stays open (else `Connection: close`).
    /// - Returns: the head and the body, ready to write.
    public func serialized(keepAlive: Bool) -> [UInt8] {
        var head = HTTPResponse.statusLineAndFields(status, fields)
        if !keepAlive { head += "Connection: close\r\n" }
        return Array((head + "\r\n").utf8) + body
    }
}
