import Foundation
import HaulServer
import HaulTestSupport
import Testing
import HaulJSON
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `haul daemon --state=postgresql://…`: daemons on one database are the nodes of a fleet (each
/// lists and changes the whole list, runs its share, writes below its own folder; a node's
/// `kill -9` loses nothing), and a password in the URL is refused without being repeated.
/// Exclusive: paces transfers (`rate=`) so that both nodes have downloads to run.
@Suite("haul daemon on PostgreSQL", .exclusive, .serialized, .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is not installed"))
struct DaemonPostgresTests {
    /// The arguments of a daemon whose state is `database`, its secret file made in `dir`.
    static func arguments(_ dir: URL, database: String) throws -> [String] {
        let secret = dir.appendingPathComponent("state.secret")
        try "sekret\n".write(to: secret, atomically: false, encoding: .utf8)
        chmod(secret.path, 0o600)
        return ["--state=\(database)", "--secret-file=\(secret.path)"]
    }

    @Test func twoDaemonsShareOneQueueAndEachListsTheWholeFleet() async throws {
        let server = try HaulServer()
        let database = try #require(PostgresCluster.shared).makeDatabase()
        try await withTemporaryDirectory { (dir) async throws in
            let (folderA, folderB) = (dir.appendingPathComponent("a"), dir.appendingPathComponent("b"))
            for folder in [folderA, folderB] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
            let a = try await DaemonProcess(in: folderA, try Self.arguments(folderA, database: database) + ["--node=a", "-j", "2"])
            let b = try await DaemonProcess(in: folderB, try Self.arguments(folderB, database: database) + ["--node=b", "-j", "2"])
            #expect(a.log.contains("state in PostgreSQL (host="), "\(a.log)")
            #expect(a.log.contains("fleet node a"))
            var gids: [String] = []
            for index in 0..<10 {
                let url = server.url("/bytes/200000/f\(index).bin?rate=400000")
                gids.append(try #require(a.call("aria2.addUri", [[.string(url)]]).string))
            }
            #expect(Set(try b.statuses().keys) == Set(gids), "every node lists the whole fleet")
            await eventually(timeout: .seconds(30)) { (try? b.statuses().values.allSatisfy { $0 == "complete" }) == true }
            let stopped = try b.call("aria2.tellStopped", [0, 100, ["gid", "node", "files"]]).array ?? []
            let nodes = stopped.compactMap { $0.object?["node"]?.string }
            #expect(nodes.count == 10 && Set(nodes) == ["a", "b"], "\(nodes)")
            for entry in stopped {
                let node = try #require(entry.object?["node"]?.string)
                let path = try #require(entry.object?["files"]?.array?.first?.object?["path"]?.string)
                #expect(path.hasPrefix(dir.appendingPathComponent("\(node)/downloads").path), "\(path)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 200_000)
            }
            let lines = try b.call("haul.getNodes").array ?? []
            #expect(lines.compactMap { $0.object?["node"]?.string } == ["a", "b"])
            #expect(lines.allSatisfy { Int($0.object?["secondsSinceRenewal"]?.string ?? "") ?? 99 < 10 }, "\(lines)")
            // The client commands against any node, with one service's answers.
            let common = ["--rpc=http://127.0.0.1:\(b.port)/jsonrpc", "--secret-file=\(folderB.path)/state.secret"]
            let listed = try await haul(["ls"] + common, in: dir)
            #expect(listed.status == 0 && gids.allSatisfy { listed.standardOutput.contains($0) }, "\(listed.standardOutput)")
            let added = try await haul(["add"] + common + ["http://127.0.0.1:1/client.bin"], in: dir)
            let client = try #require(added.outputLines.first)
            #expect(try await haul(["pause"] + common + [client], in: dir).status == 0 || (try a.statuses()[client]) == "error")
            let twice = try await haul(["rm"] + common + [gids[0]], in: dir)
            #expect(twice.status == 0, "rm forgets a result: \(twice.standardError)")
            #expect(try a.statuses()[gids[0]] == nil)
            let paused = try #require(b.call("aria2.addUri", [["http://127.0.0.1:1/later.bin"], ["pause": "true"]]).string)
            #expect(try a.call("aria2.tellStatus", [.string(paused), ["status"]]).object?["status"]?.string == "paused")
            b.send(SIGKILL)
            #expect(await b.waitForExit() == 128 + SIGKILL)
            #expect(try a.statuses().count == 11, "a node's death loses nothing of the list")   // 10 - 1 forgotten + client + paused
            a.send(SIGTERM)
            #expect(await a.waitForExit() == 0)
        }
    }

    @Test func aPasswordInTheURLIsAUsageErrorThatDoesNotRepeatIt() async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let outcome = try await haul(["daemon", "--dir=\(dir.path)/d", "--listen=127.0.0.1:0",
                                          "--state=postgresql://haul:hunter2@127.0.0.1:1/db"], in: dir)
            #expect(outcome.status == 2)
            #expect(outcome.standardError.contains("PGPASSWORD"), "\(outcome.standardError)")
            #expect(!outcome.standardError.contains("hunter2"))
        }
    }
}
