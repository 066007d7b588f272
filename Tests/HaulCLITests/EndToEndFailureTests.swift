import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// Failures of the real `haul` binary: exact exit status, one stderr line, no file left behind.
@Suite(.throttled, .timeLimit(.minutes(1)))
struct EndToEndFailureTests {
    /// Short timeouts and no retries, so failures end fast.
    static let fast = ["--retries=0", "--connect-timeout=2", "--stall-timeout=1", "--header-timeout=2"]

    @Test(arguments: [
        ("/status/404", Int32(8), "the server answered 404 Not Found"),
        ("/status/410", 8, "the server answered 410 Gone"),
        ("/status/403", 6, "the server refused access (403 Forbidden)"),
        ("/status/401", 6, "the server refused access (401 Unauthorized)"),
        ("/bytes/100/n.bin?status=404", 8, "the server answered 404 Not Found"),
    ])
    func statusesExitWithTheirCodeAndWriteNoFile(path: String, status: Int32, message: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let url = server.url(path)
            let outcome = try await haul(Self.fast + ["-d", dir.path, url], in: dir)
            #expect(outcome.status == status)
            #expect(outcome.standardOutput.isEmpty)
            #expect(outcome.errorLines == ["haul: \(url): \(message)"])
            #expect(listFiles(dir) == [])
        }
    }

    @Test(arguments: [("/garbage", Int32(7), "malformedResponse"), ("/loop", 7, "tooManyRedirects"),
                      ("/redirect/30", 7, "tooManyRedirects"), ("/chunked?mode=nonhex", 7, "invalidChunk")])
    func protocolErrorsExitSeven(path: String, status: Int32, code: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let url = server.url(path)
            let outcome = try await haul(Self.fast + ["--json", "-d", dir.path, url], in: dir)
            #expect(outcome.status == status)
            #expect(outcome.errorLines.count == 1)
            #expect(outcome.errorLines.first?.hasPrefix("haul: \(url): ") == true, "\(outcome.standardError)")
            let failed = try #require(outcome.jsonEvents().last)
            #expect(failed["event"] as? String == "failed")
            #expect(jsonInteger(failed["exitCode"]) == Int64(status))
            #expect((failed["error"] as? [String: Any])?["code"] as? String == code)
            #expect(listFiles(dir) == [])
        }
    }

    @Test func aRefusedPortExitsFour() async throws {
        let refusing = try RefusingPort()
        try await withTemporaryDirectory { dir in
            let url = refusing.url("/file.bin")
            let outcome = try await haul(Self.fast + ["-d", dir.path, url], in: dir)
            #expect(outcome.status == 4)
            #expect(outcome.standardOutput.isEmpty)
            #expect(outcome.errorLines == ["haul: \(url): connection to 127.0.0.1 port \(refusing.port) refused; "
                                           + "--retry-connrefused retries it"])
            #expect(listFiles(dir) == [])
        }
    }

    @Test func aRefusedPortIsRetriedThenExitsFour() async throws {
        let refusing = try RefusingPort()
        try await withTemporaryDirectory { dir in
            let url = refusing.url("/file.bin")
            let outcome = try await haul(["--retry-connrefused", "--retries=1", "--retry-wait=0.1", "--connect-timeout=2",
                                          "-d", dir.path, url], in: dir)
            #expect(outcome.status == 4)
            let lines = outcome.errorLines
            #expect(lines.count == 2, "\(lines)")
            #expect(lines.first?.hasPrefix("haul: \(url): connection to 127.0.0.1 port \(refusing.port) refused; retrying in ") == true,
                    "\(lines)")
            #expect(lines.first?.hasSuffix("(attempt 1)") == true, "\(lines)")
            #expect(lines.last == "haul: \(url): connection to 127.0.0.1 port \(refusing.port) refused")
            #expect(listFiles(dir) == [])
        }
    }

    /// A list on a host that refuses: the first download uses its retries, the others try once.
    @Test func aListOnARefusingHostRetriesOnceForTheHostThenFailsFast() async throws {
        let refusing = try RefusingPort()
        try await withTemporaryDirectory { dir in
            let urls = ["/a.bin", "/b.bin", "/c.bin"].map { refusing.url($0) }
            let outcome = try await haul(["--retry-connrefused", "--retries=2", "--retry-wait=0.05", "--connect-timeout=2", "-j", "1",
                                          "-d", dir.path] + urls,
                                         in: dir)
            #expect(outcome.status == 4)
            let refused = "connection to 127.0.0.1 port \(refusing.port) refused"
            let lines = outcome.errorLines
            #expect(lines.filter { $0.hasPrefix("haul: \(urls[0]): \(refused); retrying in ") }.count == 2, "\(lines)")
            #expect(lines.contains("haul: \(urls[0]): \(refused)"), "\(lines)")
            for url in urls.dropFirst() {
                #expect(lines.filter { $0.hasPrefix("haul: \(url): ") }
                        == ["haul: \(url): \(refused) (not retried: an earlier download gave up connecting to this host)"],
                        "\(lines)")
            }
            #expect(listFiles(dir) == [])
        }
    }

    @Test func aStalledBodyExitsFourAndKeepsThePartial() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let url = server.url("/bytes/100000/stall.bin?stall-after=1000")
            let outcome = try await haul(Self.fast + ["-x1", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 4)
            #expect(outcome.errorLines.last?.hasPrefix("haul: \(url): ") == true, "\(outcome.standardError)")
            #expect(outcome.errorLines.filter { $0.hasPrefix("haul: ") }.count == 1)
            #expect(listFiles(dir).contains("stall.bin.part"))
            #expect(!listFiles(dir).contains("stall.bin"))
        }
    }

    @Test func quietPrintsOnlyTheFailureLine() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let good = server.url("/bytes/100/q.bin"), bad = server.url("/status/404")
            let outcome = try await haul(Self.fast + ["-q", "-d", dir.path, good, bad], in: dir)
            #expect(outcome.status == 8)
            #expect(outcome.standardOutput.isEmpty)
            #expect(outcome.standardError == "haul: \(bad): the server answered 404 Not Found\n")
            #expect(listFiles(dir) == ["q.bin"])
        }
    }
}
