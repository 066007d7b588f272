import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// `-d DIR` with `-o NAME`: a relative name is inside DIR, an absolute one ignores it; a folder
/// that cannot be made fails before any request.
@Suite("CLI: -d and -o together", .throttled)
struct EndToEndOutputFolderTests {
    @Test("a relative -o lands inside -d (made when missing), nothing in the working directory")
    func relativeOutputIsInsideTheFolder() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir async throws in
            let outcome = try await haul(["-q", "-d", "out/sub", "-o", "named.bin", server.url("/bytes/5000/x.bin")], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(listFiles(dir) == ["out"])
            #expect(fileContents(dir.appendingPathComponent("out/sub/named.bin")) == served(5000))
        }
    }

    @Test("an absolute -o ignores -d")
    func absoluteOutputIgnoresTheFolder() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir async throws in
            let target = dir.appendingPathComponent("elsewhere.bin").path
            let outcome = try await haul(["-q", "-d", "unused", "-o", target, server.url("/bytes/3000/x.bin")], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(listFiles(dir) == ["elsewhere.bin"], "-d is not even created")
            #expect(fileContents(URL(fileURLWithPath: target)) == served(3000))
        }
    }

    @Test("a file in the way of -d: exit 3 and one line, before any request", arguments: [true, false])
    func blockedFolderFailsBeforeTheRequest(withOutput: Bool) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir async throws in
            try Data("not a folder".utf8).write(to: dir.appendingPathComponent("blocked"))
            let output = withOutput ? ["-o", "f.bin"] : []
            let outcome = try await haul(["-d", "blocked/inner"] + output + [server.url("/bytes/100/f.bin")], in: dir)
            #expect(outcome.status == 3)
            #expect(outcome.errorLines.count == 1, "\(outcome.standardError)")
            #expect(outcome.standardError.contains("blocked"))
            #expect(server.requests.isEmpty)
        }
    }
}

/// A connection that never gets an answer: waiting for the head counts as a stall.
@Suite("CLI: a silent server", .throttled)
struct EndToEndSilentServerTests {
    @Test("a server that accepts and never answers is dropped after --stall-timeout, not --header-timeout")
    func silenceBeforeTheHeadIsAStall() async throws {
        let server = try HaulServer()
        server.route("/silent") { _, connection in connection.waitUntilClosed() }
        try await withTemporaryDirectory { dir async throws in
            let arguments = ["--json", "--retries=0", "--stall-timeout=1", "--header-timeout=120", server.url("/silent")]
            let outcome = try await haul(arguments, in: dir, timeout: .seconds(60))
            #expect(outcome.status == 4)
            let failure = outcome.jsonEvents().last { $0["event"] as? String == "failed" }
            #expect((failure?["error"] as? [String: Any])?["code"] as? String == "stalled", "\(outcome.standardOutput)")
            #expect(listFiles(dir).isEmpty)
        }
    }

    @Test("a shorter --header-timeout still ends the wait for the head")
    func headerTimeoutStillApplies() async throws {
        let server = try HaulServer()
        server.route("/silent") { _, connection in connection.waitUntilClosed() }
        try await withTemporaryDirectory { dir async throws in
            let arguments = ["--json", "--retries=0", "--stall-timeout=120", "--header-timeout=1", server.url("/silent")]
            let outcome = try await haul(arguments, in: dir, timeout: .seconds(60))
            #expect(outcome.status == 4)
            let failure = outcome.jsonEvents().last { $0["event"] as? String == "failed" }
            #expect((failure?["error"] as? [String: Any])?["code"] as? String == "headerTimeout", "\(outcome.standardOutput)")
        }
    }
}

/// Nothing listening: a wrong port or a host that is down says so at once; `--retry-connrefused`
/// waits for a server that is restarting.
@Suite("CLI: a refused connection", .throttled)
struct EndToEndRefusedTests {
    @Test("nothing listening: exit 4 at once, one line that names --retry-connrefused, no retry", arguments: [["-q"], []])
    func refusedFailsAtOnce(extra: [String]) async throws {
        let port = try RefusingPort()
        try await withTemporaryDirectory { dir async throws in
            let outcome = try await haul(extra + ["--retry-wait=5", port.url("/f.bin")], in: dir, timeout: .seconds(30))
            #expect(outcome.status == 4)
            #expect(outcome.errorLines.count == 1, "\(outcome.standardError)")
            #expect(outcome.standardError.contains("--retry-connrefused retries it"))
            #expect(!outcome.standardError.contains("retrying"))
            #expect(listFiles(dir).isEmpty)
        }
    }

    @Test("--retry-connrefused retries, saying what it waits for, until the server listens")
    func retryConnectionRefusedWaitsForTheServer() async throws {
        let port = try SwitchablePort()
        try await withTemporaryDirectory { dir async throws in
            let process = try HaulProcess(["--retry-connrefused", "--retry-wait=0.2", "--retries=20", port.url("/f.txt").absoluteString], in: dir)
            #expect(await eventually { process.standardErrorSoFar.contains("retrying in") })
            try port.serveOnce(status: 200, body: "back again")
            let outcome = try await process.finish(timeout: .seconds(30))
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(fileContents(dir.appendingPathComponent("f.txt")) == Data("back again".utf8))
            #expect(outcome.standardError.contains("refused"))
        }
    }
}
