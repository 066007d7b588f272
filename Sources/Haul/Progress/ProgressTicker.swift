import Synchronization
import HaulCore

/// One task that wakes the progress reporters of every running download at their intervals,
/// instead of a sleeping task (and a kernel timer) per download: with 1,000 small files, 16 at
/// once, each download's own sampler task cost a task, a timer and three thread wake-ups.
///
/// Reporters are held weakly; the task ends when none is registered and the next registration
/// starts a new one. A reporter is first woken one interval after it registers, at most
/// ``longestSleep`` late when it registers while the task sleeps towards a later deadline.
final class ProgressTicker: Sendable {
    /// The longest the task sleeps at a time, so a reporter registered during a long sleep is
    /// not woken much later than its interval: the downloader's progress interval (every
    /// reporter of a downloader has it, so the task wakes only when a reporter is due).
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
    }
    private let state = SharedStateLock(State())

    /// Wakes `reporter` (``ProgressReporter/tick()``) every `interval` until ``unregister(_:)``.
    func register(_ reporter: ProgressReporter, interval: Duration) {
        let start = state.withLock { state -> Bool in
            state.entries[ObjectIdentifier(reporter)] = Entry(reporter: reporter, interval: interval,
                                                              due: .now + interval)
            guard !state.running else { return false }
            state.running = true
            return true
        }
        // Detached: the task serves every download, not the priority or task-locals of the one
        // that happened to start it.
        if start { Task.detached(priority: .medium) { await self.run() } }
    }

    /// Stops waking `reporter`.
    func unregister(_ reporter: ProgressReporter) {
        _ = state.withLock { $0.entries.removeValue(forKey: ObjectIdentifier(reporter)) }
    }

    /// Whether a task is running (for tests).
    var isRunning: Bool { state.withLock { $0.running } }

    private func run() async {
        while true {
            let now = ContinuousClock.now
            let (due, wake) = state.withLock { state -> ([ProgressReporter], ContinuousClock.Instant?) in
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
                if wake == nil { state.running = false }   // the next register starts a new task
                return (due, wake)
            }
            for reporter in due { reporter.tick() }
            guard let wake else { return }
            try? await Task.sleep(until: min(wake, ContinuousClock.now + longestSleep), clock: .continuous)
        }
    }
}
