@testable import Haul
import Synchronization
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Threads, buffers and wake-ups reused or made on demand", .exclusive, .serialized)
struct ThreadReuseTests {
    /// A pool of this test's own (other tests use the shared one at the same time).
    private let threads = ThreadPool()

    /// Runs `body` on a thread of ``threads`` and waits for it.
    private func onPoolThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            threads.run { continuation.resume(returning: body()) }
        }
    }

    @Test("a finished pool thread runs the next body (no new thread)")
    func threadIsReused() async {
        let first = await onPoolThread { String(describing: pthread_self()) }
        try? await Task.sleep(for: .milliseconds(20))   // let it park
        let second = await onPoolThread { String(describing: pthread_self()) }
        #expect(first == second)
    }

    @Test("bodies started together run at the same time (each waits for the other)", .timeLimit(.minutes(1)))
    func bodiesRunConcurrently() async {
        let a = CancellationSignal(), b = CancellationSignal()
        async let first: Bool = onPoolThread { b.cancel(); return !a.sleep(for: .seconds(20)) }
        async let second: Bool = onPoolThread { a.cancel(); return !b.sleep(for: .seconds(20)) }
        let (x, y) = await (first, second)
        #expect(x && y)
    }

    @Test("a given-back buffer is handed out again; trim frees the idle ones")
    func buffersAreReused() {
        let pool = ReceiveBuffers()
        let one = pool.take(size: 128 * 1024)
        pool.give(one)
        let again = pool.take(size: 128 * 1024)
        #expect(again.baseAddress == one.baseAddress)
        let other = pool.take(size: 256 * 1024)
        #expect(other.count == 256 * 1024)
        #expect(Int(bitPattern: other.baseAddress) % 4096 == 0)
        pool.give(again)
        pool.give(other)
        pool.trim()
        let fresh = pool.take(size: 64 * 1024)
        #expect(fresh.count == 64 * 1024)
        fresh.deallocate()
    }

    @Test("every buffer given back is kept idle, up to 64, and handed out again")
    func buffersOutAtOnceAreKept() {
        let pool = ReceiveBuffers()
        let first = (0..<16).map { _ in pool.take(size: 64 * 1024) }
        for buffer in first { pool.give(buffer) }
        #expect(pool.idleCount == 16)
        let second = (0..<16).map { _ in pool.take(size: 64 * 1024) }
        #expect(pool.idleCount == 0)
        #expect(Set(second.map(\.baseAddress)) == Set(first.map(\.baseAddress)))
        let more = second + (0..<49).map { _ in pool.take(size: 64 * 1024) }
        for buffer in more { pool.give(buffer) }
        #expect(pool.idleCount == pool.maximumIdle, "65 given back, 64 kept")
        pool.trim()
        #expect(pool.idleCount == 0)
    }

    @Test("a buffer of another size is freed when one of a new size is made")
    func anotherSizeMakesRoom() {
        let pool = ReceiveBuffers()
        let small = (0..<2).map { _ in pool.take(size: 64 * 1024) }
        for buffer in small { pool.give(buffer) }
        let large = pool.take(size: 128 * 1024)
        #expect(large.count == 128 * 1024)
        #expect(pool.idleCount == 1, "one idle 64 KiB buffer freed for the 128 KiB one")
        pool.give(large)
        pool.trim()
    }

    @Test("a signal before the descriptor exists leaves it readable; drain empties it")
    func wakeupIsLazy() {
        let wakeup = WakeupDescriptor()
        wakeup.signal()
        var fds = [pollfd(fd: wakeup.pollDescriptor, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&fds, 1, 0) == 1)
        wakeup.drain()
        fds[0].revents = 0
        #expect(poll(&fds, 1, 0) == 0)
        wakeup.signal()
        #expect(poll(&fds, 1, 0) == 1)
    }

    @Test("cancelling a signal cancels its children, never the other way round")
    func childSignals() {
        let parent = CancellationSignal(), child = CancellationSignal(), removed = CancellationSignal()
        _ = parent.addChild(child)
        let token = parent.addChild(removed)
        parent.removeChild(token)
        child.cancel()
        #expect(!parent.isCancelled)
        let second = CancellationSignal()
        _ = parent.addChild(second)
        parent.cancel()
        #expect(second.isCancelled)
        #expect(!removed.isCancelled)
        let late = CancellationSignal()
        #expect(parent.addChild(late) == nil)
        #expect(late.isCancelled)
    }
}
