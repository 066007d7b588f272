import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// `haul --json` against a `HaulServer`: every stdout line is one JSON event (`JSONEvent`
/// in Sources/HaulCLI/JSONEvents.swift).
@Suite(.throttled, .timeLimit(.minutes(1)))
struct EndToEndJSONTests {
    @Test func aDownloadIsStartedProgressFinished() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let size = 1_500_000
            let url = server.url("/bytes/\(size)/j.bin")
            let outcome = try await haul(["--json", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 0)
            #expect(outcome.standardError.isEmpty)
            let events = outcome.jsonEvents()
            #expect(events.count == outcome.outputLines.count)
            let names = eventNames(events)
            #expect(names.first == "started" && names.last == "finished", "\(names)")
            #expect(names.dropFirst().dropLast().allSatisfy { $0 == "progress" }, "\(names)")
            #expect(names.count >= 3, "at least the final progress: \(names)")
            let file = dir.appendingPathComponent("j.bin").path

            let started = try #require(events.first)
            #expect(Set(started.keys) == ["event", "id", "url", "file", "total", "resumedFrom", "connections"])
            #expect(started["id"] as? String == "1")
            #expect(started["url"] as? String == url)
            #expect(started["file"] as? String == file)
            #expect(jsonInteger(started["total"]) == Int64(size))
            #expect(jsonInteger(started["resumedFrom"]) == 0)
            let connections = try #require(jsonInteger(started["connections"]))
            #expect((1...4).contains(connections))

            let progress = events.filter { $0["event"] as? String == "progress" }
            var previous: Int64 = 0
            for event in progress {
                #expect(Set(event.keys) == ["event", "id", "bytes", "total", "speed", "eta"])
                #expect(event["id"] as? String == "1")
                #expect(jsonInteger(event["total"]) == Int64(size))
                let bytes = try #require(jsonInteger(event["bytes"]))
                #expect(bytes >= previous && bytes <= Int64(size))
                previous = bytes
                #expect(event["speed"] is NSNumber)
                #expect(event["eta"] is NSNumber)
            }
            #expect(jsonInteger(progress.last?["bytes"]) == Int64(size), "the last state is always sent")

            let finished = try #require(events.last)
            #expect(Set(finished.keys) == ["event", "id", "file", "bytes"])
            #expect(finished["id"] as? String == "1")
            #expect(finished["file"] as? String == file)
            #expect(jsonInteger(finished["bytes"]) == Int64(size))
            #expect(listFiles(dir) == ["j.bin"])
            #expect(fileContents(dir.appendingPathComponent("j.bin")) == served(size))
        }
    }

    @Test func anUnknownLengthIsNull() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["--json", "-d", dir.path, server.url("/bytes/200000/n.bin?no-length&no-ranges")], in: dir)
            #expect(outcome.status == 0)
            #expect(outcome.standardError.isEmpty)
            let events = outcome.jsonEvents()
            #expect(events.count == outcome.outputLines.count)
            let started = try #require(events.first)
            #expect(started["event"] as? String == "started")
            #expect(isJSONNull(started["total"]))
            let progress = events.filter { $0["event"] as? String == "progress" }
            #expect(!progress.isEmpty)
            for event in progress {
                #expect(isJSONNull(event["total"]))
                #expect(isJSONNull(event["eta"]))
            }
            #expect(jsonInteger(events.last?["bytes"]) == 200_000)
            #expect(events.last?["event"] as? String == "finished")
            #expect(fileContents(dir.appendingPathComponent("n.bin")) == served(200_000))
        }
    }

    @Test func severalDownloadsHaveTheirOwnIDs() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["--json", "-d", dir.path, server.url("/bytes/10/a.bin"), server.url("/status/410"),
                                          server.url("/bytes/20/b.bin")], in: dir)
            #expect(outcome.status == 8)
            let events = outcome.jsonEvents()
            #expect(events.count == outcome.outputLines.count)
            // The downloads run at once, so their events interleave; each download's are in order.
            var byID: [String: [String]] = [:]
            for event in events where event["event"] as? String != "progress" {
                byID[event["id"] as? String ?? "?", default: []].append(event["event"] as? String ?? "?")
            }
            #expect(byID == ["1": ["started", "finished"], "2": ["failed"], "3": ["started", "finished"]])
            let startedURLs = events.filter { $0["event"] as? String == "started" }.map { "\($0["id"] ?? "") \($0["url"] ?? "")" }
            #expect(Set(startedURLs) == ["1 \(server.url("/bytes/10/a.bin"))", "3 \(server.url("/bytes/20/b.bin"))"])
            #expect(listFiles(dir) == ["a.bin", "b.bin"])
        }
    }

    @Test func aFailureIsOneFailedEventAndOneStderrLine() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let url = server.url("/status/404")
            let outcome = try await haul(["--json", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 8)
            #expect(outcome.errorLines == ["haul: \(url): the server answered 404 Not Found"])
            let events = outcome.jsonEvents()
            #expect(events.count == 1 && outcome.outputLines.count == 1, "\(outcome.standardOutput)")
            let failed = try #require(events.last)
            #expect(Set(failed.keys) == ["event", "id", "exitCode", "error", "partial"])
            #expect(failed["event"] as? String == "failed")
            #expect(failed["id"] as? String == "1")
            #expect(jsonInteger(failed["exitCode"]) == 8)
            let error = try #require(failed["error"] as? [String: Any])
            #expect(Set(error.keys) == ["code", "message"])
            #expect(error["code"] as? String == "httpStatus")
            #expect(error["message"] as? String == "the server answered 404 Not Found")
            #expect(isJSONNull(failed["partial"]))
            #expect(listFiles(dir) == [])
        }
    }

    @Test func aBodyCutShortKeepsThePartialAndNamesIt() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["--json", "--retries=0", "-x1", "-d", dir.path,
                                          server.url("/bytes/200000/cut.bin?drop-after=50000")], in: dir)
            #expect(outcome.status == 4)
            let events = outcome.jsonEvents()
            #expect(events.count == outcome.outputLines.count)
            #expect(eventNames(events).first == "started")
            let failed = try #require(events.last)
            #expect(failed["event"] as? String == "failed")
            #expect(jsonInteger(failed["exitCode"]) == 4)
            #expect((failed["error"] as? [String: Any])?["code"] as? String == "truncatedBody")
            let partial = dir.appendingPathComponent("cut.bin.part").path
            #expect(failed["partial"] as? String == partial)
            #expect(listFiles(dir).contains("cut.bin.part"))
            #expect(!listFiles(dir).contains("cut.bin"))
            #expect(listFiles(dir).allSatisfy { $0.hasPrefix("cut.bin.") }, "\(listFiles(dir))")
            #expect(outcome.errorLines.count == 1)
        }
    }

    @Test func aRetryIsAnnouncedThenTheFailure() async throws {
        let refusing = try RefusingPort()
        try await withTemporaryDirectory { dir in
            let url = refusing.url("/r.bin")
            let outcome = try await haul(["--json", "--retry-connrefused", "--retries=1", "--retry-wait=0.1", "--connect-timeout=2",
                                          "-d", dir.path, url],
                                         in: dir)
            #expect(outcome.status == 4)
            let events = outcome.jsonEvents()
            #expect(events.count == outcome.outputLines.count)
            #expect(eventNames(events) == ["retrying", "failed"], "\(outcome.standardOutput)")
            let retrying = try #require(events.first)
            #expect(Set(retrying.keys) == ["event", "id", "attempt", "delay", "error"])
            #expect(jsonInteger(retrying["attempt"]) == 1)
            let delay = try #require(retrying["delay"] as? NSNumber).doubleValue
            #expect(delay >= 0 && delay <= 0.5)
            let retryError = try #require(retrying["error"] as? [String: Any])
            #expect(retryError["code"] as? String == "connectionRefused")
            let failed = try #require(events.last)
            #expect(jsonInteger(failed["exitCode"]) == 4)
            #expect((failed["error"] as? [String: Any])?["code"] as? String == "connectionRefused")
            #expect(isJSONNull(failed["partial"]))
            #expect(outcome.errorLines.count == 1)
            #expect(outcome.errorLines.first?.hasPrefix("haul: \(url): ") == true)
            #expect(listFiles(dir) == [])
        }
    }
}
