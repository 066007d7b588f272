import HaulCore
/// A parsed HTTP/1.x response status line and header block.
public struct ResponseHead: Sendable, Equatable {
    /// The minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// The status code (100–999).
    public var status: Int
    /// The reason phrase (may be empty).
    public var reason: String
    /// The header fields.
    public var headers: HTTPHeaders

    /// Creates a response head.
    public init(minorVersion: Int = 1, status: Int, reason: String = "", headers: HTTPHeaders = HTTPHeaders()) {
        self.minorVersion = minorVersion
        self.status = status
        self.reason = reason
        self.headers = headers
    }
}
