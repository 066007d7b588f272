import Synchronization

/// Caps the connections open at once to one host, across every download of a ``Downloader``.
///
/// A connection that finds the host full waits (sleeping in short cancellable steps, no spinning)
/// until another gives its slot back.
final class HostSlots: Sendable {
    private let maximum: Int
    private let counts = SharedStateLock<[String: Int]>([:])

    init(maximumPerHost: Int) {
        self.maximum = max(1, maximumPerHost)
    }

    /// Takes a slot for `url`'s host. Returns `false` when cancelled while waiting.
    func acquire(for url: HTTPURL, cancellation: CancellationSignal) -> Bool {
        let host = url.host
        while true {
            let taken = counts.withLock { counts -> Bool in
                let now = counts[host, default: 0]
                guard now < maximum else { return false }
                counts[host] = now + 1
                return true
            }
            if taken { return true }
            if !cancellation.sleep(for: .milliseconds(50)) { return false }
        }
    }

    /// Gives a slot back.
    func release(for url: HTTPURL) {
        counts.withLock { counts in
            let now = counts[url.host, default: 1] - 1
            counts[url.host] = now > 0 ? now : nil
        }
    }
}
