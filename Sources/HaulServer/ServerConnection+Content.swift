/// Sending generated content fast (plain) or paced (rate-limited), optionally chunked.
extension ServerConnection {
    /// The write size when not rate-limited: large writes keep loopback above 1 GB/s.
    static let bulkWriteSize = 256 * 1024
    /// The chunk size of `Transfer-Encoding: chunked` bodies.
    static let chunkSize = 64 * 1024

    /// Writes the bytes of `range` of `content`.
    ///
    /// Writes straight out of a pattern buffer built once per response (see
    /// `DeterministicContent.patternBuffer(chunkSize:)`), so no write allocates.
    ///
    /// - Parameters:
    ///   - chunked: frame the body as 64 KiB chunks and end it with the last chunk.
    ///   - bytesPerSecond: pace the writes to this rate (sleeping between them); `nil` is unlimited.
    ///   - stopAfter: write only this many content bytes, then return without the last chunk.
    /// - Returns: the number of content bytes written.
    /// - Throws: `HaulServerError` when a write fails or the server stops while pacing.
    @discardableResult
    func sendContent(_ content: DeterministicContent, range: Range<Int64>, chunked: Bool,
                     bytesPerSecond: Int?, stopAfter: Int64?) throws -> Int64 {
        var writeSize = chunked ? Self.chunkSize : Self.bulkWriteSize
        if let bytesPerSecond {
            // About twenty writes a second keeps the pacing smooth.
            writeSize = min(writeSize, max(1, bytesPerSecond / 20))
        }
        let end = stopAfter.map { min(range.upperBound, range.lowerBound + max(0, $0)) } ?? range.upperBound
        // No write is longer than the range, so small bodies get a small buffer.
        let pattern = content.patternBuffer(chunkSize: min(writeSize, max(1, range.count)))
        let start = ContinuousClock.now
        var offset = range.lowerBound
        try pattern.withUnsafeBytes { raw in
            while offset < end {
                let wanted = Int(min(Int64(writeSize), range.upperBound - offset))
                let count = Int(min(Int64(wanted), end - offset))
                if chunked { try write(String(wanted, radix: 16) + "\r\n") }
                let patternOffset = Int(offset % Int64(DeterministicContent.period))
                try writeRaw(UnsafeRawBufferPointer(rebasing: raw[patternOffset..<patternOffset + count]), isBody: true)
                if chunked && count == wanted { try write("\r\n") }
                offset += Int64(count)
                if let bytesPerSecond {
                    try pace(sent: offset - range.lowerBound, since: start, bytesPerSecond: bytesPerSecond)
                }
            }
        }
        if chunked && offset == range.upperBound { try write("0\r\n\r\n") }
        return offset - range.lowerBound
    }

    /// Sleeps until `sent` bytes are due at `bytesPerSecond` since `start`.
    private func pace(sent: Int64, since start: ContinuousClock.Instant, bytesPerSecond: Int) throws {
        let due = Double(sent) / Double(bytesPerSecond)
        let elapsed = start.duration(to: .now)
        let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        if due > elapsedSeconds { sleep(seconds: due - elapsedSeconds) }
        if core.isStopped { throw HaulServerError("server stopped") }
    }
}
