/// State under a lock, with a condition that threads wait on until another thread changes it.
///
/// The one lock of a state machine whose actions run on several threads: each event is a short
/// ``withLock(_:)``; a thread with nothing to do until the state changes (or a deadline passes)
/// waits with ``wait(until:while:)``, and a thread that changed what waiters look at wakes them
/// with ``withLockBroadcasting(_:)``.
package final class ConditionLock<State>: @unchecked Sendable {   // `state` is only touched under `monitor`
    private let monitor = Monitor()
    private var state: State

    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with the state, holding the lock.
    package func withLock<Result, E: Error>(_ body: (inout State) throws(E) -> Result) throws(E) -> Result {
        try monitor.withLock { () throws(E) -> Result in try body(&state) }
    }

    /// Runs `body` with the state, holding the lock, then wakes every waiter (after the unlock:
    /// a waiter woken under the lock would at once sleep again on it, two more system calls).
    package func withLockBroadcasting<Result>(_ body: (inout State) -> Result) -> Result {
        let result = monitor.withLock { body(&state) }
        monitor.broadcast()
        return result
    }

    /// Waits while `predicate` holds, until `deadline` (`nil`: no deadline). The predicate is
    /// checked under the lock, first at once and again after every wake-up.
    package func wait(until deadline: ContinuousClock.Instant?, while predicate: (State) -> Bool) {
        monitor.withLock {
            while predicate(state) {
                if let deadline {
                    guard monitor.wait(until: deadline) else { return }
                } else {
                    monitor.wait()
                }
            }
        }
    }
}
