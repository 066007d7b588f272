import CHaulTLS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// One client connection, plain or TLS, owned by one thread.
///
/// Reads and writes block with a timeout; ``CancellationSignal/cancel()`` wakes them. A TLS
/// read fills the caller's buffer with as many decrypted records as are already at hand, so a
/// large buffer means few `pwrite` calls over TLS too.
package final class Connection {
    private let socket: TCPSocket
    /// The TLS session reads and writes go through: the origin's, or an https proxy's when the
    /// origin is plain HTTP.
    private var ssl: OpaquePointer?
    /// An https proxy's TLS session when the origin's session runs inside it (`ssl` reads and
    /// writes through it).
    private var proxySSL: OpaquePointer?
    private var cancellation: CancellationSignal
    private var token: Int?
    private var peer: String
    /// Where the new TLS sessions of `ssl` and `proxySSL` are stored (their ex_data points here).
    private var sessionSlots: [TLSSessionSlot] = []
    private var receiveTimeout: Duration?
    private var sendTimeout: Duration?
    /// Whether the peer closed a TLS connection without close_notify (an EOF that could be a cut).
    package private(set) var closedWithoutNotify = false
    /// How the connection reaches its origin: the key it is parked under in ``ConnectionPool``.
    package let route: ConnectionRoute

    /// Connects to `url`'s origin along `route`, and completes the TLS handshake for `https`.
    ///
    /// Through a proxy, the connect timeout covers every step: the TCP connection to the proxy,
    /// TLS with an `https://` proxy (verified against its name with `proxyTLS`), the `CONNECT`
    /// tunnel or the SOCKS5 handshake, and TLS with the origin (always verified against the
    /// origin's name with `tls`: a proxy never makes an origin trusted).
    ///
    /// - Parameters:
    ///   - route: how to reach the origin; `nil` is direct.
    ///   - tls: the origin's TLS context (made only for `https`).
    ///   - proxyTLS: an `https://` proxy's TLS context.
    ///   - userAgent: the `User-Agent` of a `CONNECT` request.
    ///   - threads: where a host name is resolved (see ``Resolver``).
    /// - Throws: network codes, TLS codes (`tlsCertificateUntrusted`, `tlsHostnameMismatch`,
    ///   `tlsHandshakeFailed`), proxy codes (`proxyAuthenticationRefused`, `tunnelRefused`,
    ///   `proxyFailure`) or `cancelled`.
    package init(to url: HTTPURL, route: ConnectionRoute? = nil, tls: @autoclosure () throws(HTTPClientError) -> TLSContext,
                 proxyTLS: @autoclosure () throws(HTTPClientError) -> TLSContext? = nil, userAgent: String = "haul",
                 connectTimeout: Duration, cancellation: CancellationSignal, threads: ThreadPool) throws(HTTPClientError) {
        let deadline = ContinuousClock.now + connectTimeout
        let route = route ?? .direct(url.origin)
        let proxy = route.proxy
        self.route = route
        self.cancellation = cancellation
        let origin = url.isIPv6Literal ? "[\(url.host)]:\(url.port)" : "\(url.host):\(url.port)"
        self.peer = proxy.map { "the proxy \($0.hostAndPort)" } ?? origin
        do throws(HTTPClientError) {
            socket = try TCPSocket.connect(host: proxy?.host ?? url.host, port: proxy?.port ?? url.port, timeout: connectTimeout,
                                           cancellation: cancellation, threads: threads)
        } catch {
            var failure = error
            if let proxy {
                if failure.kind != .cancelled { failure.message = "cannot reach the proxy \(proxy): \(failure.message)" }
            } else if [.connectionRefused, .dnsFailure, .connectTimeout].contains(failure.kind) {
                failure.unreachableOrigin = url.origin
            }
            throw failure
        }
        guard let token = cancellation.register(socket: socket.descriptor) else {
            closeDescriptor(socket.descriptor)
            closed = true   // deinit must not close it again
            throw HTTPClientError.cancelled
        }
        self.token = token
        do throws(HTTPClientError) {
            if let proxy {
                try reach(url, through: proxy, proxyTLS: proxyTLS, userAgent: userAgent, deadline: deadline, threads: threads)
                peer = origin
            }
            if url.scheme == .https && !route.isForwarding {
                let target = TLSSessionCache.Target(host: url.host, port: url.port, via: proxy?.description)
                try handshake(host: url.host, isIPLiteral: url.isIPv6Literal || isIPv4Literal(url.host), target: target,
                              context: tls(), timeout: Self.left(until: deadline))
            }
        } catch {
            self.close()
            throw error
        }
    }

    deinit { close() }

    /// What is left until `deadline`, at least 1 ms.
    private static func left(until deadline: ContinuousClock.Instant) -> Duration {
        max(deadline - ContinuousClock.now, .milliseconds(1))
    }

    /// Through the TCP connection to `proxy`: TLS with an `https://` proxy, then the tunnel
    /// (`CONNECT` for an `https` origin, SOCKS5 for any); a forwarding proxy needs nothing more.
    private func reach(_ url: HTTPURL, through proxy: ProxyURL, proxyTLS: () throws(HTTPClientError) -> TLSContext?,
                       userAgent: String, deadline: ContinuousClock.Instant, threads: ThreadPool) throws(HTTPClientError) {
        if proxy.scheme == .https {
            guard let context = try proxyTLS() else { throw HTTPClientError(.internalError, "no TLS context for an https proxy") }
            try handshake(host: proxy.host, isIPLiteral: proxy.isIPv6Literal || isIPv4Literal(proxy.host),
                          target: TLSSessionCache.Target(host: proxy.host, port: proxy.port), context: context,
                          timeout: Self.left(until: deadline))
        }
        if proxy.scheme.isSOCKS {
            try socksHandshake(to: url, through: proxy, deadline: deadline, threads: threads)
        } else if url.scheme == .https {
            try openTunnel(to: url, through: proxy, userAgent: userAgent, deadline: deadline)
        }
    }

    /// Sends `CONNECT` and reads the proxy's answer (see ``ConnectHandshake``).
    private func openTunnel(to url: HTTPURL, through proxy: ProxyURL, userAgent: String,
                            deadline: ContinuousClock.Instant) throws(HTTPClientError) {
        var handshake = ConnectHandshake(host: url.host, isIPv6Literal: url.isIPv6Literal, port: url.port, userAgent: userAgent,
                                         proxy: proxy)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)
        defer { buffer.deallocate() }
        do throws(HTTPClientError) {
            try write(handshake.request, timeout: Self.left(until: deadline))
            while true {
                let count = try read(into: buffer, timeout: Self.left(until: deadline), timeoutCode: .connectTimeout)
                if count == 0 { throw handshake.inputEnded() }
                switch handshake.received(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) {
                case .needMore: continue
                case .established: return
                case .failed(let error): throw error
                }
            }
        } catch where error.kind == .connectTimeout || error.kind == .stalled {
            throw HTTPClientError(.connectTimeout, "the proxy \(proxy) did not answer CONNECT within the connect timeout")
        }
    }

    /// Runs the SOCKS5 handshake (see ``SOCKS5Handshake``), reading exactly what each step needs.
    private func socksHandshake(to url: HTTPURL, through proxy: ProxyURL, deadline: ContinuousClock.Instant,
                                threads: ThreadPool) throws(HTTPClientError) {
        let target: SOCKS5Handshake.Target
        if let address = IPAddress(url.host) {
            target = .address(address)
        } else if proxy.scheme == .socks5h {
            target = .name(url.host)
        } else {
            let addresses = try Resolver.resolve(host: url.host, port: url.port, deadline: deadline, cancellation: cancellation,
                                                 threads: threads)
            guard let address = addresses.lazy.compactMap(\.ipAddress).first else {
                throw HTTPClientError(.dnsFailure, "no address found for host '\(url.host)'")
            }
            target = .address(address)
        }
        var machine = try SOCKS5Handshake(target: target, port: url.port, user: proxy.user, password: proxy.password,
                                          proxy: proxy.description)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 512, alignment: 1)
        defer { buffer.deallocate() }
        do throws(HTTPClientError) {
            try write(machine.greeting, timeout: Self.left(until: deadline))
            while true {
                let wanted = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<machine.bytesWanted])
                let count = try read(into: wanted, timeout: Self.left(until: deadline), timeoutCode: .connectTimeout)
                if count == 0 { throw machine.inputEnded() }
                switch machine.received(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) {
                case .needMore: continue
                case .send(let bytes): try write(bytes, timeout: Self.left(until: deadline))
                case .done: return
                case .failed(let error): throw error
                }
            }
        } catch where error.kind == .connectTimeout || error.kind == .stalled {
            throw HTTPClientError(.connectTimeout, "the SOCKS5 proxy \(proxy) did not complete its handshake within the connect timeout")
        }
    }

    /// TLS with `host` over the socket, or inside an https proxy's session when there is one,
    /// resuming the session `context` keeps for `target` when it has one.
    private func handshake(host: String, isIPLiteral: Bool, target: TLSSessionCache.Target, context: TLSContext,
                           timeout: Duration) throws(HTTPClientError) {
        guard let ssl = SSL_new(context.context) else {
            throw HTTPClientError(.tlsHandshakeFailed, "cannot create a TLS session: \(takeOpenSSLError())")
        }
        if let outer = self.ssl {
            proxySSL = outer
            self.ssl = ssl
            guard haul_ssl_set_bio_over_ssl(ssl, outer) == 1 else {
                throw HTTPClientError(.tlsHandshakeFailed, "cannot layer TLS over the proxy's: \(takeOpenSSLError())")
            }
        } else {
            self.ssl = ssl
            SSL_set_fd(ssl, socket.descriptor)
        }
        if isIPLiteral {
            if context.verifies { X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) }
        } else {
            _ = haul_ssl_set_sni(ssl, host)
            if context.verifies { SSL_set1_host(ssl, host) }
        }
        let slot = TLSSessionSlot(cache: context.sessions, target: target)
        var offered = false
        if slot.attach(to: ssl) {
            sessionSlots.append(slot)
            offered = context.sessions.session(for: target)?.offer(to: ssl) ?? false
        }
        setReceiveTimeout(timeout)
        setSendTimeout(timeout)
        do throws(HTTPClientError) {
            try connect(ssl)
            if context.verifies && SSL_session_reused(ssl) == 1 { try checkResumedPeer(ssl, host: host, isIPLiteral: isIPLiteral) }
        } catch {
            // A session the handshake failed with is not offered again.
            if offered && [.tlsHandshakeFailed, .tlsHostnameMismatch, .tlsCertificateUntrusted].contains(error.kind) {
                context.sessions.remove(target)
            }
            throw error
        }
    }

    /// A resumed session brings no certificate to verify: checks that the one it came with was
    /// verified and names `host` (as the cache offers a session only to its own target and
    /// context, it was and does).
    ///
    /// - Throws: `tlsCertificateUntrusted`, `tlsHostnameMismatch`.
    private func checkResumedPeer(_ ssl: OpaquePointer, host: String, isIPLiteral: Bool) throws(HTTPClientError) {
        guard SSL_get_verify_result(ssl) == X509_V_OK, let certificate = SSL_get0_peer_certificate(ssl) else {
            throw HTTPClientError(.tlsCertificateUntrusted, "the resumed TLS session of \(peer) was never verified")
        }
        let named = isIPLiteral ? X509_check_ip_asc(certificate, host, 0) == 1 : X509_check_host(certificate, host, 0, 0, nil) == 1
        guard named else {
            throw HTTPClientError(.tlsHostnameMismatch, "the resumed TLS session of \(peer) was verified for another host name")
        }
    }

    /// Runs the client side of the handshake on `ssl`.
    ///
    /// - Throws: `tlsCertificateUntrusted`, `tlsHostnameMismatch`, `tlsHandshakeFailed`, `connectTimeout`,
    ///   `connectionReset`, `networkError`, `cancelled`.
    private func connect(_ ssl: OpaquePointer) throws(HTTPClientError) {
        let rc = SSL_connect(ssl)
        if rc == 1 { return }
        let savedErrno = errno
        let sslError = SSL_get_error(ssl, rc)
        if cancellation.isCancelled { throw HTTPClientError.cancelled }
        let verify = SSL_get_verify_result(ssl)
        if Int32(verify) != X509_V_OK {
            _ = takeOpenSSLError()
            let text = String(cString: X509_verify_cert_error_string(verify))
            switch Int32(verify) {
            case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
                throw HTTPClientError(.tlsHostnameMismatch, "the TLS certificate of \(peer) does not match the host name (\(text))")
            default:
                throw HTTPClientError(.tlsCertificateUntrusted, "the TLS certificate of \(peer) is not trusted (\(text))")
            }
        }
        // Not a certificate problem: tell a slow or vanished peer (network, retryable) from a TLS failure.
        switch sslError {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            _ = takeOpenSSLError()
            throw HTTPClientError(.connectTimeout, "the TLS handshake with \(peer) timed out")
        case SSL_ERROR_SYSCALL:
            _ = takeOpenSSLError()
            switch savedErrno {
            case EAGAIN, EWOULDBLOCK:
                throw HTTPClientError(.connectTimeout, "the TLS handshake with \(peer) timed out")
            case 0, ECONNRESET, EPIPE:
                throw HTTPClientError(.connectionReset, "\(peer) closed the connection during the TLS handshake")
            default:
                throw HTTPClientError(.networkError, "network error with \(peer) during the TLS handshake: \(errnoText(savedErrno))")
            }
        default:
            if haul_ssl_error_is_unexpected_eof() != 0 {
                _ = takeOpenSSLError()
                throw HTTPClientError(.connectionReset, "\(peer) closed the connection during the TLS handshake")
            }
            throw HTTPClientError(.tlsHandshakeFailed, "the TLS handshake with \(peer) failed: \(takeOpenSSLError())")
        }
    }

    private func setReceiveTimeout(_ timeout: Duration) {
        guard !Self.timeout(receiveTimeout, standsFor: timeout) else { return }
        socket.setReceiveTimeout(timeout)
        receiveTimeout = timeout
    }

    private func setSendTimeout(_ timeout: Duration) {
        guard !Self.timeout(sendTimeout, standsFor: timeout) else { return }
        socket.setSendTimeout(timeout)
        sendTimeout = timeout
    }

    /// Whether a socket timeout of `current` may stand for `wanted`: the same, or longer by at
    /// most 1/64 of it. A head's timeout is what is left to its deadline, a little less at every
    /// request on a kept-alive connection; setting it anew each time was one system call per file.
    /// Compared in microseconds, what the socket keeps (`Duration`'s 128-bit division showed in
    /// the profile of 1,000 small files).
    package static func timeout(_ current: Duration?, standsFor wanted: Duration) -> Bool {
        guard let current else { return false }
        if current == wanted { return true }   // a body's reads: the same stall timeout each time
        let have = current.microseconds, want = wanted.microseconds
        return have >= want && have - want <= want / 64
    }

    /// Writes every byte, or throws.
    ///
    /// - Throws: `connectionReset`, `stalled` (send timeout), `cancelled`.
    package func write(_ bytes: [UInt8], timeout: Duration) throws(HTTPClientError) {
        setSendTimeout(timeout)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { raw -> Int in
                let base = raw.baseAddress! + sent
                if let ssl { return Int(SSL_write(ssl, base, Int32(clamping: raw.count - sent))) }
                return send(socket.descriptor, base, raw.count - sent, noSignalSendFlag)
            }
            if n > 0 { sent += n; continue }
            if n < 0 && errno == EINTR && ssl == nil { continue }
            throw ioError(result: n, timeoutCode: .stalled, during: "sending the request")
        }
    }

    /// Reads at least one byte into `buffer` (0 means the peer closed the connection).
    ///
    /// - Parameters:
    ///   - buffer: where the bytes go; over TLS it is filled with every record already at hand.
    ///   - timeout: how long to wait for the first byte.
    ///   - timeoutCode: the error when it runs out (`stalled` in a body, `headerTimeout` in a head).
    /// - Throws: `connectionReset`, `networkError`, the timeout code, `cancelled`.
    package func read(into buffer: UnsafeMutableRawBufferPointer, timeout: Duration, timeoutCode: HTTPClientError.Kind) throws(HTTPClientError) -> Int {
        setReceiveTimeout(timeout)
        guard let ssl else {
            while true {
                let n = recv(socket.descriptor, buffer.baseAddress, buffer.count, 0)
                if n >= 0 {
                    if n == 0 && cancellation.isCancelled { throw HTTPClientError.cancelled }
                    return n
                }
                if errno == EINTR { continue }
                throw ioError(result: n, timeoutCode: timeoutCode, during: "reading the response")
            }
        }
        var filled = 0
        while filled < buffer.count {
            let want = Int32(clamping: buffer.count - filled)
            let n = SSL_read(ssl, buffer.baseAddress! + filled, want)
            if n > 0 {
                filled += Int(n)
                if SSL_pending(ssl) == 0 && SSL_has_pending(ssl) == 0 { break }
                continue
            }
            if filled > 0 { break }
            let error = SSL_get_error(ssl, n)
            if error == SSL_ERROR_ZERO_RETURN {
                if cancellation.isCancelled { throw HTTPClientError.cancelled }
                return 0
            }
            if (error == SSL_ERROR_SYSCALL && errno == 0) || (error == SSL_ERROR_SSL && haul_ssl_error_is_unexpected_eof() != 0) {
                // EOF without close_notify: fine where the framing says the body is complete, a
                // possible cut where only the close delimits the body (see ResponseReader).
                _ = takeOpenSSLError()
                if cancellation.isCancelled { throw HTTPClientError.cancelled }
                closedWithoutNotify = true
                return 0
            }
            throw ioError(result: Int(n), timeoutCode: timeoutCode, during: "reading the response")
        }
        return filled
    }

    private func ioError(result: Int, timeoutCode: HTTPClientError.Kind, during activity: String) -> HTTPClientError {
        let code = errno
        if cancellation.isCancelled { return HTTPClientError.cancelled }
        if let ssl {
            let sslError = SSL_get_error(ssl, Int32(clamping: result))
            if sslError == SSL_ERROR_SSL {
                return HTTPClientError(.connectionReset, "TLS error from \(peer) while \(activity): \(takeOpenSSLError())")
            }
            _ = takeOpenSSLError()
        }
        switch code {
        case EAGAIN, EWOULDBLOCK:
            let what = timeoutCode == .headerTimeout ? "the response head did not arrive in time" : "no data for too long (stalled)"
            return HTTPClientError(timeoutCode, "\(peer): \(what)")
        case ECONNRESET, EPIPE:
            return HTTPClientError(.connectionReset, "connection to \(peer) reset while \(activity)")
        default:
            return HTTPClientError(.networkError, "network error with \(peer) while \(activity): \(errnoText(code))")
        }
    }

    /// Moves the connection to another cancellation signal (cancelling that one closes it).
    package func rebind(to signal: CancellationSignal) {
        if let token {
            cancellation.unregister(token)
        } else if cancellation !== Self.detachedSignal {
            return   // cancelled already, and shut down
        }
        cancellation = signal
        self.token = signal.register(socket: socket.descriptor)
        if self.token == nil { shutdown(socket.descriptor, Int32(SHUT_RDWR)) }   // already cancelled
    }

    /// Leaves the connection's cancellation signal, registering with none: an idle connection in
    /// the ``ConnectionPool`` belongs to no download (and the threads parking and taking
    /// connections then share no lock). ``rebind(to:)`` gives it the next download's signal.
    package func detach() {
        guard let token else { return }
        cancellation.unregister(token)
        self.token = nil
        cancellation = Self.detachedSignal
    }
    /// The signal of a detached connection: never cancelled, and nothing registers with it (a
    /// `nil` token with any other signal means cancelled).
    private static let detachedSignal = CancellationSignal()

    /// Whether nothing has arrived on the connection and the peer has not closed it: an idle
    /// keep-alive connection that can carry another request (see ``ConnectionPool``).
    package var looksIdleAndOpen: Bool {
        guard !closed else { return false }
        if let ssl, SSL_pending(ssl) > 0 { return false }
        if let proxySSL, SSL_pending(proxySSL) > 0 { return false }
        var fds = [pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)]
        return poll(&fds, 1, 0) == 0   // readable means data nobody asked for, or the close
    }

    /// Closes the connection (idempotent).
    package func close() {
        guard !closed else { return }
        closed = true
        if let token {
            cancellation.unregister(token)
            self.token = nil
        }
        if let ssl {
            SSL_free(ssl)   // frees its BIO over `proxySSL`, not `proxySSL` itself
            self.ssl = nil
        }
        if let proxySSL {
            SSL_free(proxySSL)
            self.proxySSL = nil
        }
        closeDescriptor(socket.descriptor)
    }
    private var closed = false
}

/// Whether `host` is a dotted IPv4 literal.
package func isIPv4Literal(_ host: String) -> Bool {
    var address = in_addr()
    return inet_pton(AF_INET, host, &address) == 1
}
