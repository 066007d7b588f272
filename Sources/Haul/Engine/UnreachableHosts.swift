import Synchronization

/// The hosts that a download of one ``Downloader`` gave up on, after its retries, because no
/// connection could be made (refused, not resolved, timed out). Another download of such a host
/// still makes its attempt, but does not retry that kind of failure: with a list of 1,000 files
/// on a host that is down, each download would otherwise wait through a backoff of its own (31 s
/// with the default five retries), half an hour at 16 at once, where curl and wget fail at once.
/// A host leaves the set as soon as an attempt reaches it.
final class UnreachableHosts: Sendable {
    private let hosts = Mutex<Set<HTTPURL.Origin>>([])
    /// How many hosts are in the set: read without the lock, so that a download that reached its
    /// host (every successful one) takes no lock when the set is empty.
    private let count = Atomic<Int>(0)

    /// Whether `error` says that no connection could be made to the host at all.
    static func means(_ error: DownloadError) -> Bool {
        error.code == .connectionRefused || error.code == .dnsFailure || error.code == .connectTimeout
    }

    /// Whether a download gave up on `origin` and no attempt has reached it since.
    func contains(_ origin: HTTPURL.Origin) -> Bool {
        count.load(ordering: .relaxed) > 0 && hosts.withLock { $0.contains(origin) }
    }

    /// A download used its retries on `origin` without reaching it.
    func gaveUp(on origin: HTTPURL.Origin) {
        hosts.withLock { hosts in
            if hosts.insert(origin).inserted { count.store(hosts.count, ordering: .relaxed) }
        }
    }

    /// An attempt reached `origin` (it answered, whatever it said).
    func reached(_ origin: HTTPURL.Origin) {
        guard count.load(ordering: .relaxed) > 0 else { return }
        hosts.withLock { hosts in
            if hosts.remove(origin) != nil { count.store(hosts.count, ordering: .relaxed) }
        }
    }
}
