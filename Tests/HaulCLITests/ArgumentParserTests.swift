import Haul
@testable import HaulCLI
import HaulTestSupport
import Testing

/// Parses arguments expecting a download command.
private func options(_ arguments: [String]) throws -> CommandOptions {
    guard case .download(let options) = try ArgumentParser.parse(arguments) else {
        Issue.record("expected a download command for \(arguments)")
        return CommandOptions()
    }
    return options
}

/// The usage error message for arguments expected to be refused.
private func usageError(_ arguments: [String]) -> String? {
    do {
        _ = try ArgumentParser.parse(arguments)
        return nil
    } catch {
        return error.message
    }
}

@Suite struct ArgumentParserTests {
    @Test func defaultsMatchTheContract() throws {
        let parsed = try options(["http://host/file"])
        #expect(parsed.urls == ["http://host/file"])
        #expect(parsed.output == nil && parsed.directory == nil && parsed.inputFile == nil)
        #expect(parsed.connections == 4 && parsed.maxDownloads == 4 && parsed.retries == 5)
        #expect(parsed.retryWait == .seconds(1))
        #expect(parsed.connectTimeout == .seconds(30) && parsed.headerTimeout == .seconds(30) && parsed.stallTimeout == .seconds(30))
        #expect(parsed.conflictPolicy == .rename && parsed.continuesPartial && parsed.engine == .native)
        #expect(!parsed.insecure && !parsed.json && !parsed.quiet && parsed.headers.isEmpty)
    }

    @Test(arguments: [
        ["-o", "out.bin", "http://h/"], ["-oout.bin", "http://h/"], ["--output=out.bin", "http://h/"],
        ["--output", "out.bin", "http://h/"], ["http://h/", "-o", "out.bin"], ["-kqo", "out.bin", "http://h/"],
        ["-kqoout.bin", "http://h/"],
    ])
    func everyValueFormSetsTheOutput(arguments: [String]) throws {
        let parsed = try options(arguments)
        #expect(parsed.output == "out.bin")
        #expect(parsed.urls == ["http://h/"])
    }

    @Test func bundledShortFlagsAllApply() throws {
        let parsed = try options(["-kq", "http://h/"])
        #expect(parsed.insecure && parsed.quiet)
        let withValue = try options(["-qx8", "http://h/"])
        #expect(withValue.quiet && withValue.connections == 8)
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try options(["-q", "--", "-o", "--json", "http://h/"])
        #expect(parsed.quiet && !parsed.json && parsed.output == nil)
        #expect(parsed.urls == ["-o", "--json", "http://h/"])
    }

    @Test func optionsMayFollowAndSurroundURLs() throws {
        let parsed = try options(["http://a/", "-q", "http://b/", "--dir", "d", "-", "--json"])
        #expect(parsed.urls == ["http://a/", "http://b/", "-"])
        #expect(parsed.quiet && parsed.json && parsed.directory == "d")
    }

    @Test func everyOptionOfTheTableParses() throws {
        let samples: [OptionSpec.ID: String] = [
            .output: "f", .directory: "d", .connections: "3", .maxDownloads: "2", .inputFile: "list",
            .retries: "0", .retryWait: "0.5", .connectTimeout: "2.5", .headerTimeout: "7", .stallTimeout: ".5",
            .header: "X-Token: abc", .onConflict: "skip", .caCert: "ca.pem", .engine: "native", .limitRate: "1.5M",
            .checksum: "md5=" + String(repeating: "0f", count: 16), .endpoint: "http://127.0.0.1:9000",
            .proxy: "socks5h://u:p@127.0.0.1:1080", .noProxy: "localhost,10.0.0.0/8", .proxyCACert: "proxy-ca.pem",
            .user: "me:pa:ss", .netrcFile: "my-netrc", .cookies: "cookies.txt", .mirror: "http://m/f", .maxSources: "3",
            .metalink: "follow",
        ]
        var arguments: [String] = []
        for spec in OptionTable.download where spec.availability == .available && spec.id != .help && spec.id != .version {
            if spec.takesValue {
                let sample = try #require(samples[spec.id], "no sample value for \(spec.long)")
                arguments.append("\(spec.longSpelling)=\(sample)")
            } else {
                arguments.append(spec.longSpelling)
            }
        }
        let parsed = try options(arguments + ["http://h/"])
        #expect(parsed.output == "f" && parsed.directory == "d" && parsed.inputFile == "list" && parsed.caCertificateFile == "ca.pem")
        #expect(parsed.connections == 3 && parsed.maxDownloads == 2 && parsed.retries == 0)
        #expect(parsed.retryWait == .milliseconds(500) && parsed.connectTimeout == .milliseconds(2500))
        #expect(parsed.headerTimeout == .seconds(7) && parsed.stallTimeout == .milliseconds(500))
        #expect(parsed.headers == [CommandOptions.Header(name: "X-Token", value: "abc")])
        #expect(parsed.conflictPolicy == .skip && !parsed.continuesPartial && parsed.insecure)
        #expect(parsed.engine == .native && parsed.json && parsed.quiet)
        #expect(parsed.rateLimit == 1_572_864)
        #expect(parsed.proxy == "socks5h://u:p@127.0.0.1:1080" && parsed.noProxy == "localhost,10.0.0.0/8")
        #expect(parsed.proxyCACertificateFile == "proxy-ca.pem" && parsed.proxyInsecure)
        #expect(parsed.credentials == Credentials(user: "me", password: "pa:ss"))
        #expect(parsed.netrc && parsed.netrcFile == "my-netrc" && parsed.cookieFile == "cookies.txt")
        #expect(parsed.mirrors == ["http://m/f"] && parsed.maxSources == 3 && parsed.followsMetalink)
    }

    @Test("--user needs USER:PASSWORD; proxy values refuse control characters; --proxy= and --noproxy= are empty")
    func reachValues() throws {
        #expect(throws: UsageError.self) { try options(["-u", "nopassword", "http://h/"]) }
        #expect(throws: UsageError.self) { try options(["-u", ":pw", "http://h/"]) }
        #expect(throws: UsageError.self) { try options(["--proxy=http://p\r\n:1", "http://h/"]) }
        #expect(throws: UsageError.self) { try options(["-u", "a:b\nc", "http://h/"]) }
        let empty = try options(["--proxy=", "--noproxy=", "http://h/"])
        #expect(empty.proxy == "" && empty.noProxy == "")
        #expect(try options(["http://h/"]).proxy == nil)
    }

    @Test(arguments: [
        ("512", Int64(512)), ("1", 1), ("64K", 65_536), ("64k", 65_536), ("1.5M", 1_572_864), ("2G", 2_147_483_648), (".5K", 512),
    ])
    func rateLimitsTakeBinarySuffixes(text: String, bytes: Int64) throws {
        #expect(try options(["--limit-rate", text, "http://h/"]).rateLimit == bytes)
        #expect(try options(["--limit-rate=\(text)", "http://h/"]).rateLimit == bytes)
    }

    @Test func noRateLimitByDefault() throws {
        #expect(try options(["http://h/"]).rateLimit == nil)
        #expect(try options(["http://h/"]).continuesPartial)
    }

    @Test func everyShortNameParsesLikeItsLongName() throws {
        for spec in OptionTable.download where spec.short != nil && spec.id != .help && spec.id != .version {
            let short = "-\(spec.short!)"
            let value = spec.takesValue ? [spec.id == .header ? "X: 1" : spec.id == .user ? "u:p" : "3"] : []
            let long = spec.takesValue ? ["\(spec.longSpelling)=\(value[0])"] : [spec.longSpelling]
            #expect(try options([short] + value + ["http://h/"]) == options(long + ["http://h/"]), "\(short)")
        }
    }

    @Test func headersAreRepeatableAndTrimmed() throws {
        let parsed = try options(["-H", "Accept:  text/plain \t", "--header=X-Empty:", "-HX-A:1", "http://h/"])
        #expect(parsed.headers == [
            .init(name: "Accept", value: "text/plain"), .init(name: "X-Empty", value: ""), .init(name: "X-A", value: "1"),
        ])
    }

    @Test(arguments: [
        ("--connect-timeout=2.5", Duration.milliseconds(2500)), ("--connect-timeout=30", .seconds(30)),
        ("--connect-timeout=.25", .milliseconds(250)), ("--connect-timeout=3.", .seconds(3)),
    ])
    func durationsAcceptDecimals(argument: String, expected: Duration) throws {
        #expect(try options([argument, "http://h/"]).connectTimeout == expected)
    }

    @Test(arguments: ["-h", "--help", "-qh"])
    func helpWins(argument: String) throws {
        #expect(try ArgumentParser.parse([argument]) == .help)
        #expect(try ArgumentParser.parse(["http://h/", argument]) == .help)
    }

    @Test func versionNeedsNoURL() throws {
        #expect(try ArgumentParser.parse(["-V"]) == .version)
        #expect(try ArgumentParser.parse(["--version", "http://h/"]) == .version)
    }

    @Test(arguments: [
        (["--bogus", "http://h/"], "unrecognized option '--bogus'"),
        (["--bogus=1", "http://h/"], "unrecognized option '--bogus'"),
        (["-z", "http://h/"], "invalid option -- 'z'"),
        (["-kz", "http://h/"], "invalid option -- 'z'"),
        (["http://h/", "-o"], "option requires an argument -- 'o'"),
        (["http://h/", "--output"], "option '--output' requires an argument"),
        (["--json=yes", "http://h/"], "option '--json' doesn't allow an argument"),
        (["--output=", "http://h/"], "invalid value '' for --output: expected a path"),
        (["-x", "0", "http://h/"], "invalid value '0' for --connections: expected a whole number from 1 to 16"),
        (["-x17", "http://h/"], "invalid value '17' for --connections: expected a whole number from 1 to 16"),
        (["-x", "four", "http://h/"], "invalid value 'four' for --connections: expected a whole number from 1 to 16"),
        (["-j0", "http://h/"], "invalid value '0' for --max-downloads: expected a whole number of at least 1"),
        (["--retries=-1", "http://h/"], "invalid value '-1' for --retries: expected a whole number of at least 0"),
        (["--retries=99999999999999999999", "http://h/"],
         "invalid value '99999999999999999999' for --retries: expected a whole number of at least 0"),
        (["--connect-timeout=0", "http://h/"],
         "invalid value '0' for --connect-timeout: expected a number of seconds above 0, such as 30 or 2.5"),
        (["--stall-timeout=1e3", "http://h/"],
         "invalid value '1e3' for --stall-timeout: expected a number of seconds above 0, such as 30 or 2.5"),
        (["--header-timeout=1.2.3", "http://h/"],
         "invalid value '1.2.3' for --header-timeout: expected a number of seconds above 0, such as 30 or 2.5"),
        (["--retry-wait=nan", "http://h/"], "invalid value 'nan' for --retry-wait: expected a number of seconds, such as 1 or 2.5"),
        (["--retry-wait=9999999", "http://h/"],
         "invalid value '9999999' for --retry-wait: expected a number of seconds, such as 1 or 2.5"),
        (["--on-conflict=keep", "http://h/"], "invalid value 'keep' for --on-conflict: expected rename, overwrite, skip or fail"),
        (["--engine=curl", "http://h/"], "invalid value 'curl' for --engine: expected native or urlsession"),
        (["--checksum=sha256=00", "http://h/"], "invalid value 'sha256=00' for --checksum: a sha256 digest has 64 hex digits, not 2"),
        (["--checksum=crc32=00", "http://h/"], "invalid value 'crc32=00' for --checksum: unknown checksum algorithm 'crc32' (known: sha256, sha512, sha1, md5)"),
        (["--endpoint=ftp://h/", "s3://b/k"], "invalid value 'ftp://h/' for --endpoint: expected an http:// or https:// URL"),
        (["--limit-rate", "0", "http://h/"],
         "invalid value '0' for --limit-rate: expected bytes per second above 0, such as 500K or 2M (suffixes K, M, G)"),
        (["--limit-rate=-1M", "http://h/"],
         "invalid value '-1M' for --limit-rate: expected bytes per second above 0, such as 500K or 2M (suffixes K, M, G)"),
        (["--limit-rate=1T", "http://h/"],
         "invalid value '1T' for --limit-rate: expected bytes per second above 0, such as 500K or 2M (suffixes K, M, G)"),
        (["--limit-rate=M", "http://h/"],
         "invalid value 'M' for --limit-rate: expected bytes per second above 0, such as 500K or 2M (suffixes K, M, G)"),
        (["-H", "NoColon", "http://h/"],
         "invalid header 'NoColon': expected 'Name: value' with a name made of letters, digits and !#$%&'*+-.^_`|~"),
        (["-H", "Bad Name: x", "http://h/"],
         "invalid header 'Bad Name: x': expected 'Name: value' with a name made of letters, digits and !#$%&'*+-.^_`|~"),
        (["-H", ": x", "http://h/"],
         "invalid header ': x': expected 'Name: value' with a name made of letters, digits and !#$%&'*+-.^_`|~"),
        (["-H", "X: a\r\nInjected: b", "http://h/"], "invalid header 'X': the value contains control characters"),
        ([], "missing URL"),
        (["-q"], "missing URL"),
        (["-o", "f", "http://a/", "http://b/"], "--output can only be used with a single URL"),
    ])
    func mistakesAreUsageErrors(arguments: [String], message: String) {
        #expect(usageError(arguments) == message)
    }

    @Test func inputFileAloneNeedsNoURLArgument() throws {
        #expect(try options(["-i", "-"]).inputFile == "-")
    }

    @Test func demoHasItsOwnOptions() throws {
        #expect(try ArgumentParser.parse(["demo"]) == .demo(DemoOptions()))
        var expected = DemoOptions()
        expected.size = 64 << 20
        expected.connections = 8
        #expect(try ArgumentParser.parse(["demo", "--size=64M", "--connections", "8"]) == .demo(expected))
        expected.size = 1536
        expected.connections = 4
        #expect(try ArgumentParser.parse(["demo", "--size", "1.5k"]) == .demo(expected))
        #expect(try ArgumentParser.parse(["demo", "--help"]) == .demoHelp)
    }

    @Test(arguments: [
        (["demo", "--size=12X"], "invalid value '12X' for --size: expected a size such as 512M (suffixes K, M, G)"),
        (["demo", "--size=0"], "invalid value '0' for --size: expected a size such as 512M (suffixes K, M, G)"),
        (["demo", "--connections=0"], "invalid value '0' for --connections: expected a whole number from 1 to 16"),
        (["demo", "-x", "2"], "invalid option -- 'x'"),
        (["demo", "--json"], "unrecognized option '--json'"),
        (["demo", "now"], "unexpected argument 'now' for demo"),
    ])
    func demoMistakesAreUsageErrors(arguments: [String], message: String) {
        #expect(usageError(arguments) == message)
    }

    @Test(arguments: [("512", Int64(512)), ("64K", 65536), ("2M", 2 << 20), ("1G", 1 << 30), ("0.5k", 512), ("1024G", 1 << 40)])
    func byteCountsUse1024BasedSuffixes(text: String, bytes: Int64) {
        #expect(ArgumentParser.byteCount(text) == bytes)
    }

    @Test(arguments: ["", "K", "-1K", "1KB", "1T", "1025G", "0x10", "1e3"])
    func malformedByteCountsAreRefused(text: String) {
        #expect(ArgumentParser.byteCount(text) == nil)
    }
}
