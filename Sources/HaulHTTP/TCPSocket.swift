import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// A connected TCP socket in blocking mode, with receive/send timeouts set per call.
///
/// Blocking reads keep the hot path at one `recv` per buffer (no `poll` per read). Timeouts
/// come from `SO_RCVTIMEO`/`SO_SNDTIMEO`; cancellation shuts the socket down from another thread
/// (see ``CancellationSignal``), which wakes a blocked `recv` at once.
package struct TCPSocket {
    package let descriptor: Int32

    /// Resolves `host` and connects to the first address that answers within the timeout.
    ///
    /// - Throws: `dnsFailure`, `connectionRefused`, `connectTimeout`, `networkError`, `cancelled`;
    ///   `resourceExhausted` when no socket, wake-up descriptor or resolver thread could be had.
    package static func connect(host: String, port: Int, timeout: Duration, cancellation: CancellationSignal,
                                threads: ThreadPool) throws(HTTPClientError) -> TCPSocket {
        let deadline = ContinuousClock.now + timeout
        let addresses = try Resolver.resolve(host: host, port: port, deadline: deadline, cancellation: cancellation,
                                               threads: threads)
        var lastError = HTTPClientError(.dnsFailure, "no address found for host '\(host)'")
        for (index, address) in addresses.enumerated() {
            if cancellation.isCancelled { throw HTTPClientError.cancelled }
            // Each remaining address gets an equal share of the time left, so one that silently
            // drops packets (a dead IPv6 route) cannot use up the whole timeout.
            let remaining = deadline - ContinuousClock.now
            let share = index == addresses.count - 1 ? remaining : remaining / (addresses.count - index)
            do throws(HTTPClientError) {
                return try connect(address: address, deadline: ContinuousClock.now + share, cancellation: cancellation,
                                   host: host, port: port)
            } catch {
                if error.kind == .cancelled || error.kind == .resourceExhausted { throw error }
                lastError = error
            }
        }
        throw lastError
    }

    private static func connect(address: Resolver.Address, deadline: ContinuousClock.Instant, cancellation: CancellationSignal,
                                host: String, port: Int) throws(HTTPClientError) -> TCPSocket {
        let fd = socket(address.family, address.socketType | SOCK_CLOEXEC_VALUE, address.socketProtocol)
        guard fd >= 0 else {
            let code = errno
            let running = [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(code)
            throw HTTPClientError(running ? .resourceExhausted : .networkError, "cannot create a socket: \(errnoText(code))")
        }
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
                       pollfd(fd: try HTTPClientError.mapping { () throws(ResourceError) in try cancellation.pollDescriptor },
                              events: Int16(POLLIN), revents: 0)]
            while true {
                let ms = (deadline - ContinuousClock.now).milliseconds
                if ms <= 0 { throw HTTPClientError(.connectTimeout, "no connection to \(host) port \(port) within the connect timeout") }
                let n = poll(&fds, 2, Int32(clamping: ms))
                if n < 0 && errno == EINTR { continue }
                if fds[1].revents != 0 { throw HTTPClientError.cancelled }
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

    private static func connectError(_ code: Int32, host: String, port: Int) -> HTTPClientError {
        switch code {
        case ECONNREFUSED: return HTTPClientError(.connectionRefused, "connection to \(host) port \(port) refused")
        case ETIMEDOUT: return HTTPClientError(.connectTimeout, "connection to \(host) port \(port) timed out")
        default: return HTTPClientError(.networkError, "cannot connect to \(host) port \(port): \(String(cString: strerror(code)))")
        }
    }

    /// Sets how long one `recv` may block (nil: forever).
    package func setReceiveTimeout(_ duration: Duration?) {
        setTimeout(SO_RCVTIMEO, duration)
    }

    /// Sets how long one `send` may block (nil: forever).
    package func setSendTimeout(_ duration: Duration?) {
        setTimeout(SO_SNDTIMEO, duration)
    }

    private func setTimeout(_ option: Int32, _ duration: Duration?) {
        var tv = timeval()
        if let duration {
            let micros = max(duration.microseconds, 1000)
            tv.tv_sec = time_t(micros / 1_000_000)
            tv.tv_usec = suseconds_t(micros % 1_000_000)   // Int with Glibc, Int32 on Darwin
        }
        setsockopt(descriptor, SOL_SOCKET, option, &tv, socklen_t(MemoryLayout<timeval>.size))
    }
}

/// `connect(2)`, named apart from ``TCPSocket/connect(host:port:timeout:cancellation:threads:)``.
#if canImport(Glibc)
private let systemConnect = Glibc.connect
#else
private let systemConnect = Darwin.connect
#endif
