import Foundation
import HaulTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import HaulDaemon
@testable import HaulService

/// A finished or failed download as the hooks see it.
func endedDownload(_ raw: UInt64, status: ServiceDownload.Status = .complete, path: String = "/d/file.bin",
                   urls: [String] = ["http://127.0.0.1:1/file.bin"], failure: ServiceFailure? = nil) -> ServiceDownload {
    ServiceDownload(id: DownloadID(rawValue: raw)!, urls: urls, options: ServiceDownloadOptions(), status: status, directoryPath: "/d",
                    filePath: path, totalBytes: 1234, completedBytes: 1234, completedRanges: [0..<1234], bytesPerSecond: 0,
                    connections: 0, failure: failure)
}

/// What a hook is given: aria2's three arguments, the download's facts as `HAUL_*` (URLs
/// redacted) and a few of the daemon's variables, never its secrets.
@Suite struct HookCommandTests {
    @Test func aCompletedDownloadsFactsAndAria2sArguments() {
        let download = endedDownload(0xAB, urls: ["https://user:pw@127.0.0.1:1/f.bin?X-Amz-Signature=abc", "http://127.0.0.1:2/f.bin"])
        let command = HookCommand(.complete, program: "/usr/local/bin/file-it", download: download,
                                  inherited: ["PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C.UTF-8", "PGPASSWORD=pw", "DONE=/srv/done",
                                              "AWS_SECRET_ACCESS_KEY=k", "https_proxy=http://u:p@127.0.0.1:3", "HAUL_GID=forged"])
        #expect(command.arguments == ["/usr/local/bin/file-it", "00000000000000ab", "1", "/d/file.bin"])
        #expect(command.environment.filter { !$0.hasPrefix("HAUL_") } == ["PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C.UTF-8", "DONE=/srv/done"])
        #expect(command.environment.filter { $0.hasPrefix("HAUL_GID=") } == ["HAUL_GID=00000000000000ab"])
        let facts = Dictionary(uniqueKeysWithValues: HookCommand.facts(of: download))
        #expect(facts["HAUL_EVENT"] == "complete" && facts["HAUL_GID"] == "00000000000000ab" && facts["HAUL_PATH"] == "/d/file.bin")
        #expect(facts["HAUL_SIZE"] == "1234" && facts["HAUL_DIR"] == "/d" && facts["HAUL_STATUS"] == "complete")
        #expect(facts["HAUL_URL"]?.contains("pw") == false && facts["HAUL_URL"]?.contains("abc") == false)
        #expect(facts["HAUL_SOURCES"]?.split(separator: "\n").count == 2)
        #expect(facts["HAUL_ERROR_CODE"] == nil)
    }

    @Test func aFailedDownloadCarriesItsError() {
        let failure = ServiceFailure(code: "httpStatus", exitStatus: 22, httpStatus: 404, message: "server answered 404 Not Found")
        let facts = Dictionary(uniqueKeysWithValues: HookCommand.facts(of: endedDownload(1, status: .error, failure: failure)))
        #expect(facts["HAUL_EVENT"] == "error" && facts["HAUL_ERROR_CODE"] == "httpStatus" && facts["HAUL_HTTP_STATUS"] == "404")
        #expect(facts["HAUL_EXIT_STATUS"] == "22" && facts["HAUL_ERROR_MESSAGE"] == "server answered 404 Not Found")
    }
}

/// Hooks as real processes: their output in the log, one at a time per download, and nothing
/// they do (hang, fail, print megabytes, not exist) disturbs the daemon.
@Suite(.throttled) struct DownloadHooksTests {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    static func script(_ folder: URL, _ name: String, _ body: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data("#!/bin/sh\n\(body)\n".utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        return url.path
    }

    static func hooks(_ program: String, log: Lines, timeLimit: Duration = .seconds(10)) -> DownloadHooks {
        var configuration = DownloadHooks.Configuration()
        (configuration.onComplete, configuration.onError) = (program, program)
        configuration.timeLimit = timeLimit
        configuration.outputLimit = 1000
        configuration.log = { log.append($0) }
        return DownloadHooks(configuration: configuration)
    }

    @Test func aHookGetsItsArgumentsAndFactsAndItsOutputIsLogged() async throws {
        try await withTemporaryDirectory { folder in
            let log = Lines()
            let hooks = Self.hooks(try Self.script(folder, "hook", "echo \"$1 $2 $3 $HAUL_EVENT $HAUL_SIZE\"; echo to-stderr >&2; exit 3"), log: log)
            hooks.downloadEnded(endedDownload(7))
            #expect(await eventually { log.all.contains { $0.contains("failed with exit status 3") } })
            #expect(log.all.contains("on-complete for 0000000000000007: 0000000000000007 1 /d/file.bin complete 1234"))
            #expect(log.all.contains("on-complete for 0000000000000007: to-stderr"))
            hooks.stop()
        }
    }

    @Test func aHookGetsNoneOfTheDaemonsDescriptors() async throws {
        try await withTemporaryDirectory { folder in
            let log = Lines()
            let opened = open("/dev/null", O_RDONLY)   // not close-on-exec, as a socket between accept and fcntl
            #expect(dup2(opened, 77) == 77)
            defer { close(opened); close(77) }
            let hooks = Self.hooks(try Self.script(folder, "hook", "[ -e /proc/$$/fd/77 ] && echo leaked || echo closed"), log: log)
            hooks.downloadEnded(endedDownload(9))
            #expect(await eventually { log.all.contains { $0.contains("done in") } })
            #expect(log.all.contains("on-complete for 0000000000000009: closed"), "\(log.all)")
            hooks.stop()
        }
    }

    @Test func aLongSourceListIsCutToWhatTheKernelTakes() {
        let urls = (0..<5_000).map { "http://127.0.0.1:1/mirror-\($0)/a-rather-long-file-name.bin" }
        let facts = Dictionary(uniqueKeysWithValues: HookCommand.facts(of: endedDownload(1, urls: urls)))
        #expect(facts["HAUL_SOURCES"]?.utf8.count ?? 0 <= HookCommand.valueLimit)
        #expect(facts["HAUL_SOURCES"]?.hasPrefix(urls[0] + "\n" + urls[1]) == true)
    }

    @Test func aHookThatHangsIsStoppedAndTheNextRuns() async throws {
        try await withTemporaryDirectory { folder in
            let log = Lines()
            let hooks = Self.hooks(try Self.script(folder, "hook", "[ \"$1\" = 0000000000000001 ] && exec sleep 60; echo ran"),
                                   log: log, timeLimit: .milliseconds(300))
            let started = ContinuousClock.now
            hooks.downloadEnded(endedDownload(1))
            hooks.downloadEnded(endedDownload(2))
            #expect(await eventually { log.all.contains { $0.contains("0000000000000001: stopped after its time limit") } })
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect(await eventually { log.all.contains("on-complete for 0000000000000002: ran") })
            hooks.stop()
        }
    }

    @Test func megabytesOfOutputAreReadAndAllButTheFirstDropped() async throws {
        try await withTemporaryDirectory { folder in
            let log = Lines()
            let hooks = Self.hooks(try Self.script(folder, "hook", "head -c 5000000 /dev/zero | tr '\\000' x"), log: log)
            hooks.downloadEnded(endedDownload(3))
            #expect(await eventually(timeout: .seconds(30)) { log.all.contains { $0.hasSuffix(": done in") || $0.contains(": done in ") } })
            #expect(log.all.contains("on-complete for 0000000000000003: 4999000 more bytes of output not logged"))
            #expect(log.all.first == "on-complete for 0000000000000003: " + String(repeating: "x", count: 1000))
            hooks.stop()
        }
    }

    @Test func hooksOfOneDownloadRunOneAtATimeAndOthersAlongside() async throws {
        try await withTemporaryDirectory { folder in
            let log = Lines(), marks = folder.appendingPathComponent("marks").path
            let hooks = Self.hooks(try Self.script(folder, "hook", "echo \"start $1\" >> \(marks); sleep 0.3; echo \"end $1\" >> \(marks)"), log: log)
            for raw: UInt64 in [1, 1, 2] { hooks.downloadEnded(endedDownload(raw)) }
            #expect(await eventually { log.all.filter { $0.contains("done in") }.count == 3 })
            let lines = try String(contentsOfFile: marks, encoding: .utf8).split(separator: "\n").map(String.init)
            let one = lines.filter { $0.hasSuffix("0000000000000001") }
            #expect(one == ["start 0000000000000001", "end 0000000000000001", "start 0000000000000001", "end 0000000000000001"])
            let twoStarted = try #require(lines.firstIndex(of: "start 0000000000000002"))
            let oneEnded = try #require(lines.firstIndex(of: "end 0000000000000001"))
            #expect(twoStarted < oneEnded, "another download's hook does not wait: \(lines)")
            hooks.stop()
        }
    }

    @Test func aProgramThatCannotRunIsLoggedAndAStopEndsWhatRuns() async throws {
        try await withTemporaryDirectory { folder in
            let log = Lines()
            let missing = Self.hooks(folder.appendingPathComponent("gone").path, log: log)
            missing.downloadEnded(endedDownload(4))
            #expect(await eventually { log.all.contains { $0.hasPrefix("on-complete for 0000000000000004: cannot run ") } })
            missing.stop()
            let slow = Self.hooks(try Self.script(folder, "hook", "exec sleep 60"), log: log)
            slow.downloadEnded(endedDownload(5))
            try await Task.sleep(for: .milliseconds(200))   // running: the stop has something to end
            let stopped = ContinuousClock.now
            slow.stop(grace: .milliseconds(200))
            #expect(ContinuousClock.now - stopped < .seconds(3))
            #expect(await eventually { log.all.contains { $0.contains("0000000000000005: ended by signal 9") } })
        }
    }
}
