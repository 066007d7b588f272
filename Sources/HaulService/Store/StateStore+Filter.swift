/// How a store finds the results that match a ``DownloadFilter``: an SQL condition narrows the
/// rows (ASCII-folded text found in the URLs, the file or the options), then each row read is
/// checked with the filter itself, so both stores answer exactly as the list in memory does.
extension DownloadFilter {
    /// Every status the filter wants, as an SQL list (never empty: none is `('')`).
    var statusList: String {
        let wanted = ServiceDownload.Status.allCases.filter(wants)
        return "(" + (wanted.isEmpty ? "''" : wanted.map { "'\($0.rawValue)'" }.joined(separator: ", ")) + ")"
    }

    /// The result statuses (complete, error, removed) the filter wants, as an SQL list; `nil`
    /// when it wants none.
    var resultStatusList: String? {
        let wanted = ServiceDownload.Status.allCases.filter { $0.isStopped && wants($0) }
        guard !wanted.isEmpty else { return nil }
        return "(" + wanted.map { "'\($0.rawValue)'" }.joined(separator: ", ") + ")"
    }

    /// The condition on a row's text columns, with `function(haystack, needle)` giving the
    /// needle's place (0: absent) and `placeholder(n)` the n-th parameter (from 1), and the
    /// needle's parameters (the folded text, and its form in the options column); empty when
    /// the filter has no text.
    func textCondition(_ function: (String, String) -> String, placeholder: (Int) -> String) -> (sql: String, parameters: [String]) {
        guard !text.isEmpty else { return ("", []) }
        let needle = String(decoding: self.needle, as: UTF8.self)
        let plain = placeholder(1), escaped = placeholder(2)
        let sql = " AND (\(function("lower(urls)", plain)) > 0 OR \(function("lower(coalesce(file, ''))", plain)) > 0"
            + " OR \(function("lower(options)", escaped)) > 0)"
        return (sql, [needle, StoreText.escape(needle)])
    }

    /// Whether a row the condition let through matches.
    func matches(_ row: StoreRow) -> Bool {
        matches(status: row.status, urls: row.urls, file: row.file, fileName: row.options.fileName, needle: needle)
    }
}
