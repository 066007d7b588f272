/// The state file of a ``DownloadService``: a ``StateStore`` in an SQLite database.
///
/// The journal is a write-ahead log (`journal_mode=WAL`) with `synchronous=FULL`: a commit
/// returns only after the log is on disk, so a change the service acknowledged survives the
/// process being killed and the machine losing power. The cost is one `fdatasync` per commit,
/// which ``StoreWriter`` shares between every change that arrived meanwhile (one commit for a
/// thousand additions in one call). Writes come from one thread at a time.
///
/// The file belongs to one service at a time: the store takes SQLite's exclusive lock when it
/// opens the file (`locking_mode=EXCLUSIVE`, then a write) and holds it until it closes, so a
/// second daemon on the same state file is refused instead of running the same downloads.
final class SQLiteStore: StateStore {
    /// The layout this code reads and writes (`PRAGMA user_version`).
    static let schemaVersion: Int64 = 1

    /// The columns of a row, in the order ``row(_:)`` reads them.
    private static let columns =
        "gid, status, position, urls, options, file, total_length, completed_length, completed_ranges, failure"
    /// The statuses of results, as SQL.
    private static let resultStatuses = "('complete', 'error', 'removed')"
    /// The statuses of the queue, as SQL.
    private static let queueStatuses = "('active', 'waiting', 'paused')"

    private let database: SQLiteDatabase
    private let upsert: SQLiteStatement
    private let delete: SQLiteStatement
    private let selectByID: SQLiteStatement
    private let updateStatus: SQLiteStatement

    /// Opens (or creates) the state file.
    ///
    /// - Throws: `store` when it cannot be opened, is not a database, is in use by another
    ///   service, or was written by a newer layout.
    init(path: String) throws(ServiceError) {
        database = try SQLiteDatabase(path: path)
        do throws(ServiceError) {
            // The write takes the lock now, for as long as the file is open.
            try database.execute("PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; BEGIN IMMEDIATE; COMMIT")
        } catch where database.lastErrorWasBusy {
            throw ServiceError(.store, "the state file \(path) is in use by another process (another haul daemon?)")
        }
        try database.execute("PRAGMA synchronous=FULL; PRAGMA foreign_keys=OFF")
        let version = try database.integer("PRAGMA user_version")
        if version > Self.schemaVersion {
            throw ServiceError(.store, "the state file \(path) has layout \(version), newer than this haul's \(Self.schemaVersion)")
        }
        try Self.createLayout(database, from: version)
        upsert = try database.prepare("""
            INSERT OR REPLACE INTO downloads (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        delete = try database.prepare("DELETE FROM downloads WHERE gid = ?")
        selectByID = try database.prepare("SELECT \(Self.columns) FROM downloads WHERE gid = ?")
        updateStatus = try database.prepare("UPDATE downloads SET status = ? WHERE gid = ?")
    }

    /// Creates the table on a new file.
    ///
    /// It has no index but its primary key: every query a running service makes finds its row by
    /// identifier, and the two that load the list when the service starts read the table once
    /// each (an index on the status would cost every status change an index update).
    private static func createLayout(_ database: SQLiteDatabase, from version: Int64) throws(ServiceError) {
        guard version == 0 else { return }
        try database.execute("""
            BEGIN;
            CREATE TABLE IF NOT EXISTS downloads (
                gid INTEGER PRIMARY KEY,
                status TEXT NOT NULL,
                position REAL NOT NULL,
                urls TEXT NOT NULL,
                options TEXT NOT NULL,
                file TEXT,
                total_length INTEGER,
                completed_length INTEGER NOT NULL DEFAULT 0,
                completed_ranges TEXT,
                failure TEXT
            );
            PRAGMA user_version = \(Self.schemaVersion);
            COMMIT;
            """)
    }

    func close() {
        upsert.finalize()
        delete.finalize()
        selectByID.finalize()
        updateStatus.finalize()
        database.close()
    }

    func load(residentResults: Int) throws(ServiceError) -> (rows: [StoreRow], stored: [(id: DownloadID, position: Double)]) {
        var rows = try select("WHERE status IN \(Self.queueStatuses)")
        let newest = try select("WHERE status IN \(Self.resultStatuses) ORDER BY position DESC LIMIT \(max(0, residentResults))")
        rows += newest
        var stored: [(id: DownloadID, position: Double)] = []
        let older = try database.prepare("""
            SELECT gid, position FROM downloads WHERE status IN \(Self.resultStatuses) ORDER BY position
            LIMIT (SELECT max(0, count(*) - \(max(0, residentResults))) FROM downloads WHERE status IN \(Self.resultStatuses))
            """)
        defer { older.finalize() }
        while try older.step() {
            guard let id = DownloadID(rawValue: UInt64(bitPattern: older.int64(0) ?? 0)) else { continue }
            stored.append((id, older.double(1)))
        }
        return (rows, stored)
    }

    func rows(_ ids: [DownloadID]) throws(ServiceError) -> [DownloadID: StoreRow] {
        var found: [DownloadID: StoreRow] = [:]
        for id in ids {
            selectByID.reset()
            selectByID.bind(1, Int64(bitPattern: id.rawValue))
            if try selectByID.step(), let row = Self.row(selectByID) { found[id] = row }
        }
        selectByID.reset()
        return found
    }

    func resultRows() throws(ServiceError) -> [StoreRow] {
        try select("WHERE status IN \(Self.resultStatuses)")
    }

    /// How SQLite plans each query the store runs, one line per step (for the test that holds
    /// the queries of a running service to the primary key).
    func queryPlans() throws(ServiceError) -> [String: [String]] {
        let queries = [
            "load the queue": "SELECT \(Self.columns) FROM downloads WHERE status IN \(Self.queueStatuses)",
            "load the newest results": "SELECT \(Self.columns) FROM downloads WHERE status IN \(Self.resultStatuses) ORDER BY position DESC LIMIT 10",
            "read a row": "SELECT \(Self.columns) FROM downloads WHERE gid = 1",
            "change a status": "UPDATE downloads SET status = 'paused' WHERE gid = 1",
            "write a row": "INSERT OR REPLACE INTO downloads (\(Self.columns)) VALUES (1, 'paused', 1, '', '', NULL, NULL, 0, NULL, NULL)",
            "delete a row": "DELETE FROM downloads WHERE gid = 1",
        ]
        var plans: [String: [String]] = [:]
        for (name, sql) in queries {
            let plan = try database.prepare("EXPLAIN QUERY PLAN " + sql)
            defer { plan.finalize() }
            var steps: [String] = []
            while try plan.step() { steps.append(plan.text(3) ?? "") }
            plans[name] = steps
        }
        return plans
    }

    private func select(_ clause: String) throws(ServiceError) -> [StoreRow] {
        let select = try database.prepare("SELECT \(Self.columns) FROM downloads \(clause)")
        defer { select.finalize() }
        var rows: [StoreRow] = []
        while try select.step() {
            if let row = Self.row(select) { rows.append(row) }
        }
        return rows
    }

    /// The row a statement's current result holds (its columns as ``columns`` orders them).
    private static func row(_ select: SQLiteStatement) -> StoreRow? {
        StoreRow.decoded(id: select.int64(0), status: select.text(1), position: select.double(2), urls: select.text(3),
                         options: select.text(4), file: select.text(5), totalBytes: select.int64(6),
                         completedBytes: select.int64(7), ranges: select.text(8), failure: select.text(9))
    }

    func apply(_ changes: [StoreChange]) throws(ServiceError) {
        try database.execute("BEGIN IMMEDIATE")
        do throws(ServiceError) {
            for change in changes {
                switch change {
                case .save(let row): try write(row)
                case .delete(let id):
                    delete.reset()
                    delete.bind(1, Int64(bitPattern: id.rawValue))
                    _ = try delete.step()
                case .status(let id, let status):
                    updateStatus.reset()
                    updateStatus.bind(1, status.rawValue)
                    updateStatus.bind(2, Int64(bitPattern: id.rawValue))
                    _ = try updateStatus.step()
                }
            }
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
    }

    private func write(_ row: StoreRow) throws(ServiceError) {
        upsert.reset()
        upsert.bind(1, Int64(bitPattern: row.id.rawValue))
        upsert.bind(2, row.status.rawValue)
        upsert.bind(3, row.position)
        upsert.bind(4, row.urls.joined(separator: "\n"))
        upsert.bind(5, StoreText.encode(row.options))
        upsert.bind(6, row.file)
        upsert.bind(7, row.totalBytes)
        upsert.bind(8, row.completedBytes)
        upsert.bind(9, row.completedRanges.map(StoreText.encode))
        upsert.bind(10, row.failure.map(StoreText.encode))
        _ = try upsert.step()
    }
}
