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
    @Test func aSignalSentTheMomentTheWatchIsMadeReachesTheHandler() async throws {
        let calls = Atomic<Int>(0)
        let watch = SignalWatch(signal: SIGUSR2, exitsOnRepeat: false) { calls.add(1, ordering: .relaxed) }
        defer { watch.stop() }
        // Caught from `init` on: one signal, sent at once, arrives (it would end the test process
        // if it were not caught).
        #expect(kill(getpid(), SIGUSR2) == 0)
        #expect(await eventually(timeout: .seconds(10)) { calls.load(ordering: .relaxed) == 1 })
    }

    @Test func twoWatchesOfOneSignalBothHearItAndTheLastStopEndsTheCatch() async throws {
        let first = Atomic<Int>(0), second = Atomic<Int>(0)
        let one = SignalWatch(signal: SIGUSR1, exitsOnRepeat: false) { first.add(1, ordering: .relaxed) }
        let two = SignalWatch(signal: SIGUSR1, exitsOnRepeat: false) { second.add(1, ordering: .relaxed) }
        #expect(kill(getpid(), SIGUSR1) == 0)
        #expect(await eventually(timeout: .seconds(10)) { first.load(ordering: .relaxed) == 1 && second.load(ordering: .relaxed) == 1 })
        one.stop()
        #expect(kill(getpid(), SIGUSR1) == 0)
        #expect(await eventually(timeout: .seconds(10)) { second.load(ordering: .relaxed) == 2 })
        #expect(first.load(ordering: .relaxed) == 1, "a stopped watch hears nothing more")
        two.stop()
#if canImport(Glibc)
        var action = sigaction()
        #expect(sigaction(SIGUSR1, nil, &action) == 0)
        #expect(unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_DFL, to: Int.self),
                "the default action is back")
#endif
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
