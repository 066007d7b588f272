import HaulService

extension DaemonCommand {
    /// Writes a line to the log at each change of the overall rate while a schedule is set (by
    /// the clock, or by a call), saying what is in force, until when, and what comes then.
    static func rateLimitLogger(_ log: DaemonLog, zone: any ScheduleTimeZone) -> @Sendable (RateScheduler.Status) -> Void {
        { status in
            guard !status.schedule.isEmpty else { return }
            log.note(rateNote(status, zone: zone))
        }
    }

    /// `rate limit 2.00 MiB/s until 2025-06-02T18:00:00+02:00, then no limit (schedule: ...)`.
    static func rateNote(_ status: RateScheduler.Status, zone: any ScheduleTimeZone) -> String {
        func words(_ rate: Int64?) -> String { rate.map { HumanFormat.speed(Double($0)) } ?? "no limit" }
        var text = status.rate == nil ? "no rate limit" : "rate limit \(words(status.rate))"
        if status.setByHand { text += " (set by a call)" }
        if let next = status.nextChange { text += " until \(zone.timestamp(next)), then \(words(status.nextRate))" }
        return text + " (schedule: \(status.schedule))"
    }
}
