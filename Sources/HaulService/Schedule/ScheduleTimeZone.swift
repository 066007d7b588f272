#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// A time zone as a ``LimitSchedule`` needs it: local time's offset from UTC at each instant.
///
/// Instants are whole seconds since 1970-01-01 00:00 UTC; local time is the instant plus its
/// offset, so the offset's changes (summer time) are the zone's only rules a schedule needs.
public protocol ScheduleTimeZone: Sendable {
    /// Seconds local time is ahead of UTC at `instant` (negative west of Greenwich).
    func secondsEastOfUTC(at instant: Int64) -> Int
}

/// The process's local time: the zone in `TZ`, else the system's (`/etc/localtime`), as the C
/// library reads it (`localtime_r`). The C library reads the zone once; a change of the system's
/// zone is seen by the next process.
public struct SystemTimeZone: ScheduleTimeZone {
    /// The process's local time.
    public init() {}

    public func secondsEastOfUTC(at instant: Int64) -> Int {
        var seconds = time_t(instant)
        var broken = tm()
        guard localtime_r(&seconds, &broken) != nil else { return 0 }
        return Int(broken.tm_gmtoff)
    }
}

/// A zone whose offset never changes (UTC is `FixedTimeZone(secondsEastOfUTC: 0)`).
public struct FixedTimeZone: ScheduleTimeZone {
    /// The offset, in seconds ahead of UTC.
    public let offset: Int

    /// A zone `secondsEastOfUTC` ahead of UTC.
    public init(secondsEastOfUTC: Int) {
        offset = secondsEastOfUTC
    }

    public func secondsEastOfUTC(at instant: Int64) -> Int { offset }
}

extension ScheduleTimeZone {
    /// The local clock's reading at `instant`, in seconds since 1970-01-01 00:00 local.
    func wall(_ instant: Int64) -> Int64 {
        instant + Int64(secondsEastOfUTC(at: instant))
    }

    /// The first instant at which the local clock reads `wall` or later: the instant itself on
    /// most days; the end of the gap for a reading the clock skips (spring); the first of the two
    /// for a reading it shows twice (autumn).
    func firstInstant(showing wall: Int64) -> Int64 {
        let offsets = Set([secondsEastOfUTC(at: wall - 86_400), secondsEastOfUTC(at: wall), secondsEastOfUTC(at: wall + 86_400)])
        let exact = offsets.map { wall - Int64($0) }.filter { self.wall($0) == wall }
        if let first = exact.min() { return first }
        // Skipped: the clock jumps over `wall` between the earliest and latest candidates; find
        // the first second at which it reads `wall` or later.
        var low = wall - Int64(offsets.max()!), high = wall - Int64(offsets.min()!)   // reads before; reads after
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if self.wall(middle) >= wall { high = middle } else { low = middle }
        }
        return high
    }

    /// `instant` in local time as ISO 8601 with the offset: `2025-03-31T18:00:00+02:00`.
    public func timestamp(_ instant: Int64) -> String {
        let offset = secondsEastOfUTC(at: instant)
        let wall = instant + Int64(offset)
        let day = LocalDay(wall.floorDivided(by: 86_400))
        let second = Int(wall - day.number * 86_400)
        let (year, month, date) = day.civil
        let magnitude = abs(offset) / 60
        return "\(pad(year, 4))-\(pad(month))-\(pad(date))T\(pad(second / 3600)):\(pad(second / 60 % 60)):\(pad(second % 60))"
            + (offset < 0 ? "-" : "+") + "\(pad(magnitude / 60)):\(pad(magnitude % 60))"
    }

    private func pad(_ value: Int, _ width: Int = 2) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// A day of local time, numbered from 1970-01-01.
struct LocalDay: Hashable, Comparable {
    /// Days since 1970-01-01 (negative before).
    let number: Int64

    init(_ number: Int64) {
        self.number = number
    }

    /// 0 Monday ... 6 Sunday (1970-01-01 was a Thursday).
    var weekday: Int { Int((number + 3).floorModulo(7)) }

    /// The local clock's reading at `minutes` after this day's midnight.
    func wall(minutes: Int) -> Int64 {
        number * 86_400 + Int64(minutes) * 60
    }

    /// The Gregorian year, month (1-12) and day of the month.
    var civil: (year: Int, month: Int, day: Int) {
        let date = CivilDate(daysSince1970: number)
        return (Int(date.year), Int(date.month), Int(date.day))
    }

    static func < (lhs: LocalDay, rhs: LocalDay) -> Bool { lhs.number < rhs.number }
}

extension Int64 {
    /// The quotient rounded down (towards negative infinity).
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    /// The remainder of ``floorDivided(by:)``: from 0 to `divisor - 1` for a positive divisor.
    func floorModulo(_ divisor: Int64) -> Int64 {
        self - floorDivided(by: divisor) * divisor
    }
}
