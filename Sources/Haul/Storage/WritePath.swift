/// How a transfer's bytes reach the disk: past the page cache in whole blocks (``direct``, see
/// ``WriteBehind``) or through it, chosen from what the transfer is.
///
/// Direct wherever it can be: measured with 1 GiB from nginx on loopback (2 cores, a virtio
/// disk taking about 1.5 GB/s direct), direct took 0.72 s against 1.36 s through the cache with
/// one connection, 0.63 against 1.33 with four, over TLS 0.995 against 1.10 and 0.89 against
/// 1.09, and with a checksum over one connection 1.08 against 1.23 (each through the commit's
/// sync); on a disk throttled to 100 MiB/s both took the disk's time (10.2–10.3 s). So the
/// connections and the checksum do not change the answer; these do:
enum WritePath: Equatable, Sendable {
    case direct
    case cached(Reason)

    enum Reason: Equatable, Sendable {
        /// The file may be committed in a batch whose one `syncfs` its pages share
        /// (``BatchCommitter/largestFile`` or less).
        case small
        /// A rate limit meters the bytes as they arrive, in reads too small to gather.
        case rateLimited
        /// Segments under 64 KiB are mostly edges, which go through the page cache anyway.
        case smallSegments
        /// The file system does not take direct writes (only ext4 and XFS do).
        case noDirectWrites
    }

    /// The path for a file of `size` bytes.
    ///
    /// - Parameters:
    ///   - rateLimited: whether a rate limit meters the transfer.
    ///   - minimumSegment: the smallest segment the transfer cuts.
    ///   - directWrites: whether the partial file could be opened for direct writes.
    static func choose(size: Int64, rateLimited: Bool, minimumSegment: Int64, directWrites: Bool) -> WritePath {
        if size <= BatchCommitter.largestFile { return .cached(.small) }
        if rateLimited { return .cached(.rateLimited) }
        if minimumSegment < 64 << 10 { return .cached(.smallSegments) }
        if !directWrites { return .cached(.noDirectWrites) }
        return .direct
    }
}
