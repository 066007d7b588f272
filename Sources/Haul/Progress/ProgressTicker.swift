import Synchronization
import HaulCore

/// One thread that wakes the progress reporters of every running download at their intervals,
/// instead of a sleeping task (and a kernel timer) per download: with 1,000 small files, 16 at
/// once, each download's own sampler task cost a task, a timer and three thread wake-ups. A
/// thread of its own, sleeping on a condition, wakes once per tick; a task sleeping on Swift's
/// clock woke the timer thread and a worker of the cooperative pool for each.
///
/// Reporters are held weakly; the thread's loop ends when none is registered and the next
/// registration starts it again. A reporter is first woken one interval after it registers.
final class ProgressTicker: Sendable {
    /// The longest the loop sleeps at a time (a registration wakes it sooner).
    let longestSleep: Duration

    /// - Parameter longestSleep: the longest sleep (default 100 ms, the default progress interval).
    init(longestSleep: Duration = .milliseconds(100)) {
        self.longestSleep = longestSleep
    }

    private struct Entry {
        weak var reporter: ProgressReporter?
        let interval: Duration
        var due: ContinuousClock.Instant
    }
    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var running = false
        /// Counts registrations, so the sleeping loop notices one.
        var registrations = 0
    }
    private let state = ConditionLock(State())
    /// The loop's thread; it retires a few seconds after the loop ends.
    private let thread = ThreadPool(maximumThreads: 1)

    /// Wakes `reporter` (``ProgressReporter/tick()``) every `interval` until ``unregister(_:)``.
    ///
    /// When the system gives no thread for the loop, nothing ticks (the download goes on and
    /// reports only its final state) and the next registration tries again.
    func register(_ reporter: ProgressReporter, interval: Duration) {
        let start = state.withLockBroadcasting { state -> Bool in
            state.entries[ObjectIdentifier(reporter)] = Entry(reporter: reporter, interval: interval,
                                                              due: .now + interval)
            state.registrations += 1
            guard !state.running else { return false }
            state.running = true
            return true
        }
        guard start else { return }
        do throws(ResourceError) {
            try thread.run(name: "haul-progress") { [self] in run() }
        } catch {
            state.withLock { $0.running = false }
        }
    }

    /// Stops waking `reporter`.
    func unregister(_ reporter: ProgressReporter) {
        _ = state.withLock { $0.entries.removeValue(forKey: ObjectIdentifier(reporter)) }
    }

    /// Whether the loop is running (for tests).
    var isRunning: Bool { state.withLock { $0.running } }

    private func run() {
        while true {
            let now = ContinuousClock.now
            let (due, wake, seen) = state.withLock { state -> ([ProgressReporter], ContinuousClock.Instant?, Int) in
                var due: [ProgressReporter] = []
                var wake: ContinuousClock.Instant?
                for id in Array(state.entries.keys) {   // keys first: the loop changes the entries
                    guard let entry = state.entries[id], let reporter = entry.reporter else {
                        state.entries[id] = nil
                        continue
                    }
                    var next = entry.due
                    if next <= now {
                        due.append(reporter)
                        next = now + entry.interval
                        state.entries[id]?.due = next
                    }
                    wake = min(wake ?? next, next)
                }
                if wake == nil { state.running = false }   // the next register starts the loop again
                return (due, wake, state.registrations)
            }
            for reporter in due { reporter.tick() }
            guard let wake else { return }
            state.wait(until: min(wake, ContinuousClock.now + longestSleep)) { $0.registrations == seen }
        }
    }
}
