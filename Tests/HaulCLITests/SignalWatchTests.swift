@testable import HaulCLI
import Synchronization
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct SignalWatchTests {
    @Test func aWatchedSignalReachesTheHandlerInsteadOfEndingTheProcess() async throws {
        let calls = Atomic<Int>(0)
        let watch = SignalWatch(signal: SIGUSR2, exitsOnRepeat: false) { calls.add(1, ordering: .relaxed) }
        defer { watch.stop() }
        // The source registers asynchronously and the signal is ignored until then: send it
        // again until it arrives (it would end the test process if it were not caught).
        for _ in 0..<500 where calls.load(ordering: .relaxed) == 0 {
            #expect(kill(getpid(), SIGUSR2) == 0)
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(calls.load(ordering: .relaxed) >= 1)
    }

    @Test func capturedTerminalInterruptsCallActiveWatchesOnly() {
        let terminal = CapturedTerminal()
        let calls = Atomic<Int>(0)
        let watch = terminal.watchInterrupts { calls.add(1, ordering: .relaxed) }
        terminal.interrupt()
        watch.stop()
        terminal.interrupt()
        #expect(calls.load(ordering: .relaxed) == 1)
    }
}
