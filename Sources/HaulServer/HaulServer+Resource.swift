import Synchronization

extension HaulServer {
    /// A file the server serves at one path, which a test can change or remove between requests.
    ///
    /// The body is `HaulServer.content(seed:)` cut to `size` bytes, served with the same
    /// semantics as `/bytes/N`: a single `Range` gives 206 with `Content-Range` (a last position
    /// beyond the end is clamped), an unsatisfiable one 416 with `Content-Range: bytes */size`,
    /// several ranges 200 with everything; an `If-Range` that does not match (strong comparison
    /// with `etag`, or exactly `lastModified`) gives 200 with everything; `HEAD` sends the head
    /// only; the connection is kept alive. Each request reads the resource as registered at
    /// that moment; a response under way keeps the version it started with.
    ///
    /// ```swift
    /// server.setResource("/file.bin", .init(size: 10_000_000, seed: 1, etag: "\"v1\""))
    /// // ... first run ...
    /// server.setResource("/file.bin", .init(size: 12_000_000, seed: 2, etag: "\"v2\""))
    /// ```
    public struct Resource: Sendable {
        /// The body length in bytes (not negative).
        public var size: Int64
        /// The content seed: `HaulServer.content(seed:)` gives the expected bytes.
        public var seed: UInt64
        /// The `ETag` value exactly as sent (`"v1"` with its quotes, or `W/"v1"`); `nil` sends none.
        public var etag: String?
        /// The `Last-Modified` value exactly as sent; `nil` sends none.
        public var lastModified: String?
        /// Answer every request 200 with everything and omit `Accept-Ranges`.
        public var ignoresRange: Bool
        /// The `Content-Type`; `nil` sends none.
        public var contentType: String?
        /// The pace of each connection's body in bytes/s; `nil` uses `Configuration.rateLimit`,
        /// 0 is unlimited.
        public var rate: Int?
        /// The `Content-Disposition` value exactly as sent; `nil` sends none.
        public var contentDisposition: String?
        /// More response fields, sent with every answer (`Repr-Digest`, `Date`...).
        public var extraHeaders: [(name: String, value: String)] = []
        /// Looks at each request first: a ``Refusal`` is sent instead of the content (then the
        /// connection closes). For signed-URL tests: refuse a stale signature with a 403.
        public var gate: (@Sendable (RecordedRequest) -> Refusal?)?

        /// An error answer a ``gate`` sends instead of the content.
        public struct Refusal: Sendable {
            /// The status, such as 403.
            public var status: Int
            /// The body (an S3 XML error document, for example).
            public var body: String
            /// The `Content-Type`.
            public var contentType: String

            /// Creates a refusal.
            public init(status: Int, body: String, contentType: String = "application/xml") {
                self.status = status
                self.body = body
                self.contentType = contentType
            }
        }

        /// Creates a resource; by default without validators, with ranges and unpaced.
        ///
        /// - Parameters:
        ///   - size: the body length in bytes (not negative).
        ///   - seed: the content seed.
        ///   - etag: the raw `ETag` value, quotes included.
        ///   - lastModified: the raw `Last-Modified` value.
        ///   - ignoresRange: answer 200 with everything to every `Range`.
        ///   - contentType: the `Content-Type`.
        ///   - rate: bytes/s per connection (`nil`: the server's default, 0: unlimited).
        ///   - contentDisposition: the raw `Content-Disposition` value.
        public init(size: Int64, seed: UInt64 = 0, etag: String? = nil, lastModified: String? = nil,
                    ignoresRange: Bool = false, contentType: String? = "application/octet-stream",
                    rate: Int? = nil, contentDisposition: String? = nil) {
            precondition(size >= 0, "a resource's size cannot be negative")
            self.size = size
            self.seed = seed
            self.etag = etag
            self.lastModified = lastModified
            self.ignoresRange = ignoresRange
            self.contentType = contentType
            self.rate = rate
            self.contentDisposition = contentDisposition
        }

        /// The bytes of `range` of this resource's body, to compare a download with.
        ///
        /// - Parameter range: offsets within `0..<size`.
        public func bytes(_ range: Range<Int64>) -> [UInt8] {
            DeterministicContent(seed: seed).bytes(range)
        }

        /// The response that serves this resource on a server with `configuration`.
        func response(configuration: Configuration) -> ContentResponse {
            var response = ContentResponse(length: max(0, size), seed: seed)
            response.etag = etag
            response.lastModified = lastModified
            response.acceptsRanges = !ignoresRange
            response.contentType = contentType
            response.contentDisposition = contentDisposition
            response.bytesPerSecond = (rate ?? configuration.rateLimit).flatMap { $0 > 0 ? $0 : nil }
            response.extraHeaders = extraHeaders.map { ($0.name, $0.value) }
            return response
        }

        /// Answers `request`: the gate's refusal, or the content. Returns whether to keep the connection.
        func serve(_ request: RecordedRequest, on connection: ServerConnection, configuration: Configuration) throws -> Bool {
            if let refusal = gate?(request) {
                let body = Array(refusal.body.utf8)
                try connection.write(Response.head(status: refusal.status, headers: [
                    ("Content-Type", refusal.contentType), ("Content-Length", "\(body.count)"), ("Connection", "close"),
                ] + extraHeaders.map { ($0.name, $0.value) }))
                try connection.write(body)
                return false
            }
            return try response(configuration: configuration).respond(to: request, on: connection)
        }
    }

    /// Serves `resource` at exactly `path` (no query) from now on, ahead of the built-in routes.
    ///
    /// Registering a path again replaces what was there, a handler of `route(_:_:)` included:
    /// the last registration for a path wins.
    ///
    /// - Parameters:
    ///   - path: the request path to match, e.g. `/file.bin`.
    ///   - resource: what to serve there.
    public func setResource(_ path: String, _ resource: Resource) {
        core.state.withLock { state in
            state.routes[path] = nil
            state.resources[path] = resource
        }
    }

    /// Stops serving the resource at `path`; requests for it reach the built-in routes again.
    ///
    /// - Parameter path: a path given to `setResource(_:_:)`; other paths are ignored.
    public func removeResource(_ path: String) {
        core.state.withLock { _ = $0.resources.removeValue(forKey: path) }
    }

    /// The resource registered at `path`, or `nil`.
    ///
    /// - Parameter path: a path given to `setResource(_:_:)`.
    public func resource(_ path: String) -> Resource? {
        core.state.withLock { $0.resources[path] }
    }
}
