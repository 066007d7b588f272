import Foundation
import HaulTestSupport
import Testing
@testable import Haul
@testable import HaulService

/// The state file: rows round-trip, the journal is a write-ahead log synced on every commit,
/// a newer layout is refused, and the writer commits a burst of changes together.
@Suite struct SQLiteStoreTests {
    static func row(_ value: UInt64, status: ServiceDownload.Status = .waiting) -> StoreRow {
        var options = ServiceDownloadOptions()
        options.directory = "sub/dir"
        options.fileName = "name with %25 and\nnewline.bin"
        options.headers = [.init(name: "X-Token", value: "a: b")]
        options.connections = 3
        options.rateLimit = 1000
        options.checksum = try! Checksum(parsing: "sha256=" + String(repeating: "ab", count: 32))
        options.pieces = try! PieceChecksums(length: 1 << 20, algorithm: .sha1, digests: [[UInt8](repeating: 0xA5, count: 20),
                                                                                       [UInt8](0..<20)])
        options.overwrite = true
        options.continues = false
        var entry = ServiceQueue.Entry(id: DownloadID(rawValue: value)!, urls: ["http://127.0.0.1:1/a", "http://127.0.0.1:1/b"],
                                       options: options, status: status, position: Double(value) * 1.5)
        entry.file = "/root/sub/dir/file.bin"
        entry.totalBytes = 1 << 40
        entry.completedBytes = 12345
        entry.completedRanges = [0..<100, 200..<12445]
        entry.failure = ServiceFailure(code: "httpStatus", exitStatus: 8, httpStatus: 503, message: "the server answered 503\nagain")
        return StoreRow(entry)
    }

    @Test func rowsRoundTripThroughTheFile() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("state.db").path
            let rows = [Self.row(1), Self.row(UInt64.max, status: .error), Self.row(0x8000_0000_0000_0000, status: .paused)]
            do {
                let store = try SQLiteStore(path: path)
                try store.apply(rows.map { .save($0) })
                try store.apply([.delete(rows[0].id)])
            }
            let loaded = try SQLiteStore(path: path).load(residentResults: .max).rows.sorted { $0.id < $1.id }
            #expect(loaded == Array(rows.dropFirst()).sorted { $0.id < $1.id })
        }
    }

    @Test func theFileIsPrivateAWriteAheadLogAndSyncedFully() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("state.db").path
            let store = try SQLiteStore(path: path)
            try store.apply([.save(Self.row(7))])
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            #expect(FileManager.default.fileExists(atPath: path + "-wal"))
            store.close()
            let database = try SQLiteDatabase(path: path)
            #expect(try database.integer("PRAGMA user_version") == SQLiteStore.schemaVersion)
            let journal = try database.prepare("PRAGMA journal_mode")
            #expect(try journal.step() && journal.text(0) == "wal")
        }
    }

    @Test func aSecondStoreOnTheSameFileIsRefusedUntilTheFirstCloses() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("state.db").path
            let first = try SQLiteStore(path: path)
            try first.apply([.save(Self.row(3))])
            let refusal = #expect(throws: ServiceError.self) { try SQLiteStore(path: path) }
            #expect(refusal?.message.contains("in use by another process") == true)
            first.close()
            #expect(try SQLiteStore(path: path).load(residentResults: .max).rows.map(\.id) == [Self.row(3).id])
        }
    }

    @Test func aNewerLayoutIsRefused() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("state.db").path
            try SQLiteDatabase(path: path).execute("PRAGMA user_version = 99")
            #expect(throws: ServiceError.self) { try SQLiteStore(path: path) }
        }
    }

    @Test func somethingThatIsNotADatabaseIsRefused() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("state.db")
            try Data(repeating: 0x41, count: 4096).write(to: path)
            #expect(throws: ServiceError.self) { try SQLiteStore(path: path.path) }
        }
    }

    @Test func theWriterCommitsABurstAndKeepsOnlyTheLatestRowOfEachDownload() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("state.db").path
            let writer = try StoreWriter(store: try SQLiteStore(path: path))
            var last: UInt64 = 0
            for value in 1...UInt64(1000) { last = writer.submit([.save(Self.row(value))]) }
            var paused = Self.row(5)
            paused.status = .paused
            last = writer.submit([.save(paused), .delete(Self.row(6).id)])
            try writer.waitUntilCommitted(last)
            writer.close()
            let loaded = try SQLiteStore(path: path).load(residentResults: .max).rows
            #expect(loaded.count == 999)
            #expect(loaded.first { $0.id == paused.id }?.status == .paused)
            #expect(throws: ServiceError.self) { try writer.waitUntilCommitted(last + 1) }
        }
    }

    @Test func escapedTextDecodesExactly() {
        for text in ["", "plain", "%", "%25", "%0A", "a\nb\rc%d", "%%0A%", "ünïcödé %0D"] {
            #expect(StoreText.unescape(StoreText.escape(text)[...]) == text)
        }
        #expect(StoreText.decodeRanges("0-5,10-20") == [0..<5, 10..<20])
        #expect(StoreText.decodeRanges("5-1") == nil)
        #expect(StoreText.decodeRanges("x") == nil)
    }
}

/// The store's queries: those of a running service find their row by the primary key; the two
/// that load the list when it starts read the table once each, and nothing else.
@Suite struct SQLiteStorePlanTests {
    @Test func aRunningServiceFindsEveryRowByItsKey() throws {
        try withTemporaryDirectory { dir in
            let store = try SQLiteStore(path: dir.appendingPathComponent("state.db").path)
            defer { store.close() }
            let plans = try store.queryPlans()
            #expect(plans.count == 6)
            for name in ["read a row", "change a status", "delete a row"] {
                let steps = try #require(plans[name])
                #expect(steps.count == 1 && steps[0].contains("INTEGER PRIMARY KEY"), "\(name): \(steps)")
            }
            #expect(plans["write a row"] == [], "an insert by key has no search step")
            #expect(plans["load the queue"] == ["SCAN downloads"])
            #expect(plans["load the newest results"]?.first == "SCAN downloads")
        }
    }

    @Test func aStatusChangeFoldsIntoARowSubmittedBeforeIt() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("state.db").path
            let writer = try StoreWriter(store: try SQLiteStore(path: path))
            let row = SQLiteStoreTests.row(7, status: .waiting)
            _ = writer.submit([.save(row), .status(row.id, .paused)])
            let other = SQLiteStoreTests.row(8, status: .waiting)
            try writer.waitUntilCommitted(writer.submit([.save(other)]))
            try writer.waitUntilCommitted(writer.submit([.status(other.id, .paused), .status(DownloadID(rawValue: 99)!, .paused)]))
            writer.close()
            let loaded = try SQLiteStore(path: path).load(residentResults: .max).rows.sorted { $0.id < $1.id }
            var expected = [row, other]
            expected[0].status = .paused
            expected[1].status = .paused
            #expect(loaded == expected, "a status change alone changes only the status; one for no row writes none")
        }
    }
}
