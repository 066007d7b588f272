import HaulCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@testable import HaulCLI

/// The daemon's log output: text written from many threads keeps its order in each stream,
/// lines made later are made on the output's own thread, and a flush waits for all of it.
@Suite struct QueuedOutputTests {
    @Test func linesKeepTheirOrderAndAFlushWaitsForThem() {
        let terminal = CapturedTerminal()
        let output = QueuedOutput(terminal)
        for index in 0..<20_000 {
            if index % 2 == 0 {
                output.write("line \(index)\n", to: .error)
            } else {
                output.write(later: { ("later \(index)\n", .error) })
            }
        }
        output.write("{\"event\":\"daemon\"}\n", to: .output)
        output.flush()
        let lines = terminal.standardError.split(separator: "\n")
        #expect(lines.count == 20_000)
        #expect(lines.enumerated().allSatisfy { index, line in line == (index % 2 == 0 ? "line \(index)" : "later \(index)") })
        #expect(terminal.standardOutput == "{\"event\":\"daemon\"}\n")
    }

    @Test func aLineMadeLaterIsMadeOffTheWritersThread() {
        let terminal = CapturedTerminal()
        let output = QueuedOutput(terminal)
        let writer = pthread_self()
        let madeOn = SharedStateLock<pthread_t?>(nil)
        output.write(later: {
            madeOn.withLock { $0 = pthread_self() }
            return ("made\n", .error)
        })
        output.flush()
        #expect(terminal.standardError == "made\n")
        #expect(madeOn.withLock { $0 }.map { pthread_equal($0, writer) == 0 } == true)
    }
}
