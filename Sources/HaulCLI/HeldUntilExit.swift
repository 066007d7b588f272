import HaulCore

/// Objects the `haul` process keeps until it exits, instead of releasing them first.
///
/// When the last download ends, the downloader and its 1,000 tokens (with their event queues,
/// requests and results) would be released one object at a time before `exit`: 3.7 ms of the
/// run's tail with 1,000 small files (`strace`: from the last folder `fsync` to `exit_group`,
/// 4.9 → 1.2 ms). The kernel takes the process's memory back at once. Only ``HaulCommand/main(urlSession:)``
/// makes one; a test or an embedding program that calls ``HaulCommand/run(arguments:terminal:urlSession:demo:)``
/// releases everything as usual.
final class HeldUntilExit: Sendable {
    private let storage = SharedStateLock<[any Sendable]>([])

    /// Keeps `object` (and every object it refers to) until the process exits.
    func hold(_ object: some Sendable) {
        storage.withLock { $0.append(object) }
    }

    /// What is held, in the order it was handed over.
    var objects: [any Sendable] { storage.withLock { $0 } }
}
