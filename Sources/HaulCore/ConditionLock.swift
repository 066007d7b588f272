/// State under a lock, with a condition that threads wait on until another thread changes it.
///
/// The one lock of a state machine whose actions run on several threads: each event is a short
/// ``withLock(_:)``; a thread with nothing to do until the state changes (or a deadline passes)
/// waits with ``wait(until:while:)``, or with ``withLock(waitingWhile:until:_:)`` when it acts on
/// the state in the same hold of the lock; a thread that changed what waiters look at wakes
/// them with ``withLockBroadcasting(_:)`` (or ``broadcast()``/``signal()`` after its change).
///
/// The state is reached only through these functions, each access a fresh `inout` with the lock
/// held: a waiter's predicate and body never hold the state across a sleep.
package final class ConditionLock<State>: @unchecked Sendable {   // `state` is only touched with `monitor` held
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
    ///
    /// - Returns: `true` when the predicate stopped holding, `false` when the deadline came first.
    @discardableResult
    package func wait(until deadline: ContinuousClock.Instant?, while predicate: (State) -> Bool) -> Bool {
        monitor.withLock { sleep(until: deadline, while: predicate) }
    }

    /// Waits while `predicate` holds (until `deadline`, `nil`: no deadline), then runs `body` with
    /// the state in the same hold of the lock: what the body sees is what ended the wait (or the
    /// deadline; the body looks at the state again to tell).
    package func withLock<Result, E: Error>(waitingWhile predicate: (State) -> Bool, until deadline: ContinuousClock.Instant? = nil,
                                            _ body: (inout State) throws(E) -> Result) throws(E) -> Result {
        try monitor.withLock { () throws(E) -> Result in
            _ = sleep(until: deadline, while: predicate)
            return try body(&state)
        }
    }

    /// Wakes every waiter (call after changing the state, with the lock held or not).
    package func broadcast() {
        monitor.broadcast()
    }

    /// Wakes one waiter (call after changing the state, with the lock held or not): for a change
    /// that only one waiter can act on (one job for one of the parked threads), where waking all
    /// would send the rest back to sleep.
    package func signal() {
        monitor.signal()
    }

    /// The wait of ``wait(until:while:)``, with the lock held.
    private func sleep(until deadline: ContinuousClock.Instant?, while predicate: (State) -> Bool) -> Bool {
        while predicate(state) {
            if let deadline {
                guard monitor.wait(until: deadline) else { return false }
            } else {
                monitor.wait()
            }
        }
        return true
    }
}
