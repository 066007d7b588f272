/// Routes that send malformed, oversized or slow responses.
enum FaultRoutes {
    /// `/chunked?size=N&mode=...`: a chunked body of N content bytes in 1000-byte chunks, in
    /// one of several valid and broken framings.
    static func chunked(_ request: RecordedRequest, on connection: ServerConnection) throws -> Bool {
        let size = request.queryValue("size").flatMap { Int64($0) }.map { max(0, $0) } ?? 4096
        let mode = request.queryValue("mode") ?? "valid"
        let content = DeterministicContent(seed: request.queryValue("seed").flatMap { UInt64($0) } ?? 0)
        let valid = ["valid", "extensions", "trailers"].contains(mode)
        let close = request.wantsClose || !valid
        var head: [(String, String)] = [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")]
        if mode == "trailers" { head.append(("Trailer", "X-Checksum")) }
        if close { head.append(("Connection", "close")) }
        try connection.write(Response.head(status: 200, headers: head))
        guard request.method != "HEAD" else { return !close }

        switch mode {
        case "negative":
            try connection.write("-10\r\n")
            try connection.write(content.bytes(0..<16))
        case "overflow":
            try connection.write("1ffffffffffffffff0\r\n")
            try connection.write(content.bytes(0..<16))
        case "nonhex":
            try connection.write("zz\r\n")
            try connection.write(content.bytes(0..<16))
        default:
            var offset: Int64 = 0
            let chunkSize: Int64 = 1000
            while offset < size {
                let count = min(chunkSize, size - offset)
                if mode == "cut" && offset + count >= size {
                    // Announce the whole chunk, send half of it, hang up.
                    try connection.write(String(count, radix: 16) + "\r\n")
                    try connection.write(content.bytes(offset..<offset + count / 2))
                    connection.close()
                    return false
                }
                let sizeLine = mode == "extensions" ? String(count, radix: 16) + ";name=value;flag\r\n" : String(count, radix: 16) + "\r\n"
                try connection.write(sizeLine)
                try connection.write(content.bytes(offset..<offset + count))
                try connection.write("\r\n")
                offset += count
            }
            switch mode {
            case "missing-last": break
            case "trailers": try connection.write("0\r\nX-Checksum: none\r\nX-Trailer: yes\r\n\r\n")
            case "extensions": try connection.write("0;end=1\r\n\r\n")
            default: try connection.write("0\r\n\r\n")
            }
        }
        if close { connection.close() }
        return !close
    }

    /// `/headers?count=N` (N extra header lines) or `/headers?size=M` (one line of M bytes).
    static func manyHeaders(_ request: RecordedRequest, on connection: ServerConnection) throws -> Bool {
        var fields: [(String, String)] = []
        if let count = request.queryValue("count").flatMap({ Int($0) }) {
            for index in 0..<max(0, count) { fields.append(("X-Header-\(index)", "value-\(index)")) }
        }
        if let size = request.queryValue("size").flatMap({ Int($0) }) {
            // "X-Large: " is 9 bytes; the value pads the line (without CRLF) to `size` bytes.
            fields.append(("X-Large", String(repeating: "a", count: max(1, size - 9))))
        }
        let body = "headers\n"
        let close = request.wantsClose
        fields += [("Content-Type", "text/plain"), ("Content-Length", "\(body.utf8.count)")]
        if close { fields.append(("Connection", "close")) }
        try connection.write(Response.head(status: 200, headers: fields) + (request.method == "HEAD" ? "" : body))
        return !close
    }

    /// `/endless-headers`: a status line, then a header line every 50 ms until the client
    /// goes away or the server stops.
    static func endlessHeaders(on connection: ServerConnection) throws {
        try connection.write("HTTP/1.1 200 OK\r\n")
        var index = 0
        while !connection.isServerStopped {
            try connection.write("X-Endless-\(index): \(String(repeating: "x", count: 32))\r\n")
            index += 1
            connection.sleep(seconds: 0.05)
        }
        connection.drop()
    }

    /// `/trickle-headers?interval=MS`: a valid head one byte per interval (default 10 ms),
    /// then a small body at once.
    static func trickleHeaders(_ request: RecordedRequest, on connection: ServerConnection) throws -> Bool {
        let interval = request.queryValue("interval").flatMap { Double($0) } ?? 10
        let body = "trickled\n"
        let close = request.wantsClose
        var fields: [(String, String)] = [("Content-Type", "text/plain"), ("Content-Length", "\(body.utf8.count)")]
        if close { fields.append(("Connection", "close")) }
        for byte in Response.head(status: 200, headers: fields).utf8 {
            try connection.write(CollectionOfOne(byte))
            connection.sleep(seconds: interval / 1000)
            if connection.isServerStopped { throw HaulServerError("server stopped") }
        }
        try connection.write(body)
        return !close
    }
}
