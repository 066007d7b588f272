#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CHaulTLS

/// One accepted client connection, as a route handler sees it: raw writes, close, sleep.
///
/// A handler registered with `HaulServer.route(_:_:)` receives the connection right after the
/// request head (and any `Content-Length` body) was read, writes whatever bytes it likes,
/// hostile ones included, and returns; the server then closes the connection. Each connection
/// runs on a thread of its own, so blocking here delays nobody else. Over TLS the bytes are
/// encrypted as usual.
public final class ServerConnection {
    let core: ServerCore
    let fd: Int32
    private var ssl: OpaquePointer?
    private var pending: [UInt8] = []
    private var isClosed = false
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    init(core: ServerCore, fd: Int32, ssl: OpaquePointer?) {
        self.core = core
        self.fd = fd
        self.ssl = ssl
    }

    /// Whether `stop()` was called on the server: long handlers should return.
    public var isServerStopped: Bool { core.isStopped }

    /// Writes all of `bytes`.
    ///
    /// - Throws: `HaulServerError` when the peer has gone, the connection was closed, or the
    ///   server stopped.
    public func write(_ bytes: some Collection<UInt8>) throws {
        let written: Void? = try bytes.withContiguousStorageIfAvailable { buffer in
            try writeRaw(UnsafeRawBufferPointer(buffer))
        }
        if written == nil {
            try Array(bytes).withUnsafeBytes { try writeRaw($0) }
        }
    }

    /// Writes `text` as UTF-8 bytes, exactly as given (add `\r\n` yourself).
    ///
    /// - Throws: `HaulServerError` as `write(_:)` does.
    public func write(_ text: String) throws {
        try write(Array(text.utf8))
    }

    /// Ends the connection gracefully: TLS `close_notify`, then a FIN. Further writes throw.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        if let ssl { _ = SSL_shutdown(ssl) }
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Ends the connection abruptly: no TLS `close_notify`, both directions shut down.
    func drop() {
        guard !isClosed else { return }
        isClosed = true
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Ends the connection with a TCP reset: `SO_LINGER` 0 and no FIN, so the close that ends
    /// the connection's thread sends RST. Further writes throw.
    func reset() {
        guard !isClosed else { return }
        isClosed = true
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// Sleeps for `seconds`, returning early when the server stops.
    ///
    /// Waits in `poll` on the server's wake-up descriptor, so it neither spins nor delays `stop()`.
    public func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        let deadline = ContinuousClock.now + .nanoseconds(Int64(seconds * 1e9))
        while !core.isStopped {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return }
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            _ = POSIX.pollReadable([core.wakeRead], timeoutMilliseconds: Int32(clamping: max(1, milliseconds)))
        }
    }

    /// Waits, discarding anything the client sends, until the client closes the connection or
    /// the server stops. Never answers: this is how a server that stalls is simulated.
    public func waitUntilClosed() {
        while true {
            let ready = POSIX.pollReadable([fd, core.wakeRead], timeoutMilliseconds: -1)
            if ready.contains(1) || core.isStopped { return }
            if ready.contains(0) {
                let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return }
            }
        }
    }

    // MARK: - Internals used by the server

    /// Writes `buffer` completely, looping over partial writes.
    ///
    /// - Parameter isBody: add the bytes to `HaulServer.bodyBytesSent`. They are counted before
    ///   they go out, so a client that has read them always finds them counted; what the socket
    ///   did not take is taken back when the write fails.
    func writeRaw(_ buffer: UnsafeRawBufferPointer, isBody: Bool = false) throws {
        guard !isClosed else { throw HaulServerError("write after close") }
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        if isBody { core.bodyBytesSent.add(Int64(buffer.count)) }
        defer { if isBody && offset < buffer.count { core.bodyBytesSent.add(-Int64(buffer.count - offset)) } }
        while offset < buffer.count {
            let count: Int
            if let ssl {
                count = Int(SSL_write(ssl, base + offset, Int32(clamping: buffer.count - offset)))
                if count <= 0 {
                    _ = TLSContext.takeError()
                    throw HaulServerError("TLS write failed")
                }
            } else {
                count = send(fd, base + offset, buffer.count - offset, POSIX.noSignal)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw HaulServerError("send", errno: errno)
                }
            }
            offset += count
        }
    }

    /// Reads at most `scratch.count` bytes into `pending`; `false` at end of stream or error.
    private func fill() -> Bool {
        let count: Int = scratch.withUnsafeMutableBytes { buffer in
            if let ssl {
                return Int(SSL_read(ssl, buffer.baseAddress, Int32(buffer.count)))
            }
            while true {
                let count = recv(fd, buffer.baseAddress, buffer.count, 0)
                if count < 0 && errno == EINTR { continue }
                return count
            }
        }
        guard count > 0 else { return false }
        pending.append(contentsOf: scratch[0..<count])
        return true
    }

    /// The largest request head accepted; larger ones get 431.
    static let maximumHeadSize = 64 * 1024

    enum ReadResult {
        case request(RecordedRequest)
        case closed
        case malformed(status: Int)
    }

    /// Reads the next request head and its `Content-Length` body.
    func readRequest() -> ReadResult {
        let terminator: [UInt8] = [13, 10, 13, 10]
        var searchFrom = 0
        while true {
            if pending.count >= 4 {
                var index = max(0, searchFrom - 3)
                while index + 4 <= pending.count {
                    if pending[index] == 13, pending[index..<index + 4].elementsEqual(terminator) {
                        return finishRequest(headEnd: index)
                    }
                    index += 1
                }
                searchFrom = pending.count
            }
            if pending.count > Self.maximumHeadSize { return .malformed(status: 431) }
            guard fill() else { return .closed }
        }
    }

    private func finishRequest(headEnd: Int) -> ReadResult {
        let head = pending[0..<headEnd]
        guard var request = RequestHeadParser.parse(head) else { return .malformed(status: 400) }
        pending.removeFirst(headEnd + 4)
        if request.header("transfer-encoding") != nil { return .malformed(status: 501) }
        if let lengthText = request.header("content-length") {
            guard let length = Int(lengthText), length >= 0, length <= 16 << 20 else {
                return .malformed(status: 400)
            }
            while pending.count < length {
                guard fill() else { return .closed }
            }
            request.body = Array(pending[0..<length])
            pending.removeFirst(length)
        }
        return .request(request)
    }

    /// Serves requests until the client or a response ends the connection.
    func serveRequests() {
        while !isClosed {
            switch readRequest() {
            case .closed:
                return
            case .malformed(let status):
                try? write(Response.simple(status: status, body: "\(status) \(Response.reason(status))\n", close: true))
                close()
                return
            case .request(let request):
                core.record(request)
                var resource: HaulServer.Resource?
                switch core.registered(at: request.path) {
                case .handler(let handler):
                    try? handler(request, self)
                    close()
                    return
                case .resource(let registered):
                    resource = registered
                case nil:
                    break
                }
                do {
                    let keepOpen = if let resource {
                        try resource.serve(request, on: self, configuration: core.configuration)
                    } else {
                        try BuiltinRoutes.respond(to: request, on: self)
                    }
                    if !keepOpen || request.wantsClose { close() }
                } catch {
                    drop()
                }
            }
        }
    }

    /// Releases TLS state once the thread is done with the connection.
    func finish() {
        if let ssl {
            if !isClosed { _ = SSL_shutdown(ssl) }
            SSL_free(ssl)
            self.ssl = nil
        }
        isClosed = true
    }
}
