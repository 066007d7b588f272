import Foundation
@testable import Haul
import HaulCore
import HaulHTTP
@testable import HaulCLI
import HaulTestSupport
import Testing

private func start(_ name: String, total: Int64?) -> DownloadStart {
    DownloadStart(redactedURL: "ignored", fileURL: URL(fileURLWithPath: "/tmp/haul-reporter-test/\(name)"), totalBytes: total,
                  resumedFrom: 0, connections: 2, response: ResponseHead(status: 200))
}

private func result(_ name: String, bytes: Int64, skipped: Bool = false) -> DownloadResult {
    DownloadResult(response: ResponseHead(status: 200), fileURL: URL(fileURLWithPath: "/tmp/haul-reporter-test/\(name)"),
                   byteCount: bytes, skipped: skipped)
}

private func progress(_ bytes: Int64, of total: Int64?) -> DownloadProgress {
    DownloadProgress(completedBytes: bytes, totalBytes: total, bytesPerSecond: 1000, estimatedTimeRemaining: nil)
}

/// The ``Reporter`` with the events of several downloads interleaved, as the runner delivers them.
@Suite struct ReporterTests {
    @Test func jsonEventsOfSeveralDownloadsInterleaveWholeWithTheirOwnIDsAndThrottles() throws {
        let terminal = CapturedTerminal()
        let urls = ["http://h/a", "http://h/b", "http://h/c"]
        let reporter = Reporter(style: .json, terminal: terminal, displayURLs: urls)
        reporter.started(2, start("c.bin", total: 300), at: .zero)
        reporter.started(0, start("a.bin", total: 100), at: .milliseconds(1))
        // Both progress at the same instants: each download has its own throttle, so neither
        // holds back the other.
        for (millis, bytes) in [(10, Int64(10)), (50, 20), (120, 30)] {
            reporter.progress(0, progress(bytes, of: 100), at: .milliseconds(millis))
            reporter.progress(2, progress(bytes * 3, of: 300), at: .milliseconds(millis))
        }
        reporter.failed(1, DownloadError(.connectionRefused, "connection refused"), interrupted: false, at: .milliseconds(130))
        reporter.finished(2, result("c.bin", bytes: 300), at: .milliseconds(140))
        reporter.progress(0, progress(100, of: 100), at: .milliseconds(150))
        reporter.finished(0, result("a.bin", bytes: 100), at: .milliseconds(160))
        reporter.end(at: .milliseconds(170))

        let lines = terminal.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "")
        let events = try lines.dropLast().map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        let summary = events.map { "\($0["id"] as? String ?? "?") \($0["event"] as? String ?? "?") \($0["bytes"] as? Int ?? -1)" }
        #expect(summary == [
            "3 started -1", "1 started -1",
            "1 progress 10", "3 progress 30", "1 progress 30", "3 progress 90",
            "2 failed -1",
            "3 finished 300",
            "1 progress 100", "1 finished 100",
        ])
        #expect(events[0]["url"] as? String == "http://h/c" && events[1]["url"] as? String == "http://h/a")
        #expect(terminal.standardError == "haul: http://h/b: connection refused; --retry-connrefused retries it\n")
    }

    @Test func jsonHoldsTheLastThrottledProgressOfEachDownloadUntilItEnds() throws {
        let terminal = CapturedTerminal()
        let reporter = Reporter(style: .json, terminal: terminal, displayURLs: ["http://h/a", "http://h/b"])
        reporter.started(0, start("a", total: 100), at: .zero)
        reporter.started(1, start("b", total: 100), at: .zero)
        reporter.progress(0, progress(10, of: 100), at: .milliseconds(1))
        reporter.progress(1, progress(10, of: 100), at: .milliseconds(1))
        reporter.progress(0, progress(50, of: 100), at: .milliseconds(20))   // held
        reporter.progress(1, progress(70, of: 100), at: .milliseconds(20))   // held
        reporter.failed(1, DownloadError(.cancelled, "cancelled"), interrupted: true, at: .milliseconds(30))
        reporter.finished(0, result("a", bytes: 100), at: .milliseconds(40))
        let events = terminal.standardOutput.split(separator: "\n").map(String.init)
        #expect(events.count == 8)
        #expect(events[4].hasPrefix(#"{"event":"progress","id":"2","bytes":70,"#), "\(events)")
        #expect(events[5].hasPrefix(#"{"event":"failed","id":"2","exitCode":130,"#), "\(events)")
        #expect(events[6].hasPrefix(#"{"event":"progress","id":"1","bytes":50,"#), "\(events)")
        #expect(events[7].hasPrefix(#"{"event":"finished","id":"1","#), "\(events)")
    }

    @Test func plainProgressOfSeveralDownloadsHasEventLinesAndATotal() {
        let terminal = CapturedTerminal(isInteractive: false)
        let reporter = Reporter(style: .progress, terminal: terminal, displayURLs: ["http://h/a", "http://h/b?token=REDACTED"])
        #expect(reporter.wantsTicks)
        reporter.started(0, start("a.bin", total: 2048), at: .zero)
        reporter.retrying(1, attempt: 1, delay: 0.5, error: DownloadError(.connectionReset, "connection reset"), at: .zero)
        reporter.progress(0, progress(1024, of: 2048), at: .seconds(1))
        reporter.finished(0, result("a.bin", bytes: 2048), at: .seconds(2))
        reporter.failed(1, DownloadError(.httpStatus, "the server answered 404 Not Found", httpStatus: 404), interrupted: false,
                        at: .seconds(2))
        reporter.end(at: .seconds(2))
        #expect(terminal.standardError == """
            a.bin: started (2.0 KiB)
            haul: http://h/b?token=REDACTED: connection reset; retrying in 0.5s (attempt 1)
            a.bin: done, 2.0 KiB in 2.0s (1.0 KiB/s)
            haul: http://h/b?token=REDACTED: the server answered 404 Not Found
            Total: 1/2 done, 1 failed, 2.0 KiB in 2.0s (1.0 KiB/s)

            """)
        #expect(terminal.standardOutput.isEmpty)
    }

    @Test func oneDownloadKeepsTheSingleLine() {
        let terminal = CapturedTerminal(isInteractive: false)
        let reporter = Reporter(style: .progress, terminal: terminal, displayURLs: ["http://h/a"])
        #expect(!reporter.wantsTicks)
        reporter.started(0, start("a.bin", total: 2048), at: .zero)
        reporter.finished(0, result("a.bin", bytes: 2048), at: .seconds(2))
        reporter.end(at: .seconds(2))
        #expect(terminal.standardError == "a.bin: started (2.0 KiB)\na.bin: done, 2.0 KiB in 2.0s (1.0 KiB/s)\n")
    }

    @Test(arguments: [Reporter.Style.quiet, .progress])
    func ctrlCReportsStartedDownloadsEachAndQueuedOnesTogether(style: Reporter.Style) {
        let terminal = CapturedTerminal(isInteractive: false)
        let urls = (1...4).map { "http://h/\($0)" }
        let reporter = Reporter(style: style, terminal: terminal, displayURLs: urls)
        reporter.started(0, start("1", total: 10), at: .zero)
        let cancelled = DownloadError(.cancelled, "cancelled")
        for index in 0..<4 { reporter.failed(index, cancelled, interrupted: true, at: .seconds(1)) }
        reporter.end(at: .seconds(1))
        let failures = terminal.standardError.split(separator: "\n").filter { $0.hasPrefix("haul: ") }
        #expect(failures == ["haul: http://h/1: interrupted; the partial file is kept", "haul: interrupted; 3 downloads had not started"])
    }

    @Test func oneQueuedDownloadStoppedByCtrlCIsNamed() {
        let terminal = CapturedTerminal()
        let reporter = Reporter(style: .quiet, terminal: terminal, displayURLs: ["http://h/1"])
        reporter.failed(0, DownloadError(.cancelled, "cancelled"), interrupted: true, at: .zero)
        reporter.end(at: .zero)
        #expect(terminal.standardError == "haul: http://h/1: interrupted before it started\n")
    }

    /// The runner hands over the URLs as typed; the reporter redacts each when it first shows it.
    @Test func urlsGivenAsTypedAreShownRedactedAndPrintable() throws {
        let terminal = CapturedTerminal()
        let typed = ["http://user:hunter2@h/a?X-Amz-Signature=s3cr3t&X-Amz-Date=1", "http://h/b\u{1B}[31m"]
        let reporter = Reporter(style: .json, terminal: terminal, urlsAsGiven: typed)
        reporter.started(0, start("a", total: 10), at: .zero)
        reporter.failed(0, DownloadError(.connectionReset, "connection reset"), interrupted: false, at: .zero)
        reporter.failed(1, DownloadError(.connectionReset, "connection reset"), interrupted: false, at: .zero)
        let everything = terminal.standardOutput + terminal.standardError
        #expect(!everything.contains("hunter2") && !everything.contains("s3cr3t") && !everything.contains("\u{1B}"))
        let lines = terminal.standardError.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0] == "haul: \(HumanFormat.printable(URLRedaction.redact(typed[0]))): connection reset")
        #expect(lines[1].hasPrefix("haul: http://h/b") && lines[1].hasSuffix(": connection reset"))
        let started = try #require(try JSONSerialization.jsonObject(with: Data(terminal.standardOutput.split(separator: "\n")[0].utf8))
                                   as? [String: Any])
        #expect(started["url"] as? String == HumanFormat.printable(URLRedaction.redact(typed[0])))
    }
}
