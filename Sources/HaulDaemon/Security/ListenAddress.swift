#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the daemon listens: an IP literal and a port (`127.0.0.1:6800`, `[::1]:6800`).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// The address, without brackets.
    public var host: String
    /// The port (0 picks a free one when listening).
    public var port: Int

    /// Creates an address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, `[V6]:PORT` or `localhost:PORT` (taken as `127.0.0.1`); the host must
    /// be an IP literal.
    ///
    /// - Returns: `nil` when malformed.
    public init?(parsing text: String) {
        guard let (host, port) = RequestPolicy.split(hostAndPort: text), let port else { return nil }
        let literal = host == "localhost" ? "127.0.0.1" : host
        guard Self.isIPLiteral(literal) else { return nil }
        self.init(host: literal, port: port)
    }

    /// `host:port`, with brackets around an IPv6 host.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Whether the address is loopback only (`127.0.0.0/8` or `::1`).
    public var isLoopback: Bool { Self.isLoopback(host) }

    /// Whether it is every address of the machine (`0.0.0.0` or `::`).
    public var isWildcard: Bool {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return v4.s_addr == 0 }
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { $0.allSatisfy { $0 == 0 } }
        }
        return false
    }

    /// Whether `host` (no brackets, no port) names loopback: `localhost`, `127.0.0.0/8`, `::1`.
    public static func isLoopback(_ host: String) -> Bool {
        let name = host.lowercasedASCII()
        if name == "localhost" || name == "localhost." { return true }
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, name, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        if inet_pton(AF_INET6, name, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
        }
        return false
    }

    /// Whether `host` is an IPv4 or IPv6 literal (no brackets).
    public static func isIPLiteral(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
