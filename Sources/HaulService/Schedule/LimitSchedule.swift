/// The daemon's overall download rate by the local clock: windows of the week, each with a rate.
///
/// Written as comma-separated entries `[DAYS ]HH:MM-HH:MM=RATE`, such as
/// `Mon-Fri 09:00-18:00=2M, 23:00-07:00=0` (``init(parsing:)``):
/// - `DAYS` is a day (`Mon` ... `Sun`), a range (`Mon-Fri`, `Fri-Mon` wraps over the week's end)
///   or several of them joined by `+` (`Sat+Sun`, `Mon-Wed+Fri`); without it, every day. Commas
///   separate entries, so they never separate days.
/// - A window runs from its start up to (not including) its end. One whose end is not after its
///   start (`23:00-07:00`) crosses midnight and belongs to the day it starts on; `24:00` (or an end
///   at `00:00`) ends a day (`00:00-24:00` is the whole day).
/// - `RATE` is bytes per second as `--limit-rate` takes it (`K`, `M`, `G`, 1024-based), `0` for
///   no limit.
/// - Where windows overlap, the first listed wins; an entry that earlier ones cover wholly is an
///   error, since it would never apply. Outside every window the rate set apart from the schedule
///   applies (``decision(at:outside:in:)``).
///
/// Times are local: a time is the first moment the clock shows it, so on a day whose clock skips
/// an hour (spring) a window that starts inside the gap starts at its end, and on a day whose clock
/// goes back (autumn) a window lasts from the first showing of its start to the first showing of
/// its end.
public struct LimitSchedule: Sendable, Equatable, CustomStringConvertible {
    /// Days of the week.
    public struct Days: OptionSet, Sendable, Hashable {
        /// One bit per day, Monday the lowest.
        public let rawValue: UInt8

        /// Creates a set from its bits (Monday the lowest).
        public init(rawValue: UInt8) {
            self.rawValue = rawValue & 0x7F
        }

        /// The day of index `index` (0 Monday ... 6 Sunday).
        public init(index: Int) {
            self.init(rawValue: 1 << UInt8(index))
        }

        /// Whether the set holds the day of index `index` (0 Monday ... 6 Sunday).
        public func contains(index: Int) -> Bool {
            rawValue & (1 << UInt8(index)) != 0
        }

        /// Every day of the week.
        public static let all = Days(rawValue: 0x7F)
        /// The days' names in index order, as the schedule spells them.
        public static let names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    }

    /// One window of the week and its rate.
    public struct Entry: Sendable, Equatable {
        /// The days the window starts on.
        public var days: Days
        /// The start, in minutes after midnight (0 ..< 1440).
        public var start: Int
        /// The end, in minutes after midnight (1 ... 1440); not after `start`: on the next day.
        public var end: Int
        /// The rate in bytes per second, `nil` for no limit.
        public var rate: Int64?

        /// Creates an entry.
        public init(days: Days = .all, start: Int, end: Int, rate: Int64?) {
            self.days = days
            self.start = start
            self.end = end
            self.rate = rate
        }

        /// Whether the window ends on the day after it starts.
        public var crossesMidnight: Bool { end <= start }
    }

    /// The entries in the order given: where windows overlap the first one wins.
    public var entries: [Entry]

    /// The most entries a schedule holds.
    public static let maximumEntries = 100

    /// A schedule of these entries (none: no schedule).
    public init(_ entries: [Entry] = []) {
        self.entries = entries
    }

    /// Whether there is no window at all.
    public var isEmpty: Bool { entries.isEmpty }

    /// The schedule as it is written, in one form (days as ranges joined by `+`, rates with the
    /// largest suffix that divides them): ``init(parsing:)`` reads it back as the same schedule.
    /// Empty for no schedule.
    public var description: String {
        entries.map { entry in
            let days = entry.days == .all ? "" : Self.text(of: entry.days) + " "
            return days + Self.text(minutes: entry.start) + "-" + Self.text(minutes: entry.end) + "=" + Self.text(rate: entry.rate)
        }.joined(separator: ", ")
    }

    /// `days` as runs of consecutive days from Monday, joined by `+` (`Mon-Fri`, `Mon+Sat-Sun`).
    static func text(of days: Days) -> String {
        var runs: [String] = []
        var index = 0
        while index < 7 {
            guard days.contains(index: index) else {
                index += 1
                continue
            }
            var last = index
            while last + 1 < 7 && days.contains(index: last + 1) { last += 1 }
            runs.append(last == index ? Days.names[index] : Days.names[index] + "-" + Days.names[last])
            index = last + 1
        }
        return runs.joined(separator: "+")
    }

    /// `HH:MM`.
    static func text(minutes: Int) -> String {
        let hours = minutes / 60, rest = minutes % 60
        return (hours < 10 ? "0" : "") + String(hours) + ":" + (rest < 10 ? "0" : "") + String(rest)
    }

    /// A rate with the largest of `G`, `M`, `K` that divides it; `0` for no limit.
    public static func text(rate: Int64?) -> String {
        guard let rate else { return "0" }
        for (suffix, shift) in [("G", 30), ("M", 20), ("K", 10)] where rate % (Int64(1) << shift) == 0 {
            return String(rate >> shift) + suffix
        }
        return String(rate)
    }
}
