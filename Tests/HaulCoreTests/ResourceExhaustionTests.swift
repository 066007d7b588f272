import HaulCore
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread or descriptor the system refuses is an error of the call that wanted it: the pool
/// loses no body and counts no thread that did not start; a wake-up descriptor that cannot be
/// made throws and is tried again on the next use.
@Suite("Threads and descriptors refused", .timeLimit(.minutes(1)))
struct ResourceExhaustionTests {
    /// A starter that refuses (`EAGAIN`) the calls `refuses` picks by number (0 = first), and
    /// counts every call; `during` runs inside a call before it returns (another thread's call
    /// to the pool while a start is under way).
    final class Starter: Sendable {
        let calls = Atomic<Int>(0)
        let refuses: @Sendable (Int) -> Bool
        let during: SharedStateLock<(@Sendable (Int) -> Void)?>

        init(refuses: @escaping @Sendable (Int) -> Bool, during: (@Sendable (Int) -> Void)? = nil) {
            self.refuses = refuses
            self.during = SharedStateLock(during)
        }

        var start: ThreadPool.Starter {
            { [self] name, body in
                let call = calls.add(1, ordering: .relaxed).oldValue
                during.withLock { $0 }?(call)
                return refuses(call) ? EAGAIN : ThreadPool.systemStarter(name, body)
            }
        }
    }

    /// Waits until `body` ran on `threads` and returns the pool's thread count meanwhile.
    private func runAndWait(_ threads: ThreadPool) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            do throws(ResourceError) {
                try threads.run(name: "haul-test") { continuation.resume(returning: threads.threadCount) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    @Test("a refused thread throws, the body never runs and the pool counts no thread")
    func refusedThreadThrows() async throws {
        // Given a pool whose first thread start is refused
        let starter = Starter(refuses: { $0 == 0 })
        let threads = ThreadPool(idleLifetime: .seconds(60), starter: starter.start)
        let ran = Atomic<Bool>(false)

        // When a body asks for a thread
        var thrown: ResourceError?
        do throws(ResourceError) {
            try threads.run(name: "haul-test") { ran.store(true, ordering: .relaxed) }
        } catch {
            thrown = error
        }

        // Then the call throws and nothing is counted or left waiting
        #expect(thrown?.resource == .thread)
        #expect(thrown?.message.hasPrefix("cannot start a thread: ") == true)
        #expect(threads.threadCount == 0)
        // and the next body gets a thread of its own: only one thread is alive
        #expect(try await runAndWait(threads) == 1)
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
        #expect(threads.threadCount == 1)
    }

    @Test("runAlone throws when its thread is refused")
    func refusedLoneThreadThrows() {
        let threads = ThreadPool(starter: Starter(refuses: { _ in true }).start)
        #expect(throws: ResourceError.self) { try threads.runAlone(name: "haul-test") {} }
        #expect(threads.threadCount == 0)
    }

    @Test("a body queued at the cap behind a thread that was refused gets a new thread")
    func strandedBodyGetsAThread() async throws {
        // Given a pool of one thread whose first start is refused while another body arrives
        // (at the cap, that body waits for the thread being started)
        let holder = SharedStateLock<ThreadPool?>(nil)
        let second = AsyncStream<Int>.makeStream()
        let starter = Starter(refuses: { $0 == 0 }, during: { call in
            guard call == 0, let threads = holder.withLock({ $0 }) else { return }
            #expect(throws: Never.self) {
                try threads.run(name: "haul-test") { second.continuation.yield(threads.threadCount) }
            }
        })
        let threads = ThreadPool(maximumThreads: 1, idleLifetime: .seconds(60), starter: starter.start)
        holder.withLock { $0 = threads }

        // When the first body's thread is refused
        #expect(throws: ResourceError.self) { try threads.run(name: "haul-test") {} }

        // Then the waiting body runs on a new thread, the only one counted
        var bodies = second.stream.makeAsyncIterator()
        #expect(await bodies.next() == 1)
        let starts = starter.calls.load(ordering: .relaxed)
        #expect(starts == 2)
        #expect(threads.threadCount == 1)
    }

    @Test("with no thread at all, a body queued behind a refused one runs on the caller")
    func strandedBodyRunsOnTheCaller() {
        let holder = SharedStateLock<ThreadPool?>(nil)
        let ranOn = SharedStateLock<String?>(nil)
        let starter = Starter(refuses: { _ in true }, during: { call in
            guard call == 0, let threads = holder.withLock({ $0 }) else { return }
            #expect(throws: Never.self) {
                try threads.run(name: "haul-test") { ranOn.withLock { $0 = String(describing: pthread_self()) } }
            }
        })
        let threads = ThreadPool(maximumThreads: 1, starter: starter.start)
        holder.withLock { $0 = threads }

        #expect(throws: ResourceError.self) { try threads.run(name: "haul-test") {} }

        #expect(ranOn.withLock { $0 } == String(describing: pthread_self()))
        #expect(threads.threadCount == 0)
    }

    @Test("a wake-up descriptor that cannot be made throws, remembers a signal and is tried again")
    func wakeupDescriptorRefused() throws {
        // Given an opener that fails once with EMFILE
        let attempts = Atomic<Int>(0)
        let wakeup = WakeupDescriptor(open: { read, write in
            if attempts.add(1, ordering: .relaxed).oldValue == 0 { return EMFILE }
            return WakeupDescriptor.systemOpener(&read, &write)
        })
        wakeup.signal()

        // When it is first asked for, it throws a descriptor error
        #expect(throws: ResourceError.self) { _ = try wakeup.pollDescriptor }

        // Then the next use makes it, readable from the signal before
        var fds = [pollfd(fd: try wakeup.pollDescriptor, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&fds, 1, 0) == 1)
        let made = attempts.load(ordering: .relaxed)
        #expect(made == 2)
    }

    @Test("a cancellation signal without a descriptor throws from pollDescriptor; sleep still ends on cancel")
    func cancellationWithoutDescriptor() async {
        let signal = CancellationSignal(wakeup: WakeupDescriptor(open: { _, _ in EMFILE }))
        var thrown: ResourceError?
        do throws(ResourceError) {
            _ = try signal.pollDescriptor
        } catch {
            thrown = error
        }
        #expect(thrown?.resource == .descriptor)
        #expect(thrown?.message.hasPrefix("cannot create a wake-up descriptor: ") == true)

        // Longer than the suite's time limit: only the cancellation can end it in time.
        let slept = Task.detached { signal.sleep(for: .seconds(600)) }
        try? await Task.sleep(for: .milliseconds(50))   // usually asleep by then; either way it must end
        signal.cancel()
        #expect(await slept.value == false)
    }
}
