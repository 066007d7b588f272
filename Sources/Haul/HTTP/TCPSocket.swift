import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A connected TCP socket in blocking mode, with receive/send timeouts set per call.
///
/// Blocking reads keep the hot path at one `recv` per buffer (no `poll` per read). Timeouts
/// come from `SO_RCVTIMEO`/`SO_SNDTIMEO`; cancellation shuts the socket down from another thread
/// (see ``CancellationSignal``), which wakes a blocked `recv` at once.
struct TCPSocket {
    let descriptor: Int32

    /// Resolves `host` and connects to the first address that answers within the timeout.
    ///
    /// - Throws: `dnsFailure`, `connectionRefused`, `connectTimeout`, `networkError`, `cancelled`.
    static func connect(host: String, port: Int, timeout: Duration, cancellation: CancellationSignal) throws(DownloadError) -> TCPSocket {
        let deadline = ContinuousClock.now + timeout
        let addresses = try Resolver.resolve(host: host, port: port, deadline: deadline, cancellation: cancellation)
        var lastError = DownloadError(.dnsFailure, "no address found for host '\(host)'")
        for (index, address) in addresses.enumerated() {
            if cancellation.isCancelled { throw DownloadError(.cancelled, "cancelled") }
            // Each remaining address gets an equal share of the time left, so one that silently
            // drops packets (a dead IPv6 route) cannot use up the whole timeout.
            let remaining = deadline - ContinuousClock.now
            let share = index == addresses.count - 1 ? remaining : remaining / (addresses.count - index)
            do throws(DownloadError) {
                return try connect(address: address, deadline: ContinuousClock.now + share, cancellation: cancellation,
                                   host: host, port: port)
            } catch {
                if error.code == .cancelled { throw error }
                lastError = error
            }
        }
        throw lastError
    }

    private static func connect(address: Resolver.Address, deadline: ContinuousClock.Instant, cancellation: CancellationSignal,
                                host: String, port: Int) throws(DownloadError) -> TCPSocket {
        let fd = socket(address.family, address.socketType | SOCK_CLOEXEC_VALUE, address.socketProtocol)
        guard fd >= 0 else { throw DownloadError(.networkError, "cannot create a socket: \(errnoText())") }
        var ok = false
        defer { if !ok { close(fd) } }
        #if !canImport(Glibc)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var noSigPipe: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &noSigPipe, socklen_t(MemoryLayout<Int32>.size))
        #endif
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        var storage = address.storage
        let rc = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, address.length) }
        }
        if rc != 0 {
            guard errno == EINPROGRESS else { throw connectError(errno, host: host, port: port) }
            var fds = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
                       pollfd(fd: cancellation.pollDescriptor, events: Int16(POLLIN), revents: 0)]
            while true {
                let ms = (deadline - ContinuousClock.now).milliseconds
                if ms <= 0 { throw DownloadError(.connectTimeout, "no connection to \(host) port \(port) within the connect timeout") }
                let n = poll(&fds, 2, Int32(clamping: ms))
                if n < 0 && errno == EINTR { continue }
                if fds[1].revents != 0 { throw DownloadError(.cancelled, "cancelled") }
                if n > 0 { break }
            }
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
            if soError != 0 { throw connectError(soError, host: host, port: port) }
        }
        _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        ok = true
        return TCPSocket(descriptor: fd)
    }

    private static func connectError(_ code: Int32, host: String, port: Int) -> DownloadError {
        switch code {
        case ECONNREFUSED: return DownloadError(.connectionRefused, "connection to \(host) port \(port) refused")
        case ETIMEDOUT: return DownloadError(.connectTimeout, "connection to \(host) port \(port) timed out")
        default: return DownloadError(.networkError, "cannot connect to \(host) port \(port): \(String(cString: strerror(code)))")
        }
    }

    /// Sets how long one `recv` may block (nil: forever).
    func setReceiveTimeout(_ duration: Duration?) {
        setTimeout(SO_RCVTIMEO, duration)
    }

    /// Sets how long one `send` may block (nil: forever).
    func setSendTimeout(_ duration: Duration?) {
        setTimeout(SO_SNDTIMEO, duration)
    }

    private func setTimeout(_ option: Int32, _ duration: Duration?) {
        var tv = timeval()
        if let duration {
            let micros = max(duration.microseconds, 1000)
            tv.tv_sec = Int(micros / 1_000_000)
            tv.tv_usec = Int(micros % 1_000_000)
        }
        setsockopt(descriptor, SOL_SOCKET, option, &tv, socklen_t(MemoryLayout<timeval>.size))
    }
}

/// `connect(2)`, named apart from ``TCPSocket/connect(host:port:timeout:cancellation:)``.
#if canImport(Glibc)
private let systemConnect = Glibc.connect
#else
private let systemConnect = Darwin.connect
#endif

/// SOCK_CLOEXEC, which Glibc exposes as an enum case (Darwin sets FD_CLOEXEC with fcntl instead).
#if canImport(Glibc)
let SOCK_CLOEXEC_VALUE = Int32(SOCK_CLOEXEC.rawValue)
#else
let SOCK_CLOEXEC_VALUE: Int32 = 0
#endif

/// The text of the current `errno`.
func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

extension Duration {
    /// Whole milliseconds, rounded up, never negative.
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || attoseconds < 0 { return 0 }
        return seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }

    /// Whole microseconds, never negative.
    var microseconds: Int64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || attoseconds < 0 { return 0 }   // components truncate: -0.5 s is (0, -5e17)
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// The duration in seconds as a Double.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Closes a file descriptor (a free function, callable from types that have a `close()` of their own).
func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
