/// One file the daemon serves outside the RPC, from memory.
public struct StaticFile: Sendable {
    /// Its `Content-Type`.
    public var contentType: String
    /// Its bytes.
    public var body: [UInt8]
    /// More response fields (a `Content-Security-Policy`, say).
    public var fields: [HTTPResponse.HTTPField]

    /// Creates a file.
    public init(contentType: String, body: [UInt8], fields: [HTTPResponse.HTTPField] = []) {
        self.contentType = contentType
        self.body = body
        self.fields = fields
    }
}

/// The files the daemon serves at paths other than `/jsonrpc` (a dashboard, say): only files
/// the provider holds in memory, never a path on disk. Without a provider every such path
/// answers 404.
public protocol StaticFileProvider: Sendable {
    /// The file at `path` (such as `/` or `/app.js`), or `nil` for 404.
    func file(at path: String) -> StaticFile?
}
