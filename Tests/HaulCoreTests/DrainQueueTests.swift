import HaulCore
import Testing

/// The queue of work carried out after a lock: one drainer at a time, everything in order,
/// and work queued while draining joins the next batch instead of nesting.
@Suite struct DrainQueueTests {
    @Test func onlyTheFirstToQueueDrainsAndItTakesEverythingInOrder() {
        var queue = DrainQueue<Int>()
        let first = queue.append(1), second = queue.append(2), third = queue.append(3)
        #expect(first && !second && !third)
        var batch: [Int] = []
        let took = queue.take(into: &batch)
        #expect(took && batch == [1, 2, 3])
        #expect(queue.isDraining)
        let fourth = queue.append(4)
        #expect(!fourth, "still draining: the drainer takes it next")
        let tookAgain = queue.take(into: &batch)
        #expect(tookAgain && batch == [4])
        let tookNothing = queue.take(into: &batch)
        #expect(!tookNothing && batch.isEmpty)
        #expect(!queue.isDraining)
        let fifth = queue.append(5)
        #expect(fifth, "after the drain ends, the next to queue drains")
    }

    @Test func workThatQueuesWorkWhileRunningStaysFlat() {
        // A chain of 100,000 items, each queuing the next as it runs: drained in batches, no nesting.
        let lock = SharedStateLock(DrainQueue<Int>())
        var ran: [Int] = []
        var deepest = 0, depth = 0
        func run(_ batch: [Int]) {
            depth += 1
            defer { depth -= 1 }
            deepest = max(deepest, depth)
            for item in batch {
                ran.append(item)
                if item < 100_000, lock.withLock({ $0.append(item + 1) }) { Issue.record("a second drainer") }
            }
        }
        let first = lock.withLock { $0.append(1) }
        #expect(first)
        DrainQueue.drain(take: { batch in lock.withLock { $0.take(into: &batch) } }, run: run)
        #expect(ran == Array(1...100_000))
        #expect(deepest == 1)
        let draining = lock.withLock { $0.isDraining }
        #expect(!draining)
    }
}
