import Foundation
import HaulServer
import HaulTestSupport
import Testing
import HaulCore

/// Counts the requests a server is answering at once, from inside its route handlers.
final class ConcurrencyProbe: Sendable {
    private struct State {
        var active = 0
        var maximum = 0
        var order: [String] = []
    }
    private let state = SharedStateLock(State())

    /// The most requests answered at once so far.
    var maximum: Int { state.withLock { $0.maximum } }
    /// The paths, in the order their answers began.
    var order: [String] { state.withLock { $0.order } }

    /// Serves `/slot/NAME.bin` for every name: `size` bytes of the default content, paced to
    /// about `bytesPerSecond`, no ranges (one connection per download), then closes.
    func install(on server: HaulServer, names: [String], size: Int, bytesPerSecond: Int) {
        let body = Array(HaulServer.content().bytes(0..<Int64(size)))
        let chunk = max(1, bytesPerSecond / 50)
        for name in names {
            server.route("/slot/\(name)") { [self] request, connection in
                state.withLock { state in
                    state.active += 1
                    state.maximum = max(state.maximum, state.active)
                    state.order.append(request.path)
                }
                var ended = false
                func endBody() {
                    if !ended { state.withLock { $0.active -= 1 } }
                    ended = true
                }
                defer { endBody() }
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\nConnection: close\r\n\r\n")
                var offset = 0
                while offset < body.count {
                    let end = min(body.count, offset + chunk)
                    // Counted as ended before the last bytes go out: the client, which gives its
                    // slot to the next download as soon as it has them, cannot finish first.
                    if end == body.count { endBody() }
                    try connection.write(body[offset..<end])
                    offset = end
                    if offset < body.count { connection.sleep(seconds: 0.02) }
                }
            }
        }
    }
}

/// `-j`: how many downloads run at once, the queue behind them, and Ctrl-C over all of them.
///
/// Exclusive: downloads paced by the server are held running while the test counts and interrupts them.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(1)))
struct EndToEndQueueTests {
    @Test
    func twoOfFourRunAtOnceWithJ2() async throws {
        let server = try HaulServer()
        let probe = ConcurrencyProbe()
        let names = (1...4).map { "q\($0).bin" }
        let size = 200_000
        probe.install(on: server, names: names, size: size, bytesPerSecond: 1_000_000)
        try await withTemporaryDirectory { dir in
            let urls = names.map { server.url("/slot/\($0)") }
            let outcome = try await haul(["--json", "-j", "2", "-d", dir.path] + urls, in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(probe.maximum == 2, "the server answered \(probe.maximum) requests at once")
            let events = outcome.jsonEvents()
            #expect(events.count == outcome.outputLines.count)
            // Two started before anything finished: they ran together.
            let beforeFirstFinish = eventNames(events).prefix { $0 != "finished" }.filter { $0 == "started" }.count
            #expect(beforeFirstFinish >= 2, "\(eventNames(events))")
            let finished = events.filter { $0["event"] as? String == "finished" }.compactMap { $0["id"] as? String }
            #expect(Set(finished) == ["1", "2", "3", "4"])
            #expect(listFiles(dir) == names)
            for name in names { #expect(fileContents(dir.appendingPathComponent(name)) == served(size)) }
        }
    }

    @Test func withoutALimitBelowTheirNumberTheyAllRunAtOnce() async throws {
        let server = try HaulServer()
        let probe = ConcurrencyProbe()
        let names = (1...3).map { "all\($0).bin" }
        probe.install(on: server, names: names, size: 300_000, bytesPerSecond: 1_000_000)
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["-q", "-d", dir.path] + names.map { server.url("/slot/\($0)") }, in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(probe.maximum == 3, "the default -j 4 runs all three together")
            #expect(listFiles(dir) == names)
        }
    }

    @Test
    func withJ1TheyRunOneAfterAnotherInOrder() async throws {
        let server = try HaulServer()
        let probe = ConcurrencyProbe()
        let names = (1...3).map { "one\($0).bin" }
        probe.install(on: server, names: names, size: 100_000, bytesPerSecond: 1_000_000)
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["-q", "-j1", "-d", dir.path] + names.map { server.url("/slot/\($0)") }, in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(probe.maximum == 1)
            #expect(probe.order == names.map { "/slot/\($0)" })
        }
    }

    @Test
    func ctrlCCancelsQueuedDownloadsToo() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let slow = server.url("/bytes/50000000/big.bin?rate=2000000")
            let next = server.url("/bytes/10/next.bin")
            let outcome = try await EndToEndSignalTests.interrupt(["-q", "-j", "1", "-d", dir.path, slow, next], in: dir,
                                                                  partial: dir.appendingPathComponent("big.bin.part"), server: server)
            #expect(outcome.status == 130)
            #expect(outcome.standardError == """
                haul: \(slow): interrupted; the partial file is kept
                haul: \(next): interrupted before it started

                """)
            #expect(!listFiles(dir).contains("next.bin") && !listFiles(dir).contains("big.bin"))
            #expect(server.requests.allSatisfy { $0.path == "/bytes/50000000/big.bin" })
        }
    }

    @Test func ctrlCStopsEveryRunningDownloadAndKeepsTheirPartials() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let urls = ["a", "b"].map { server.url("/bytes/50000000/\($0).bin?rate=2000000") }
            let process = try HaulProcess(["--json", "-d", dir.path] + urls, in: dir)
            let partials = ["a", "b"].map { dir.appendingPathComponent("\($0).bin.part") }
            let both = await eventually { partials.allSatisfy { EndToEndSignalTests.size($0) > 0 } }
            #expect(both, "both downloads run at once: \(process.standardErrorSoFar)")
            process.interrupt()
            let outcome = try await process.finish(timeout: .seconds(20))
            #expect(outcome.status == 130)
            #expect(Set(outcome.errorLines) == Set(urls.map { "haul: \($0): interrupted; the partial file is kept" }),
                    "\(outcome.standardError)")
            let events = outcome.jsonEvents()
            #expect(events.count == outcome.outputLines.count)
            let failed = events.filter { $0["event"] as? String == "failed" }
            #expect(Set(failed.compactMap { $0["id"] as? String }) == ["1", "2"])
            #expect(Set(failed.compactMap { $0["partial"] as? String }) == Set(partials.map(\.path)))
            #expect(Set(listFiles(dir).filter { $0.hasSuffix(".part") }) == ["a.bin.part", "b.bin.part"])
        }
    }
}
