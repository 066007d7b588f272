/// The fleet's list filtered (the RPC's `haul.tellMatching` and `haul.changeMatching`).
extension FleetQueue {
    /// Every download that matches `filter`, in the list's order: active, then the queue, then
    /// the results, each by place.
    ///
    /// PostgreSQL narrows the rows by folded text; each row it returns is checked with the filter
    /// itself (its `lower()` folds more than ASCII letters).
    func matching(_ filter: DownloadFilter) throws(ServiceError) -> [DownloadMatch] {
        let text = filter.textCondition
        let order = "ORDER BY CASE WHEN status = 'active' THEN 0 WHEN status IN \(Self.queueStatuses) THEN 1 ELSE 2 END, position, gid"
        guard !text.sql.isEmpty else {
            let sql = "SELECT gid, status FROM haul_downloads WHERE status IN \(filter.statusList) \(order)"
            return try connection.run(sql).values.compactMap { values in
                guard let id = Self.identifier(values[0]), let status = ServiceDownload.Status(rawValue: values[1] ?? "") else { return nil }
                return DownloadMatch(id: id, status: status)
            }
        }
        let rows = try connection.run("SELECT \(Self.columns) FROM haul_downloads WHERE status IN \(filter.statusList)\(text.sql) \(order)",
                                      text.parameters).values.compactMap(Self.row)
        return rows.filter(filter.matches).map { DownloadMatch(id: $0.id, status: $0.status) }
    }

    /// The rows of `ids` (those still in the table), by identifier.
    func rows(_ ids: [DownloadID]) throws(ServiceError) -> [DownloadID: FleetRow] {
        guard !ids.isEmpty else { return [:] }
        let list = "{" + ids.map(Self.text).joined(separator: ",") + "}"
        let rows = try select("WHERE gid = ANY($1::bigint[])", [list])
        return Dictionary(rows.map { ($0.row.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    private static func identifier(_ value: String?) -> DownloadID? {
        value.flatMap { Int64($0) }.flatMap { DownloadID(rawValue: UInt64(bitPattern: $0)) }
    }
}
