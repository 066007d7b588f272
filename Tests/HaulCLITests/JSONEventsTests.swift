import Foundation
@testable import Haul
import HaulCore
import HaulHTTP
@testable import HaulCLI
import HaulTestSupport
import Testing
import HaulJSON

/// Parses one line of `--json` output back with Foundation.
private func object(_ line: String) throws -> [String: Any] {
    #expect(line.hasSuffix("\n"))
    #expect(line.dropLast().contains("\n") == false)
    let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8))
    return try #require(parsed as? [String: Any])
}

@Suite struct JSONEventsTests {
    @Test(arguments: [
        ("plain", #""plain""#),
        ("quote \" and backslash \\", #""quote \" and backslash \\""#),
        ("line\nbreak\r\ttab", #""line\nbreak\r\ttab""#),
        ("\u{01}\u{08}\u{0C}\u{1F}\u{7F}", #""\u0001\b\f\u001f\u007f""#),
        ("é 日本 🚀 /slash", "\"é 日本 🚀 /slash\""),
        ("", #""""#),
    ])
    func stringsAreEscaped(input: String, expected: String) throws {
        let encoded = JSONWriter.text(.string(input))
        #expect(encoded == expected)
        let decoded = try JSONSerialization.jsonObject(with: Data(encoded.utf8), options: .fragmentsAllowed)
        #expect(decoded as? String == input)
    }

    @Test func nonFiniteNumbersBecomeNull() {
        #expect(JSONWriter.text(.double(.nan)) == "null")
        #expect(JSONWriter.text(.double(.infinity)) == "null")
        #expect(JSONWriter.text(.double(1.2e7)) == "12000000.0")
        #expect(JSONWriter.text(.double(0.04)) == "0.04")
    }

    @Test func startedHasEveryField() throws {
        let line = JSONEvent.started(id: "1", url: "https://h/f?sig=REDACTED", file: "/abs/f \"x\"", total: 1_048_576,
                                     resumedFrom: 0, connections: 4).line
        #expect(line == #"{"event":"started","id":"1","url":"https://h/f?sig=REDACTED","file":"/abs/f \"x\"","total":1048576,"resumedFrom":0,"connections":4}"# + "\n")
        let fields = try object(line)
        #expect(fields["file"] as? String == "/abs/f \"x\"")
        #expect(fields["total"] as? Int == 1_048_576)
    }

    @Test func unknownTotalAndEtaAreNull() throws {
        let started = try object(JSONEvent.started(id: "2", url: "u", file: "/f", total: nil, resumedFrom: 5, connections: 1).line)
        #expect(started["total"] is NSNull)
        #expect(started["resumedFrom"] as? Int == 5)
        let progress = try object(JSONEvent.progress(id: "2", bytes: 10, total: nil, speed: 2.5, eta: nil).line)
        #expect(progress["event"] as? String == "progress")
        #expect(progress["bytes"] as? Int == 10)
        #expect(progress["total"] is NSNull)
        #expect(progress["eta"] is NSNull)
        #expect(progress["speed"] as? Double == 2.5)
    }

    @Test func progressWithKnownTotal() throws {
        let line = JSONEvent.progress(id: "1", bytes: 524_288, total: 1_048_576, speed: 1.2e7, eta: 0.04).line
        #expect(line == #"{"event":"progress","id":"1","bytes":524288,"total":1048576,"speed":12000000.0,"eta":0.04}"# + "\n")
        let fields = try object(line)
        #expect(fields["eta"] as? Double == 0.04)
    }

    @Test func retryingCarriesTheError() throws {
        let error = DownloadError(.connectionReset, "connection reset by 127.0.0.1")
        let fields = try object(JSONEvent.retrying(id: "1", attempt: 2, delay: 1.5, error: error).line)
        #expect(fields["event"] as? String == "retrying")
        #expect(fields["attempt"] as? Int == 2)
        #expect(fields["delay"] as? Double == 1.5)
        let nested = try #require(fields["error"] as? [String: Any])
        #expect(nested["code"] as? String == "connectionReset")
        #expect(nested["message"] as? String == "connection reset by 127.0.0.1")
    }

    @Test func finishedHasOptionalChecksumAndSkip() throws {
        let plain = JSONEvent.finished(id: "1", file: "/f", bytes: 3, sha256: nil, skipped: false).line
        #expect(plain == #"{"event":"finished","id":"1","file":"/f","bytes":3}"# + "\n")
        let full = try object(JSONEvent.finished(id: "1", file: "/f", bytes: 3, sha256: "ab", skipped: true).line)
        #expect(full["sha256"] as? String == "ab")
        #expect(full["skipped"] as? Bool == true)
    }

    @Test func failedCarriesExitCodeErrorAndPartial() throws {
        let error = DownloadError(.rangeMismatch, "server answered bytes 0-9 for 10-19\n\"quoted\"")
        let line = JSONEvent.failed(id: "3", exitCode: 7, error: error, partial: "/d/f.part").line
        let fields = try object(line)
        #expect(fields["exitCode"] as? Int == 7)
        #expect(fields["partial"] as? String == "/d/f.part")
        let nested = try #require(fields["error"] as? [String: Any])
        #expect(nested["code"] as? String == "rangeMismatch")
        #expect(nested["message"] as? String == error.message)
        let none = try object(JSONEvent.failed(id: "3", exitCode: 7, error: error, partial: nil).line)
        #expect(none["partial"] is NSNull)
    }

    @Test func reporterSendsTheLastProgressBeforeFinished() throws {
        let terminal = CapturedTerminal()
        let reporter = Reporter(style: .json, terminal: terminal, displayURLs: ["http://h/file.bin?token=REDACTED"])
        let file = URL(fileURLWithPath: "/tmp/haul-json-test/file.bin")
        reporter.started(0, DownloadStart(redactedURL: "ignored", fileURL: file, totalBytes: 100, resumedFrom: 0,
                                       connections: 1, response: ResponseHead(status: 200)), at: .zero)
        for (bytes, millis) in [(10, 0), (20, 50), (30, 80), (60, 120), (90, 150)] {
            reporter.progress(0, DownloadProgress(completedBytes: Int64(bytes), totalBytes: 100, bytesPerSecond: 1000,
                                               estimatedTimeRemaining: 0.1), at: .milliseconds(millis))
        }
        reporter.finished(0, DownloadResult(response: ResponseHead(status: 200), fileURL: file, byteCount: 100, skipped: false),
                          at: .milliseconds(200))
        let lines = terminal.standardOutput.split(separator: "\n").map { String($0) + "\n" }
        let events = try lines.map(object)
        #expect(events.map { $0["event"] as? String } == ["started", "progress", "progress", "progress", "finished"])
        // Throttled to one per 100 ms: 10 (t=0) and 60 (t=120) pass, 90 is held and flushed before finished.
        #expect(events[1...3].map { $0["bytes"] as? Int } == [10, 60, 90])
        #expect(events[0]["url"] as? String == "http://h/file.bin?token=REDACTED")
        #expect(events[4]["file"] as? String == file.path)
        #expect(terminal.standardError.isEmpty)
    }

    @Test func reporterFailurePrintsOneLineAndTheEvent() throws {
        let terminal = CapturedTerminal()
        let reporter = Reporter(style: .json, terminal: terminal, displayURLs: ["http://h/a", "http://h/b", "http://h/c", "http://h/x"])
        reporter.failed(3, DownloadError(.httpStatus, "server answered 404 Not Found", httpStatus: 404), interrupted: false, at: .zero)
        #expect(terminal.standardError == "haul: http://h/x: server answered 404 Not Found\n")
        let fields = try object(terminal.standardOutput)
        #expect(fields["event"] as? String == "failed")
        #expect(fields["id"] as? String == "4")
        #expect(fields["exitCode"] as? Int == 8)
        #expect(fields["partial"] is NSNull)
    }
}
