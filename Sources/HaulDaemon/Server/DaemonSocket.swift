import HaulCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the daemon's server could not start.
public struct DaemonError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in one sentence.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// The blocking socket calls the daemon's server makes, with deadlines through `poll`.
enum DaemonSocket {
    /// Listens on `address` (port 0 picks a free one); returns the socket and the actual port.
    static func listening(on address: ListenAddress) throws(DaemonError) -> (Int32, Int) {
        let v6 = address.host.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, streamSocketType | SOCK_CLOEXEC_VALUE, 0)
        guard fd >= 0 else { throw DaemonError("cannot make a socket: \(errnoText())") }
        #if !canImport(Glibc)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)   // no SOCK_CLOEXEC on Darwin
        #endif
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        if v6 { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &yes, socklen_t(MemoryLayout<Int32>.size)) }
        var storage = sockaddr_storage()
        let length = fill(&storage, address)
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 1024) == 0, fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0 else {
            let text = errnoText()
            closeDescriptor(fd)
            throw DaemonError("cannot listen on \(address): \(text)")
        }
        return (fd, localPort(fd))
    }

    private static func fill(_ storage: inout sockaddr_storage, _ address: ListenAddress) -> socklen_t {
        withUnsafeMutablePointer(to: &storage) { pointer in
            if address.host.contains(":") {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    v6.pointee.sin6_family = sa_family_t(AF_INET6)
                    v6.pointee.sin6_port = in_port_t(UInt16(address.port).bigEndian)
                    inet_pton(AF_INET6, address.host, &v6.pointee.sin6_addr)
                    return socklen_t(MemoryLayout<sockaddr_in6>.size)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                v4.pointee.sin_family = sa_family_t(AF_INET)
                v4.pointee.sin_port = in_port_t(UInt16(address.port).bigEndian)
                inet_pton(AF_INET, address.host, &v4.pointee.sin_addr)
                return socklen_t(MemoryLayout<sockaddr_in>.size)
            }
        }
    }

    private static func localPort(_ fd: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return port(of: storage)
    }

    private static func port(of storage: sockaddr_storage) -> Int {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            if Int32(storage.ss_family) == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    /// What an `accept` on the (non-blocking) listener found.
    enum Accepted {
        /// A connection: its socket and the peer's address as text.
        case accepted(Int32, String)
        /// Nothing waiting (or a connection that failed before it was accepted).
        case wouldBlock
        /// No descriptor left for it.
        case outOfDescriptors
    }

    /// Accepts a connection without waiting.
    static func accepting(_ listener: Int32) -> Accepted {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
        }
        guard fd >= 0 else { return errno == EMFILE || errno == ENFILE ? .outOfDescriptors : .wouldBlock }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        suppressSIGPIPE(onSocket: fd)
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        return .accepted(fd, host(of: storage))
    }

    private static func host(of storage: sockaddr_storage) -> String {
        var copy = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        withUnsafePointer(to: &copy) { pointer in
            if Int32(storage.ss_family) == AF_INET6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    var address = v6.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
                }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    var address = v4.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
                }
            }
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// What a wait for input found.
    enum Readiness {
        case readable
        case timedOut
        case woken
    }

    /// Waits until `fd` is readable, `wakeup` is signalled, or `deadline` passes (`nil`: never).
    static func wait(_ fd: Int32, wakeup: Int32? = nil, until deadline: ContinuousClock.Instant?) -> Readiness {
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        if let wakeup { fds.append(pollfd(fd: wakeup, events: Int16(POLLIN), revents: 0)) }
        while true {
            var timeout: Int32 = -1
            if let deadline {
                let left = deadline - .now
                guard left > .zero else { return .timedOut }
                timeout = Int32(min(Int64(Int32.max), left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1))
            }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 { return .readable }   // let the read report it
            if ready == 0 { continue }
            if fds.count > 1, fds[1].revents != 0 { return .woken }
            return .readable
        }
    }

    /// Reads what is there (at most `limit` bytes); empty at the end of the stream or on error.
    static func read(_ fd: Int32, limit: Int = 64 << 10) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: limit)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, limit, 0) }
            if count < 0 && errno == EINTR { continue }
            return count > 0 ? Array(buffer.prefix(count)) : []
        }
    }

    /// Reads what is there without waiting (at most `limit` bytes): empty at the end of the
    /// stream or on an error, `nil` when nothing is there yet.
    static func readAvailable(_ fd: Int32, limit: Int = 64 << 10) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: limit)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, limit, Int32(MSG_DONTWAIT)) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return nil }
            return count > 0 ? Array(buffer.prefix(count)) : []
        }
    }

    /// Writes all of `bytes`; `false` when the peer is gone or stopped reading.
    @discardableResult
    static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, bytes.count - sent, noSignalSendFlag) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Writes all of `bytes` by `deadline`; `false` when the peer is gone or has not read them
    /// in time.
    static func write(_ fd: Int32, _ bytes: [UInt8], until deadline: ContinuousClock.Instant) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + sent, bytes.count - sent, noSignalSendFlag | Int32(MSG_DONTWAIT))
            }
            if count > 0 {
                sent += count
                continue
            }
            if count < 0 && errno == EINTR { continue }
            guard count < 0, errno == EAGAIN || errno == EWOULDBLOCK, waitUntilWritable(fd, until: deadline) else { return false }
        }
        return true
    }

    /// Writes `bytes` if the socket takes them all at once (a ping, a farewell).
    static func sendWithoutWaiting(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        let count = bytes.withUnsafeBytes { send(fd, $0.baseAddress, bytes.count, noSignalSendFlag | Int32(MSG_DONTWAIT)) }
        return count == bytes.count
    }

    private static func waitUntilWritable(_ fd: Int32, until deadline: ContinuousClock.Instant) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        while true {
            let left = deadline - .now
            guard left > .zero else { return false }
            let milliseconds = Int32(min(Int64(Int32.max), left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1))
            let ready = poll(&entry, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            return ready > 0 && entry.revents & Int16(POLLOUT) != 0
        }
    }
}
