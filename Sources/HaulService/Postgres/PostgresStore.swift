/// A ``StateStore`` in a PostgreSQL database: the table `haul_downloads`, one row per download
/// as in ``SQLiteStore``, indexed by status and place.
///
/// A commit returns once the server has made it durable (PostgreSQL's `synchronous_commit`,
/// on by default). The database belongs to one service at a time: the store holds a session
/// advisory lock while connected, so a second daemon on the same database is refused instead of
/// running the same downloads. A lost connection is made again at the next call (and the lock
/// taken again); until then every call throws `store`.
final class PostgresStore: StateStore {
    /// The advisory lock's key ("haul" in ASCII).
    static let lockKey = "1751217516"

    private static let columns = PostgresLayout.columns
    private static let resultStatuses = "('complete', 'error', 'removed')"
    private static let queueStatuses = "('active', 'waiting', 'paused')"

    private let connection: PostgresConnection

    /// Connects, makes the table on a new database and takes the lock.
    ///
    /// - Throws: `store` when the server cannot be reached, the database is in use by another
    ///   service, or it was written by a newer layout.
    init(_ settings: PostgresSettings) throws(ServiceError) {
        connection = try PostgresConnection(settings)
        try takeLock()
        try PostgresLayout.create(connection)
    }

    private func takeLock() throws(ServiceError) {
        let taken = try connection.value("SELECT pg_try_advisory_lock(\(Self.lockKey))")
        guard taken == "t" else {
            throw ServiceError(.store, "the PostgreSQL state at \(connection.place) is in use by another haul daemon")
        }
    }

    /// Lets go of the database: the lock first, as a statement, so that a store opened right
    /// after finds it free (the server drops a closed session's locks only when its process ends).
    func close() {
        _ = try? connection.value("SELECT pg_advisory_unlock(\(Self.lockKey))")
        connection.close()
    }

    func load(residentResults: Int) throws(ServiceError) -> (rows: [StoreRow], stored: [(id: DownloadID, position: Double)]) {
        try reconnectIfLost()
        let resident = max(0, residentResults)
        var rows = try select("WHERE status IN \(Self.queueStatuses)")
        rows += try select("WHERE status IN \(Self.resultStatuses) ORDER BY position DESC LIMIT \(resident)")
        let older = try connection.run("""
            SELECT gid, position FROM (SELECT gid, position FROM haul_downloads WHERE status IN \(Self.resultStatuses)
                                       ORDER BY position DESC OFFSET \(resident)) AS older ORDER BY position
            """)
        let stored = older.values.compactMap { values -> (id: DownloadID, position: Double)? in
            guard let id = values[0].flatMap({ Int64($0) }).flatMap({ DownloadID(rawValue: UInt64(bitPattern: $0)) }) else { return nil }
            return (id, values[1].flatMap { Double($0) } ?? 0)
        }
        return (rows, stored)
    }

    func rows(_ ids: [DownloadID]) throws(ServiceError) -> [DownloadID: StoreRow] {
        try reconnectIfLost()
        let list = "{" + ids.map { String(Int64(bitPattern: $0.rawValue)) }.joined(separator: ",") + "}"
        let rows = try select("WHERE gid = ANY($1::bigint[])", [list])
        return Dictionary(rows.map { ($0.id, $0) }) { first, _ in first }
    }

    func apply(_ changes: [StoreChange]) throws(ServiceError) {
        try reconnectIfLost()
        try connection.transaction { () throws(ServiceError) in
            for change in changes {
                switch change {
                case .save(let row): try write(row)
                case .delete(let id): try connection.run("DELETE FROM haul_downloads WHERE gid = $1", [Self.text(id)])
                case .status(let id, let status):
                    try connection.run("UPDATE haul_downloads SET status = $1 WHERE gid = $2", [status.rawValue, Self.text(id)])
                }
            }
        }
    }

    private func write(_ row: StoreRow) throws(ServiceError) {
        try connection.run("""
            INSERT INTO haul_downloads (\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            ON CONFLICT (gid) DO UPDATE SET status = EXCLUDED.status, position = EXCLUDED.position, urls = EXCLUDED.urls,
                options = EXCLUDED.options, file = EXCLUDED.file, total_length = EXCLUDED.total_length,
                completed_length = EXCLUDED.completed_length, completed_ranges = EXCLUDED.completed_ranges,
                failure = EXCLUDED.failure
            """, [Self.text(row.id), row.status.rawValue, String(row.position), row.urls.joined(separator: "\n"),
                  StoreText.encode(row.options), row.file, row.totalBytes.map { String($0) }, String(row.completedBytes),
                  row.completedRanges.map(StoreText.encode), row.failure.map(StoreText.encode)])
    }

    /// Connects again (and takes the lock again) when the connection was lost.
    private func reconnectIfLost() throws(ServiceError) {
        guard !connection.isConnected else { return }
        try connection.reconnect()
        try takeLock()
    }

    func resultRows() throws(ServiceError) -> [StoreRow] {
        try reconnectIfLost()
        return try select("WHERE status IN \(Self.resultStatuses)")
    }

    private func select(_ clause: String, _ parameters: [String?] = []) throws(ServiceError) -> [StoreRow] {
        try connection.run("SELECT \(Self.columns) FROM haul_downloads \(clause)", parameters).values.compactMap(PostgresLayout.row)
    }

    private static func text(_ id: DownloadID) -> String {
        PostgresLayout.key(id)
    }
}
