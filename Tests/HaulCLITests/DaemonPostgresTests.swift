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

/// `haul daemon --state=postgresql://…`: the list lives in the database (it survives `kill -9` of
/// the daemon), one daemon per database for now, and a password in the URL is refused without
/// being repeated.
/// Serialized: each test starts daemons that share one database.
@Suite("haul daemon on PostgreSQL", .throttled, .serialized, .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is not installed"))
struct DaemonPostgresTests {
    /// The arguments and secret file of a daemon whose state is `database`.
    static func arguments(_ dir: URL, database: String) throws -> [String] {
        let secret = dir.appendingPathComponent("state.secret")
        try "sekret\n".write(to: secret, atomically: false, encoding: .utf8)
        chmod(secret.path, 0o600)
        return ["--state=\(database)", "--secret-file=\(secret.path)"]
    }

    @Test func theListOutlivesAKilledDaemonAndASecondDaemonIsRefused() async throws {
        let server = try HaulServer()
        let database = try #require(PostgresCluster.shared).makeDatabase()
        try await withTemporaryDirectory { (dir) async throws in
            let arguments = try Self.arguments(dir, database: database)
            let first = try await DaemonProcess(in: dir, arguments + ["-j", "1"])
            #expect(first.log.contains("state in PostgreSQL (host="), "\(first.log)")
            let done = try #require(first.call("aria2.addUri", [[.string(server.url("/bytes/20000/done.bin"))]]).string)
            await eventually { (try? first.statuses()[done]) == "complete" }
            let paused = try #require(first.call("aria2.addUri", [["http://127.0.0.1:1/later.bin"], ["pause": "true"]]).string)
            let second = try await haul(["daemon", "--dir=\(dir.path)/other", "--listen=127.0.0.1:0"] + arguments, in: dir)
            #expect(second.status == 1)
            #expect(second.standardError.contains("in use by another haul daemon"), "\(second.standardError)")
            first.send(SIGKILL)
            #expect(await first.waitForExit() == 128 + SIGKILL)
            let restarted = try await DaemonProcess(in: dir, arguments)
            #expect(try restarted.statuses() == [done: "complete", paused: "paused"])
            #expect(try Data(contentsOf: dir.appendingPathComponent("downloads/done.bin")).count == 20000)
            restarted.send(SIGTERM)
            #expect(await restarted.waitForExit() == 0)
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
