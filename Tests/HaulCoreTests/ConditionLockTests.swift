import HaulCore
import HaulTestSupport
import Testing

@Suite("State under a lock with a condition: waits, wakes, deadlines")
struct ConditionLockTests {
    /// A value, and whether a waiter is about to wait for it to change.
    private struct Box {
        var value = 0
        var waiterReady = false
        var items: [Int] = []
    }

    @Test("increments from several threads add up")
    func concurrentIncrementsAddUp() async {
        let lock = ConditionLock(Box())
        await ThreadPool(maximumThreads: 4).runTogether(4) {
            for _ in 0..<20_000 { lock.withLock { $0.value += 1 } }
        }
        #expect(lock.withLock { $0.value } == 80_000)
    }

    @Test("a waiter woken by withLockBroadcasting sees the new state")
    func broadcastWakesWaiter() {
        let lock = ConditionLock(Box())
        let seen = ThreadPool().startInTest { () -> (ended: Bool, value: Int) in
            lock.withLockBroadcasting { $0.waiterReady = true }
            let ended = lock.wait(until: .now + .seconds(30)) { $0.value == 0 }
            return (ended, lock.withLock { $0.value })
        }
        lock.wait(until: .now + .seconds(30)) { !$0.waiterReady }
        lock.withLockBroadcasting { $0.value = 42 }
        let result = seen.result
        #expect(result?.ended == true, "woken by the broadcast: the predicate stopped holding before the deadline")
        #expect(result?.value == 42)
    }

    @Test("wait(until:) returns false at a deadline already past, true at once when the predicate does not hold")
    func pastDeadline() {
        let lock = ConditionLock(Box())
        #expect(!lock.wait(until: .now.advanced(by: .seconds(-1))) { _ in true })
        #expect(lock.wait(until: .now.advanced(by: .seconds(-1))) { $0.value != 0 })
        #expect(lock.wait(until: nil) { $0.value != 0 })
    }

    @Test("a wait that nobody ends returns false once its deadline has passed")
    func deadlineEndsWait() {
        let lock = ConditionLock(Box())
        let start = ContinuousClock.now
        #expect(!lock.wait(until: start + .milliseconds(50)) { $0.value == 0 })
        #expect(ContinuousClock.now >= start + .milliseconds(50))   // a lower bound, which no load can break
    }

    @Test("withLock(waitingWhile:) acts in the same hold that ended the wait: two takers of two items, each woken by signal, get one each")
    func waitingBodyTakesWhatEndedTheWait() {
        let lock = ConditionLock(Box())
        let threads = ThreadPool()
        let take: @Sendable () -> Int? = {
            lock.withLockBroadcasting { $0.value += 1 }   // counts the takers about to wait
            return lock.withLock(waitingWhile: { $0.items.isEmpty }, until: .now + .seconds(30)) { $0.items.popLast() }
        }
        let first = threads.startInTest(take), second = threads.startInTest(take)
        lock.wait(until: .now + .seconds(30)) { $0.value < 2 }
        for item in [1, 2] {
            lock.withLock { $0.items.append(item) }
            lock.signal()
        }
        let taken = [first.result, second.result]
        #expect(taken.compactMap { $0 ?? nil }.sorted() == [1, 2])
    }

    @Test("withLock(waitingWhile:) runs its body at the deadline too, with the state as it is")
    func waitingBodyRunsAtDeadline() {
        let lock = ConditionLock(Box())
        let taken = lock.withLock(waitingWhile: { $0.items.isEmpty }, until: .now + .milliseconds(20)) { $0.items.popLast() }
        #expect(taken == nil)
    }

    @Test("an error thrown under the lock reaches the caller and the lock is free again")
    func throwingBodyUnlocks() {
        struct Refused: Error {}
        let lock = ConditionLock(Box())
        #expect(throws: Refused.self) {
            try lock.withLock { (box: inout Box) throws(Refused) in
                box.value = 7
                throw Refused()
            }
        }
        #expect(lock.withLock { $0.value } == 7)
    }
}

extension ThreadPool {
    /// Starts `body` on a thread of the pool (never a task: the test's own thread then waits for
    /// it without holding up the cooperative pool); ``StartedBody/result`` waits for what it returns.
    func startInTest<T: Sendable>(_ body: @escaping @Sendable () -> T) -> StartedBody<T> {
        let started = StartedBody<T>()
        runInTest {
            let value = body()
            started.value.withLockBroadcasting { $0 = value }
        }
        return started
    }

    /// Runs `body` on `count` threads of the pool at once and returns when every one returned.
    func runTogether(_ count: Int, _ body: @escaping @Sendable () -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        self.runInTest {
                            body()
                            continuation.resume()
                        }
                    }
                }
            }
        }
    }
}

/// A body started with ``ThreadPool/startInTest(_:)``.
final class StartedBody<T: Sendable>: Sendable {
    let value = ConditionLock<T?>(nil)

    /// What the body returned; `nil` when it did not return within 30 s.
    var result: T? {
        value.withLock(waitingWhile: { $0 == nil }, until: .now + .seconds(30)) { $0 }
    }
}
