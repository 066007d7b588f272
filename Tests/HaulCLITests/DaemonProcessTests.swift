import Foundation
import HaulDaemon
import HaulServer
import HaulTestSupport
import Testing
import HaulJSON
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `haul daemon` as a process: what it acknowledged survives `kill -9`, SIGTERM stops it cleanly,
/// its secret is private and never logged, and `aria2.shutdown` frees the port.
/// Exclusive: kills processes mid-download and paces transfers against the loopback server.
@Suite("haul daemon", .exclusive, .serialized, .timeLimit(.minutes(3)))
struct DaemonProcessTests {
    @Test func twentyAddsKilledRightAfterTheirAnswersAreAllListedAfterARestart() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { (dir) async throws in
            var gids: [String] = []
            do {
                let daemon = try await DaemonProcess(in: dir, ["-j", "1"])
                for index in 0..<20 {
                    let url = server.url("/bytes/4000000/\(index).bin?rate=100000")
                    gids.append(try #require(daemon.call("aria2.addUri", [[.string(url)]]).string))
                }
                daemon.send(SIGKILL)   // at once: the answers are all the durability there is
                #expect(await daemon.waitForExit() == 128 + SIGKILL)
            }
            let restarted = try await DaemonProcess(in: dir, ["-j", "1"])
            let statuses = try restarted.statuses()
            #expect(Set(statuses.keys) == Set(gids), "\(statuses)")
            #expect(statuses.values.filter { $0 == "active" }.count == 1)
            #expect(statuses.values.filter { $0 == "waiting" }.count == 19)
            restarted.send(SIGTERM)
            #expect(await restarted.waitForExit() == 0)
        }
    }

    @Test func aKillMidDownloadAndMidQueueLosesNothingAndTheActiveOneResumes() async throws {
        let server = try HaulServer()
        let big = HaulServer.Resource(size: 4_000_000, seed: 11, etag: "\"big\"", rate: 1_000_000)
        server.setResource("/big.bin", big)
        server.setResource("/small.bin", HaulServer.Resource(size: 2000, seed: 12, etag: "\"small\""))
        try await withTemporaryDirectory { (dir) async throws in
            var gids: [String: String] = [:]
            do {
                let daemon = try await DaemonProcess(in: dir, ["-j", "1", "-x", "1"])
                gids["done"] = try daemon.call("aria2.addUri", [[.string(server.url("/small.bin"))], ["out": "done.bin"]]).string
                #expect(await eventually { (try? daemon.statuses()[gids["done"]!]) == "complete" })
                gids["active"] = try daemon.call("aria2.addUri", [[.string(server.url("/big.bin"))]]).string
                gids["waiting"] = try daemon.call("aria2.addUri", [[.string(server.url("/small.bin"))], ["out": "later.bin"]]).string
                gids["paused"] = try daemon.call("aria2.addUri", [[.string(server.url("/small.bin"))],
                                                                  ["out": "held.bin", "pause": "true"]]).string
                #expect(await eventually {
                    let done = (try? daemon.call("aria2.tellStatus", [.string(gids["active"]!), ["completedLength"]]))?
                        .object?["completedLength"]?.string
                    return (Int(done ?? "0") ?? 0) > 1_000_000
                })
                daemon.send(SIGKILL)
                #expect(await daemon.waitForExit() == 128 + SIGKILL)
            }
            // The same file, served faster for the rest (paced still: the bytes sent are the bytes read).
            server.setResource("/big.bin", HaulServer.Resource(size: big.size, seed: 11, etag: "\"big\"", rate: 4_000_000))
            let restarted = try await DaemonProcess(in: dir, ["-j", "1", "-x", "1"])
            let statuses = try restarted.statuses()
            #expect(statuses[gids["done"]!] == "complete")
            #expect(statuses[gids["active"]!] == "active", "the active download continues")
            #expect(statuses[gids["waiting"]!] == "waiting")
            #expect(statuses[gids["paused"]!] == "paused")
            #expect(await eventually(timeout: .seconds(30)) { (try? restarted.statuses()[gids["waiting"]!]) == "complete" })
            let downloads = dir.appendingPathComponent("downloads")
            #expect(fileContents(downloads.appendingPathComponent("big.bin")) == Data(big.bytes(0..<big.size)))
            #expect(try restarted.statuses()[gids["paused"]!] == "paused")
            #expect(server.bodyBytesSent < big.size * 12 / 10 + 10_000, "sent \(server.bodyBytesSent) for a file of \(big.size)")
            restarted.send(SIGTERM)
            #expect(await restarted.waitForExit() == 0)
        }
    }

    @Test func sigtermPausesTheTransferExitsZeroAndTheNextStartContinues() async throws {
        let server = try HaulServer()
        let file = HaulServer.Resource(size: 3_000_000, seed: 13, etag: "\"t\"", rate: 1_000_000)
        server.setResource("/term.bin", file)
        try await withTemporaryDirectory { (dir) async throws in
            var gid = ""
            do {
                let daemon = try await DaemonProcess(in: dir, ["-x", "1"])
                gid = try #require(daemon.call("aria2.addUri", [[.string(server.url("/term.bin"))]]).string)
                #expect(await eventually { server.bodyBytesSent > 500_000 })
                daemon.send(SIGTERM)
                #expect(await daemon.waitForExit() == 0)
                #expect(daemon.log.contains("stopped"))
                let downloads = dir.appendingPathComponent("downloads")
                #expect(listFiles(downloads) == ["term.bin.part", "term.bin.resume"], "the record is kept")
            }
            server.setResource("/term.bin", HaulServer.Resource(size: file.size, seed: 13, etag: "\"t\"", rate: 8_000_000))
            let restarted = try await DaemonProcess(in: dir, ["-x", "1"])
            #expect(await eventually(timeout: .seconds(30)) { (try? restarted.statuses()[gid]) == "complete" })
            #expect(fileContents(dir.appendingPathComponent("downloads/term.bin")) == Data(file.bytes(0..<file.size)))
            #expect(server.bodyBytesSent < file.size * 12 / 10)
            restarted.send(SIGINT)
            #expect(await restarted.waitForExit() == 0)
        }
    }

    @Test func shutdownOverTheRPCFreesThePortWithinTenSeconds() async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let daemon = try await DaemonProcess(in: dir)
            #expect(try daemon.call("aria2.shutdown") == "OK")
            #expect(await daemon.waitForExit(timeout: .seconds(10)) == 0)
            #expect(throws: DaemonClientError.self) { try daemon.call("aria2.getVersion") }
        }
    }

    @Test func theSecretIsPrivateAndNeverWrittenToTheLogOrAnAnswer() async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let state = dir.appendingPathComponent("xdg")
            let outcome = try await { () async throws -> (String, String, String) in
                let daemon = try await DaemonProcess(in: dir, ["--json"], environment: ["XDG_STATE_HOME": state.path])
                let answers = [try daemon.call("aria2.getGlobalOption"), try daemon.call("aria2.getVersion")]
                    .map { String(decoding: JSONWriter.encode($0), as: UTF8.self) }.joined()
                _ = try? daemon.call("aria2.tellStatus", [.string(daemon.secret)])
                daemon.send(SIGTERM)
                _ = await daemon.waitForExit()
                return (daemon.secret, daemon.log, answers)
            }()
            let (secret, log, answers) = outcome
            #expect(secret.count == 64 && secret.allSatisfy(\.isHexDigit))
            let mode = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("state.secret").path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            #expect(log.contains(dir.appendingPathComponent("state.secret").path), "the path is printed")
            #expect(log.contains("dashboard at http://127.0.0.1:"), "the dashboard's address is printed")
            #expect(log.contains("sign in with the secret in \(dir.appendingPathComponent("state.secret").path)"))
            #expect(!log.contains("#token="))
            #expect(!log.contains(secret))
            #expect(!answers.contains(secret))
        }
    }

    @Test func theDaemonServesTheDashboardAtTheRoot() async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let daemon = try await DaemonProcess(in: dir)
            let fetched = try await haul(["-q", "-o", "page.html", "-d", dir.path, "http://127.0.0.1:\(daemon.port)/"], in: dir)
            #expect(fetched.status == 0, "\(fetched.standardError)")
            let page = try String(contentsOf: dir.appendingPathComponent("page.html"), encoding: .utf8)
            #expect(page.hasPrefix("<!doctype html>"), "the CLI hands the dashboard to the daemon")
            daemon.send(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }
    }

    @Test func aSecondDaemonOnTheSameStateFileIsRefusedAndTheFirstGoesOn() async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let first = try await DaemonProcess(in: dir)
            let gid = try #require(first.call("aria2.addUri", [["http://127.0.0.1:1/x.bin"], ["pause": "true"]]).string)
            let second = try await haul(["daemon", "--dir=\(dir.path)/downloads", "--state=\(dir.path)/state.db",
                                         "--listen=127.0.0.1:0"], in: dir)
            #expect(second.status == 1)
            #expect(second.standardError.contains("in use by another process"), "\(second.standardError)")
            #expect(try first.statuses() == [gid: "paused"])
            first.send(SIGTERM)
            #expect(await first.waitForExit() == 0)
            let next = try await DaemonProcess(in: dir)
            #expect(try next.statuses() == [gid: "paused"], "the lock went with the first daemon")
            next.send(SIGTERM)
            #expect(await next.waitForExit() == 0)
        }
    }

    @Test func anAddressOtherThanLoopbackWithoutASecretIsRefusedBeforeAnything() async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let open = try await haul(["daemon", "--dir=\(dir.path)", "--state=\(dir.path)/s.db", "--listen=0.0.0.0:0", "--secret="], in: dir)
            #expect(open.status == 2)
            #expect(open.standardError.contains("not a loopback address"))
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("s.db").path), "refused before anything")
            #expect(try await haul(["daemon"], in: dir).status == 2, "--dir is required")
        }
    }

    @Test func theClientCommandsAddListPauseResumeAndRemove() async throws {
        let server = try HaulServer()
        server.setResource("/c.bin", HaulServer.Resource(size: 3_000_000, seed: 14, etag: "\"c\"", rate: 500_000))
        try await withTemporaryDirectory { (dir) async throws in
            let daemon = try await DaemonProcess(in: dir, ["-x", "1"])
            let common = ["--rpc=http://127.0.0.1:\(daemon.port)/jsonrpc", "--secret-file=\(dir.path)/state.secret"]
            let added = try await haul(["add"] + common + [server.url("/c.bin"), server.url("/bytes/100")], in: dir)
            #expect(added.status == 0, "\(added.standardError)")
            #expect(added.outputLines.count == 2)
            let gid = try #require(added.outputLines.first)
            let listed = try await haul(["ls"] + common, in: dir)
            #expect(listed.status == 0)
            #expect(listed.outputLines.first?.hasPrefix("GID") == true)
            #expect(listed.standardOutput.contains(gid))
            #expect(try await haul(["pause"] + common + [gid], in: dir).outputLines == [gid])
            #expect(try daemon.statuses()[gid] == "paused")
            let again = try await haul(["pause"] + common + [gid], in: dir)
            #expect(again.status == 1)
            #expect(again.standardError.contains("cannot be paused now"))
            #expect(try await haul(["resume"] + common + [String(gid.prefix(8))], in: dir).outputLines == [gid], "a unique prefix")
            #expect(try await haul(["rm"] + common + [gid], in: dir).status == 0)
            #expect(try daemon.statuses()[gid] == "removed")
            #expect(try await haul(["rm"] + common + [gid], in: dir).status == 0, "rm forgets a result")
            #expect(try daemon.statuses()[gid] == nil)
            let wrong = try await haul(["ls", "--rpc=http://127.0.0.1:\(daemon.port)/jsonrpc", "--secret-file=/dev/null"], in: dir)
            #expect(wrong.status == 2, "an empty secret file is a usage error")
            let refused = try await haul(["ls", "--rpc=http://127.0.0.1:1/jsonrpc"] + [common[1]], in: dir)
            #expect(refused.status == 4)
            daemon.send(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }
    }
}
