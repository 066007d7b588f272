/// A snapshot of one download's progress.
public struct DownloadProgress: Sendable, Equatable {
    /// Bytes of the file on disk and valid (including bytes resumed from an earlier run).
    public var completedBytes: Int64
    /// The file's full length, when the server announced it.
    public var totalBytes: Int64?
    /// Recent throughput, in bytes per second (a moving average over the last seconds).
    public var bytesPerSecond: Double
    /// Seconds until done at the current speed, when the total is known and the speed is not zero.
    public var estimatedTimeRemaining: Double?

    /// Creates a snapshot.
    ///
    /// - Parameters:
    ///   - completedBytes: bytes done.
    ///   - totalBytes: the full length, if known.
    ///   - bytesPerSecond: recent throughput.
    ///   - estimatedTimeRemaining: seconds left, if known.
    public init(completedBytes: Int64, totalBytes: Int64?, bytesPerSecond: Double, estimatedTimeRemaining: Double?) {
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
        self.estimatedTimeRemaining = estimatedTimeRemaining
    }

    /// `completedBytes / totalBytes` in 0...1, or `nil` when the total is unknown.
    public var fractionCompleted: Double? {
        guard let total = totalBytes else { return nil }
        if total == 0 { return 1 }
        return min(1, max(0, Double(completedBytes) / Double(total)))
    }
}
