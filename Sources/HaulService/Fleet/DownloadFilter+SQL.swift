/// How a fleet's list finds the downloads that match a ``DownloadFilter``: an SQL condition
/// narrows the rows (text found in the URLs, the file or the options, ASCII letters folded as the
/// filter folds them), then each row read is checked with the filter itself, so PostgreSQL
/// answers exactly as one service's index does.
extension DownloadFilter {
    /// Every status the filter wants, as an SQL list (never empty: none is `('')`).
    var statusList: String {
        let wanted = ServiceDownload.Status.allCases.filter(wants)
        return "(" + (wanted.isEmpty ? "''" : wanted.map { "'\($0.rawValue)'" }.joined(separator: ", ")) + ")"
    }

    /// The condition on a row's text columns (`$1` the folded text, `$2` its form in the options
    /// column, also folded), and those parameters; empty when the filter has no text.
    var textCondition: (sql: String, parameters: [String]) {
        guard !text.isEmpty else { return ("", []) }
        let needle = String(decoding: self.needle, as: UTF8.self)
        let escaped = String(decoding: Self.folded(StoreText.escape(needle).utf8), as: UTF8.self)
        let sql = " AND (strpos(\(Self.asciiLower("urls")), $1) > 0 OR strpos(\(Self.asciiLower("coalesce(file, '')")), $1) > 0"
            + " OR strpos(\(Self.asciiLower("options")), $2) > 0)"
        return (sql, [needle, escaped])
    }

    /// `column` with its ASCII letters, and only those, in lower case (PostgreSQL's `lower()`
    /// folds others too, which would lose a needle that keeps them).
    static func asciiLower(_ column: String) -> String {
        "translate(\(column), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
    }

    /// Whether a row the condition let through matches.
    func matches(_ row: StoreRow) -> Bool {
        matches(status: row.status, urls: row.urls, file: row.file, fileName: row.options.fileName, needle: needle)
    }
}
