/// Percent-decoding (RFC 3986 section 2.1) by bytes, the one home of it: URLs' userinfo and
/// paths, `filename*=` (RFC 8187), what the redaction and the signers read.
package enum PercentDecoding {
    /// The byte the escape `%XY` at `offset` stands for, or `nil` when no valid escape starts there.
    package static func escape(in bytes: some RandomAccessCollection<UInt8>, at offset: Int) -> UInt8? {
        guard offset >= 0, offset + 2 < bytes.count else { return nil }
        let at = bytes.index(bytes.startIndex, offsetBy: offset)
        guard bytes[at] == UInt8(ascii: "%"),
              let high = Hex.value(of: bytes[bytes.index(after: at)]),
              let low = Hex.value(of: bytes[bytes.index(at, offsetBy: 2)]) else { return nil }
        return high << 4 | low
    }

    /// Every escape replaced by its byte; `nil` when a `%` does not start a valid escape.
    package static func strict(_ bytes: some RandomAccessCollection<UInt8>) -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        for (position, byte) in bytes.enumerated() where position >= index {
            if byte == UInt8(ascii: "%") {
                guard let value = escape(in: bytes, at: position) else { return nil }
                result.append(value)
                index = position + 3
            } else {
                result.append(byte)
                index = position + 1
            }
        }
        return result
    }

    /// Valid escapes replaced by their bytes, anything else (a malformed escape, `+`) kept as
    /// it is: the bytes, and the offset in `bytes` where each of them starts.
    package static func lenient(_ bytes: some RandomAccessCollection<UInt8>) -> (bytes: [UInt8], starts: [Int]) {
        var result: [UInt8] = [], starts: [Int] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        for (position, byte) in bytes.enumerated() where position >= index {
            starts.append(position)
            if let value = escape(in: bytes, at: position) {
                result.append(value)
                index = position + 3
            } else {
                result.append(byte)
                index = position + 1
            }
        }
        return (result, starts)
    }
}
