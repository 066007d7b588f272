/// A response carrying `DeterministicContent`: validators, ranges, `HEAD`, pacing and faults.
///
/// `/bytes/N` and the resources registered with `HaulServer.setResource(_:_:)` both answer
/// through it, so they share one meaning of `Range`, `If-Range`, `HEAD` and keep-alive.
struct ContentResponse {
    /// How the end of the body is shown to the client.
    enum Framing {
        /// `Content-Length` of the bytes sent (the range's length for 206).
        case contentLength
        /// `Transfer-Encoding: chunked` in 64 KiB chunks.
        case chunked
        /// No length: the connection closes after the body.
        case untilClose
        /// `Content-Length` with this literal value, then the real bytes, then close.
        case literalLength(String)
    }

    /// How the body ends.
    enum Ending {
        /// Every byte of the range is sent.
        case complete
        /// After this many body bytes the socket is shut down abruptly.
        case drop(after: Int64)
        /// After this many body bytes the server goes silent until the client closes or `stop()`.
        case stall(after: Int64)
        /// After this many body bytes the connection is reset (RST, `SO_LINGER` 0).
        case reset(after: Int64)
    }

    var length: Int64
    var seed: UInt64 = 0
    /// The `ETag` as sent (quotes included), or `nil` for none.
    var etag: String?
    /// The `Last-Modified` as sent, or `nil` for none.
    var lastModified: String?
    /// Whether `Range` is honoured and `Accept-Ranges: bytes` sent.
    var acceptsRanges = true
    var contentType: String? = "application/octet-stream"
    var contentDisposition: String?
    var contentEncoding: String?
    /// The pace of the body in bytes/s; `nil` is unlimited.
    var bytesPerSecond: Int?
    var framing = Framing.contentLength
    var ending = Ending.complete
    var extraHeaders: [(String, String)] = []

    /// Answers `request`; returns whether the connection may serve another request.
    ///
    /// - Throws: when a write fails; the caller drops the connection.
    func respond(to request: RecordedRequest, on connection: ServerConnection) throws -> Bool {
        var close = request.wantsClose
        let isHead = request.method == "HEAD"
        let decision = rangeDecision(for: request)
        if decision == .unsatisfiable {
            try connection.write(Response.simple(status: 416, body: "range not satisfiable\n", close: close,
                                                 headers: [("Content-Range", "bytes */\(length)")] + extraHeaders,
                                                 includeBody: !isHead))
            return !close
        }
        let content = contentFields(for: decision)
        var fields = content.fields + framingFields(bodyLength: content.range.count, close: &close)
        let stopAfter: Int64?
        switch ending {
        case .complete: stopAfter = nil
        case .drop(let count), .stall(let count), .reset(let count): stopAfter = count; close = true
        }
        fields += extraHeaders
        if close { fields.append(("Connection", "close")) }
        try connection.write(Response.head(status: decision == .full ? 200 : 206, headers: fields))
        guard !isHead else { return !close }

        var isChunked = false
        if case .chunked = framing { isChunked = true }
        try connection.sendContent(DeterministicContent(seed: seed), range: content.range, chunked: isChunked,
                                   bytesPerSecond: bytesPerSecond, stopAfter: stopAfter)
        end(connection)
        return !close
    }

    /// What `request`'s `Range` (and `If-Range`) asks for: the whole content when ranges are not
    /// honoured, when there is no `Range`, or when `If-Range` names other validators.
    private func rangeDecision(for request: RecordedRequest) -> RangeRequest.Decision {
        guard acceptsRanges, let range = request.header("range") else { return .full }
        let ifRange = request.header("if-range")
        guard ifRange.map({ RangeRequest.ifRange($0, matchesETag: etag, lastModified: lastModified) }) ?? true else {
            return .full
        }
        return RangeRequest.decide(range: range, length: length)
    }

    /// The bytes to send for `decision` and the header fields that describe them, up to
    /// `Content-Encoding` (the framing's fields come next).
    private func contentFields(for decision: RangeRequest.Decision) -> (range: Range<Int64>, fields: [(String, String)]) {
        var range = 0..<length
        var fields: [(String, String)] = []
        if let contentType { fields.append(("Content-Type", contentType)) }
        if acceptsRanges { fields.append(("Accept-Ranges", "bytes")) }
        if let etag { fields.append(("ETag", etag)) }
        if let lastModified { fields.append(("Last-Modified", lastModified)) }
        if case .partial(let partial) = decision {
            range = partial
            fields.append(("Content-Range", "bytes \(partial.lowerBound)-\(partial.upperBound - 1)/\(length)"))
        }
        if let contentDisposition { fields.append(("Content-Disposition", contentDisposition)) }
        if let contentEncoding { fields.append(("Content-Encoding", contentEncoding)) }
        return (range, fields)
    }

    /// The header fields of the ``framing`` for a body of `bodyLength` bytes; sets `close` when
    /// the body ends with the connection.
    private func framingFields(bodyLength: Int, close: inout Bool) -> [(String, String)] {
        switch framing {
        case .contentLength:
            return [("Content-Length", "\(bodyLength)")]
        case .chunked:
            return [("Transfer-Encoding", "chunked")]
        case .untilClose:
            close = true
            return []
        case .literalLength(let literal):
            close = true
            return [("Content-Length", literal)]
        }
    }

    /// Ends the connection after the body as ``ending`` says (nothing for a complete body).
    private func end(_ connection: ServerConnection) {
        switch ending {
        case .complete:
            break
        case .drop:
            connection.drop()
        case .stall:
            connection.waitUntilClosed()
            connection.drop()
        case .reset:
            connection.reset()
        }
    }
}
