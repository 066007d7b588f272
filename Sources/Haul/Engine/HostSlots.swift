import HaulCore
import HaulHTTP
/// Caps the connections open at once to one server (host name and port), across every download
/// of a ``Downloader``: each download's first request and each of its segments' take a slot.
///
/// A connection that finds the server full waits (sleeping in cancellable steps that grow from
/// 1 ms to 50 ms, no spinning) until another gives its slot back.
final class HostSlots: Sendable {
    private struct Server: Hashable {
        var host: String
        var port: Int
    }

    private let maximum: Int
    private let counts = SharedStateLock<[Server: Int]>([:])

    init(maximumPerHost: Int) {
        self.maximum = max(1, maximumPerHost)
    }

    /// Takes a slot for `url`'s server. Returns `false` when cancelled while waiting.
    func acquire(for url: HTTPURL, cancellation: CancellationSignal) -> Bool {
        let server = Server(host: url.host, port: url.port)
        var pause = Duration.milliseconds(1)
        while true {
            let taken = counts.withLock { counts -> Bool in
                let now = counts[server, default: 0]
                guard now < maximum else { return false }
                counts[server] = now + 1
                return true
            }
            if taken { return true }
            if !cancellation.sleep(for: pause) { return false }
            pause = min(pause * 2, .milliseconds(50))
        }
    }

    /// Gives a slot back.
    func release(for url: HTTPURL) {
        let server = Server(host: url.host, port: url.port)
        counts.withLock { counts in
            let now = counts[server, default: 1] - 1
            counts[server] = now > 0 ? now : nil
        }
    }

    /// The slots taken for `url`'s server now (for tests).
    func taken(for url: HTTPURL) -> Int {
        counts.withLock { $0[Server(host: url.host, port: url.port), default: 0] }
    }
}

/// The host slot of an attempt's first request: taken before the request, and given back once,
/// when its connection is done, unless it is handed over to the segmented transfer, whose
/// state owns it from then on.
final class HostSlotClaim {
    private let slots: HostSlots
    private let url: HTTPURL
    private var held = true

    /// Takes a slot for `url`'s server, waiting while the server is full.
    ///
    /// - Throws: `cancelled` when cancelled while waiting.
    init(_ slots: HostSlots, for url: HTTPURL, cancellation: CancellationSignal) throws(DownloadError) {
        guard slots.acquire(for: url, cancellation: cancellation) else { throw DownloadError(.cancelled, "cancelled") }
        self.slots = slots
        self.url = url
    }

    /// Gives the slot back (once; nothing after a hand-over).
    func release() {
        guard held else { return }
        held = false
        slots.release(for: url)
    }

    /// The slot now belongs to whoever took the first response over.
    func handOver() {
        held = false
    }
}
