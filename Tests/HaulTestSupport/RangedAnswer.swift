import HaulServer

/// The head of a hand-written answer to a GET that may carry `Range` (and `If-Range`): a 206 for
/// the asked bytes when the range is usable and `If-Range` (if any) matches `etag`, else a 200
/// for the whole file. Test routes that pace or cut their body share it.
public struct RangedAnswer {
    /// The bytes the answer carries.
    public let range: Range<Int64>
    /// The status line and header fields, ending with the blank line (`Connection: close`).
    public let head: String

    /// The answer to `request` for a file of `size` bytes whose strong ETag is `etag`.
    public init(to request: RecordedRequest, size: Int64, etag: String) {
        var range = 0..<size
        var partial = false
        if let value = request.header("Range"), value.hasPrefix("bytes="), request.header("If-Range").map({ $0 == etag }) ?? true {
            let parts = value.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 2, let first = Int64(parts[0]), first < size {
                let last = parts[1].isEmpty ? size - 1 : min(size - 1, Int64(parts[1]) ?? size - 1)
                range = first..<(last + 1)
                partial = true
            }
        }
        var head = partial ? "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)\r\n"
                           : "HTTP/1.1 200 OK\r\n"
        head += "Content-Length: \(range.count)\r\nETag: \(etag)\r\nAccept-Ranges: bytes\r\nConnection: close\r\n\r\n"
        self.range = range
        self.head = head
    }
}
