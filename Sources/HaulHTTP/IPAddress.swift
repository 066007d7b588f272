#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address as its bytes (4 or 16), parsed from its text form.
package struct IPAddress: Sendable, Hashable {
    /// The address in network order: 4 bytes for IPv4, 16 for IPv6.
    package var bytes: [UInt8]

    /// Whether this is an IPv6 address.
    package var isIPv6: Bool { bytes.count == 16 }

    /// Parses dotted IPv4 (`127.0.0.1`) or IPv6 (`::1`, without brackets); `nil` for anything else.
    package init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    package init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether the first `prefixLength` bits equal those of `network` (same family only).
    package func isIn(_ network: IPAddress, prefixLength: Int) -> Bool {
        guard network.bytes.count == bytes.count, (0...bytes.count * 8).contains(prefixLength) else { return false }
        var bitsLeft = prefixLength
        for (mine, theirs) in zip(bytes, network.bytes) where bitsLeft > 0 {
            let take = min(8, bitsLeft)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - take))
            if mine & mask != theirs & mask { return false }
            bitsLeft -= take
        }
        return true
    }

    /// Whether this is a loopback address (127.0.0.0/8 or ::1).
    package var isLoopback: Bool {
        if bytes.count == 4 { return bytes[0] == 127 }
        return bytes == [UInt8](repeating: 0, count: 15) + [1]
    }
}
