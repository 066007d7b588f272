import Foundation
@testable import HaulCLI
import HaulTestSupport
import Testing

/// `haul demo`: two verified downloads from the built-in server, the speed-up, nothing left behind.
///
/// Exclusive: the demo's server caps each connection and the test asks for the speed-up of three connections over one.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(1)))
struct DemoTests {
    @Test func theDemoDownloadsTwiceVerifiesAndRemovesItsFiles() async throws {
        try await withTemporaryDirectory { temporary in
            // 32 MiB: one connection capped at 40 MiB/s needs at least 0.8 s, three ideally 0.27 s;
            // the speed-up asked for below holds unless each run spends 1.8 s more on other work.
            let outcome = try await HaulProcess(["demo", "--size=32M", "--connections=3"], in: temporary,
                                                environment: ["TMPDIR": temporary.path]).finish()
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(outcome.standardOutput.isEmpty)
            let lines = outcome.standardError.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("haul demo: a built-in server on http://127.0.0.1:") == true, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("1 of 2: haul -x 1 http://127.0.0.1:") }, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("2 of 2: haul -x 3 http://127.0.0.1:") }, "\(lines)")
            #expect(lines.filter { $0.hasPrefix("haul-demo.bin: done, 32.0 MiB in ") }.count == 2, "the normal progress display: \(lines)")
            #expect(lines.filter { $0 == "verified: all 33554432 bytes match what the server generated." }.count == 2, "\(lines)")
            let summary = try #require(lines.first { $0.hasPrefix("1 connection: ") }, "\(lines)")
            #expect(summary.contains("; 3 connections: "), "\(summary)")
            // One connection cannot beat the server's cap, so a speed-up well above 1 means the
            // second download really was split across connections.
            let speedUp = summary.components(separatedBy: "; speed-up ").last.flatMap { Double($0.dropLast()) }
            #expect((speedUp ?? 0) >= 1.3, "\(summary)")
            #expect(lines.last == "Removed the demo files.")
            #expect(listFiles(temporary).isEmpty, "the demo folder is gone")
        }
    }

    @Test func aProgramWithoutAServerSaysSoInOneLine() async {
        let terminal = CapturedTerminal()
        let status = await HaulCommand.run(arguments: ["demo", "--size=1M"], terminal: terminal)
        #expect(status == 1)
        #expect(terminal.standardError == "haul: demo: this program has no built-in server; run `haul demo`\n")
    }

    @Test func theSummaryGivesBothTimesAndTheSpeedUp() {
        #expect(Demo.summary(size: 512 << 20, connections: 4, single: 12.8, multiple: 3.2)
                == "1 connection: 12.8s (40.0 MiB/s); 4 connections: 3.2s (160.0 MiB/s); speed-up 4.0x")
        #expect(Demo.summary(size: 1 << 20, connections: 1, single: 1, multiple: 1)
                == "1 connection: 1.0s (1.0 MiB/s); 1 connection: 1.0s (1.0 MiB/s); speed-up 1.0x")
    }

    @Test func theDefaultsFitTheContract() {
        #expect(DemoOptions().size == 512 << 20 && DemoOptions().connections == 4)
        // One connection at the cap takes 12.8 s for the default size: the whole demo stays well under a minute.
        #expect(Double(DemoOptions().size) / Double(Demo.connectionCap) <= 15)
    }
}
