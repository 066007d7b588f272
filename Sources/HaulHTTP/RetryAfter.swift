import HaulCore
/// The `Retry-After` response header (RFC 9110 §10.2.3): how long a server asks a client to
/// wait before it tries again, as delay-seconds or as an HTTP-date.
package enum RetryAfter {
    /// How long `value` asks to wait, measured from `now`.
    ///
    /// - Parameters:
    ///   - value: the header value, if any.
    ///   - now: the current time in seconds since 1970-01-01 00:00 UTC (a date is relative to it).
    /// - Returns: the delay (zero for a date in the past; a huge number of seconds stays huge, the
    ///   caller clamps it), or `nil` when there is no value or it is neither form.
    package static func delay(_ value: String?, now: Double) -> Duration? {
        guard let text = value?.trimmingOWS(), !text.isEmpty else { return nil }
        if text.utf8.allSatisfy(isDigit) {
            return .seconds(Int64(text) ?? Int64.max)   // more digits than Int64 holds: "forever"
        }
        guard let date = httpDate(text) else { return nil }
        let seconds = Double(date) - now
        return seconds > 0 ? .milliseconds(Int64(seconds * 1000)) : .zero
    }

    /// Seconds since 1970 of an HTTP-date: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), or the
    /// obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`)
    /// forms, which recipients must still accept.
    package static func httpDate(_ text: String) -> Int64? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let day: Int64?, month: Int64?, year: Int64?, time: String
        switch words.count {
        case 6 where words[0].hasSuffix(",") && words[5] == "GMT":   // IMF-fixdate
            (day, month, year, time) = (Int64(words[1]), monthNumber(words[2]), Int64(words[3]), words[4])
            guard words[1].count == 2, words[3].count == 4 else { return nil }
        case 4 where words[0].hasSuffix(",") && words[3] == "GMT":   // RFC 850
            let parts = words[1].split(separator: "-").map(String.init)
            guard parts.count == 3, parts[2].count == 2, let short = Int64(parts[2]) else { return nil }
            (day, month, year, time) = (Int64(parts[0]), monthNumber(parts[1]), short < 70 ? 2000 + short : 1900 + short, words[2])
        case 5:   // asctime
            (day, month, year, time) = (Int64(words[2]), monthNumber(words[1]), Int64(words[4]), words[3])
        default:
            return nil
        }
        let clock = time.split(separator: ":").map { Int64($0) }
        guard let day, let month, let year, (1...31).contains(day), year >= 1970, year < 10_000,
              clock.count == 3, let hour = clock[0], let minute = clock[1], let second = clock[2],
              (0..<24).contains(hour), (0..<60).contains(minute), (0...60).contains(second)
        else { return nil }
        return daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func monthNumber(_ name: String) -> Int64? {
        months.firstIndex(of: name).map { Int64($0) + 1 }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's algorithm).
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
