import Foundation
import HaulCore
import Testing

/// Days since 1970 as calendar dates, against Foundation's Gregorian calendar in UTC (from its first
/// day, 1582-10-15: before it Foundation counts Julian dates).
@Suite struct CivilDateTests {
    @Test(arguments: [-141_427, -100_000, -1, 0, 1, 11_016, 19_782, 20_793, 2_932_896])
    func daysAreTheGregorianCalendarsDates(days: Int64) throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(days) * 86_400))
        let date = CivilDate(daysSince1970: days)
        #expect([date.year, date.month, date.day] == [parts.year, parts.month, parts.day].map { Int64($0 ?? -1) })
    }

    @Test func consecutiveDaysFollowEachOther() {
        var previous = CivilDate(daysSince1970: -800)
        for days in Int64(-799)...1_600 {
            let date = CivilDate(daysSince1970: days)
            let nextDay = date.year == previous.year && date.month == previous.month && date.day == previous.day + 1
            let nextMonth = date.day == 1 && (date.month == previous.month + 1 || (date.month == 1 && previous.month == 12))
            #expect(nextDay || nextMonth, "\(previous) then \(date)")
            previous = date
        }
    }
}
