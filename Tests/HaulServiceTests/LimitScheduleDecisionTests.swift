import Foundation
import HaulTestSupport
import Testing
@testable import HaulService

/// The rate in force at an instant and its next change, over a given zone: weekdays, windows
/// across midnight and across the week's end, the first listed winning, and Europe/Berlin's
/// summer time days (a time the clock skips, an hour it shows twice).
@Suite struct LimitScheduleDecisionTests {
    static let utc = FixedTimeZone(secondsEastOfUTC: 0)
    static let berlin = DatabaseTimeZone("Europe/Berlin")
    static let kibibyte: Int64 = 1 << 10, mebibyte: Int64 = 1 << 20

    /// Seconds since 1970 of an ISO 8601 time with its offset, such as `2025-06-02T10:00:00+00:00`.
    static func at(_ text: String) -> Int64 {
        let formatter = ISO8601DateFormatter()
        guard let date = formatter.date(from: text) else { fatalError("not a time: \(text)") }
        return Int64(date.timeIntervalSince1970)
    }

    static func decide(_ schedule: String, _ time: String, outside: Int64? = nil,
                       in zone: some ScheduleTimeZone = utc) throws -> LimitSchedule.Decision {
        try LimitSchedule(parsing: schedule).decision(at: at(time), outside: outside, in: zone)
    }

    @Test func weekdayWindowsAndTheRateOutsideThem() throws {
        let schedule = "Mon-Fri 09:00-18:00=2M, 23:00-07:00=0"
        // 2025-06-02 is a Monday.
        let working = try Self.decide(schedule, "2025-06-02T10:00:00Z", outside: Self.mebibyte)
        #expect(working == .init(rate: 2 * Self.mebibyte, entry: 0, nextChange: Self.at("2025-06-02T18:00:00Z"), nextRate: Self.mebibyte))
        #expect(try Self.decide(schedule, "2025-06-02T17:59:59Z", outside: Self.mebibyte).rate == 2 * Self.mebibyte)
        let evening = try Self.decide(schedule, "2025-06-02T18:00:00Z", outside: Self.mebibyte)
        #expect(evening == .init(rate: Self.mebibyte, entry: nil, nextChange: Self.at("2025-06-02T23:00:00Z"), nextRate: nil))
        let night = try Self.decide(schedule, "2025-06-03T03:00:00Z", outside: Self.mebibyte)
        #expect(night == .init(rate: nil, entry: 1, nextChange: Self.at("2025-06-03T07:00:00Z"), nextRate: Self.mebibyte))
        let saturday = try Self.decide(schedule, "2025-06-07T10:00:00Z", outside: Self.mebibyte)
        #expect(saturday == .init(rate: Self.mebibyte, entry: nil, nextChange: Self.at("2025-06-07T23:00:00Z"), nextRate: nil))
        // No rate outside: the night window changes nothing, so the next change is Monday's 09:00.
        let unlimited = try Self.decide(schedule, "2025-06-06T18:30:00Z")
        #expect(unlimited == .init(rate: nil, entry: nil, nextChange: Self.at("2025-06-09T09:00:00Z"), nextRate: 2 * Self.mebibyte))
    }

    @Test func aWindowAcrossMidnightBelongsToTheDayItStartsOn() throws {
        let schedule = "Fri 22:00-02:00=1K"
        #expect(try Self.decide(schedule, "2025-06-07T01:00:00Z").rate == Self.kibibyte)   // Saturday, Friday's window
        #expect(try Self.decide(schedule, "2025-06-06T01:00:00Z").rate == nil)             // Friday: Thursday has none
        #expect(try Self.decide(schedule, "2025-06-07T02:00:00Z").rate == nil)
        let before = try Self.decide(schedule, "2025-06-06T21:00:00Z")
        #expect(before.nextChange == Self.at("2025-06-06T22:00:00Z") && before.nextRate == Self.kibibyte)
    }

    @Test func aWindowAcrossTheWeeksEndGoesOnIntoMonday() throws {
        let schedule = "Sun 23:00-01:00=5K"
        let monday = try Self.decide(schedule, "2025-06-09T00:30:00Z", outside: Self.mebibyte)
        #expect(monday == .init(rate: 5 * Self.kibibyte, entry: 0, nextChange: Self.at("2025-06-09T01:00:00Z"), nextRate: Self.mebibyte))
        let sunday = try Self.decide(schedule, "2025-06-08T22:59:59Z", outside: Self.mebibyte)
        #expect(sunday.rate == Self.mebibyte && sunday.nextChange == Self.at("2025-06-08T23:00:00Z"))
        // From Monday 01:00 the next window is six days away.
        let after = try Self.decide(schedule, "2025-06-09T01:00:00Z", outside: Self.mebibyte)
        #expect(after.rate == Self.mebibyte && after.nextChange == Self.at("2025-06-15T23:00:00Z"))
    }

    @Test func whereWindowsOverlapTheFirstListedWins() throws {
        let schedule = "Sat+Sun 00:00-24:00=0, 09:00-18:00=1M"
        let outside = 256 * Self.kibibyte
        #expect(try Self.decide(schedule, "2025-06-07T10:00:00Z", outside: outside) ==
            .init(rate: nil, entry: 0, nextChange: Self.at("2025-06-09T00:00:00Z"), nextRate: outside))
        #expect(try Self.decide(schedule, "2025-06-09T10:00:00Z", outside: outside).entry == 1)
        // Friday evening: the weekend, then no change at Saturday's or Sunday's 09:00 and 18:00.
        let friday = try Self.decide(schedule, "2025-06-06T18:00:00Z", outside: outside)
        #expect(friday.nextChange == Self.at("2025-06-07T00:00:00Z") && friday.nextRate == nil)
    }

    @Test func aScheduleThatNeverChangesHasNoNextChange() throws {
        let always = try Self.decide("00:00-24:00=1M", "2025-06-02T10:00:00Z")
        #expect(always == .init(rate: Self.mebibyte, entry: 0, nextChange: nil, nextRate: nil))
        #expect(try Self.decide("", "2025-06-02T10:00:00Z", outside: 7) == .init(rate: 7, entry: nil, nextChange: nil, nextRate: nil))
        // Windows at the rate outside them change nothing either.
        #expect(try Self.decide("Mon 09:00-10:00=1M", "2025-06-02T09:30:00Z", outside: Self.mebibyte).nextChange == nil)
    }

    @Test func aStartInTheHourSpringSkipsIsTheEndOfTheGap() throws {
        // Europe/Berlin, 2024-03-31: the clock goes from 02:00 CET to 03:00 CEST (01:00 UTC).
        let schedule = "02:30-06:00=1M"
        let night = try Self.decide(schedule, "2024-03-31T01:59:59+01:00", in: Self.berlin)
        #expect(night == .init(rate: nil, entry: nil, nextChange: Self.at("2024-03-31T03:00:00+02:00"), nextRate: Self.mebibyte))
        #expect(try Self.decide(schedule, "2024-03-31T03:00:00+02:00", in: Self.berlin) ==
            .init(rate: Self.mebibyte, entry: 0, nextChange: Self.at("2024-03-31T06:00:00+02:00"), nextRate: nil))
        // The day before and the day after, 02:30 is 02:30.
        #expect(try Self.decide(schedule, "2024-03-30T02:29:59+01:00", in: Self.berlin).nextChange == Self.at("2024-03-30T02:30:00+01:00"))
        #expect(try Self.decide(schedule, "2024-04-01T02:29:59+02:00", in: Self.berlin).nextChange == Self.at("2024-04-01T02:30:00+02:00"))
        // A window wholly inside the gap does not happen that day; a week later it does.
        let skipped = try Self.decide("Sun 02:10-02:50=1M", "2024-03-31T01:00:00+01:00", in: Self.berlin)
        #expect(skipped.nextChange == Self.at("2024-04-07T02:10:00+02:00"))
    }

    @Test func theHourAutumnShowsTwiceBelongsToTheFirstShowing() throws {
        // Europe/Berlin, 2024-10-27: the clock goes from 03:00 CEST back to 02:00 CET (01:00 UTC).
        let across = "02:30-03:30=1M"
        #expect(try Self.decide(across, "2024-10-27T02:29:59+02:00", in: Self.berlin).nextChange == Self.at("2024-10-27T02:30:00+02:00"))
        let first = try Self.decide(across, "2024-10-27T02:30:00+02:00", in: Self.berlin)
        #expect(first == .init(rate: Self.mebibyte, entry: 0, nextChange: Self.at("2024-10-27T03:30:00+01:00"), nextRate: nil))
        #expect(try Self.decide(across, "2024-10-27T02:10:00+01:00", in: Self.berlin).rate == Self.mebibyte)   // two hours long
        // A window that ends at 02:30 ends at its first showing: no second half hour at 02:00 CET.
        let early = "01:00-02:30=1M"
        #expect(try Self.decide(early, "2024-10-27T02:15:00+02:00", in: Self.berlin).rate == Self.mebibyte)
        let second = try Self.decide(early, "2024-10-27T02:15:00+01:00", in: Self.berlin)
        #expect(second == .init(rate: nil, entry: nil, nextChange: Self.at("2024-10-28T01:00:00+01:00"), nextRate: Self.mebibyte))
    }

    @Test func localTimesAreWrittenWithTheirOffset() {
        #expect(Self.berlin.timestamp(Self.at("2024-03-31T01:00:00Z")) == "2024-03-31T03:00:00+02:00")
        #expect(Self.berlin.timestamp(Self.at("2024-02-29T23:30:00Z")) == "2024-03-01T00:30:00+01:00")
        #expect(Self.utc.timestamp(0) == "1970-01-01T00:00:00+00:00")
        #expect(Self.utc.timestamp(-1) == "1969-12-31T23:59:59+00:00")
        #expect(FixedTimeZone(secondsEastOfUTC: -(5 * 3600 + 30 * 60)).timestamp(Self.at("2000-03-01T05:29:59Z")) == "2000-02-29T23:59:59-05:30")
        #expect(DatabaseTimeZone("Asia/Kathmandu").timestamp(Self.at("2025-12-31T18:15:00Z")) == "2026-01-01T00:00:00+05:45")
    }

    @Test func theSystemZoneIsTheProcesssLocalTime() {
        let system = SystemTimeZone(), foundation = DatabaseTimeZone(TimeZone.current.identifier)
        for instant in stride(from: Self.at("2024-01-01T00:00:00Z"), to: Self.at("2025-01-01T00:00:00Z"), by: 86_400 / 4) {
            #expect(system.secondsEastOfUTC(at: instant) == foundation.secondsEastOfUTC(at: instant))
        }
    }

    /// Random schedules over random instants of 2024 in Berlin: the rate holds from the instant
    /// until the next change, which is what the decision says.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func theRateHoldsUntilTheNextChangeAndThenIsTheNextRate(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let start = Self.at("2024-01-01T00:00:00Z")
        for _ in 0..<40 {
            let schedule = LimitSchedule((0..<Int.random(in: 1...4, using: &random)).map { _ in
                let start = Int.random(in: 0..<96, using: &random) * 15
                var end = Int.random(in: 1...96, using: &random) * 15
                if end == start { end = (end + 60) % 1440 }
                return .init(days: .init(rawValue: UInt8.random(in: 1...127, using: &random)), start: start, end: end,
                             rate: [nil, 1024, 2048, 4096].randomElement(using: &random)!)
            })
            let instant = start + Int64.random(in: 0..<(366 * 86_400), using: &random)
            let decision = schedule.decision(at: instant, outside: 512, in: Self.berlin)
            let until = decision.nextChange ?? instant + 8 * 86_400
            for probe in stride(from: instant, to: until, by: 599) {
                #expect(schedule.decision(at: probe, outside: 512, in: Self.berlin).rate == decision.rate, "\(schedule) at \(probe)")
            }
            #expect(schedule.decision(at: until - 1, outside: 512, in: Self.berlin).rate == decision.rate, "\(schedule) at \(instant)")
            if let change = decision.nextChange {
                #expect(schedule.decision(at: change, outside: 512, in: Self.berlin).rate == decision.nextRate, "\(schedule) at \(instant)")
            }
        }
    }
}
