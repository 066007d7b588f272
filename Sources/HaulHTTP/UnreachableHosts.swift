import Synchronization
import HaulCore

/// The origins (scheme, host, port) that a download of one ``Downloader`` gave up on because no
/// TCP connection could be made to them (refused, not resolved, timed out) in its last attempts,
/// more in a row than it had retries. Another download that cannot connect to such an origin still makes
/// its attempts, but does not retry that failure: with a list of 1,000 files on a host that is
/// down, each download would otherwise wait through a backoff of its own (31 s with the default
/// five retries), half an hour at 16 at once, where curl and wget fail at once. An origin leaves
/// the set as soon as a connection to it is made. Kept by the ``ConnectionPool``, which every
/// download of the downloader shares; the URLSession transport does not take part.
package final class UnreachableHosts: Sendable {
    private let hosts = SharedStateLock<Set<HTTPURL.Origin>>([])
    /// How many hosts are in the set: read without the lock, so that a download that reached its
    /// host (every successful one) takes no lock when the set is empty.
    private let count = Atomic<Int>(0)

    package init() {}

    /// Whether a download gave up on `origin` and no connection to it was made since.
    package func contains(_ origin: HTTPURL.Origin) -> Bool {
        count.load(ordering: .relaxed) > 0 && hosts.withLock { $0.contains(origin) }
    }

    /// A download failed to connect to `origin` in more attempts in a row than it had retries.
    package func gaveUp(on origin: HTTPURL.Origin) {
        hosts.withLock { hosts in
            if hosts.insert(origin).inserted { count.store(hosts.count, ordering: .relaxed) }
        }
    }

    /// A connection to `origin` was made.
    package func reached(_ origin: HTTPURL.Origin) {
        guard count.load(ordering: .relaxed) > 0 else { return }
        hosts.withLock { hosts in
            if hosts.remove(origin) != nil { count.store(hosts.count, ordering: .relaxed) }
        }
    }
}
