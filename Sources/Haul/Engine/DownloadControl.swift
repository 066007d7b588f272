#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// The user's controls over one download (pause, resume, cancel, restart), as seen by its
/// transfer threads, and what those threads publish back (the completed ranges, the transfer in flight).
///
/// Each run of the transfer gets its own ``CancellationSignal``: ``pause()`` and ``cancel()``
/// fire it (connections close at once); after a pause, the job waits in ``waitWhilePaused()``
/// and starts a new run with a fresh signal when ``resume()`` is called. ``restart()`` fires it
/// and puts a fresh one in place at once: the job starts its next attempt without waiting.
final class DownloadControl: Sendable {
    private struct State {
        var cancelled = false
        var paused = false
        var restarting = false
        var run = CancellationSignal()
        var completed: [Range<Int64>]?
        var transfer: SegmentedTransfer?
    }
    private let state = SharedStateLock(State())
    private let wakeup = WakeupDescriptor()

    /// The signal of the current run.
    var signal: CancellationSignal { state.withLock { $0.run } }

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Whether the download is paused (and not cancelled).
    var isPaused: Bool { state.withLock { $0.paused && !$0.cancelled } }

    /// The ranges the last checkpoint of the current attempt made durable, if any.
    var completedRanges: [Range<Int64>]? { state.withLock { $0.completed } }

    /// Records the ranges a checkpoint made durable (`nil` when an attempt starts).
    func publish(completed: [Range<Int64>]?) {
        state.withLock { $0.completed = completed }
    }

    /// The segments of the transfer over ranges that runs now, if any.
    var segmentsInFlight: [SegmentInFlight] {
        let transfer = state.withLock { $0.transfer }
        return transfer?.segmentsInFlight ?? []
    }

    /// The sources of the transfer over ranges that runs now, if any.
    var sourcesInUse: [SourceInUse] {
        let transfer = state.withLock { $0.transfer }
        return transfer?.sourcesInUse ?? []
    }

    /// Records the transfer over ranges that runs now (`nil` once it has ended).
    func publish(transfer: SegmentedTransfer?) {
        state.withLock { $0.transfer = transfer }
    }

    /// Ends the current run and puts a fresh signal in place, so that the job starts its next
    /// attempt at once (``takeRestart()`` tells it so). Nothing happens while paused or cancelled.
    func restart() {
        let run = state.withLock { state -> CancellationSignal? in
            guard !state.cancelled, !state.paused else { return nil }
            let ended = state.run
            state.run = CancellationSignal()
            state.restarting = true
            return ended
        }
        run?.cancel()
    }

    /// Whether the run ended because of ``restart()``; clears the mark.
    func takeRestart() -> Bool {
        state.withLock { state in
            defer { state.restarting = false }
            return state.restarting && !state.cancelled && !state.paused
        }
    }

    /// Stops the current run and keeps the download paused until ``resume()``.
    func pause() {
        let run = state.withLock { state -> CancellationSignal? in
            guard !state.cancelled, !state.paused else { return nil }
            state.paused = true
            state.restarting = false
            return state.run
        }
        run?.cancel()
    }

    /// Ends a pause: the next run starts with a fresh signal.
    func resume() {
        let resumed = state.withLock { state -> Bool in
            guard state.paused, !state.cancelled else { return false }
            state.paused = false
            state.run = CancellationSignal()
            return true
        }
        if resumed { wakeup.signal() }
    }

    /// Stops for good.
    func cancel() {
        let run = state.withLock { state -> CancellationSignal in
            state.cancelled = true
            return state.run
        }
        run.cancel()
        wakeup.signal()
    }

    /// Blocks the calling (transfer) thread while paused. Returns `false` when cancelled.
    ///
    /// - Throws: `resourceExhausted` when there is no descriptor to wait on (the download fails
    ///   instead of waiting).
    func waitWhilePaused() throws(DownloadError) -> Bool {
        let descriptor = try mappingResourceErrors { () throws(ResourceError) in try wakeup.pollDescriptor }
        var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        while true {
            wakeup.drain()   // before the check: a signal after it makes poll return at once
            let (paused, cancelled) = state.withLock { ($0.paused, $0.cancelled) }
            if cancelled { return false }
            if !paused { return true }
            _ = poll(&fds, 1, -1)
        }
    }
}
