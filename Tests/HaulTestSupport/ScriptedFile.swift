import HaulServer
import HaulCore

/// A file served by a hand-written route whose N-th request can misbehave: for the hostile
/// tests that need one failure and then a correct server (to see a retry resume and finish).
///
/// Correct answers honour `Range: bytes=a-` and `bytes=a-b` with 206 and `Content-Range`, and
/// carry `ETag` (when set), `Last-Modified` (when set) and `Accept-Ranges: bytes`. Every body
/// byte written is counted in ``bodyBytesSent``.
public final class ScriptedFile: Sendable {
    /// What one request gets.
    public enum Reply: Sendable {
        /// The correct answer.
        case serve
        /// The correct head, `count` body bytes of it, then a FIN.
        case closeAfter(Int)
        /// The correct head, `count` body bytes, then silence until the client goes away.
        case stallAfter(Int)
        /// The correct head, then one body byte every `interval` seconds.
        case trickle(interval: Double)
        /// A status with an empty body and extra header lines (`Name: value\r\n` each).
        case status(Int, headers: String)
        /// 200 with the whole file, whatever was asked.
        case ignoreRange
        /// 206 with this `Content-Range` value and 100 bytes of the file.
        case partial(contentRange: String)
        /// Close the connection without a byte.
        case hangUp
    }

    /// The file's bytes.
    public let content: [UInt8]
    /// The `ETag` sent with every answer, if any.
    public let etag: String?
    /// The `Last-Modified` sent with every answer, if any.
    public let lastModified: String?
    private let script: @Sendable (Int) -> Reply
    private let served = SharedStateLock(0)
    private let sent = SharedStateLock<Int64>(0)

    /// - Parameters:
    ///   - size: the file's length; its bytes are the server's deterministic content for `seed`.
    ///   - seed: which content.
    ///   - script: the reply to the request with this 0-based index.
    public init(size: Int, seed: UInt64 = 7, etag: String? = "\"v1\"", lastModified: String? = nil,
                script: @escaping @Sendable (Int) -> Reply) {
        self.content = HaulServer.content(seed: seed).bytes(0..<Int64(size))
        self.etag = etag
        self.lastModified = lastModified
        self.script = script
    }

    /// Body bytes written so far, over every request.
    public var bodyBytesSent: Int64 { sent.withLock { $0 } }

    /// Serves `path` on `server` through this script.
    public func install(on server: HaulServer, at path: String) {
        server.route(path) { [self] request, connection in
            let index = served.withLock { value in defer { value += 1 }; return value }
            try reply(script(index), to: request, on: connection)
        }
    }

    private func reply(_ reply: Reply, to request: RecordedRequest, on connection: ServerConnection) throws {
        let total = content.count
        var validators = ""
        if let etag { validators += "ETag: \(etag)\r\n" }
        if let lastModified { validators += "Last-Modified: \(lastModified)\r\n" }
        switch reply {
        case .status(let status, let headers):
            try connection.write("HTTP/1.1 \(status) Scripted\r\nContent-Length: 0\r\n\(headers)Connection: close\r\n\r\n")
            return
        case .partial(let contentRange):
            try connection.write("HTTP/1.1 206 Partial Content\r\nContent-Range: \(contentRange)\r\nContent-Length: 100\r\n"
                                 + "Accept-Ranges: bytes\r\n\(validators)Connection: close\r\n\r\n")
            try send(content.prefix(100), on: connection)
            return
        case .hangUp:
            return
        default:
            break
        }
        var first = 0, last = total - 1
        var head = "HTTP/1.1 200 OK\r\n"
        let asked = Self.range(request)
        if let range = asked, Int(range.first) >= total {
            try connection.write("HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */\(total)\r\nContent-Length: 0\r\n"
                                 + "\(validators)Connection: close\r\n\r\n")
            return
        }
        if case .ignoreRange = reply {
            // the whole file below
        } else if let range = asked {
            first = Int(range.first)
            last = min(range.last.map(Int.init) ?? total - 1, total - 1)
            head = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes \(first)-\(last)/\(total)\r\n"
        }
        head += "Content-Length: \(last - first + 1)\r\nAccept-Ranges: bytes\r\n\(validators)Connection: close\r\n"
        try connection.write(head + "\r\n")
        let body = content[first...last]
        switch reply {
        case .serve, .ignoreRange:
            try send(body, on: connection)
        case .closeAfter(let count):
            try send(body.prefix(count), on: connection)
        case .stallAfter(let count):
            try send(body.prefix(count), on: connection)
            connection.waitUntilClosed()
        case .trickle(let interval):
            for byte in body {
                try send(CollectionOfOne(byte), on: connection)
                connection.sleep(seconds: interval)
                if connection.isServerStopped { return }
            }
        case .status, .partial, .hangUp:
            break
        }
    }

    /// `Range: bytes=a-b` or `bytes=a-` as `(a, b)`; `nil` for anything else.
    private static func range(_ request: RecordedRequest) -> (first: Int64, last: Int64?)? {
        guard let value = request.header("Range"), value.hasPrefix("bytes=") else { return nil }
        let parts = value.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int64(parts[0]) else { return nil }
        return (first, parts[1].isEmpty ? nil : Int64(parts[1]))
    }

    private func send(_ bytes: some Collection<UInt8>, on connection: ServerConnection) throws {
        sent.withLock { $0 += Int64(bytes.count) }
        try connection.write(bytes)
    }
}
