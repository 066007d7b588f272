/// Identifies one download of a ``DownloadService`` for as long as the service keeps it.
///
/// Shown as 16 lowercase hexadecimal digits, as aria2 shows its GIDs. Never zero.
public struct DownloadID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 64-bit value.
    public let rawValue: UInt64

    /// Wraps a value; `nil` for zero, which names no download.
    ///
    /// - Parameter rawValue: the 64-bit value.
    public init?(rawValue: UInt64) {
        guard rawValue != 0 else { return nil }
        self.rawValue = rawValue
    }

    /// Parses exactly 16 hexadecimal digits (either case); `nil` for anything else or for zero.
    ///
    /// - Parameter hex: for example `"2089b05ecca3d829"`.
    public init?(hex: some StringProtocol) {
        let utf8 = hex.utf8
        guard utf8.count == 16 else { return nil }
        var value: UInt64 = 0
        for byte in utf8 {
            guard let digit = Self.hexValue(byte) else { return nil }
            value = value << 4 | UInt64(digit)
        }
        self.init(rawValue: value)
    }

    /// A random identifier that `isTaken` does not refuse.
    ///
    /// - Parameter isTaken: whether an identifier is in use already.
    /// - Returns: a fresh identifier.
    public static func random(unless isTaken: (DownloadID) -> Bool) -> DownloadID {
        var generator = SystemRandomNumberGenerator()
        while true {
            if let id = DownloadID(rawValue: generator.next()), !isTaken(id) { return id }
        }
    }

    /// The 16 lowercase hexadecimal digits.
    public var hex: String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            let digits: StaticString = "0123456789abcdef"
            var value = rawValue
            for index in (0..<16).reversed() {
                buffer[index] = digits.utf8Start[Int(value & 0xF)]
                value >>= 4
            }
            return 16
        }
    }

    /// The 16 hexadecimal digits.
    public var description: String { hex }

    /// Orders by value.
    public static func < (lhs: DownloadID, rhs: DownloadID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Whether `prefix` (hexadecimal digits, either case) begins this identifier's digits.
    ///
    /// - Parameter prefix: 1 to 16 digits.
    public func hasHexPrefix(_ prefix: some StringProtocol) -> Bool {
        let count = prefix.utf8.count
        guard (1...16).contains(count) else { return false }
        var value: UInt64 = 0
        for byte in prefix.utf8 {
            guard let digit = Self.hexValue(byte) else { return false }
            value = value << 4 | UInt64(digit)
        }
        return rawValue >> UInt64(64 - 4 * count) == value
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
