import Foundation
import HaulServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 4, what a waiting `haul` does with the machine and with a head that trickles in.
///
/// Exclusive: it measures the CPU time of a waiting `haul`, and a head trickles in until the deadline.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(1)))
struct HostileWaitCLITests {
    /// A head that trickles (a line every 100 ms) is held to the header deadline: exit 4 after
    /// one retry, as for the other network failures in ``HostileWireCLITests``.
    @Test func aTricklingHeadIsRetriedOnceThenExitsFour() async throws {
        try await HostileWireCLITests.expectRetriedOnceThenExitFour(path: "/trickle-headers?interval=100", code: "headerTimeout", files: [])
    }

    /// While it waits (for a head, for body bytes, for a 1-byte-per-second trickle, between two
    /// attempts), `haul` sleeps in the kernel: under 5% of one core over 2 s, measured from
    /// `/proc/PID/stat`. A correctness check against busy polling (a spin takes ~100%), not a
    /// benchmark. The kernel counts CPU time in 10 ms ticks: 5% of 2 s allows 10 of them, and
    /// the trickle's progress (the ticker, the redraws) took 2-3 over 3 s in a debug build on
    /// an idle machine (be73618 and later alike) and 4 under the full suite's load. The four
    /// waiting processes run side by side over the same 2 s: a waiting one takes no CPU from
    /// the others, and one that spins shows in its own count.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat")))
    func waitingDoesNotSpinTheCPU() async throws {
        let server = try HaulServer()
        ScriptedFile(size: 100_000) { _ in .trickle(interval: 1) }.install(on: server, at: "/trickle.bin")
        let refusing = try RefusingPort()
        let scenarios = ["silent server": server.url("/silent"),
                         "stalled body": server.url("/bytes/100000/s.bin?stall-after=1000"),
                         "trickle": server.url("/trickle.bin"), "retry wait": refusing.url("/r.bin")]
        try await withTemporaryDirectory { dir async throws in
            var waiting: [(scenario: String, process: Process)] = []
            defer { for (_, process) in waiting where process.isRunning { process.terminate() } }
            for (scenario, url) in scenarios.sorted(by: { $0.key < $1.key }) {
                let folder = dir.appendingPathComponent(scenario.replacingOccurrences(of: " ", with: "-"))
                let process = try HaulBinary.prepare(["--retry-connrefused", "--retries=1", "--retry-wait=20", "-d", folder.path, url],
                                                     outputIn: folder.appendingPathComponent("output"), workingDirectory: dir,
                                                     environment: ProcessInfo.processInfo.environment)
                try process.run()
                waiting.append((scenario, process))
            }
            var before: [Double] = []
            for (_, process) in waiting { before.append(try await settledCPUTime(of: process)) }
            let start = ContinuousClock.now
            try await Task.sleep(for: .seconds(2))
            let wall = (ContinuousClock.now - start).secondsValue
            for ((scenario, process), used) in zip(waiting, before) {
                let after = try #require(cpuTime(of: process.processIdentifier))
                #expect(process.isRunning, "\(scenario): still waiting")
                #expect(after - used < wall * 0.05, "\(scenario): used \(after - used) s of CPU in \(wall) s")
                _ = kill(process.processIdentifier, SIGINT)
            }
            for (scenario, process) in waiting {
                #expect(await eventually(timeout: .seconds(10)) { !process.isRunning }, "\(scenario)")
                #expect(process.terminationStatus == 130, "\(scenario)")
            }
        }
    }

    /// The CPU time of `process` once it has started, connected and begun to wait: it stops
    /// moving for 100 ms (however long a loaded machine takes to start it). A process that spins
    /// never gets there (5 s at most), and the window after it shows it.
    private func settledCPUTime(of process: Process) async throws -> Double {
        var before = try #require(cpuTime(of: process.processIdentifier))
        for _ in 0..<50 {
            try await Task.sleep(for: .milliseconds(100))
            let now = try #require(cpuTime(of: process.processIdentifier))
            if now == before { break }
            before = now
        }
        return before
    }
}

/// User plus system CPU seconds of a running process, from `/proc/PID/stat` (Linux).
private func cpuTime(of pid: Int32) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = text.lastIndex(of: ")") else { return nil }
    // After "pid (comm)": state is field 3, utime 14, stime 15.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

extension Duration {
    fileprivate var secondsValue: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
