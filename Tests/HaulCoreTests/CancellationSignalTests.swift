import HaulCore
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("A cancellation flag that wakes sleepers and shuts down sockets")
struct CancellationSignalTests {
    /// A connected pair of stream sockets, closed after `body`.
    private func withSocketPair<T>(_ body: (Int32, Int32) throws -> T) throws -> T {
        var fds: [Int32] = [-1, -1]
        #if canImport(Glibc)
        let type = Int32(SOCK_STREAM.rawValue)
        #else
        let type = SOCK_STREAM
        #endif
        try #require(socketpair(AF_UNIX, type, 0, &fds) == 0)
        defer { fds.forEach { close($0) } }
        return try body(fds[0], fds[1])
    }

    @Test("cancel wakes a thread sleeping in sleep(for:) at once, which reports the cancellation")
    func cancelWakesSleeper() {
        let signal = CancellationSignal()
        let ready = ConditionLock(false)
        let slept = ThreadPool().startInTest { () -> Bool in
            ready.withLockBroadcasting { $0 = true }
            return signal.sleep(for: .seconds(600))   // only the cancellation ends it within the test's wait
        }
        ready.wait(until: .now + .seconds(30)) { !$0 }
        signal.cancel()
        #expect(slept.result == false)
    }

    @Test("sleep(for:) without a cancellation sleeps its time and returns true")
    func sleepRunsItsTime() {
        let signal = CancellationSignal()
        let start = ContinuousClock.now
        #expect(signal.sleep(for: .milliseconds(20)))
        // A lower bound, which no load can break.
        #expect(ContinuousClock.now >= start + .milliseconds(20))
        #expect(!signal.isCancelled)
    }

    @Test("cancel is idempotent: the flag stays set, the poll descriptor readable, a later sleep returns at once")
    func cancelIsIdempotent() throws {
        let signal = CancellationSignal()
        signal.cancel()
        signal.cancel()
        #expect(signal.isCancelled)
        var fds = [pollfd(fd: try signal.pollDescriptor, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&fds, 1, 0) == 1)
        #expect(!signal.sleep(for: .seconds(600)), "returns false, cancelled, instead of sleeping")
    }

    @Test("the poll descriptor is not readable before cancel")
    func descriptorQuietBeforeCancel() throws {
        let signal = CancellationSignal()
        var fds = [pollfd(fd: try signal.pollDescriptor, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&fds, 1, 0) == 0)
    }

    @Test("a registered socket is shut down on cancel: a blocked recv ends")
    func registeredSocketShutDown() throws {
        try withSocketPair { mine, _ in
            let signal = CancellationSignal()
            let token = try #require(signal.register(socket: mine))
            let ready = ConditionLock(false)
            let received = ThreadPool().startInTest { () -> Int in
                ready.withLockBroadcasting { $0 = true }
                var byte: UInt8 = 0
                return recv(mine, &byte, 1, 0)   // blocks: the peer sends nothing
            }
            ready.wait(until: .now + .seconds(30)) { !$0 }
            signal.cancel()
            #expect(received.result == 0, "end of stream after the shutdown")
            signal.unregister(token)
        }
    }

    @Test("an unregistered socket is left alone; register after cancel returns nil")
    func unregisteredSocketLeftAlone() throws {
        try withSocketPair { mine, peer in
            let signal = CancellationSignal()
            let token = try #require(signal.register(socket: mine))
            signal.unregister(token)
            signal.cancel()
            var byte: UInt8 = 7
            #expect(send(peer, &byte, 1, 0) == 1)
            byte = 0
            #expect(recv(mine, &byte, 1, 0) == 1)
            #expect(byte == 7)
            #expect(signal.register(socket: mine) == nil)
        }
    }

    @Test("a child is cancelled with its parent, not the other way round; one added late is cancelled at once")
    func children() {
        let parent = CancellationSignal(), child = CancellationSignal(), removed = CancellationSignal()
        let lone = CancellationSignal()
        #expect(parent.addChild(child) != nil)
        parent.removeChild(parent.addChild(removed))
        _ = lone.addChild(CancellationSignal())
        child.cancel()
        #expect(!parent.isCancelled)

        let other = CancellationSignal()
        #expect(parent.addChild(other) != nil)
        parent.cancel()
        #expect(other.isCancelled)
        #expect(!removed.isCancelled, "a removed child is not cancelled")

        let late = CancellationSignal()
        #expect(parent.addChild(late) == nil)
        #expect(late.isCancelled)
        #expect(!lone.isCancelled)
    }
}
