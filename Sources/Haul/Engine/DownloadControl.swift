import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// The user's controls over one download (pause, resume, cancel), as seen by its transfer threads.
///
/// Each run of the transfer gets its own ``CancellationSignal``: ``pause()`` and ``cancel()``
/// fire it (connections close at once); after a pause, the job waits in ``waitWhilePaused()``
/// and starts a new run with a fresh signal when ``resume()`` is called.
final class DownloadControl: Sendable {
    private struct State {
        var cancelled = false
        var paused = false
        var run = CancellationSignal()
    }
    private let state = Mutex(State())
    private let wakeup = WakeupDescriptor()

    /// The signal of the current run.
    var signal: CancellationSignal { state.withLock { $0.run } }

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Whether the download is paused (and not cancelled).
    var isPaused: Bool { state.withLock { $0.paused && !$0.cancelled } }

    /// Stops the current run and keeps the download paused until ``resume()``.
    func pause() {
        let run = state.withLock { state -> CancellationSignal? in
            guard !state.cancelled, !state.paused else { return nil }
            state.paused = true
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
    func waitWhilePaused() -> Bool {
        var fds = [pollfd(fd: wakeup.pollDescriptor, events: Int16(POLLIN), revents: 0)]
        while true {
            wakeup.drain()   // before the check: a signal after it makes poll return at once
            let (paused, cancelled) = state.withLock { ($0.paused, $0.cancelled) }
            if cancelled { return false }
            if !paused { return true }
            _ = poll(&fds, 1, -1)
        }
    }
}
