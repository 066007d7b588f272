import Synchronization
import Testing

/// Runs a suite alone: while its tests run, no other suite that carries this trait does.
///
/// Many suites here pace, stall, kill or time real transfers, and some wait on processes or
/// semaphores. Run side by side (plain `swift test` runs suites in parallel) on a 2-core
/// machine, they starve each other's timing and the few cooperative threads, and the run fails
/// and then stalls. Every suite carries this trait together with `.serialized` (its own tests one
/// at a time), so plain `swift test` runs them one at a time, as `--no-parallel` does.
///
/// The suite waits for its turn outside any test's time limit (a suite has none; a test's limit
/// would count the wait). A suite nested in one that holds the turn runs at once.
public struct ExclusiveSuite: SuiteTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite && testCase == nil ? self : nil
    }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        if Self.holdsTurn { return try await function() }
        await Self.turn.acquire()
        defer { Self.turn.release() }
        try await Self.$holdsTurn.withValue(true) { try await function() }
    }

    @TaskLocal static var holdsTurn = false
    static let turn = Turnstile()
}

extension Trait where Self == ExclusiveSuite {
    /// See ``ExclusiveSuite``.
    public static var exclusive: Self { ExclusiveSuite() }
}

/// A lock for tasks: waiters are suspended, not blocking a thread; first come, first served.
final class Turnstile: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if granted { continuation.resume() }
        }
    }

    /// Hands the turn to the first waiter, or frees it.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
