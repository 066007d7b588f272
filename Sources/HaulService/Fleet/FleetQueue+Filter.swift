/// The fleet's list filtered (the RPC's `haul.tellMatching` and `haul.changeMatching`).
extension FleetQueue {
    /// The list's order: active, then the queue, then the results, each by place.
    static let listOrder = "ORDER BY CASE WHEN status = 'active' THEN 0 WHEN status IN \(queueStatuses) THEN 1 ELSE 2 END, position, gid"

    /// Every download that matches `filter`, in the list's order.
    func matching(_ filter: DownloadFilter) throws(ServiceError) -> [DownloadMatch] {
        let (condition, parameters) = filter.condition
        let sql = "SELECT gid, status FROM haul_downloads WHERE \(condition) \(Self.listOrder)"
        return try connection.run(sql, parameters).values.compactMap { values in
            guard let id = values[0].flatMap({ Int64($0) }).flatMap({ DownloadID(rawValue: UInt64(bitPattern: $0)) }),
                  let status = ServiceDownload.Status(rawValue: values[1] ?? "") else { return nil }
            return DownloadMatch(id: id, status: status)
        }
    }

    /// How many match `filter`, and the rows of those at the places `pick` chooses given that count.
    func matchingPage(_ filter: DownloadFilter, _ pick: (Int) -> Range<Int>) throws(ServiceError) -> (total: Int, rows: [FleetRow]) {
        let (condition, parameters) = filter.condition
        let total = Int(try connection.value("SELECT count(*) FROM haul_downloads WHERE \(condition)", parameters) ?? "") ?? 0
        let range = pick(total).clamped(to: 0..<total)
        guard !range.isEmpty else { return (total, []) }
        let rows = try select("WHERE \(condition) \(Self.listOrder) OFFSET \(range.lowerBound) LIMIT \(range.count)", parameters)
        return (total, rows)
    }
}
