/// A ``DownloadFilter`` as PostgreSQL's condition on the fleet's list: the statuses, and the
/// folded text found in the `search` column (``PostgresLayout``), which folds as the filter does,
/// so the rows PostgreSQL counts and pages are the filter's matches exactly.
extension DownloadFilter {
    /// Every status the filter wants, as an SQL list (never empty: none is `('')`).
    var statusList: String {
        let wanted = ServiceDownload.Status.allCases.filter(wants)
        return "(" + (wanted.isEmpty ? "''" : wanted.map { "'\($0.rawValue)'" }.joined(separator: ", ")) + ")"
    }

    /// The `WHERE` condition and its parameters (`$1`, the folded text, when there is one).
    ///
    /// The column joins the fields with line feeds: a text with one (which the RPC refuses)
    /// could match across two fields.
    var condition: (sql: String, parameters: [String]) {
        let statuses = "status IN \(statusList)"
        guard !text.isEmpty else { return (statuses, []) }
        return (statuses + " AND strpos(search, $1) > 0", [String(decoding: needle, as: UTF8.self)])
    }
}
