import Foundation
import Haul
@testable import HaulCLI
import HaulServer
import HaulTestSupport
import Testing

/// Several downloads on a terminal: the command draws one line per running download and a total
/// line, redrawn in place while they run, and leaves a line per finished file and the total.
///
/// Exclusive: downloads paced at 400 kB/s are drawn on a terminal while they run.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(1)))
struct InteractiveProgressTests {
    @Test func severalDownloadsOnATerminalShowALineEachAndATotal() async throws {
        let server = try HaulServer()
        let names = ["one.bin", "two.bin", "three.bin"]
        for (index, name) in names.enumerated() {
            // About 1.5 s each, so the display is drawn many times while two run at once.
            server.setResource("/\(name)", HaulServer.Resource(size: 600_000, seed: UInt64(index + 1), rate: 400_000))
        }
        try await withTemporaryDirectory { (dir) async throws in
            let terminal = CapturedTerminal(isInteractive: true, width: 100, currentDirectory: dir)
            let run = Task {
                await HaulCommand.run(arguments: ["-j", "2", "-d", dir.path] + names.map { server.url("/\($0)") },
                                      terminal: terminal)
            }
            // Replays what was drawn so far, as a terminal shows it, until a moment with two
            // running downloads and the total line (or the run's end).
            var sawBlock: [String] = []
            let running = ContinuousClock.now
            while sawBlock.isEmpty, ContinuousClock.now - running < .seconds(20) {
                var screen = TerminalScreen(width: 100)
                screen.apply(terminal.standardError)
                let lines = screen.text
                let downloads = lines.filter { line in names.contains { line.hasPrefix($0 + " ") } && line.contains("%") }
                if downloads.count == 2, lines.last?.hasPrefix("Total  0/3 done, 1 queued") == true {
                    sawBlock = lines
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            let status = await run.value

            #expect(status == 0, "\(terminal.standardError)")
            #expect(!sawBlock.isEmpty, "never two download lines and the total at once: \(terminal.standardError.debugDescription)")
            #expect(terminal.standardError.contains("\u{1B}["), "a terminal's display is redrawn with escape codes")
            var screen = TerminalScreen(width: 100)
            screen.apply(terminal.standardError)
            #expect(screen.unknownEscapes.isEmpty, "\(screen.unknownEscapes)")
            #expect(!screen.overflowed)
            let lines = screen.text
            #expect(lines.count == 4, "a line per file and the total: \(lines)")
            for name in names {
                #expect(lines.filter { $0.hasPrefix("\(name): done, 585.9 KiB in ") }.count == 1, "\(lines)")
            }
            #expect(lines.last?.hasPrefix("Total: 3/3 done, 1.7 MiB in ") == true, "\(lines)")
            #expect(terminal.standardOutput.isEmpty)
            for (index, name) in names.enumerated() {
                #expect(fileContents(dir.appendingPathComponent(name)) == served(600_000, seed: UInt64(index + 1)))
            }
        }
    }
}
