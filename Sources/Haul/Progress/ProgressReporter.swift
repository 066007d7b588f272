import Synchronization
import HaulCore

/// Collects a download's byte count from its transfer threads and turns it into throttled
/// ``DownloadEvent/progress(_:)`` events.
///
/// Transfer threads only do an atomic add per read (``add(_:)``). The process's ``ProgressTicker``
/// wakes it every ``Downloader/Configuration/progressInterval`` and it emits a snapshot when
/// something changed (or once a second, so the speed decays while stalled). ``finish()`` emits
/// the final state unless the last snapshot already had it.
final class ProgressReporter: Sendable {
    private let completed = Atomic<Int64>(0)
    private struct State {
        var total: Int64?
        var estimator = ThroughputEstimator()
        var lastSent: (bytes: Int64, seconds: Double)?
        var finished = false
    }
    private let state = SharedStateLock(State())
    private let events: EventQueue
    private let interval: Duration
    private let origin = ContinuousClock.now

    private let ticker: ProgressTicker
    /// Whether ``start(total:alreadyComplete:ticks:)`` registered it with the ticker (set on the
    /// thread that later calls ``finish()``).
    private let ticking = Atomic<Bool>(false)

    /// A reporter for `events`, sampled every `interval` by `ticker` once started.
    init(events: EventQueue, interval: Duration, ticker: ProgressTicker) {
        self.events = events
        self.interval = interval
        self.ticker = ticker
    }

    /// Bytes complete so far.
    var completedBytes: Int64 { completed.load(ordering: .relaxed) }

    /// Adds bytes written to disk (called on the hot path: one atomic add).
    @inline(__always)
    func add(_ count: Int) {
        completed.add(Int64(count), ordering: .relaxed)
    }

    /// Starts sampling with a known (or unknown) total and the bytes already on disk.
    ///
    /// - Parameter ticks: whether the ticker samples it meanwhile; `false` for a transfer that
    ///   waits for nothing (its body is in memory already), which only reports its final state.
    func start(total: Int64?, alreadyComplete: Int64, ticks: Bool = true) {
        completed.store(alreadyComplete, ordering: .relaxed)
        state.withLock { state in
            state.total = total
            state.estimator.record(seconds: (ContinuousClock.now - origin).seconds, bytes: alreadyComplete)
        }
        if ticks {
            ticking.store(true, ordering: .relaxed)
            ticker.register(self, interval: interval)
        }
    }

    /// The ticker's wake-up: emits a snapshot if something changed (or a second passed).
    func tick() {
        sample(force: false)
    }

    /// Stops sampling and emits the final state.
    func finish() {
        if ticking.load(ordering: .relaxed) { ticker.unregister(self) }
        sample(force: true)
    }

    private func sample(force: Bool) {
        // Read and queue under the lock, so a late sampler tick can never send an older
        // snapshot after the final one; deliver after it (an observer runs outside it).
        let delivery = state.withLock { state -> EventQueue.Delivery? in
            guard !state.finished else { return nil }
            if force { state.finished = true }
            let now = (ContinuousClock.now - origin).seconds
            let bytes = completedBytes
            state.estimator.record(seconds: now, bytes: bytes)
            if let last = state.lastSent, last.bytes == bytes, force || now - last.seconds < 1 { return nil }
            state.lastSent = (bytes, now)
            let snapshot = DownloadProgress(completedBytes: bytes, totalBytes: state.total,
                                            bytesPerSecond: state.estimator.bytesPerSecond,
                                            estimatedTimeRemaining: state.estimator.estimatedTimeRemaining(total: state.total))
            return events.enqueue(.progress(snapshot))
        }
        delivery?.run()
    }
}
