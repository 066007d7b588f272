import HaulCore
import HaulTestSupport
import Testing

@Suite("State under a pthread mutex")
struct SharedStateLockTests {
    @Test("increments from several threads add up")
    func concurrentIncrementsAddUp() async {
        let lock = SharedStateLock(0)
        await ThreadPool(maximumThreads: 4).runTogether(4) {
            for _ in 0..<50_000 { lock.withLock { $0 += 1 } }
        }
        #expect(lock.withLock { $0 } == 200_000)
    }

    @Test("no two threads are inside at once")
    func mutualExclusion() async {
        let lock = SharedStateLock((inside: false, overlaps: 0))
        await ThreadPool(maximumThreads: 4).runTogether(4) {
            for _ in 0..<20_000 {
                lock.withLock { state in
                    if state.inside { state.overlaps += 1 }
                    state.inside = true
                    for _ in 0..<10 { state.inside = true }   // a wider window for an intruder to see it
                    state.inside = false
                }
            }
        }
        #expect(lock.withLock { $0.overlaps } == 0)
    }

    @Test("copies of a lock share one state")
    func copiesShareState() {
        let lock = SharedStateLock([String]())
        let copy = lock
        copy.withLock { $0.append("from the copy") }
        #expect(lock.withLock { $0 } == ["from the copy"])
    }

    @Test("withLock returns the body's result; a thrown error reaches the caller and leaves the lock free")
    func resultAndError() {
        struct Refused: Error {}
        let lock = SharedStateLock(1)
        #expect(lock.withLock { value -> Int in
            value += 1
            return value * 10
        } == 20)
        #expect(throws: Refused.self) {
            try lock.withLock { (_: inout Int) throws(Refused) in throw Refused() }
        }
        #expect(lock.withLock { $0 } == 2, "the lock is free after the throw")
    }
}
