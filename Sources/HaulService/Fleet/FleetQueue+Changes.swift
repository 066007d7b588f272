/// Changes of the fleet's list that touch many rows or a place in the queue.
extension FleetQueue {
    static let waitingOnly = "('waiting')"
    static let activeOnly = "('active')"

    /// Pauses every waiting download and asks the nodes to pause the active ones; or puts every
    /// paused download back in the queue.
    func changeAll(pausing: Bool) throws(ServiceError) {
        try connection.transaction { () throws(ServiceError) in
            if pausing {
                try connection.run("UPDATE haul_downloads SET status = 'paused' WHERE status = 'waiting'")
                try connection.run("""
                    UPDATE haul_downloads SET requested = 'pause' WHERE gid IN (
                        SELECT gid FROM haul_downloads WHERE status = 'active' AND requested IS DISTINCT FROM 'remove' ORDER BY gid FOR UPDATE)
                    """)
                try connection.run("NOTIFY \(Self.requestChannel)")
            } else {
                try connection.run("UPDATE haul_downloads SET status = 'waiting' WHERE status = 'paused'")
                try connection.run("NOTIFY \(Self.workChannel)")
            }
        }
    }

    /// Forgets every result.
    func forgetAll() throws(ServiceError) {
        try connection.run("DELETE FROM haul_downloads WHERE status IN \(Self.resultStatuses)")
    }

    /// Moves a download of the queue (waiting or paused) by `offset` places from `origin`,
    /// clamped; returns its new place (0 is the front).
    func move(_ id: DownloadID, by offset: Int, from origin: DownloadService.QueueOrigin) throws(ServiceError) -> Int {
        try connection.transaction { () throws(ServiceError) in
            guard let mine = try connection.value("""
                SELECT position FROM haul_downloads WHERE gid = $1 AND status IN \(Self.queueStatuses) FOR UPDATE
                """, [Self.text(id)]) else { throw ServiceError(.notFound, "GID \(id.hex) is not in the queue") }
            let count = try self.count(Self.queueStatuses)
            let current = Int(try connection.value("""
                SELECT count(*) FROM haul_downloads WHERE status IN \(Self.queueStatuses) AND (position, gid) < ($1::float8, $2::bigint)
                """, [mine, Self.text(id)]) ?? "") ?? 0
            let base = switch origin {
            case .front: 0
            case .current: current
            case .back: count - 1
            }
            let target = min(max(0, base.addingReportingOverflow(offset).partialValue), count - 1)
            guard target != current else { return target }
            let others = "FROM haul_downloads WHERE status IN \(Self.queueStatuses) AND gid <> $1 ORDER BY position, gid"
            let low = target > 0 ? try connection.value("SELECT position \(others) OFFSET \(target - 1) LIMIT 1", [Self.text(id)]) : nil
            let high = try connection.value("SELECT position \(others) OFFSET \(target) LIMIT 1", [Self.text(id)])
            let place: Double = switch (low.flatMap(Double.init), high.flatMap(Double.init)) {
            case (nil, nil): Double(mine) ?? 0
            case (let low?, nil): low + 1024
            case (nil, let high?): high - 1024
            case (let low?, let high?): low + (high - low) / 2
            }
            try connection.run("UPDATE haul_downloads SET position = $2 WHERE gid = $1", [Self.text(id), String(place)])
            return target
        }
    }

    /// Replaces the options or URLs of a download in the queue; for an active one, asks its node
    /// to restart its transfer with them (a `change` request).
    ///
    /// - Throws: `invalidState` for a result; `notFound`.
    func change(_ id: DownloadID, options: ServiceDownloadOptions?, urls: [String]?) throws(ServiceError) {
        let changed = try connection.transaction { () throws(ServiceError) -> Int in
            let changed = try connection.run("""
                UPDATE haul_downloads SET options = coalesce($2, options), urls = coalesce($3, urls),
                    requested = CASE WHEN status = 'active' THEN coalesce(requested, 'change') ELSE requested END
                WHERE gid = $1 AND status IN ('waiting', 'paused', 'active')
                RETURNING status
                """, [Self.text(id), options.map(StoreText.encode), urls?.joined(separator: "\n")]).values
            if changed.first?.first == "active" { try connection.run("NOTIFY \(Self.requestChannel)") }
            return changed.count
        }
        guard changed == 0 else { return }
        guard try row(id) != nil else { throw ServiceError(.notFound, "GID \(id.hex) is not found") }
        throw ServiceError(.invalidState, "Cannot change option for GID#\(id.hex)")
    }

    /// Clears a `change` request of a download this node runs under `claim`, once carried out
    /// with `row`'s options and URLs: a change asked meanwhile (other values) stays asked.
    func clearRequest(_ claim: FleetClaim, appliedFrom row: StoreRow) throws(ServiceError) {
        try connection.run("""
            UPDATE haul_downloads SET requested = NULL
            WHERE gid = $1 AND fence = $2 AND requested = 'change' AND options = $3 AND urls = $4
            """, [Self.text(claim.id), String(claim.fence), StoreText.encode(row.options), row.urls.joined(separator: "\n")])
    }
}
