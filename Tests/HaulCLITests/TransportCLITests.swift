import Foundation
import Haul
import HaulURLSession
@testable import HaulCLI
import HaulServer
import HaulTestSupport
import Testing

/// `--engine=urlsession`: the same command, the same files and exit codes, over `URLSession`.
@Suite(.throttled, .timeLimit(.minutes(1)))
struct TransportCLITests {
    @Test(arguments: [(["--engine=urlsession"], CommandOptions.Engine.urlSession), (["--engine", "native"], .native),
                      ([String](), .native)])
    func theEngineOptionIsParsed(case: (arguments: [String], engine: CommandOptions.Engine)) throws {
        guard case .download(let options) = try ArgumentParser.parse(`case`.arguments + ["http://h/"]) else {
            Issue.record("not a download")
            return
        }
        #expect(options.engine == `case`.engine)
    }

    @Test("a program that links the URLSession transport uses it; a runner sets it in the configuration")
    func aLinkedTransportReachesTheConfiguration() throws {
        let terminal = CapturedTerminal()
        let resolved = URLSessionEngine.linked(.urlSession).transport(arguments: ["--engine=urlsession"], terminal: terminal)
        #expect((try? resolved.get()) == .urlSession)
        guard case .download(let options) = try ArgumentParser.parse(["http://h/"]) else {
            Issue.record("not a download")
            return
        }
        let runner = Runner(options: options, terminal: terminal, transport: .urlSession)
        #expect(runner.configuration.transport == .urlSession)
        #expect(Runner(options: options, terminal: terminal).configuration.transport == .native)
    }

    @Test("inside another program without the transport, --engine=urlsession is a usage error (exit 2)")
    func unavailableIsAUsageError() async {
        let terminal = CapturedTerminal()
        let status = await HaulCommand.run(arguments: ["--engine=urlsession", "http://127.0.0.1:9/x"], terminal: terminal)
        #expect(status == 2)
        #expect(terminal.standardError == "haul: --engine=urlsession is not available here (it needs the haul-urlsession program)\n")
    }

    @Test("haul without haul-urlsession beside it: exit 2 and one line naming the missing program")
    func aMissingCompanionIsReported() async throws {
        try await withLoneHaul { dir, alone in
            let (status, text) = try await run(alone, ["--engine=urlsession", "-q", "http://127.0.0.1:9/x"])
            #expect(status == 2)
            #expect(text == "haul: --engine=urlsession needs \(dir.resolvingSymlinksInPath().path)/haul-urlsession: No such file or directory; "
                    + "build it with: swift build -c release --product haul-urlsession\n")
        }
    }

    @Test("a haul-urlsession that is haul again (a link or a copy) is refused, not run in a loop", arguments: [true, false])
    func aCompanionThatIsHaulAgainIsRefused(link: Bool) async throws {
        try await withLoneHaul { dir, alone in
            let companion = dir.appendingPathComponent("haul-urlsession")
            if link {
                try FileManager.default.createSymbolicLink(at: companion, withDestinationURL: alone)
            } else {
                try FileManager.default.copyItem(at: alone, to: companion)
            }
            let (status, text) = try await run(alone, ["--engine=urlsession", "-q", "http://127.0.0.1:9/x"])
            #expect(status == 2)
            #expect(text == "haul: --engine=urlsession: \(dir.resolvingSymlinksInPath().path)/haul-urlsession is not the URLSession program\n")
        }
    }

    /// Calls `body` with a temporary folder holding a copy of the built `haul` and nothing else.
    private func withLoneHaul(_ body: (URL, URL) async throws -> Void) async throws {
        let binary = try #require(HaulBinary.url)
        try await withTemporaryDirectory { dir in
            let alone = dir.appendingPathComponent("haul")
            try FileManager.default.copyItem(at: binary, to: alone)
            try await body(dir, alone)
        }
    }

    /// Runs `program` with `arguments` and returns its exit status and standard error.
    ///
    /// A copy just written can be "busy" for a moment: a process another test spawned meanwhile
    /// inherited the copy's descriptor open for writing until it runs its program. That is tried
    /// again; any other failure to start is thrown.
    private func run(_ program: URL, _ arguments: [String]) async throws -> (Int32, String) {
        for _ in 0..<50 {
            do {
                let outcome = try await runChildProcess(program, arguments)
                return (outcome.status, outcome.errorText)
            } catch let error as NSError where (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(ETXTBSY) {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let outcome = try await runChildProcess(program, arguments)
        return (outcome.status, outcome.errorText)
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
