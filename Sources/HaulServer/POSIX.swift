#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CHaulSys

/// Thin wrappers over the POSIX calls the server makes: listening sockets, threads, polling.
enum POSIX {
    /// Creates a TCP socket bound to `host` on an ephemeral port, listening and non-blocking.
    ///
    /// - Returns: the descriptor and the port the kernel chose.
    /// - Throws: `HaulServerError` naming the failing call.
    static func listen(host: String) throws -> (fd: Int32, port: Int) {
        let address = try socketAddress(host: host)
        let family = address.family
        var storage = address.storage
        #if canImport(Glibc)
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(family, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw HaulServerError("socket", errno: errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        // No SO_REUSEADDR: port 0 never needs it, and without it the kernel does not give a new
        // server a port whose earlier connections are still in TIME_WAIT.
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, address.length) }
        }
        guard bound == 0, systemListen(fd, 1024) == 0 else {
            let code = errno
            _ = close(fd)
            throw HaulServerError("bind/listen on \(host)", errno: code)
        }
        let port = localPort(of: fd, family: family)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return (fd, port)
    }

    /// The address of `host` (an IPv4 or IPv6 literal) with port 0, as `bind` takes it.
    ///
    /// - Throws: `HaulServerError` when `host` is not an address of its family.
    private static func socketAddress(host: String) throws -> (family: Int32, storage: sockaddr_storage, length: socklen_t) {
        var storage = sockaddr_storage()
        if host.contains(":") {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else {
                throw HaulServerError("not an IPv6 address: \(host)")
            }
            withUnsafeBytes(of: address) { source in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) }
            }
            return (AF_INET6, storage, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw HaulServerError("not an IPv4 address: \(host)")
        }
        withUnsafeBytes(of: address) { source in
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) }
        }
        return (AF_INET, storage, socklen_t(MemoryLayout<sockaddr_in>.size))
    }

    /// The port a bound socket of `family` got (`getsockname`).
    private static func localPort(of fd: Int32, family: Int32) -> Int {
        var actual = sockaddr_storage()
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
        }
        return withUnsafeBytes(of: actual) { raw in
            if family == AF_INET6 {
                return Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
            }
            return Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
        }
    }

    /// Accepts one pending connection from a non-blocking listener; `nil` when none is pending.
    ///
    /// The returned descriptor is blocking, close-on-exec, with `TCP_NODELAY` set.
    static func accept(_ listener: Int32) -> Int32? {
        // accept4(SOCK_CLOEXEC) is not visible to Swift; a fork between the two calls could
        // leak the descriptor into a child, which only delays that connection's close.
        let fd = systemAccept(listener)
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return fd
    }

    /// Polls `fds` for readability; returns the indices that are readable (or hung up).
    ///
    /// - Parameter timeoutMilliseconds: -1 waits forever.
    static func pollReadable(_ fds: [Int32], timeoutMilliseconds: Int32) -> [Int] {
        var entries = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while true {
            let count = poll(&entries, nfds_t(entries.count), timeoutMilliseconds)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return [] }
            return entries.indices.filter { entries[$0].revents != 0 }
        }
    }

    /// The flag that keeps `send` from raising SIGPIPE (Darwin uses `SO_NOSIGPIPE` instead).
    static var noSignal: Int32 {
        #if canImport(Glibc)
        return Int32(MSG_NOSIGNAL)
        #else
        return 0
        #endif
    }

    /// Runs `body` on a new detached thread with a 1 MiB stack.
    static func spawnThread(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, 1 << 20)
        #if canImport(Glibc)
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attributes, { raw in runThreadBody(raw!) }, box)
        #else
        var thread: pthread_t?
        let rc = pthread_create(&thread, &attributes, { raw in runThreadBody(raw) }, box)
        #endif
        pthread_attr_destroy(&attributes)
        precondition(rc == 0, "pthread_create failed: \(rc)")
    }
}

/// The closure handed to a new thread; owned by exactly that thread, read once.
private final class ThreadBody: @unchecked Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

private func runThreadBody(_ raw: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
    Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue().body()
    return nil
}

/// `accept(2)` without the peer address, spelled out because `POSIX.accept(_:)` shadows it.
private func systemAccept(_ fd: Int32) -> Int32 {
    accept(fd, nil, nil)
}

/// `listen(2)`, spelled out because `POSIX.listen(host:)` shadows it inside the enum.
private func systemListen(_ fd: Int32, _ backlog: Int32) -> Int32 {
    listen(fd, backlog)
}
