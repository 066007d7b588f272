import Foundation
import Haul
@testable import HaulCLI
import HaulServer
import HaulTestSupport
import Testing

/// Runs the command in-process with a captured terminal.
private func run(_ arguments: [String], standardInput: String = "", directory: URL? = nil) async -> (Int32, CapturedTerminal) {
    let terminal = CapturedTerminal(currentDirectory: directory ?? URL(fileURLWithPath: "/tmp", isDirectory: true),
                                    standardInput: standardInput)
    let status = await HaulCommand.run(arguments: arguments, terminal: terminal)
    return (status, terminal)
}

@Suite struct ExitStatusTests {
    @Test(arguments: [
        ([Int32](), Int32(0)), ([Int32(0), 0], Int32(0)), ([Int32(0), 4, 7], Int32(4)), ([Int32(8), 3, 0], Int32(3)), ([Int32(9), 2, 130], Int32(2)), ([Int32(130)], Int32(130)), ([Int32(11), 10], Int32(10)),
    ])
    func lowestNonZeroStatusWins(statuses: [Int32], expected: Int32) {
        #expect(ExitStatus.combined(statuses) == expected)
    }
}

@Suite struct URLRedactionTests {
    @Test(arguments: [
        ("https://user:pass@host.example/path?a=1", "https://host.example/path?a=1"),
        ("https://host/f.iso?X-Amz-Signature=abc&X-Amz-Credential=k&X-Amz-Expires=60",
         "https://host/f.iso?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED&X-Amz-Expires=REDACTED"),  // every X-Amz-* value, as the library
        ("http://h/x?token=t&name=file&api_key=k#frag", "http://h/x?token=REDACTED&name=file&api_key=REDACTED#frag"),
        ("http://h/x?sig=a=b&flag&&", "http://h/x?sig=REDACTED&flag&&"),
        ("http://h:8080/plain", "http://h:8080/plain"),
        ("http://u@h/a b?password=x", "http://h/a b?password=REDACTED"),
        ("not a url ?session=1", "not a url ?session=REDACTED"),
        ("https://cdn/f?Policy=p&Signature=s&Key-Pair-Id=k", "https://cdn/f?Policy=REDACTED&Signature=REDACTED&Key-Pair-Id=REDACTED"),
        ("http://u:pa/ss@host:x/?a=1", "http://host:x/?a=1"),  // invalid: a password holding '/' is still removed
        ("https://h/cb#access_token=t&state=1", "https://h/cb#access_token=REDACTED&state=1"),
    ])
    func secretsAreHidden(url: String, expected: String) {
        #expect(URLRedaction.redact(url) == expected)
    }
}

@Suite struct InputURLTests {
    @Test func listsIgnoreBlankLinesAndComments() {
        let list = "# mirrors\nhttp://a/1\r\n\n   \n  http://b/2  \n\t# indented comment\nhttp://c/3"
        #expect(InputURLs.urls(inList: list) == ["http://a/1", "http://b/2", "http://c/3"])
    }

    @Test func linesEndWithLFCRLFOrALoneCRWhateverTheyHold() {
        let list = "http://a/ä\rhttp://b/2\r\n\r\n\t http://c/e\u{301}\u{1F600} \r\r\nhttp://d/%20"
        #expect(InputURLs.urls(inList: list) == ["http://a/ä", "http://b/2", "http://c/e\u{301}\u{1F600}", "http://d/%20"])
    }

    @Test(arguments: ["http://host/file", "https://h:8443/a?b=c", "HTTP://Host/x", "http://[::1]:8080/f", "http://h/ä.zip"])
    func validURLsPass(text: String) throws {
        let checked = try InputURLs.check(text)
        // The parse a download reuses is the one it would make of the URL's own text.
        if let parsed = checked.parsed {
            let own = checked.url.absoluteString
            #expect(parsed == (try DownloadRequest.checkedURL(own, parsed: URL(string: own)).parsed))
        } else {
            #expect(checked.url.absoluteString != text, "a URL kept as typed comes with its parse")
        }
    }

    /// A list long enough to be checked on several threads gives the same results, in the same
    /// order, as checking each URL on its own; bad URLs anywhere in it included.
    @Test(arguments: [1, 255, 256, 1_000, 2_049])
    func checkingAListAtOnceEqualsCheckingEachURL(count: Int) {
        let bad = Dictionary([(0, "ftp://h/f"), (count / 3, "http://a b/"), (count / 2, "http://host!/x"), (count - 1, "http://[::1")],
                             uniquingKeysWith: { first, _ in first })
        let texts = (0..<count).map { bad[$0] ?? "http://h\($0 % 7).example:\(8000 + $0 % 50)/file-\($0).bin?q=\($0)" }
        let together = InputURLs.checkAll(texts)
        #expect(together.count == count)
        for (text, result) in zip(texts, together) {
            switch (result, Result { () throws(DownloadError) in try InputURLs.check(text) }) {
            case (.success(let a), .success(let b)):
                #expect(a.url == b.url && a.parsed == b.parsed, "\(text)")
            case (.failure(let a), .failure(let b)):
                #expect(a.code == b.code && a.message == b.message, "\(text)")
            default:
                Issue.record("\(text): \(result) where one check alone gives the other outcome")
            }
        }
        #expect(together.filter { if case .failure = $0 { true } else { false } }.count == bad.count)
    }

    @Test(arguments: [
        ("http://[::1", DownloadError.Code.invalidURL), ("http://a b/", .invalidURL), ("http://h/x\u{7}", .invalidURL),
        ("http://", .invalidURL), ("http:///path", .invalidURL), ("http://h:99999/", .invalidURL),
        ("ftp://h/f", .unsupportedScheme), ("file:///etc/passwd", .unsupportedScheme), ("host/file", .unsupportedScheme),
        // Accepted by Foundation, refused by the library's own parser: refused here, before any download starts.
        ("http://host!/x", .invalidURL), ("http://[zz::1]/", .invalidURL), ("http://[fe80::1%25eth0]/", .invalidURL),
        ("http://h:0/", .invalidURL),
    ])
    func invalidURLsAreRefused(text: String, code: DownloadError.Code) {
        #expect(throws: DownloadError.self) { try InputURLs.check(text).url }
        do {
            _ = try InputURLs.check(text).url
        } catch {
            #expect(error.code == code)
            #expect(error.code.exitStatus == 2)
        }
    }
}

@Suite(.throttled) struct RunnerTests {
    @Test func badURLsExitTwoWithOneRedactedLineEachBeforeAnyDownload() async {
        let (status, terminal) = await run(["http://user:pw@h/a b?token=s", "ftp://h/f", "-q"])
        #expect(status == 2)
        #expect(terminal.standardError == """
            haul: http://h/a b?token=REDACTED: invalid URL: it contains spaces or control characters
            haul: ftp://h/f: unsupported URL scheme 'ftp': only http, https, s3 and oss are supported

            """)
        #expect(terminal.standardOutput.isEmpty)
    }

    /// A list long enough to be checked on several threads reports its bad URLs one line each,
    /// in the list's order, and downloads nothing.
    @Test func aLongListReportsItsBadURLsInOrder() async {
        var lines = (1...600).map { "http://127.0.0.1:9/file-\($0).bin" }
        lines[0] = "ftp://h/first"
        lines[299] = "http://a b/middle"
        lines[599] = "http://host!/last"
        let (status, terminal) = await run(["-q", "-i", "-"], standardInput: lines.joined(separator: "\n"))
        #expect(status == 2)
        #expect(terminal.standardError == """
            haul: ftp://h/first: unsupported URL scheme 'ftp': only http, https, s3 and oss are supported
            haul: http://a b/middle: invalid URL: it contains spaces or control characters
            haul: http://host!/last: invalid URL: the host contains a character that is not allowed in a host name

            """)
        #expect(terminal.standardOutput.isEmpty)
    }

    /// The process's own run (``HaulCommand/main(urlSession:)``) leaves the downloader and its
    /// downloads to the exit; every file is complete and named by then.
    @Test func theProcessLeavesItsDownloadsToTheExit() async throws {
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            let held = HeldUntilExit()
            let urls = (1...3).map { server.url("/bytes/\(1_000 * $0)/held-\($0).bin") }
            let terminal = CapturedTerminal(currentDirectory: dir)
            let status = await HaulCommand.run(arguments: ["-q", "-d", dir.path] + urls, terminal: terminal,
                                               urlSession: .unavailable, demo: nil, holding: held)
            #expect(status == 0, "\(terminal.standardError)")
            let objects = held.objects
            #expect(objects.count == 2)
            #expect(objects.first is Downloader, "the downloader")
            #expect((objects.last as? [DownloadToken])?.count == 3, "the token of each download")
            #expect(listFiles(dir) == ["held-1.bin", "held-2.bin", "held-3.bin"])
            for index in 1...3 {
                #expect(fileContents(dir.appendingPathComponent("held-\(index).bin")) == served(1_000 * index))
            }
        }
    }

    @Test func inputFromStandardInputIsReadAndChecked() async {
        let (status, terminal) = await run(["-i", "-"], standardInput: "# list\n\nnot-a-url\n")
        #expect(status == 2)
        #expect(terminal.standardError == "haul: not-a-url: unsupported URL: it needs http:// or https://\n")
    }

    @Test func unreadableInputFileIsALocalFileError() async {
        let (status, terminal) = await run(["-i", "/nonexistent/haul-list.txt"])
        #expect(status == 3)
        #expect(terminal.standardError == "haul: cannot read '/nonexistent/haul-list.txt': No such file or directory\n")
    }

    @Test func emptyInputListFails() async {
        let (status, terminal) = await run(["-i", "-"], standardInput: "# nothing\n\n")
        #expect(status == 1)
        #expect(terminal.standardError == "haul: no URLs in '-'\n")
    }

    @Test func outputWithSeveralListedURLsIsAUsageError() async {
        let (status, terminal) = await run(["-o", "f", "-i", "-"], standardInput: "http://a/1\nhttp://b/2\n")
        #expect(status == 2)
        #expect(terminal.standardError == "haul: --output can only be used with a single URL\nTry 'haul --help' for more information.\n")
    }

    @Test func usageErrorsPrintTheHint() async {
        let (status, terminal) = await run(["--bogus", "http://h/"])
        #expect(status == 2)
        #expect(terminal.standardError == "haul: unrecognized option '--bogus'\nTry 'haul --help' for more information.\n")
        #expect(terminal.standardOutput.isEmpty)
    }

    @Test func helpAndVersionGoToStandardOutput() async {
        let (helpStatus, help) = await run(["--help"])
        #expect(helpStatus == 0 && help.standardOutput == HelpText.download && help.standardError.isEmpty)
        let (versionStatus, version) = await run(["-V"])
        #expect(versionStatus == 0 && version.standardOutput == HelpText.version)
        let (demoHelpStatus, demoHelp) = await run(["demo", "-h"])
        #expect(demoHelpStatus == 0 && demoHelp.standardOutput == HelpText.demo)
    }
}

/// The options as the runner hands them to the library: its configuration, requests and destination.
@Suite struct RunnerConfigurationTests {
    @Test func optionsBecomeTheDownloaderConfiguration() throws {
        guard case .download(let options) = try ArgumentParser.parse([
            "--connect-timeout=2.5", "--header-timeout=4", "--stall-timeout=0.5", "-k", "--cacert", "certs/ca.pem",
            "--on-conflict=fail", "-H", "Authorization: Bearer x", "http://h/",
        ]) else { Issue.record("not a download"); return }
        let runner = Runner(options: options, terminal: CapturedTerminal(currentDirectory: URL(fileURLWithPath: "/work/here")))
        let configuration = runner.configuration
        #expect(configuration.connectTimeout == .milliseconds(2500))
        #expect(configuration.headerTimeout == .seconds(4))
        #expect(configuration.stallTimeout == .milliseconds(500))
        #expect(configuration.tls.insecure)
        #expect(configuration.tls.extraCAFile == "/work/here/certs/ca.pem")
        #expect(configuration.conflictPolicy == .fail)
        let request = runner.request(for: CheckedURL(unparsed: URL(string: "http://h/")!), index: 0)
        #expect(request.headers.map(\.name) == ["Authorization"] && request.headers.map(\.value) == ["Bearer x"])
        #expect(request.conflictPolicy == .fail)
        #expect(request.key != runner.request(for: CheckedURL(unparsed: URL(string: "http://h/")!), index: 1).key)
        #expect(!request.startOver)
        // Defaults reach the downloader unchanged.
        #expect(configuration.connectionsPerDownload == 4 && configuration.maximumActiveDownloads == 4)
        #expect(configuration.rateLimit == nil)
    }

    @Test func connectionsQueueRateAndStartOverReachTheLibrary() throws {
        guard case .download(let options) = try ArgumentParser.parse([
            "-x", "8", "-j2", "--limit-rate=512K", "--no-continue", "--retries=3", "--retry-wait=0.25", "http://h/",
        ]) else { Issue.record("not a download"); return }
        let runner = Runner(options: options, terminal: CapturedTerminal())
        let configuration = runner.configuration
        #expect(configuration.connectionsPerDownload == 8)
        #expect(configuration.maximumActiveDownloads == 2)
        #expect(configuration.rateLimit == 524_288)
        #expect(configuration.retry == RetryPolicy(maximumRetries: 3, initialDelay: .milliseconds(250)))
        #expect(runner.request(for: CheckedURL(unparsed: URL(string: "http://h/")!), index: 0).startOver)
    }

    @Test(arguments: [
        (["-o", "out/f.bin"], Destination.file(URL(fileURLWithPath: "/work/here/out/f.bin"))),
        (["-o", "/abs/f.bin"], .file(URL(fileURLWithPath: "/abs/f.bin"))),
        (["-d", "dl"], .directory(URL(fileURLWithPath: "/work/here/dl", isDirectory: true))),
        (["-d", "../up"], .directory(URL(fileURLWithPath: "/work/up", isDirectory: true))),
        ([], .directory(URL(fileURLWithPath: "/work/here", isDirectory: true))),
    ])
    func destinationFollowsOutputAndDir(arguments: [String], expected: Destination) throws {
        guard case .download(let options) = try ArgumentParser.parse(arguments + ["http://h/"]) else {
            Issue.record("not a download")
            return
        }
        let cwd = URL(fileURLWithPath: "/work/here", isDirectory: true)
        let destination = Runner(options: options, terminal: CapturedTerminal(currentDirectory: cwd)).destination
        switch (destination, expected) {
        case (.file(let got), .file(let want)), (.directory(let got), .directory(let want)):
            #expect(got.path == want.path)
        default:
            Issue.record("\(destination) is not \(expected)")
        }
    }
}
