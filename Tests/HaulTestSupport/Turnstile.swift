import HaulCore

/// A counting lock for tasks: at most `width` holders at once; waiters are suspended, not
/// blocking a thread; first come, first served.
final class Turnstile: Sendable {
    private struct State {
        var held = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = SharedStateLock(State())
    private let width: Int

    /// - Parameter width: how many may hold it at once (at least 1).
    init(width: Int = 1) {
        self.width = max(1, width)
    }

    /// Waits (suspended) until a place is free, then holds it.
    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.held >= width {
                    state.waiters.append(continuation)
                    return false
                }
                state.held += 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    /// Hands the place to the first waiter, or frees it.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.held -= 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
