#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One node's door to the queue a fleet shares in PostgreSQL (see docs/FLEET.md).
///
/// Nodes claim waiting downloads in queue order with `FOR UPDATE SKIP LOCKED` (two nodes never
/// wait for, nor take, the same row), each claim under a lease the node renews and a fencing
/// number that every later write of the node must name: a node that lost a claim (its lease
/// ended while it was paused, killed or cut off, and another node took the download) can never
/// write over the new owner's row. Additions wake the nodes with `NOTIFY haul_work`.
///
/// Used by one thread at a time (one connection).
final class FleetQueue {
    /// This node's name in the table.
    let node: String
    let connection: PostgresConnection

    static let columns = PostgresLayout.columns
    /// The channel that says there is work to claim.
    static let workChannel = "haul_work"

    /// Connects as `node`, making the tables on a new database.
    ///
    /// - Throws: `store` when the server cannot be reached or refuses.
    init(_ settings: PostgresSettings, node: String) throws(ServiceError) {
        self.node = node
        connection = try PostgresConnection(settings)
        try PostgresLayout.create(connection)
    }

    func close() {
        connection.close()
    }

    /// Adds downloads at the back of the queue (waiting or paused, unclaimed) in one
    /// transaction and wakes the nodes; the rows' places are ignored.
    ///
    /// - Throws: `idInUse` when an identifier is taken, `store` when the transaction fails
    ///   (nothing is added either way).
    func add(_ rows: [StoreRow]) throws(ServiceError) {
        try connection.transaction { () throws(ServiceError) in
            for row in rows {
                let added = try connection.run("""
                    INSERT INTO haul_downloads (\(Self.columns))
                    VALUES ($1, $2, nextval('haul_places') * 1024, $3, $4, NULL, NULL, 0, NULL, NULL) ON CONFLICT (gid) DO NOTHING
                    """, [Self.text(row.id), row.status == .paused ? "paused" : "waiting", row.urls.joined(separator: "\n"),
                          StoreText.encode(row.options)])
                if added.affected == 0 { throw ServiceError(.idInUse, "GID \(row.id.hex) is in use") }
            }
            try connection.run("NOTIFY \(Self.workChannel)")
        }
    }

    /// Claims up to `limit` downloads for this node: with `sweeping`, first those whose lease
    /// ended (their node is gone), then waiting ones in queue order; each gets the next fencing
    /// number. Leases end on their own clock, so the sweep is for a node's renewal turns; a claim
    /// for a freed slot reads the waiting rows alone.
    ///
    /// - Throws: `store` when the transaction fails (nothing is claimed).
    func claim(limit: Int, lease: Duration, excluding: [DownloadID] = [], sweeping: Bool = true) throws(ServiceError)
        -> [(claim: FleetClaim, row: StoreRow)] {
        guard limit > 0 else { return [] }
        return try connection.transaction { () throws(ServiceError) in
            let other = Self.sparing(excluding)
            let expired = sweeping ? try sweep(limit: limit, lease: lease, other: other) : []
            let waiting = try claimed(where: "status = 'waiting'" + other, limit: limit - expired.count, lease: lease)
            return expired + waiting
        }
    }

    /// Settles the downloads asked to pause or go while their node was gone, then claims those
    /// whose lease ended.
    private func sweep(limit: Int, lease: Duration, other: String) throws(ServiceError) -> [(claim: FleetClaim, row: StoreRow)] {
        try connection.run("""
            UPDATE haul_downloads SET status = CASE requested WHEN 'pause' THEN 'paused' ELSE 'removed' END,
                node = CASE requested WHEN 'pause' THEN NULL ELSE node END, requested = NULL, lease_until = NULL
            WHERE status = 'active' AND lease_until < clock_timestamp() AND requested IN ('pause', 'remove')
            """)
        return try claimed(where: "status = 'active' AND lease_until < clock_timestamp()" + other, limit: limit, lease: lease)
    }

    /// Takes again, with the next fencing number, the active downloads the table gives this
    /// node that are not in `excluding` and that nobody asked to pause or remove (a change asked
    /// is taken with it: the claim starts from the row's options).
    func adopt(excluding: [DownloadID], lease: Duration) throws(ServiceError) -> [(claim: FleetClaim, row: StoreRow)] {
        let other = Self.sparing(excluding)
        return try connection.transaction { () throws(ServiceError) in
            // `$1` is this node's name (the statement's first parameter).
            try claimed(where: "status = 'active' AND node = $1 AND coalesce(requested, 'change') = 'change'" + other, limit: 10_000,
                        lease: lease)
        }
    }

    private func claimed(where condition: String, limit: Int, lease: Duration) throws(ServiceError)
        -> [(claim: FleetClaim, row: StoreRow)] {
        guard limit > 0 else { return [] }
        let rows = try connection.run("""
            WITH next AS (SELECT gid FROM haul_downloads WHERE \(condition) ORDER BY position LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            UPDATE haul_downloads AS d SET status = 'active', node = $1, lease_until = clock_timestamp() + $2::interval,
                fence = d.fence + 1, requested = CASE WHEN d.requested = 'change' THEN NULL ELSE d.requested END
            FROM next WHERE d.gid = next.gid
            RETURNING d.fence, \(PostgresLayout.columnsOfD)
            """, [node, Self.interval(lease)])
        return rows.values.compactMap { values in
            guard let fence = values[0].flatMap({ Int64($0) }), let row = Self.row(Array(values.dropFirst())) else { return nil }
            return (FleetClaim(id: row.id, fence: fence), row)
        }.sorted { $0.row.position < $1.row.position }
    }

    /// How far a download this node runs is, carried to the table at each renewal (-1: unknown).
    struct Progress {
        var completed: Int64
        var total: Int64
        var bytesPerSecond: Int64
    }

    /// Extends the leases of `claims` and notes their `progress`; returns those this node no longer holds (another node
    /// claimed the download, or it was removed). A claim whose lease ended but that nobody took
    /// is still this node's: its fencing number is unchanged.
    ///
    /// - Throws: `store` when the server cannot be reached (the claims are then unknown).
    func renew(_ claims: [FleetClaim], lease: Duration, progress: [DownloadID: Progress] = [:]) throws(ServiceError) -> Set<FleetClaim> {
        guard !claims.isEmpty else { return [] }
        let now = claims.map { progress[$0.id] ?? Progress(completed: -1, total: -1, bytesPerSecond: 0) }
        let renewed = try connection.run("""
            UPDATE haul_downloads AS d SET lease_until = clock_timestamp() + $2::interval, bytes_per_second = c.speed,
                completed_length = CASE WHEN c.done >= 0 THEN c.done ELSE d.completed_length END,
                total_length = CASE WHEN c.total >= 0 THEN c.total ELSE d.total_length END
            FROM unnest($3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[]) AS c(gid, fence, done, total, speed)
            WHERE d.gid = c.gid AND d.fence = c.fence AND d.node = $1 AND d.status = 'active'
            RETURNING d.gid, d.fence
            """, [node, Self.interval(lease), Self.array(claims.map { Int64(bitPattern: $0.id.rawValue) }), Self.array(claims.map(\.fence)),
                  Self.array(now.map(\.completed)), Self.array(now.map(\.total)), Self.array(now.map(\.bytesPerSecond))])
        let kept = Set(renewed.values.compactMap { values -> FleetClaim? in
            guard let gid = values[0].flatMap({ Int64($0) }), let id = DownloadID(rawValue: UInt64(bitPattern: gid)),
                  let fence = values[1].flatMap({ Int64($0) }) else { return nil }
            return FleetClaim(id: id, fence: fence)
        })
        return Set(claims).subtracting(kept)
    }

    /// Whether a claim is still this node's with at least half a lease left (a read: no commit
    /// to wait for), extending it when less is left; `false` when it is no longer this node's.
    /// Nobody takes a row before its lease ends, so what holds now holds for that half lease.
    func holds(_ claim: FleetClaim, lease: Duration) throws(ServiceError) -> Bool {
        let left = try connection.run("""
            SELECT lease_until > clock_timestamp() + $4::interval FROM haul_downloads
            WHERE gid = $1 AND fence = $2 AND node = $3 AND status = 'active'
            """, [Self.text(claim.id), String(claim.fence), node, Self.interval(lease / 2)]).values.first
        guard let left else { return false }
        return left.first == "t" ? true : try extend(claim, lease: lease)
    }

    /// Extends one claim's lease; `false` when the claim is no longer this node's.
    func extend(_ claim: FleetClaim, lease: Duration) throws(ServiceError) -> Bool {
        try connection.run("""
            UPDATE haul_downloads SET lease_until = clock_timestamp() + $4::interval
            WHERE gid = $1 AND fence = $2 AND node = $3 AND status = 'active'
            """, [Self.text(claim.id), String(claim.fence), node, Self.interval(lease)]).affected == 1
    }

    /// Writes a download's row under this node's claim: a result keeps the node that holds the
    /// file; a waiting or paused row lets go of the claim.
    ///
    /// - Returns: `false` when the claim is no longer this node's (nothing was written).
    /// - Throws: `store` when the server cannot be reached.
    func write(_ row: StoreRow, under claim: FleetClaim) throws(ServiceError) -> Bool {
        try write([(row, claim)]).contains(row.id)
    }

    /// Writes rows under this node's claims in one statement (see ``write(_:under:)``).
    ///
    /// - Returns: the downloads written (a claim no longer this node's writes nothing).
    /// - Throws: `store` when the server cannot be reached.
    func write(_ pending: [(row: StoreRow, claim: FleetClaim)]) throws(ServiceError) -> Set<DownloadID> {
        guard !pending.isEmpty else { return [] }
        let rows = pending.map(\.row)
        // A pause or removal asked meanwhile wins over a row given back as waiting or paused; the
        // URLs and options are the table's (a change asked stands), and so is the queue place.
        // The rows locked in key order first, as every writer of many rows takes them: fewer deadlocks.
        let written = try connection.run("""
            WITH locked AS (SELECT gid FROM haul_downloads WHERE gid = ANY($2::bigint[]) ORDER BY gid FOR UPDATE)
            UPDATE haul_downloads AS d SET status = a.status, file = a.file, total_length = a.total, completed_length = a.done,
                completed_ranges = a.ranges, failure = a.failure, bytes_per_second = 0,
                requested = CASE WHEN a.status = 'waiting' AND d.requested = 'change' THEN NULL
                                 WHEN a.status = 'active' THEN d.requested END,
                position = CASE WHEN a.status IN \(Self.resultStatuses) THEN nextval('haul_places') * 1024.0 ELSE d.position END,
                node = CASE WHEN a.status IN ('waiting', 'paused') THEN NULL ELSE d.node END,
                lease_until = CASE WHEN a.status = 'active' THEN d.lease_until END
            FROM (SELECT c.gid, c.fence, c.file, c.total, c.done, c.ranges, c.failure,
                         CASE WHEN c.status IN ('waiting', 'paused') AND h.requested = 'pause' THEN 'paused'
                              WHEN c.status IN ('waiting', 'paused') AND h.requested = 'remove' THEN 'removed'
                              ELSE c.status END AS status
                  FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::text[])
                      AS c(gid, fence, status, file, total, done, ranges, failure)
                  JOIN haul_downloads AS h ON h.gid = c.gid) AS a
            WHERE d.gid = a.gid AND d.fence = a.fence AND d.node = $1 AND d.status = 'active' AND d.gid IN (SELECT gid FROM locked)
            RETURNING d.gid
            """, [node, Self.array(rows.map { Int64(bitPattern: $0.id.rawValue) }), Self.array(pending.map(\.claim.fence)),
                  Self.array(rows.map { $0.status.rawValue }), Self.array(rows.map(\.file)), Self.array(rows.map(\.totalBytes)),
                  Self.array(rows.map(\.completedBytes)), Self.array(rows.map { $0.completedRanges.map(StoreText.encode) }),
                  Self.array(rows.map { $0.failure.map(StoreText.encode) })])
        return Set(written.values.compactMap { values in
            values[0].flatMap { Int64($0) }.flatMap { DownloadID(rawValue: UInt64(bitPattern: $0)) }
        })
    }

    /// Says this node is alive: its address, how many it runs and how fast.
    func heartbeat(address: String, active: Int, bytesPerSecond: Int64) throws(ServiceError) {
        try connection.run("""
            INSERT INTO haul_nodes (node, address, renewed_at, active, bytes_per_second) VALUES ($1, $2, clock_timestamp(), $3, $4)
            ON CONFLICT (node) DO UPDATE SET address = EXCLUDED.address, renewed_at = EXCLUDED.renewed_at,
                active = EXCLUDED.active, bytes_per_second = EXCLUDED.bytes_per_second
            """, [node, address, String(active), String(bytesPerSecond)])
    }

    /// Starts receiving the fleet's notifications: work to claim, events, requests.
    func listen() throws(ServiceError) {
        for channel in [Self.workChannel, Self.eventChannel, Self.requestChannel] { try connection.run("LISTEN \(channel)") }
    }

    /// Waits up to `timeout` for notifications, or until `wakeup` (a descriptor) is readable;
    /// the notifications received (none when the time ran out or `wakeup` woke it).
    ///
    /// - Throws: `store` when the connection is lost.
    func waitForNotifications(timeout: Duration, wakeup: Int32 = -1) throws(ServiceError) -> [PostgresConnection.Notification] {
        let pending = try connection.notifications()
        guard pending.isEmpty else { return pending }
        var descriptors = [pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakeup, events: Int16(POLLIN), revents: 0)]
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&descriptors, wakeup >= 0 ? 2 : 1, milliseconds) > 0, descriptors[0].revents != 0 else { return [] }
        return try connection.notifications()
    }

    /// Connects again when the connection was lost (and listens again when `listening`).
    ///
    /// - Throws: `store` while the server cannot be reached.
    func reconnectIfLost(listening: Bool) throws(ServiceError) {
        guard !connection.isConnected else { return }
        try connection.reconnect()
        if listening { try listen() }
    }

    static func row(_ values: [String?]) -> StoreRow? {
        PostgresLayout.row(values)
    }

    static func text(_ id: DownloadID) -> String {
        PostgresLayout.key(id)
    }

    /// The condition that leaves out `ids` (numbers only: nothing of a caller's text).
    private static func sparing(_ ids: [DownloadID]) -> String {
        ids.isEmpty ? "" : " AND gid <> ALL('\(array(ids.map { Int64(bitPattern: $0.rawValue) }))'::bigint[])"
    }

    private static func array(_ values: [Int64]) -> String {
        "{" + values.map(String.init).joined(separator: ",") + "}"
    }

    /// An array's text form for PostgreSQL (`NULL` for nil).
    static func array(_ values: [Int64?]) -> String {
        "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }

    /// A text array's form for PostgreSQL: every element quoted, `"` and `\` escaped, `NULL` for nil,
    /// U+0000 left out (no PostgreSQL text holds it, and the parameter would end there).
    static func array(_ values: [String?]) -> String {
        "{" + values.map { value in
            guard let value else { return "NULL" }
            var quoted = "\""
            for scalar in value.unicodeScalars where scalar != "\u{0}" {
                if scalar == "\"" || scalar == "\\" { quoted.unicodeScalars.append("\\") }
                quoted.unicodeScalars.append(scalar)
            }
            return quoted + "\""
        }.joined(separator: ",") + "}"
    }

    private static func interval(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000) milliseconds"
    }
}

