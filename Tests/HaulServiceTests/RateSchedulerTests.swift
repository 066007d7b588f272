import Foundation
import HaulCore
import HaulTestSupport
import Testing
@testable import HaulService

/// The scheduler driven by a fake clock: what it applies across boundaries, a rate set by hand
/// and how long it holds, a new schedule.
@Suite struct RateSchedulerTests {
    static let mebibyte: Int64 = 1 << 20

    static func date(_ text: String) -> Date {
        Date(timeIntervalSince1970: TimeInterval(LimitScheduleDecisionTests.at(text)))
    }

    static func scheduler(_ schedule: String, outside: Int64?, at time: String) throws -> (RateScheduler, SettableClock, AppliedRates) {
        let clock = SettableClock(fixed: date(time)), applied = AppliedRates()
        let scheduler = RateScheduler(schedule: try LimitSchedule(parsing: schedule), outside: outside,
                                      zone: FixedTimeZone(secondsEastOfUTC: 0), clock: clock, apply: applied.apply)
        return (scheduler, clock, applied)
    }

    @Test func theRateChangesAtEachBoundaryAndIsAppliedOnce() throws {
        let (scheduler, clock, applied) = try Self.scheduler("Mon-Fri 09:00-18:00=2M", outside: Self.mebibyte, at: "2025-06-02T08:59:59Z")
        #expect(scheduler.update().nextChange == LimitScheduleDecisionTests.at("2025-06-02T09:00:00Z"))
        #expect(applied.rates == [Self.mebibyte])
        clock.set(Self.date("2025-06-02T09:00:00Z"))
        scheduler.update()
        clock.set(Self.date("2025-06-02T12:00:00Z"))
        scheduler.update()
        #expect(applied.rates == [Self.mebibyte, 2 * Self.mebibyte])
        clock.set(Self.date("2025-06-02T18:00:00Z"))
        let evening = scheduler.update()
        #expect(applied.rates == [Self.mebibyte, 2 * Self.mebibyte, Self.mebibyte])
        #expect(evening.nextChange == LimitScheduleDecisionTests.at("2025-06-03T09:00:00Z") && evening.nextRate == 2 * Self.mebibyte)
    }

    @Test func aRateSetByHandHoldsUntilTheScheduleNextChangesAndThenRulesOutsideTheWindows() throws {
        let (scheduler, clock, applied) = try Self.scheduler("09:00-18:00=2M, 18:00-23:00=1M", outside: nil, at: "2025-06-02T10:00:00Z")
        scheduler.update()
        scheduler.setRate(512 << 10)
        #expect(applied.rates == [2 * Self.mebibyte, 512 << 10])
        let status = scheduler.status()
        #expect(status.setByHand && status.rate == 512 << 10 && status.outside == 512 << 10)
        #expect(status.nextChange == LimitScheduleDecisionTests.at("2025-06-02T18:00:00Z") && status.nextRate == Self.mebibyte)
        clock.set(Self.date("2025-06-02T18:00:00Z"))
        scheduler.update()
        #expect(!scheduler.status().setByHand)
        clock.set(Self.date("2025-06-02T23:00:00Z"))
        scheduler.update()
        #expect(applied.rates == [2 * Self.mebibyte, 512 << 10, Self.mebibyte, 512 << 10])
    }

    @Test func aRateSetByHandOutsideTheWindowsIsTheirRateFromThenOn() throws {
        let (scheduler, clock, applied) = try Self.scheduler("09:00-18:00=2M", outside: Self.mebibyte, at: "2025-06-02T08:00:00Z")
        scheduler.update()
        scheduler.setRate(3 * Self.mebibyte)
        // The schedule's next change is the window's start: no change at 18:00, where it is 3M again.
        let status = scheduler.status()
        #expect(status.nextChange == LimitScheduleDecisionTests.at("2025-06-02T09:00:00Z") && status.nextRate == 2 * Self.mebibyte)
        for time in ["2025-06-02T09:00:00Z", "2025-06-02T18:00:00Z"] {
            clock.set(Self.date(time))
            scheduler.update()
        }
        #expect(applied.rates == [Self.mebibyte, 3 * Self.mebibyte, 2 * Self.mebibyte, 3 * Self.mebibyte])
        // When the hand sets what the schedule says after it, the next change is the one after.
        clock.set(Self.date("2025-06-02T10:00:00Z"))
        scheduler.setRate(nil)
        #expect(scheduler.status().nextChange == LimitScheduleDecisionTests.at("2025-06-03T09:00:00Z"))
    }

    @Test func aNewScheduleAppliesAtOnceAndEndsARateSetByHand() throws {
        let (scheduler, _, applied) = try Self.scheduler("09:00-18:00=2M", outside: Self.mebibyte, at: "2025-06-02T10:00:00Z")
        scheduler.setRate(100)
        scheduler.setSchedule(try LimitSchedule(parsing: "10:00-11:00=5M"))
        #expect(applied.rates == [100, 5 * Self.mebibyte])
        #expect(!scheduler.status().setByHand && scheduler.status().outside == 100)
        scheduler.setSchedule(LimitSchedule())
        #expect(applied.rates == [100, 5 * Self.mebibyte, 100])
        // Without a schedule a rate set by hand simply is the rate.
        scheduler.setRate(nil)
        #expect(scheduler.status() == .init(schedule: LimitSchedule(), outside: nil, rate: nil, setByHand: false, nextChange: nil, nextRate: nil))
        #expect(applied.rates == [100, 5 * Self.mebibyte, 100, nil])
    }
}

/// The scheduler's thread on the real clock, shifted so that a boundary comes within seconds.
/// Exclusive: it times how soon after a boundary the rate changes (within a second).
@Suite(.exclusive, .serialized, .timeLimit(.minutes(1)))
struct RateSchedulerThreadTests {
    /// The names of this process's threads.
    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    @Test func theThreadAppliesTheRateWithinASecondOfTheBoundary() async throws {
        // 1.5 s before 12:00 on a Monday: the window ends then.
        let clock = SettableClock(reading: RateSchedulerTests.date("2025-06-02T11:59:58Z").addingTimeInterval(0.5))
        let boundary = Date().addingTimeInterval(1.5)
        let applied = AppliedRates()
        let scheduler = RateScheduler(schedule: try LimitSchedule(parsing: "00:00-12:00=1M"), outside: nil,
                                      zone: FixedTimeZone(secondsEastOfUTC: 0), clock: clock, apply: applied.apply)
        try scheduler.start()
        defer { scheduler.stop() }
        #expect(applied.rates == [1 << 20])
        #expect(await eventually(timeout: .seconds(10)) { applied.rates.count == 2 })
        let change = try #require(applied.last)
        #expect(change.rate == nil)
        let late = change.at.timeIntervalSince(boundary)
        #expect(late >= -0.01 && late < 1, "applied \(late) s after the boundary")
    }

    @Test func theThreadFollowsAClockSetForward() async throws {
        let clock = SettableClock(reading: RateSchedulerTests.date("2025-06-02T05:00:00Z"))
        let applied = AppliedRates()
        let scheduler = RateScheduler(schedule: try LimitSchedule(parsing: "Mon 09:00-10:00=1M"), outside: nil,
                                      zone: FixedTimeZone(secondsEastOfUTC: 0), clock: clock, recheck: .milliseconds(200),
                                      apply: applied.apply)
        try scheduler.start()
        #expect(applied.rates == [nil])
        #expect(await eventually { Self.threadNames().contains("haul-schedule") })
        clock.set(RateSchedulerTests.date("2025-06-02T09:30:00Z"))
        let jumped = Date()
        #expect(await eventually(timeout: .seconds(10)) { applied.rates == [nil, 1 << 20] })
        #expect(applied.last!.at.timeIntervalSince(jumped) < 1)
        scheduler.stop()
        #expect(await eventually { !Self.threadNames().contains("haul-schedule") })
        // Stopped: a boundary passes unseen, and a change still applies at once.
        clock.set(RateSchedulerTests.date("2025-06-02T10:30:00Z"))
        try await Task.sleep(for: .milliseconds(500))
        #expect(applied.rates == [nil, 1 << 20])
        scheduler.setSchedule(LimitSchedule())
        #expect(applied.rates == [nil, 1 << 20, nil])
    }
}
