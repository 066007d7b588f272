/// The routes every `HaulServer` serves (documented on `HaulServer`).
enum BuiltinRoutes {
    /// Answers `request`; returns whether the connection may serve another request.
    ///
    /// - Throws: when a write fails; the caller drops the connection.
    static func respond(to request: RecordedRequest, on connection: ServerConnection) throws -> Bool {
        let components = request.path.split(separator: "/")
        let close = request.wantsClose
        let isHead = request.method == "HEAD"
        func simple(_ status: Int, _ body: String, _ headers: [(String, String)] = []) throws -> Bool {
            try connection.write(Response.simple(status: status, body: body, close: close, headers: headers,
                                                 includeBody: !isHead))
            return !close
        }
        switch (components.first, components.count) {
        case ("bytes", 2...):
            guard let length = Int64(components[1]), length >= 0 else { return try simple(400, "bad length\n") }
            return try BytesRoute.respond(to: request, length: length, on: connection)
        case ("chunked", 1):
            return try FaultRoutes.chunked(request, on: connection)
        case ("headers", 1):
            return try FaultRoutes.manyHeaders(request, on: connection)
        case ("endless-headers", 1):
            try FaultRoutes.endlessHeaders(on: connection)
            return false
        case ("trickle-headers", 1):
            return try FaultRoutes.trickleHeaders(request, on: connection)
        case ("silent", 1):
            connection.waitUntilClosed()
            connection.drop()
            return false
        case ("garbage", 1):
            try connection.write("SSH-2.0-OpenSSH_9.2\r\n")
            connection.close()
            return false
        default:
            let answer = plainAnswer(to: request, components) ?? (404, "not found: \(request.path)\n", [])
            return try simple(answer.status, answer.body, answer.headers)
        }
    }

    /// A status, a short text body and header fields.
    private typealias PlainAnswer = (status: Int, body: String, headers: [(String, String)])

    /// The answer of the routes that reply with a short text body: `/sha256/N`, `/status/N`,
    /// `/redirect/N`, `/redirect-to` and `/loop`; `nil` for any other path.
    private static func plainAnswer(to request: RecordedRequest, _ components: [Substring]) -> PlainAnswer? {
        switch (components.first, components.count) {
        case ("sha256", 2):
            guard let length = Int64(components[1]), length >= 0 else { return (400, "bad length\n", []) }
            let seed = request.queryValue("seed").flatMap { UInt64($0) } ?? 0
            guard let digest = HaulServer.content(seed: seed).sha256Hex(length: length) else {
                return (500, "no digest\n", [])
            }
            return (200, digest + "\n", [])
        case ("status", 2):
            guard let status = Int(components[1]), (100...999).contains(status) else {
                return (400, "bad status\n", [])
            }
            var headers = extraHeaders(request)
            if let retryAfter = request.queryValue("retry-after") { headers.append(("Retry-After", retryAfter)) }
            return (status, "status \(status)\n", headers)
        case ("redirect", 2):
            guard let hops = Int(components[1]) else { return (400, "bad hop count\n", []) }
            let query = request.target.firstIndex(of: "?").map { String(request.target[$0...]) } ?? ""
            let location = hops > 1 ? "/redirect/\(hops - 1)\(query)" : (request.queryValue("to") ?? "/bytes/1024")
            return (redirectStatus(request), "redirecting to \(location)\n", [("Location", location)])
        case ("redirect-to", 1):
            let location = request.queryValue("url") ?? "/bytes/1024"
            return (redirectStatus(request), "redirecting to \(location)\n", [("Location", location)])
        case ("loop", 1):
            return (302, "redirecting to /loop\n", [("Location", "/loop")])
        default:
            return nil
        }
    }

    /// The `header=Name:Value` query options as fields.
    static func extraHeaders(_ request: RecordedRequest) -> [(String, String)] {
        request.queryValues("header").compactMap { item in
            guard let colon = item.firstIndex(of: ":") else { return nil }
            return (String(item[..<colon]).trimmingSpaces(), item[item.index(after: colon)...].trimmingSpaces())
        }
    }

    /// The `status=30x` option of the redirect routes (302 by default).
    private static func redirectStatus(_ request: RecordedRequest) -> Int {
        request.queryValue("status").flatMap { Int($0) } ?? 302
    }
}
