import Foundation
import Haul
@testable import HaulCLI
import HaulServer
import HaulTestSupport
import Testing

/// `--engine=urlsession`: the same command, the same files and exit codes, over `URLSession`.
@Suite(.timeLimit(.minutes(1)))
struct TransportCLITests {
    @Test(arguments: [(["--engine=urlsession"], Downloader.Transport.urlSession), (["--engine", "native"], .native),
                      ([String](), .native)])
    func theEngineOptionChoosesTheTransport(case: (arguments: [String], transport: Downloader.Transport)) throws {
        guard case .download(let options) = try ArgumentParser.parse(`case`.arguments + ["http://h/"]) else {
            Issue.record("not a download")
            return
        }
        let runner = Runner(options: options, terminal: CapturedTerminal(currentDirectory: URL(fileURLWithPath: "/work/here")))
        #expect(runner.configuration.transport == `case`.transport)
    }

    @Test func aSplitDownloadOverURLSessionIsByteIdentical() async throws {
        let server = try HaulServer()
        let size = 6 * 1024 * 1024 + 3
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["--engine=urlsession", "-x", "4", "-d", dir.path, server.url("/bytes/\(size)/big.bin")], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(listFiles(dir) == ["big.bin"])
            #expect(fileContents(dir.appendingPathComponent("big.bin")) == served(size))
            #expect(server.requests.count >= 4, "split into ranged requests")
            #expect(server.requests.allSatisfy { $0.header("Accept-Encoding") == "identity" })
        }
    }

    /// A head of 250 lines is over Haul's own limit (exit 7) but URLSession parses it: proof that
    /// the option reaches the engine.
    @Test func theOptionReallySwitchesTheHTTPClient() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let native = try await haul(["-q", "-o", "n.txt", server.url("/headers?count=250")], in: dir)
            #expect(native.status == 7)
            let session = try await haul(["-q", "--engine=urlsession", "-o", "u.txt", server.url("/headers?count=250")], in: dir)
            #expect(session.status == 0, "\(session.standardError)")
            #expect(fileContents(dir.appendingPathComponent("u.txt")) == Data("headers\n".utf8))
        }
    }

    @Test(arguments: [("/status/404", Int32(8)), ("/redirect-to?url=file%3A%2F%2F%2Fetc%2Fpasswd", Int32(7))])
    func failuresExitWithTheSameCodes(case: (path: String, status: Int32)) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["-q", "--engine=urlsession", "-d", dir.path, server.url(`case`.path)], in: dir)
            #expect(outcome.status == `case`.status, "\(outcome.standardError)")
            #expect(outcome.standardError.hasPrefix("haul: "))
            #expect(listFiles(dir) == [])
        }
    }

    @Test func insecureIsAUsageErrorWithURLSession() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["-q", "-k", "--engine=urlsession", server.url("/bytes/10/x.bin")], in: dir)
            #expect(outcome.status == 2)
            #expect(outcome.standardError.contains("--insecure"))
            #expect(server.requests.isEmpty)
        }
    }
}
