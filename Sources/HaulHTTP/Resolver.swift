import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// Resolves a host name without letting a hung resolver outlive the connect timeout or a
/// cancellation: `getaddrinfo` runs on a helper thread while the caller waits in `poll` on the
/// helper's wake-up descriptor, the cancellation signal and the deadline. IP literals are
/// converted inline.
package enum Resolver {
    /// One address to try, copied out of `getaddrinfo`'s list.
    package struct Address: Sendable {
        package var family: Int32
        package var socketType: Int32
        package var socketProtocol: Int32
        package var storage: sockaddr_storage
        package var length: socklen_t

        /// The IPv4 or IPv6 address (for a SOCKS5 request).
        package var ipAddress: IPAddress? {
            var copy = storage
            return withUnsafeBytes(of: &copy) { raw -> IPAddress? in
                switch family {
                case AF_INET: return IPAddress(bytes: Array(raw[4..<8]))      // sockaddr_in: family, port, address
                case AF_INET6: return IPAddress(bytes: Array(raw[8..<24]))    // sockaddr_in6: family, port, flowinfo, address
                default: return nil
                }
            }
        }
    }

    /// - Throws: `dnsFailure`, `connectTimeout` (the deadline passed), `cancelled`;
    ///   `resourceExhausted` when no helper thread or wake-up descriptor could be had (the
    ///   lookup does not run then).
    package static func resolve(host: String, port: Int, deadline: ContinuousClock.Instant,
                               cancellation: CancellationSignal, threads: ThreadPool) throws(HTTPClientError) -> [Address] {
        if let literal = try? lookUp(host: host, port: port, numericOnly: true) { return literal }
        let lookup = PendingLookup()
        var fds = try HTTPClientError.mapping { () throws(ResourceError) -> [pollfd] in
            [pollfd(fd: try lookup.pollDescriptor, events: Int16(POLLIN), revents: 0),
             pollfd(fd: try cancellation.pollDescriptor, events: Int16(POLLIN), revents: 0)]
        }
        let resolve: @Sendable () -> Void = {
            let result: Result<[Address], HTTPClientError>
            do throws(HTTPClientError) {
                result = .success(try lookUp(host: host, port: port, numericOnly: false))
            } catch {
                result = .failure(error)
            }
            lookup.finish(result)
        }
        try HTTPClientError.mapping { () throws(ResourceError) in try threads.run(name: "haul-resolve", resolve) }
        while true {
            if let result = lookup.result { return try result.get() }
            if cancellation.isCancelled { throw HTTPClientError.cancelled }
            let ms = (deadline - ContinuousClock.now).milliseconds
            if ms <= 0 { throw HTTPClientError(.connectTimeout, "resolving '\(host)' took longer than the connect timeout") }
            _ = poll(&fds, 2, Int32(clamping: ms))
        }
    }

    private static func lookUp(host: String, port: Int, numericOnly: Bool) throws(HTTPClientError) -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamSocketType
        hints.ai_flags = AI_NUMERICSERV | (numericOnly ? AI_NUMERICHOST : AI_ADDRCONFIG)
        var list: UnsafeMutablePointer<addrinfo>?
        var rc = getaddrinfo(host, String(port), &hints, &list)
        if rc != 0 && !numericOnly {
            // AI_ADDRCONFIG hides ::1 when the machine has no global IPv6 address; try without it.
            hints.ai_flags = AI_NUMERICSERV
            rc = getaddrinfo(host, String(port), &hints, &list)
        }
        guard rc == 0 else {
            throw HTTPClientError(.dnsFailure, "cannot resolve host '\(host)': \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        var addresses: [Address] = []
        var cursor = list
        while let info = cursor {
            cursor = info.pointee.ai_next
            var storage = sockaddr_storage()
            let length = min(Int(info.pointee.ai_addrlen), MemoryLayout<sockaddr_storage>.size)
            withUnsafeMutableBytes(of: &storage) { target in
                target.copyMemory(from: UnsafeRawBufferPointer(start: info.pointee.ai_addr, count: length))
            }
            addresses.append(Address(family: info.pointee.ai_family, socketType: info.pointee.ai_socktype,
                                     socketProtocol: info.pointee.ai_protocol, storage: storage, length: socklen_t(length)))
        }
        if addresses.isEmpty { throw HTTPClientError(.dnsFailure, "no address found for host '\(host)'") }
        return addresses
    }
}

/// The hand-over between the resolving thread and the waiting one (either may finish first).
private final class PendingLookup: Sendable {
    private let state = SharedStateLock<Result<[Resolver.Address], HTTPClientError>?>(nil)
    private let wakeup = WakeupDescriptor()
    var pollDescriptor: Int32 { get throws(ResourceError) { try wakeup.pollDescriptor } }

    var result: Result<[Resolver.Address], HTTPClientError>? { state.withLock { $0 } }

    func finish(_ result: Result<[Resolver.Address], HTTPClientError>) {
        state.withLock { $0 = result }
        wakeup.signal()
    }
}
