/// A day of the proleptic Gregorian calendar, from its number of days since 1970-01-01.
package struct CivilDate: Equatable, Sendable {
    package var year: Int64
    /// 1-12.
    package var month: Int64
    /// 1-31.
    package var day: Int64

    /// The date `days` days after 1970-01-01 (before it when negative), by Howard Hinnant's
    /// `civil_from_days`.
    package init(daysSince1970 days: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }
}
