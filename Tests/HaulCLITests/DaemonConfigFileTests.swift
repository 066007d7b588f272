import Foundation
import HaulJSON
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import HaulCLI

/// `haul daemon --conf-path=FILE`: aria2's `key=value` lines under the command line; every
/// mistake names the file and the line.
@Suite struct DaemonConfigFileTests {
    static let path = "/etc/haul/daemon.conf"

    static func file(_ text: String, isPrivate: Bool = true) throws -> DaemonConfigFile {
        DaemonConfigFile(path: path, entries: try DaemonConfigFile.parse(Array(text.utf8), path: path), isPrivate: isPrivate)
    }

    static func options(_ arguments: [String], _ text: String, isPrivate: Bool = true) throws -> DaemonOptions {
        let config = try file(text, isPrivate: isPrivate)
        guard case .daemon(let options) = try ArgumentParser.parse(["daemon"] + arguments, daemonConfig: { _ throws(UsageError) in config }) else {
            throw DaemonTestError(description: "not a daemon command")
        }
        return options
    }

    @Test func linesAreReadAsAria2ReadsThem() throws {
        let entries = try DaemonConfigFile.parse(Array("# downloads\r\n\n  dir = /srv/d  \r\nallow-origin=https://a=b\n\t# indented\nmax-downloads=8".utf8),
                                                 path: Self.path)
        #expect(entries == [.init(line: 3, key: "dir", value: "/srv/d"), .init(line: 4, key: "allow-origin", value: "https://a=b"),
                            .init(line: 6, key: "max-downloads", value: "8")])
    }

    @Test(arguments: [
        ("dir=/d\njust words", "/etc/haul/daemon.conf:2: expected key=value"),
        ("Dir=/d", "/etc/haul/daemon.conf:1: 'Dir' is not an option name"),
        ("a\u{1B}[2Jb=/d", "/etc/haul/daemon.conf:1: 'a\\x1b[2Jb' is not an option name"),
        ("=/d", "/etc/haul/daemon.conf:1: '' is not an option name"),
        ("dir=/d\u{7}", "/etc/haul/daemon.conf:1: the value is not UTF-8 text without control characters"),
        ("dir=/a\u{85}b", "/etc/haul/daemon.conf:1: the value is not UTF-8 text without control characters"),
    ])
    func malformedLinesAreRefusedByLine(text: String, message: String) {
        #expect(throws: UsageError(message)) { try DaemonConfigFile.parse(Array(text.utf8), path: Self.path) }
    }

    @Test func bytesThatAreNotUTF8AreRefused() {
        #expect(throws: UsageError("/etc/haul/daemon.conf:2: the value is not UTF-8 text without control characters")) {
            try DaemonConfigFile.parse(Array("dir=/d\nnode=".utf8) + [0xC3, 0x28], path: Self.path)
        }
    }

    @Test func theFileGivesOptionsAndTheCommandLineWins() throws {
        let text = "dir=/srv/d\nmax-downloads=8\nconnections=2\njson=true\nallow-origin=https://a.example\nsecret-file=/s\non-complete=/bin/true"
        let options = try Self.options(["-j", "3", "--secret=given"], text)
        #expect(options.directory == "/srv/d" && options.connections == 2 && options.json)
        #expect(options.maxDownloads == 3, "the command line wins")
        #expect(options.secret == "given" && options.secretFile == nil, "--secret on the command line replaces the file's secret-file")
        #expect(options.allowedOrigins == ["https://a.example"] && options.onComplete == "/bin/true")
        #expect(options.configFile == Self.path)
        let listed = try Self.options(["--allow-origin=http://b.example"], "dir=/d\nallow-origin=https://a.example\njson=false")
        #expect(listed.allowedOrigins == ["http://b.example"], "a repeatable option given on the command line replaces the file's")
        #expect(!listed.json)
    }

    @Test(arguments: [
        ("dir=/d\nrpc-listen-port=6800", "/etc/haul/daemon.conf:2: unknown option 'rpc-listen-port' (the keys are haul daemon's long option names)"),
        ("dir=/d\nhelp=true", "/etc/haul/daemon.conf:2: unknown option 'help' (the keys are haul daemon's long option names)"),
        ("conf-path=/other", "/etc/haul/daemon.conf:1: unknown option 'conf-path' (the keys are haul daemon's long option names)"),
        ("dir=/d\njson=yes", "/etc/haul/daemon.conf:2: invalid value 'yes' for json: expected true or false"),
        ("dir=/d\n\nconnections=17", "/etc/haul/daemon.conf:3: invalid value '17' for --connections: expected a whole number from 1 to 16"),
        ("dir=", "/etc/haul/daemon.conf:1: invalid value '' for --dir: expected a value"),
    ])
    func badOptionsNameTheLine(text: String, message: String) {
        #expect(throws: UsageError(message)) { try Self.options([], text) }
    }

    @Test func aSecretInAFileOthersMayReadIsRefused() throws {
        #expect(throws: UsageError("/etc/haul/daemon.conf:2: secret= in a file that group or others may read: chmod 600 /etc/haul/daemon.conf")) {
            try Self.options([], "dir=/d\nsecret=s3cret", isPrivate: false)
        }
        #expect(try Self.options([], "dir=/d\nsecret=s3cret").secret == "s3cret")
        #expect(try Self.options([], "dir=/d\nsecret-file=/s", isPrivate: false).secretFile == "/s", "a path to the secret is no secret")
    }

    @Test func aHookInAFileAnotherUserMayChangeIsRefused() throws {
        let config = DaemonConfigFile(path: Self.path, entries: try DaemonConfigFile.parse(Array("dir=/d\non-error=/bin/true".utf8), path: Self.path),
                                      isPrivate: false, isGuarded: false)
        #expect(throws: UsageError("/etc/haul/daemon.conf:2: on-error= in a file that another user may change: chmod go-w "
                                   + "/etc/haul/daemon.conf (owned by this user or root)")) {
            try DaemonArguments.options(in: config)
        }
    }

    @Test func aFIFOIsRefusedAtOnce() {
        withTemporaryDirectory { folder in
            let fifo = folder.appendingPathComponent("daemon.conf").path
            #expect(mkfifo(fifo, 0o600) == 0)
            #expect(throws: UsageError("cannot read the config file \(fifo): not a regular file of at most 1 MiB")) {
                try DaemonConfigFile.load(fifo, environment: [:])
            }
        }
    }

    @Test func theDefaultFileMayBeMissingAndAGivenOneMayNot() throws {
        try withTemporaryDirectory { folder in
            let environment = ["XDG_CONFIG_HOME": folder.path, "HOME": "/nonexistent"]
            #expect(try DaemonConfigFile.load(nil, environment: environment) == nil)
            let missing = folder.appendingPathComponent("none.conf").path
            #expect(throws: UsageError("cannot read the config file \(missing): No such file or directory")) {
                try DaemonConfigFile.load(missing, environment: environment)
            }
            #expect(throws: UsageError("cannot read the config file \(folder.path): not a regular file of at most 1 MiB")) {
                try DaemonConfigFile.load(folder.path, environment: environment)
            }
            let config = folder.appendingPathComponent("haul/daemon.conf")
            try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("dir=/d\n".utf8).write(to: config)
            try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: config.path)
            let read = try #require(try DaemonConfigFile.load(nil, environment: environment))
            #expect(read.path == config.path && read.entries.map(\.key) == ["dir"] && !read.isPrivate && read.isGuarded)
            try FileManager.default.setAttributes([.posixPermissions: 0o660], ofItemAtPath: config.path)
            #expect(try DaemonConfigFile.load(nil, environment: environment)?.isGuarded == false)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config.path)
            #expect(try DaemonConfigFile.load(config.path, environment: [:])?.isPrivate == true)
        }
    }
}

/// The config file read by a real daemon process.
@Suite(.throttled) struct DaemonConfigFileProcessTests {
    @Test func aDaemonTakesItsOptionsFromTheFileUnderTheCommandLine() async throws {
        try await withTemporaryDirectory { folder in
            let config = folder.appendingPathComponent("config/haul/daemon.conf")
            try FileManager.default.createDirectory(at: config.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("# the default file\nmax-downloads=7\nconnections=3\n".utf8).write(to: config)
            let daemon = try await DaemonProcess(in: folder, ["-x", "5"])
            let options = try daemon.call("aria2.getGlobalOption").object
            #expect(options?["max-concurrent-downloads"]?.string == "7")
            #expect(options?["split"]?.string == "5", "the command line wins")
            #expect(daemon.log.contains("options from \(config.path)"))
        }
    }

    @Test func aBadLineStopsTheDaemonWithOneLineNamingIt() async throws {
        try await withTemporaryDirectory { folder in
            let config = folder.appendingPathComponent("daemon.conf")
            try Data("dir=\(folder.path)\nmax-downloads=lots\n".utf8).write(to: config)
            let outcome = try await HaulBinary.run(["daemon", "--conf-path=\(config.path)", "--listen=127.0.0.1:0"])
            #expect(outcome.status == 2)
            #expect(outcome.standardError.hasPrefix(
                "haul: \(config.path):2: invalid value 'lots' for --max-downloads: expected a whole number from 1 to 1024\n"))
        }
    }
}
