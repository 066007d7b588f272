/// A row of the fleet's list and the node that runs or ran it.
struct FleetRow {
    var row: StoreRow
    var node: String?
    /// Its speed at its node's last renewal (active only).
    var bytesPerSecond: Int64 = 0
}

/// The whole fleet's list, read and changed by any node (the RPC's side of ``FleetQueue``).
extension FleetQueue {
    static let queueStatuses = "('waiting', 'paused')"
    static let resultStatuses = "('complete', 'error', 'removed')"
    /// The channel of events (`GID KIND`), for every node's observers.
    static let eventChannel = "haul_events"
    /// The channel that tells nodes a change was asked of a download they run.
    static let requestChannel = "haul_requests"

    /// How many rows have one of `statuses` (an SQL list).
    func count(_ statuses: String) throws(ServiceError) -> Int {
        Int(try connection.value("SELECT count(*) FROM haul_downloads WHERE status IN \(statuses)") ?? "") ?? 0
    }

    /// Rows with one of `statuses`, in place order, `range` of them.
    func rows(_ statuses: String, _ range: Range<Int>) throws(ServiceError) -> [FleetRow] {
        guard !range.isEmpty else { return [] }
        return try select("WHERE status IN \(statuses) ORDER BY position, gid OFFSET \(range.lowerBound) LIMIT \(range.count)")
    }

    /// The row of `id`, if any.
    func row(_ id: DownloadID) throws(ServiceError) -> FleetRow? {
        try select("WHERE gid = $1", [Self.text(id)]).first
    }

    /// Identifiers whose 16-digit hexadecimal form begins with `prefix` (already checked as hex).
    func identifiers(withPrefix prefix: String, limit: Int) throws(ServiceError) -> [DownloadID] {
        if let id = DownloadID(hex: prefix) {   // a whole GID: its key
            return try row(id) == nil ? [] : [id]
        }
        return try connection.run("SELECT gid FROM haul_downloads WHERE lpad(to_hex(gid), 16, '0') LIKE $1 || '%' LIMIT \(limit)",
                           [prefix.lowercased()]).values.compactMap { values in
            values[0].flatMap { Int64($0) }.flatMap { DownloadID(rawValue: UInt64(bitPattern: $0)) }
        }
    }

    /// Changes the status of a download whose status is one of `from`, and tells the fleet.
    ///
    /// - Returns: whether a row changed.
    func setStatus(_ id: DownloadID, from: String, to status: ServiceDownload.Status, kind: ServiceEvent.Kind) throws(ServiceError) -> Bool {
        try connection.transaction { () throws(ServiceError) in
            let place = status.isStopped ? "nextval('haul_places') * 1024" : "position"
            let changed = try connection.run("""
                UPDATE haul_downloads SET status = $2, position = \(place), node = CASE WHEN $2 IN ('waiting', 'paused') THEN NULL ELSE node END
                WHERE gid = $1 AND status IN \(from)
                """, [Self.text(id), status.rawValue]).affected
            if changed > 0 { try notify(id, kind, wakesNodes: status == .waiting) }
            return changed > 0
        }
    }

    /// Asks the node that runs `id` to pause or remove it.
    ///
    /// - Returns: whether the download is active (and so asked).
    func request(_ id: DownloadID, _ change: String) throws(ServiceError) -> Bool {
        try connection.transaction { () throws(ServiceError) in
            // A removal asked stays asked: a later pause does not undo it.
            let asked = try connection.run("""
                UPDATE haul_downloads SET requested = CASE WHEN requested = 'remove' THEN requested ELSE $2 END
                WHERE gid = $1 AND status = 'active'
                """, [Self.text(id), change]).affected
            if asked > 0 { try connection.run("NOTIFY \(Self.requestChannel)") }
            return asked > 0
        }
    }

    /// The changes asked of downloads this node runs: `(claim, change)`.
    func requests() throws(ServiceError) -> [(FleetClaim, String)] {
        try connection.run("SELECT gid, fence, requested FROM haul_downloads WHERE node = $1 AND status = 'active' AND requested IS NOT NULL",
                           [node]).values.compactMap { values in
            guard let id = values[0].flatMap({ Int64($0) }).flatMap({ DownloadID(rawValue: UInt64(bitPattern: $0)) }),
                  let fence = values[1].flatMap({ Int64($0) }), let change = values[2] else { return nil }
            return (FleetClaim(id: id, fence: fence), change)
        }
    }

    /// Forgets a result.
    func forget(_ id: DownloadID) throws(ServiceError) -> Bool {
        try connection.transaction { () throws(ServiceError) in
            let gone = try connection.run("DELETE FROM haul_downloads WHERE gid = $1 AND status IN \(Self.resultStatuses)",
                                          [Self.text(id)]).affected
            if gone > 0 { try notify(id, .forgotten, wakesNodes: false) }
            return gone > 0
        }
    }

    /// Tells every node's observers of an event (sent when the transaction commits).
    func notify(_ id: DownloadID, _ kind: ServiceEvent.Kind, wakesNodes: Bool) throws(ServiceError) {
        try notify([ServiceEvent(id: id, kind: kind)])
        if wakesNodes { try connection.run("NOTIFY \(Self.workChannel)") }
    }

    /// Tells every node's observers of events, many to a notification (sent when the
    /// transaction commits).
    func notify(_ events: [ServiceEvent]) throws(ServiceError) {
        for payload in Self.payloads(events) { try connection.run("SELECT pg_notify($1, $2)", [Self.eventChannel, payload]) }
    }

    /// Events as notification payloads: a line `GID KIND` each, as many lines to a payload as
    /// fit well below PostgreSQL's 8,000 bytes.
    static func payloads(_ events: [ServiceEvent]) -> [String] {
        let lines = events.map { "\($0.id.hex) \($0.kind.rawValue)" }
        return stride(from: 0, to: lines.count, by: eventsPerNotification).map { start in
            lines[start..<min(start + eventsPerNotification, lines.count)].joined(separator: "\n")
        }
    }

    /// Lines of at most 16 + 1 + 10 bytes (the longest kind) and a newline: 200 take under 5,600 bytes.
    static let eventsPerNotification = 200

    /// The events a notification's payload carries (lines it cannot read are left out).
    static func events(_ payload: String) -> [ServiceEvent] {
        payload.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count == 2, let id = DownloadID(hex: String(words[0])),
                  let kind = ServiceEvent.Kind(rawValue: String(words[1])) else { return nil }
            return ServiceEvent(id: id, kind: kind)
        }
    }

    /// Counts by status.
    func counts() throws(ServiceError) -> [String: Int] {
        var counts: [String: Int] = [:]
        for values in try connection.run("SELECT status, count(*) FROM haul_downloads GROUP BY status").values {
            counts[values[0] ?? ""] = Int(values[1] ?? "") ?? 0
        }
        return counts
    }

    func select(_ clause: String, _ parameters: [String?] = []) throws(ServiceError) -> [FleetRow] {
        try connection.run("SELECT \(Self.columns), node, bytes_per_second FROM haul_downloads \(clause)", parameters).values.compactMap { values in
            Self.row(Array(values.prefix(10))).map { FleetRow(row: $0, node: values[10], bytesPerSecond: Int64(values[11] ?? "") ?? 0) }
        }
    }
}

/// A node of a fleet as its line in `haul_nodes` says.
public struct FleetNodeStatus: Sendable, Equatable {
    /// Its name.
    public var name: String
    /// Where it listens.
    public var address: String
    /// Downloads it runs.
    public var active: Int
    /// Their speed together, in bytes per second.
    public var bytesPerSecond: Int64
    /// Seconds since it last renewed its claims.
    public var secondsSinceRenewal: Double
}

extension FleetQueue {
    /// Every node's line, by name.
    func nodes() throws(ServiceError) -> [FleetNodeStatus] {
        try connection.run("""
            SELECT node, address, active, bytes_per_second, extract(epoch FROM clock_timestamp() - renewed_at)
            FROM haul_nodes ORDER BY node
            """).values.map { values in
            FleetNodeStatus(name: values[0] ?? "", address: values[1] ?? "", active: Int(values[2] ?? "") ?? 0,
                            bytesPerSecond: Int64(values[3] ?? "") ?? 0, secondsSinceRenewal: Double(values[4] ?? "") ?? 0)
        }
    }
}
