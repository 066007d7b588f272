/// The tables a service on PostgreSQL reads and writes, made on a new database.
///
/// `haul_downloads` holds one row per download, as the SQLite state file does, plus what a
/// fleet of daemons needs: the node that runs it (or ran it, for a result), until when its claim
/// holds (`lease_until`), its fencing number (`fence`, one more at every claim), and a change
/// asked of it while it runs (`requested`: `pause`, `remove` or `change`) for the node that runs it, and
/// its speed (with its lengths, noted at each renewal for the other nodes to show).
/// `haul_nodes` has a line per node: when it last renewed its claims, how many it runs and how
/// fast. `haul_places` is the sequence of places at the back of the queue.
enum PostgresLayout {
    /// The layout this code reads and writes (`haul_schema.version`): 2 added `search`.
    static let version = 2
    /// The key of the transaction lock that makes two nodes starting at once create it once.
    static let creationLock = "1751217517"

    /// Creates the tables on a new database; checks the layout of an existing one.
    ///
    /// - Throws: `store` for a layout newer than this code's, or when the server refuses.
    static func create(_ connection: PostgresConnection) throws(ServiceError) {
        try connection.transaction { () throws(ServiceError) in
            try connection.run("SELECT pg_advisory_xact_lock(\(creationLock))")
            try connection.run("CREATE TABLE IF NOT EXISTS haul_schema (version INTEGER NOT NULL)")
            let found = try connection.value("SELECT max(version) FROM haul_schema").flatMap { Int($0) } ?? 0
            if found > version {
                throw ServiceError(.store, "the PostgreSQL state at \(connection.place) has layout \(found), "
                                   + "newer than this haul's \(version)")
            }
            if found == 1 { return try addSearch(connection) }
            guard found == 0 else { return }
            try connection.run("""
                CREATE TABLE haul_downloads (
                    gid BIGINT PRIMARY KEY,
                    status TEXT NOT NULL,
                    position DOUBLE PRECISION NOT NULL,
                    urls TEXT NOT NULL,
                    options TEXT NOT NULL,
                    file TEXT,
                    total_length BIGINT,
                    completed_length BIGINT NOT NULL DEFAULT 0,
                    completed_ranges TEXT,
                    failure TEXT,
                    node TEXT,
                    lease_until TIMESTAMPTZ,
                    fence BIGINT NOT NULL DEFAULT 0,
                    requested TEXT,
                    bytes_per_second BIGINT NOT NULL DEFAULT 0
                )
                """)
            try connection.run("CREATE SEQUENCE haul_places")   // the back of the queue: each addition takes the next place
            // The fleet's lists in place order, each a partial index of its own (a page of
            // 100,000 queued rows reads its rows, not the table).
            try connection.run("CREATE INDEX haul_queue ON haul_downloads (position, gid) WHERE status IN ('waiting', 'paused')")
            try connection.run("CREATE INDEX haul_results ON haul_downloads (position, gid) WHERE status IN ('complete', 'error', 'removed')")
            try connection.run("CREATE INDEX haul_waiting ON haul_downloads (position) WHERE status = 'waiting'")
            try connection.run("CREATE INDEX haul_downloads_by_lease ON haul_downloads (lease_until) WHERE status = 'active'")
            try connection.run("""
                CREATE TABLE haul_nodes (
                    node TEXT PRIMARY KEY,
                    address TEXT NOT NULL,
                    renewed_at TIMESTAMPTZ NOT NULL,
                    active INTEGER NOT NULL DEFAULT 0,
                    bytes_per_second BIGINT NOT NULL DEFAULT 0
                )
                """)
            try connection.run("INSERT INTO haul_schema (version) VALUES ($1)", [String(version)])
            try addSearch(connection)
        }
    }

    /// Adds `search`, what a filter searches (layout 2): the file's path, the `out` name (its
    /// escapes undone) and the URLs, a line each, ASCII letters (and only those) in lower case, as
    /// a ``DownloadFilter`` folds them. PostgreSQL keeps it (a generated column).
    private static func addSearch(_ connection: PostgresConnection) throws(ServiceError) {
        try connection.run(#"""
            ALTER TABLE haul_downloads ADD COLUMN search TEXT GENERATED ALWAYS AS (translate(
                coalesce(file, '') || E'\n'
                || coalesce(replace(replace(replace(substring(options from '(?:^|\n)out ([^\n]*)'),
                                                    '%0A', E'\n'), '%0D', E'\r'), '%25', '%'), '')
                || E'\n' || urls,
                'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')) STORED
            """#)
        try connection.run("UPDATE haul_schema SET version = $1", [String(version)])
    }
}

// MARK: - A row as text

extension PostgresLayout {
    /// The columns of a download's row, in the order ``row(_:)`` reads them.
    static let columns = "gid, status, position, urls, options, file, total_length, completed_length, completed_ranges, failure"
    /// The same, each named as a column of `d` (an `UPDATE … AS d … RETURNING`).
    static let columnsOfD = columns.split(separator: ",").map { "d." + $0.drop { $0 == " " } }.joined(separator: ", ")

    /// A download's key as the table holds it (a `BIGINT`: the identifier's bits).
    static func key(_ id: DownloadID) -> String {
        String(Int64(bitPattern: id.rawValue))
    }

    /// The row whose ``columns`` libpq gave as text; `nil` for an identifier or status this code does not know.
    static func row(_ values: [String?]) -> StoreRow? {
        StoreRow.decoded(id: values[0].flatMap { Int64($0) }, status: values[1], position: values[2].flatMap { Double($0) } ?? 0,
                         urls: values[3], options: values[4], file: values[5], totalBytes: values[6].flatMap { Int64($0) },
                         completedBytes: values[7].flatMap { Int64($0) }, ranges: values[8], failure: values[9])
    }
}
