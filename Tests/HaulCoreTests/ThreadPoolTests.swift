@testable import HaulCore
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

@Suite("Threads reused, capped and named")
struct ThreadPoolTests {
    /// Runs `body` on a thread of `threads` and waits for it.
    private func onPoolThread<T: Sendable>(_ threads: ThreadPool, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            threads.runInTest { continuation.resume(returning: body()) }
        }
    }

    @Test("a finished pool thread runs the next body (no new thread)")
    func threadIsReused() async {
        // A minute of idle life: on a loaded machine this task may wait seconds for its turn, and
        // a thread that retired in the meantime would be replaced by a new one.
        let threads = ThreadPool(idleLifetime: .seconds(60))
        let (first, kernelID) = await onPoolThread(threads) { (String(describing: pthread_self()), Self.kernelThreadID()) }
        await Self.waitUntilAsleep(kernelID)   // parked: a loaded machine may take a while to get it there
        let second = await onPoolThread(threads) { String(describing: pthread_self()) }
        #expect(first == second)
        #expect(threads.threadCount == 1)
    }

    @Test("bodies started together run at the same time (each waits for the other)", .timeLimit(.minutes(1)))
    func bodiesRunConcurrently() async {
        let threads = ThreadPool()
        let a = CancellationSignal(), b = CancellationSignal()
        async let first: Bool = onPoolThread(threads) { b.cancel(); return !a.sleep(for: .seconds(20)) }
        async let second: Bool = onPoolThread(threads) { a.cancel(); return !b.sleep(for: .seconds(20)) }
        let (x, y) = await (first, second)
        #expect(x && y)
    }

    @Test("beyond the cap a body waits for a thread, then runs on it", .timeLimit(.minutes(1)))
    func capMakesBodiesWait() async {
        let threads = ThreadPool(maximumThreads: 1)
        let release = CancellationSignal()
        let order = SharedStateLock<[String]>([])
        threads.runInTest {
            _ = release.sleep(for: .seconds(20))
            order.withLock { $0.append("first") }
        }
        async let second: Void = withCheckedContinuation { continuation in
            threads.runInTest {
                order.withLock { $0.append("second") }
                continuation.resume()
            }
        }
        try? await Task.sleep(for: .milliseconds(50))
        #expect(order.withLock { $0 }.isEmpty, "the second body waits while the only thread is busy")
        #expect(threads.threadCount == 1)
        release.cancel()
        await second
        #expect(order.withLock { $0 } == ["first", "second"])
    }

    /// The calling thread's kernel ID, from the `/proc/thread-self` link (`PID/task/TID`); 0 without `/proc`.
    private static func kernelThreadID() -> Int32 {
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = readlink("/proc/thread-self", &bytes, bytes.count)
        guard count > 0 else { return 0 }
        return Int32(String(decoding: bytes.prefix(count), as: UTF8.self).split(separator: "/").last ?? "") ?? 0
    }

    /// Waits until the thread `id` of this process sleeps (in the kernel's words, `S`), as a
    /// parked pool thread does; where `/proc` cannot tell, waits 100 ms.
    private static func waitUntilAsleep(_ id: Int32) async {
        for _ in 0..<1_000 {
            // "TID (comm) S ...": the state follows the last parenthesis.
            let fd = id == 0 ? -1 : open("/proc/self/task/\(id)/stat", O_RDONLY)
            guard fd >= 0 else { break }
            var bytes = [UInt8](repeating: 0, count: 512)
            let count = read(fd, &bytes, bytes.count)
            close(fd)
            guard let parenthesis = bytes.prefix(max(0, count)).lastIndex(of: UInt8(ascii: ")")), parenthesis + 2 < count else { break }
            if bytes[parenthesis + 2] == UInt8(ascii: "S") { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
        try? await Task.sleep(for: .milliseconds(100))
    }

    #if os(Linux)
    @Test("a thread carries the name of the body it runs, as the kernel shows it, also when reused")
    func threadsAreNamed() async {
        let threads = ThreadPool(idleLifetime: .seconds(60))
        let (first, kernelID) = await named(threads, "haul-segment")
        #expect(first == "haul-segment")
        await Self.waitUntilAsleep(kernelID)
        let (second, secondID) = await named(threads, "haul-write")
        #expect(secondID == kernelID)   // the same thread, named anew for its next kind of body
        #expect(second == "haul-write")
        await Self.waitUntilAsleep(kernelID)
        #expect(await named(threads, "haul-write").name == "haul-write")
    }

    /// The kernel's name and id of the thread that ran a body named `name`.
    private func named(_ threads: ThreadPool, _ name: StaticString) async -> (name: String, id: Int32) {
        await withCheckedContinuation { continuation in
            threads.runInTest(name: name) { continuation.resume(returning: (Self.kernelName(), Self.kernelThreadID())) }
        }
    }

    /// The calling thread's name in `/proc/thread-self/comm`.
    private static func kernelName() -> String {
        let fd = open("/proc/thread-self/comm", O_RDONLY)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = read(fd, &bytes, bytes.count)
        return String(decoding: bytes.prefix(max(0, count)).filter { $0 != 10 }, as: UTF8.self)
    }
    #endif

    @Test("an idle thread retires after its idle lifetime and says so", .timeLimit(.minutes(1)))
    func idleThreadsRetire() async throws {
        let retired = SharedStateLock(0)
        let threads = ThreadPool(idleLifetime: .milliseconds(20), retired: { retired.withLock { $0 += 1 } })
        await onPoolThread(threads) {}
        var waited = 0
        while threads.threadCount > 0 && waited < 200 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(threads.threadCount == 0)
        #expect(retired.withLock { $0 } == 1)
    }
}

@Suite("Wake-ups and cancellation signals")
struct SignalTests {
    @Test("a signal before the descriptor exists leaves it readable; drain empties it")
    func wakeupIsLazy() throws {
        let wakeup = WakeupDescriptor()
        wakeup.signal()
        var fds = [pollfd(fd: try wakeup.pollDescriptor, events: Int16(POLLIN), revents: 0)]
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
