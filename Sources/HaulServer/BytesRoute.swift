/// `/bytes/N[/name]`: N bytes of deterministic content with ranges, validators and faults.
enum BytesRoute {
    /// Answers `request`; returns whether the connection may serve another request.
    static func respond(to request: RecordedRequest, length: Int64, on connection: ServerConnection) throws -> Bool {
        let close = request.wantsClose
        let extras = BuiltinRoutes.extraHeaders(request)

        if let statusText = request.queryValue("status"), let status = Int(statusText) {
            let page = Response.allowsBody(status) ? Response.errorPage(status: status) : ""
            var fields: [(String, String)] = [("Content-Type", "text/html; charset=utf-8"),
                                              ("Content-Length", "\(page.utf8.count)")] + extras
            if close { fields.append(("Connection", "close")) }
            try connection.write(Response.head(status: status, headers: fields) + (request.method == "HEAD" ? "" : page))
            return !close
        }

        let seed = request.queryValue("seed").flatMap { UInt64($0) } ?? 0
        var response = ContentResponse(length: length, seed: seed)
        response.etag = request.queryValue("no-etag") != nil ? nil : (request.queryValue("etag") ?? "\"haul-\(length)-\(seed)\"")
        response.lastModified = Response.lastModified
        response.acceptsRanges = request.queryValue("no-ranges") == nil
        response.contentType = request.queryValue("type") ?? "application/octet-stream"
        response.contentDisposition = request.queryValue("cd")
        response.contentEncoding = request.queryValue("gzip") != nil ? "gzip" : nil
        if request.queryValue("chunked") != nil {
            response.framing = .chunked
        } else if request.queryValue("no-length") != nil {
            response.framing = .untilClose
        } else if let literal = request.queryValue("length") {
            response.framing = .literalLength(literal)
        }
        if let count = request.queryValue("drop-after").flatMap({ Int64($0) }) {
            response.ending = .drop(after: count)
        } else if let count = request.queryValue("stall-after").flatMap({ Int64($0) }) {
            response.ending = .stall(after: count)
        }
        var rate = connection.core.configuration.rateLimit
        if let text = request.queryValue("rate"), let value = Int(text) { rate = value }
        response.bytesPerSecond = rate.flatMap { $0 > 0 ? $0 : nil }
        response.extraHeaders = extras
        if let keepOpen = try applyChaos(to: &response, request: request, on: connection) { return keepOpen }
        return try response.respond(to: request, on: connection)
    }
}
