#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CHaulSys
import CHaulTLS
import Synchronization

/// The state the accept thread, the connection threads and `HaulServer` share.
///
/// Kept apart from `HaulServer` so that threads never keep the public object alive: when the
/// last user reference to the server goes, its `deinit` stops the core.
final class ServerCore: Sendable {
    /// A handler registered with `HaulServer.route(_:_:)`.
    typealias Handler = @Sendable (RecordedRequest, ServerConnection) throws -> Void

    struct State {
        var stopped = false
        var listener: Int32
        var connections: [Int: Int32] = [:]
        var nextConnectionID = 0
        var requests: [RecordedRequest] = []
        var routes: [String: Handler] = [:]
        var resources: [String: HaulServer.Resource] = [:]
    }

    /// What is registered at a path, ahead of the built-in routes.
    enum Registered {
        case handler(Handler)
        case resource(HaulServer.Resource)
    }

    let configuration: HaulServer.Configuration
    let tls: TLSContext?
    let state: ServerLock<State>
    /// Body bytes handed to sockets so far, all connections (see `ServerConnection.writeRaw`).
    let bodyBytesSent = Atomic<Int64>(0)
    /// TLS handshakes that resumed an earlier session, counted before the connection's first read.
    let resumedHandshakes = Atomic<Int64>(0)
    /// Readable once `stop()` ran (never drained): every `poll` in the server includes it.
    let wakeRead: Int32
    private let wakeWrite: Int32

    init(configuration: HaulServer.Configuration, listener: Int32, tls: TLSContext?) throws {
        var readFD: Int32 = -1
        var writeFD: Int32 = -1
        guard haul_wakeup_open(&readFD, &writeFD) == 0 else {
            throw HaulServerError("wake-up descriptor", errno: errno)
        }
        self.configuration = configuration
        self.tls = tls
        self.state = ServerLock(State(listener: listener))
        self.wakeRead = readFD
        self.wakeWrite = writeFD
    }

    deinit {
        _ = close(wakeRead)
        if wakeWrite != wakeRead { _ = close(wakeWrite) }
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    /// Closes the listener, shuts every open connection down and wakes every sleeper.
    ///
    /// Descriptors are closed or shut down under the lock, and connection threads unregister
    /// under the same lock before they close theirs, so a number reused by the kernel is never hit.
    func stop() {
        let first = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.stopped = true
            // shutdown first: a thread still inside poll() holds a reference to the socket,
            // so close() alone would leave it listening (and accepting) until poll returns.
            _ = shutdown(state.listener, Int32(SHUT_RDWR))
            _ = close(state.listener)
            state.listener = -1
            for fd in state.connections.values { _ = shutdown(fd, Int32(SHUT_RDWR)) }
            return true
        }
        if first { haul_wakeup_signal(wakeWrite) }
    }

    /// Accepts connections until `stop()`, one thread each.
    func acceptLoop() {
        while true {
            let listener = state.withLock { $0.listener }
            guard listener >= 0 else { return }
            _ = POSIX.pollReadable([listener, wakeRead], timeoutMilliseconds: -1)
            // Accept under the lock: `stop()` cannot close the listener between the check and the call.
            let accepted = state.withLock { state -> AcceptResult in
                guard !state.stopped else { return .stopped }
                guard let fd = POSIX.accept(state.listener) else {
                    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .nothingPending : .failed
                }
                state.nextConnectionID += 1
                state.connections[state.nextConnectionID] = fd
                return .accepted(id: state.nextConnectionID, fd: fd)
            }
            switch accepted {
            case .stopped:
                return
            case .accepted(let id, let fd):
                POSIX.spawnThread { [self] in serve(id: id, fd: fd) }
            case .nothingPending:
                continue
            case .failed:
                // Out of descriptors or similar: back off instead of spinning on a readable listener.
                _ = POSIX.pollReadable([wakeRead], timeoutMilliseconds: 50)
            }
        }
    }

    private enum AcceptResult {
        case stopped, nothingPending, failed
        case accepted(id: Int, fd: Int32)
    }

    /// Runs one connection to its end, then unregisters and closes its descriptor.
    private func serve(id: Int, fd: Int32) {
        defer {
            state.withLock { _ = $0.connections.removeValue(forKey: id) }
            _ = close(fd)
        }
        var ssl: OpaquePointer?
        if let tls {
            guard let accepted = tls.accept(fd: fd) else { return }
            if SSL_session_reused(accepted) == 1 { resumedHandshakes.add(1) }
            ssl = accepted
        }
        let connection = ServerConnection(core: self, fd: fd, ssl: ssl)
        connection.serveRequests()
        connection.finish()
    }

    func record(_ request: RecordedRequest) {
        state.withLock { $0.requests.append(request) }
    }

    /// The handler or resource registered at `path`, if any.
    func registered(at path: String) -> Registered? {
        state.withLock { state in
            if let handler = state.routes[path] { return .handler(handler) }
            return state.resources[path].map { .resource($0) }
        }
    }
}

extension Atomic<Int64> {
    /// Adds `delta` (sequentially consistent, so a reader after a socket hand-off sees it).
    func add(_ delta: Int64) {
        _ = wrappingAdd(delta, ordering: .sequentiallyConsistent)
    }
}
