/// `/bytes/N[/name]`: N bytes of deterministic content with ranges, validators and faults.
enum BytesRoute {
    /// What a `Range` header asks of a representation of a known length.
    enum RangeDecision: Equatable {
        /// Send everything (no, invalid, or multiple ranges).
        case full
        /// Send these bytes with 206.
        case partial(Range<Int64>)
        /// 416 with `Content-Range: bytes */N`.
        case unsatisfiable
    }

    /// Interprets `header` (`bytes=a-b`, `bytes=a-`, `bytes=-n`) for a body of `length` bytes.
    static func decide(range header: String, length: Int64) -> RangeDecision {
        let text = header.trimmingSpaces()
        guard text.lowercased().hasPrefix("bytes=") else { return .full }
        let specs = text.dropFirst(6).split(separator: ",")
        guard specs.count == 1 else { return .full }
        let parts = specs[0].trimmingSpaces().split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .full }
        let first = parts[0], second = parts[1]
        let digits: (Substring) -> Bool = { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
        if first.isEmpty {
            guard digits(second), let suffix = Int64(second) else { return .full }
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .partial(max(0, length - suffix)..<length)
        }
        guard digits(first), let start = Int64(first) else { return .full }
        if second.isEmpty {
            return start < length ? .partial(start..<length) : .unsatisfiable
        }
        guard digits(second), let last = Int64(second), last >= start else { return .full }
        guard start < length else { return .unsatisfiable }
        return .partial(start..<min(last, length - 1) + 1)
    }

    /// Answers `request`; returns whether the connection may serve another request.
    static func respond(to request: RecordedRequest, length: Int64, on connection: ServerConnection) throws -> Bool {
        let seed = request.queryValue("seed").flatMap { UInt64($0) } ?? 0
        var close = request.wantsClose
        let isHead = request.method == "HEAD"
        let extras = BuiltinRoutes.extraHeaders(request)

        if let statusText = request.queryValue("status"), let status = Int(statusText) {
            let page = Response.allowsBody(status) ? Response.errorPage(status: status) : ""
            var fields: [(String, String)] = [("Content-Type", "text/html; charset=utf-8"),
                                              ("Content-Length", "\(page.utf8.count)")] + extras
            if close { fields.append(("Connection", "close")) }
            try connection.write(Response.head(status: status, headers: fields) + (isHead ? "" : page))
            return !close
        }

        let etag: String? = request.queryValue("no-etag") != nil ? nil : (request.queryValue("etag") ?? "\"haul-\(length)-\(seed)\"")
        var decision = RangeDecision.full
        if request.queryValue("no-ranges") == nil, let range = request.header("range") {
            let ifRange = request.header("if-range")
            if ifRange == nil || ifRange == etag || ifRange == Response.lastModified {
                decision = decide(range: range, length: length)
            }
        }
        if decision == .unsatisfiable {
            try connection.write(Response.simple(status: 416, body: "range not satisfiable\n", close: close,
                                                 headers: [("Content-Range", "bytes */\(length)")] + extras,
                                                 includeBody: !isHead))
            return !close
        }
        let range: Range<Int64>
        var fields: [(String, String)] = [("Content-Type", request.queryValue("type") ?? "application/octet-stream")]
        if request.queryValue("no-ranges") == nil { fields.append(("Accept-Ranges", "bytes")) }
        if let etag { fields.append(("ETag", etag)) }
        fields.append(("Last-Modified", Response.lastModified))
        if case .partial(let partial) = decision {
            range = partial
            fields.append(("Content-Range", "bytes \(partial.lowerBound)-\(partial.upperBound - 1)/\(length)"))
        } else {
            range = 0..<length
        }
        if let disposition = request.queryValue("cd") { fields.append(("Content-Disposition", disposition)) }
        if request.queryValue("gzip") != nil { fields.append(("Content-Encoding", "gzip")) }

        let chunked = request.queryValue("chunked") != nil
        let dropAfter = request.queryValue("drop-after").flatMap { Int64($0) }
        let stallAfter = request.queryValue("stall-after").flatMap { Int64($0) }
        if chunked {
            fields.append(("Transfer-Encoding", "chunked"))
        } else if request.queryValue("no-length") != nil {
            close = true
        } else if let literal = request.queryValue("length") {
            fields.append(("Content-Length", literal))
            close = true
        } else {
            fields.append(("Content-Length", "\(range.count)"))
        }
        if dropAfter != nil || stallAfter != nil { close = true }
        fields += extras
        if close { fields.append(("Connection", "close")) }
        try connection.write(Response.head(status: decision == .full ? 200 : 206, headers: fields))
        guard !isHead else { return !close }

        var rate = connection.core.configuration.rateLimit
        if let text = request.queryValue("rate"), let value = Int(text) { rate = value }
        try connection.sendContent(DeterministicContent(seed: seed), range: range, chunked: chunked,
                                   bytesPerSecond: rate.flatMap { $0 > 0 ? $0 : nil },
                                   stopAfter: dropAfter ?? stallAfter)
        if dropAfter != nil {
            connection.drop()
        } else if stallAfter != nil {
            connection.waitUntilClosed()
            connection.drop()
        }
        return !close
    }
}
