import Foundation
import HaulTestSupport
import Testing
@testable import Haul
@testable import HaulService

/// The list in PostgreSQL: rows round-trip as in the state file, one service per database, a
/// newer layout refused, the connection made again after the server restarts, and a connection
/// string with a password refused. Each test has a database of its own on the tests' cluster.
@Suite(.throttled, .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is not installed"))
struct PostgresStoreTests {
    static func settings() throws -> PostgresSettings {
        try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
    }

    @Test func rowsRoundTripThroughTheDatabase() throws {
        let settings = try Self.settings()
        let rows = [SQLiteStoreTests.row(1), SQLiteStoreTests.row(UInt64.max, status: .error),
                    SQLiteStoreTests.row(0x8000_0000_0000_0000, status: .paused), SQLiteStoreTests.row(9, status: .complete)]
        do {
            let store = try PostgresStore(settings)
            defer { store.close() }
            try store.apply(rows.map { .save($0) })
            try store.apply([.delete(rows[0].id), .status(rows[1].id, .removed)])
        }
        let store = try PostgresStore(settings)
        defer { store.close() }
        var expected = Array(rows.dropFirst())
        expected[0].status = .removed
        #expect(try store.load(residentResults: .max).rows.sorted { $0.id < $1.id } == expected.sorted { $0.id < $1.id })
        let (resident, older) = try store.load(residentResults: 1)
        #expect(resident.map(\.id).sorted() == [rows[2].id, rows[1].id].sorted())   // the queue and the newest result
        #expect(older.map(\.id) == [rows[3].id])
        #expect(try store.rows([rows[3].id, rows[0].id]) == [rows[3].id: rows[3]])
    }

    @Test func aSecondStoreOnTheSameDatabaseIsRefusedUntilTheFirstCloses() throws {
        let settings = try Self.settings()
        let first = try PostgresStore(settings)
        try first.apply([.save(SQLiteStoreTests.row(3))])
        let refusal = #expect(throws: ServiceError.self) { try PostgresStore(settings) }
        #expect(refusal?.message.contains("in use by another haul daemon") == true)
        first.close()
        let second = try PostgresStore(settings)
        defer { second.close() }
        #expect(try second.load(residentResults: .max).rows.map(\.id) == [SQLiteStoreTests.row(3).id])
    }

    @Test func aNewerLayoutIsRefused() throws {
        let settings = try Self.settings()
        let connection = try PostgresConnection(settings)
        try connection.run("CREATE TABLE haul_schema (version INTEGER NOT NULL)")
        try connection.run("INSERT INTO haul_schema VALUES (99)")
        let refusal = #expect(throws: ServiceError.self) { try PostgresStore(settings) }
        #expect(refusal?.message.contains("layout 99") == true)
    }

    @Test func theStoreComesBackAfterTheServerRestarts() throws {
        let cluster = try PostgresCluster.start()
        defer { cluster.destroy() }
        let settings = try PostgresSettings(cluster.url(database: "postgres"))
        let store = try PostgresStore(settings)
        defer { store.close() }
        try store.apply([.save(SQLiteStoreTests.row(1))])
        try cluster.stop()
        let refusal = #expect(throws: ServiceError.self) { try store.apply([.save(SQLiteStoreTests.row(2))]) }
        #expect(refusal?.code == .store)
        try cluster.startServer()
        try store.apply([.save(SQLiteStoreTests.row(2))])
        #expect(try store.load(residentResults: .max).rows.map(\.id).sorted() == [SQLiteStoreTests.row(1).id, SQLiteStoreTests.row(2).id])
    }

    @Test func aPasswordInTheConnectionStringIsRefusedAndNeverShown() throws {
        for text in ["postgresql://haul:hunter2@127.0.0.1/db", "host=127.0.0.1 password=hunter2 dbname=db",
                     "postgres://haul@127.0.0.1/db?password=hunter2"] {
            let refusal = #expect(throws: ServiceError.self) { try PostgresSettings(text) }
            #expect(refusal?.code == .invalidArgument)
            #expect(refusal?.message.contains("PGPASSWORD") == true)
            #expect(refusal?.message.contains("hunter2") == false)
        }
        let settings = try PostgresSettings("postgresql://haul@127.0.0.1:6543/fleet?sslmode=require")
        #expect(settings.redacted == "host=127.0.0.1 port=6543 dbname=fleet user=haul")
        #expect(settings.effectiveConnectionString == "postgresql://haul@127.0.0.1:6543/fleet?sslmode=require&connect_timeout=10")
        #expect(try PostgresSettings("host=h dbname=d").effectiveConnectionString == "host=h dbname=d connect_timeout=10")
        #expect(try PostgresSettings("postgresql://h/d?connect_timeout=3").effectiveConnectionString == "postgresql://h/d?connect_timeout=3")
        #expect(throws: ServiceError.self) { try PostgresSettings("postgresql://[::1") }
    }

    @Test func anUnreachableServerIsAStoreErrorNamingIt() throws {
        let refusal = #expect(throws: ServiceError.self) {
            try PostgresStore(try PostgresSettings("postgresql://haul@/nothing?host=/nonexistent-haul-folder&port=1"))
        }
        #expect(refusal?.code == .store)
        #expect(refusal?.message.contains("cannot reach the PostgreSQL state at host=/nonexistent-haul-folder port=1") == true)
    }
}

/// Without libpq a service on PostgreSQL says what to install (pure: no server needed).
@Suite struct LibPQLoadingTests {
    @Test func aMissingLibrarySaysWhatToInstall() {
        guard case .failure(let error) = LibPQ.load(names: ["libpq-absent-for-haul.so.9"]) else {
            Issue.record("a library that does not exist was loaded")
            return
        }
        #expect(error.code == .store)
        #expect(error.message.contains("apt install libpq5"))
        #expect(error.message.contains("libpq-absent-for-haul.so.9"))
    }

    @Test func theRecognizedSchemes() {
        #expect(PostgresSettings.isURL("postgresql://h/db") && PostgresSettings.isURL("POSTGRES://h/db"))
        #expect(!PostgresSettings.isURL("/var/lib/haul/postgresql://x") && !PostgresSettings.isURL("postgresql:/x")
                && !PostgresSettings.isURL("state.db"))
    }
}

/// Where PostgreSQL is required (`.ci/run` sets `HAUL_REQUIRE_POSTGRES=1` after starting its
/// cluster), its tests may not be skipped.
@Suite(.throttled, .enabled(if: ProcessInfo.processInfo.environment["HAUL_REQUIRE_POSTGRES"] == "1"))
struct PostgresRequiredTests {
    @Test func theTestsHaveAPostgreSQLServer() throws {
        let cluster = try #require(PostgresCluster.shared, "HAUL_REQUIRE_POSTGRES=1 but no PostgreSQL server")
        let connection = try PostgresConnection(try PostgresSettings(try cluster.makeDatabase()))
        defer { connection.close() }
        #expect(try connection.value("SELECT 41 + 1") == "42")
    }
}
