/// What a ``LimitSchedule`` says at an instant: the rate in force and when it next changes. Pure:
/// the instant and the zone are given, so tests decide any day of any zone without waiting.
extension LimitSchedule {
    /// The rate in force at an instant, and the next instant it changes.
    public struct Decision: Sendable, Equatable {
        /// The rate in force, in bytes per second; `nil` for no limit.
        public var rate: Int64?
        /// The entry (its index) whose window is in force; `nil` outside every window.
        public var entry: Int?
        /// The next instant the rate changes, in seconds since 1970 UTC; `nil` when it does not
        /// change within the next eight days (a schedule that says the same at every hour).
        public var nextChange: Int64?
        /// The rate from ``nextChange`` on.
        public var nextRate: Int64?
    }

    /// One window on one day: from `start` up to (not including) `end`, instants in seconds.
    struct Window {
        let start: Int64
        let end: Int64
        let entry: Int
    }

    /// The rate in force at `instant` and when it next changes.
    ///
    /// - Parameters:
    ///   - instant: seconds since 1970-01-01 00:00 UTC.
    ///   - outside: the rate outside every window (`nil`: no limit).
    ///   - zone: the zone the schedule's times are read in.
    public func decision(at instant: Int64, outside: Int64?, in zone: some ScheduleTimeZone) -> Decision {
        let today = LocalDay(zone.wall(instant).floorDivided(by: 86_400))
        let windows = windows(from: LocalDay(today.number - 1), through: LocalDay(today.number + 9), in: zone)
        let now = Self.entry(at: instant, among: windows)
        let rate = now.map { entries[$0].rate } ?? outside
        var decision = Decision(rate: rate, entry: now)
        let horizon = instant + 8 * 86_400
        let boundaries = Set(windows.flatMap { [$0.start, $0.end] }).filter { $0 > instant && $0 <= horizon }.sorted()
        for boundary in boundaries {
            let entry = Self.entry(at: boundary, among: windows)
            let next = entry.map { entries[$0].rate } ?? outside
            if next != rate {
                decision.nextChange = boundary
                decision.nextRate = next
                break
            }
        }
        return decision
    }

    /// The windows of the days `first` through `last`, in the order of the entries (so the first
    /// that holds an instant is the one in force). A window the clock skips wholly is left out.
    func windows(from first: LocalDay, through last: LocalDay, in zone: some ScheduleTimeZone) -> [Window] {
        var windows: [Window] = []
        for (index, entry) in entries.enumerated() {
            for number in first.number...last.number {
                let day = LocalDay(number)
                guard entry.days.contains(index: day.weekday) else { continue }
                let endDay = entry.crossesMidnight ? LocalDay(number + 1) : day
                let start = zone.firstInstant(showing: day.wall(minutes: entry.start))
                let end = zone.firstInstant(showing: endDay.wall(minutes: entry.end))
                if start < end { windows.append(Window(start: start, end: end, entry: index)) }
            }
        }
        return windows
    }

    /// The first entry whose window holds `instant`, if any.
    static func entry(at instant: Int64, among windows: [Window]) -> Int? {
        windows.first { $0.start <= instant && instant < $0.end }?.entry
    }
}
