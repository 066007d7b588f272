#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulCore

/// The clock a ``RateScheduler`` reads: the time of day, which may jump (set by hand, NTP).
public protocol WallClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's time of day.
public struct SystemWallClock: WallClock {
    /// The system's clock.
    public init() {}

    public func now() -> Date { Date() }
}

/// Keeps an overall rate to a ``LimitSchedule``: applies the rate in force at once, then again
/// within a second of each boundary, on a thread of its own (`haul-schedule`) that sleeps until
/// the next change and at most ``recheck`` (so a clock set forward or back is followed).
///
/// A rate set by hand (``setRate(_:)``, aria2's `max-overall-download-limit`) applies at once
/// and holds until the schedule's rate next changes; it is also the rate outside the schedule's
/// windows from then on. A new schedule (``setSchedule(_:)``) applies at once and ends a rate
/// set by hand.
///
/// The clock and the zone are injected: tests drive ``update()`` with a fake clock, and the
/// thread with one shifted so that a boundary comes within a second.
public final class RateScheduler: Sendable {
    /// What is in force and what comes next.
    public struct Status: Sendable, Equatable {
        /// The schedule (empty: none).
        public var schedule: LimitSchedule
        /// The rate outside the schedule's windows (`--limit-rate`, or the last set by hand).
        public var outside: Int64?
        /// The rate in force (`nil`: no limit).
        public var rate: Int64?
        /// Whether the rate in force was set by hand rather than by the schedule.
        public var setByHand: Bool
        /// The next instant the rate changes (seconds since 1970 UTC), `nil` for none within a week.
        public var nextChange: Int64?
        /// The rate from ``nextChange`` on.
        public var nextRate: Int64?
    }

    /// A rate set by hand, and the instant the schedule takes over again (`nil`: never).
    private struct ByHand {
        var rate: Int64?
        var until: Int64?
    }

    private struct State {
        var schedule: LimitSchedule
        var outside: Int64?
        var byHand: ByHand?
        /// Whether the thread is alive, and whether it was asked to end.
        var running = false
        var stopping = false
        /// Counts the changes, so that the thread looks again after each.
        var changes = 0
    }

    /// How often the thread reads the clock again at the latest.
    public let recheck: Duration
    private let state: ConditionLock<State>
    /// The last rate handed to `apply` (`.none`: none yet); held while deciding and applying, so
    /// that two updates apply their rates in the order they decided them.
    private let applied = SharedStateLock<Int64??>(.none)
    /// The zone the schedule's times are read in.
    public let zone: any ScheduleTimeZone
    private let clock: any WallClock
    private let apply: @Sendable (Status) -> Void
    private let threads = ThreadPool(maximumThreads: 1)

    /// Creates a scheduler; nothing is applied before ``start()`` or a change.
    ///
    /// - Parameters:
    ///   - schedule: the schedule (empty: none).
    ///   - outside: the rate outside its windows (`nil`: no limit).
    ///   - zone: the zone of its times (default: the process's local time).
    ///   - clock: the time of day.
    ///   - recheck: the longest the thread sleeps without reading the clock.
    ///   - apply: sets the overall rate to the status's `rate` (called when it differs from the
    ///     last, in order, never two at once).
    public init(schedule: LimitSchedule, outside: Int64?, zone: any ScheduleTimeZone = SystemTimeZone(),
                clock: any WallClock = SystemWallClock(), recheck: Duration = .seconds(60),
                apply: @escaping @Sendable (Status) -> Void) {
        state = ConditionLock(State(schedule: schedule, outside: outside))
        self.zone = zone
        self.clock = clock
        self.recheck = recheck
        self.apply = apply
    }

    /// Applies the rate in force and starts the thread that follows the clock.
    ///
    /// - Throws: ``ResourceError`` when the system gives no thread.
    package func start() throws(ResourceError) {
        let start = state.withLock { state -> Bool in
            guard !state.running && !state.stopping else { return false }
            state.running = true
            return true
        }
        guard start else { return }
        update()
        do throws(ResourceError) {
            try threads.runAlone(name: "haul-schedule") { [self] in run() }
        } catch {
            state.withLockBroadcasting { $0.running = false }
            throw error
        }
    }

    /// Ends the thread (and waits for it). Changes still apply at once, but no boundary does.
    public func stop() {
        state.withLockBroadcasting { $0.stopping = true }
        state.wait(until: nil) { $0.running }
    }

    /// Replaces the schedule (empty: none) and applies the rate it puts in force; a rate set by
    /// hand ends.
    public func setSchedule(_ schedule: LimitSchedule) {
        state.withLockBroadcasting {
            $0.schedule = schedule
            $0.byHand = nil
            $0.changes += 1
        }
        update()
    }

    /// Sets the rate by hand: in force at once until the schedule's rate next changes, and the
    /// rate outside its windows from now on.
    public func setRate(_ rate: Int64?) {
        let now = Self.seconds(clock.now())
        state.withLockBroadcasting { state in
            state.outside = rate
            state.byHand = nil
            if !state.schedule.isEmpty {
                let until = state.schedule.decision(at: now, outside: rate, in: zone).nextChange
                state.byHand = ByHand(rate: rate, until: until)
            }
            state.changes += 1
        }
        update()
    }

    /// What is in force now and what comes next.
    public func status() -> Status {
        let now = Self.seconds(clock.now())
        return state.withLock { Self.decide(&$0, at: now, zone: zone) }
    }

    /// Applies the rate in force now when it is not the one applied last.
    ///
    /// - Returns: what is in force and what comes next.
    @discardableResult
    public func update() -> Status {
        applied.withLock { last in
            let now = Self.seconds(clock.now())
            let status = state.withLock { Self.decide(&$0, at: now, zone: zone) }
            if last != .some(status.rate) {
                apply(status)
                last = .some(status.rate)
            }
            return status
        }
    }

    /// The thread: applies the rate, sleeps until the next change (at most ``recheck``) or a
    /// change of the settings, again, until ``stop()``.
    private func run() {
        while true {
            let (changes, stopping) = state.withLock { ($0.changes, $0.stopping) }
            if stopping { break }
            let status = update()
            var wait = Double(recheck.components.seconds) + Double(recheck.components.attoseconds) * 1e-18
            if let next = status.nextChange { wait = min(wait, Double(next) - clock.now().timeIntervalSince1970) }
            let deadline = ContinuousClock.now + .milliseconds(Int64(max(0, wait) * 1000) + 1)
            state.wait(until: deadline) { !$0.stopping && $0.changes == changes }
        }
        state.withLockBroadcasting { $0.running = false }
    }

    /// What `state` puts in force at `now` (a rate set by hand that has run its time is dropped).
    private static func decide(_ state: inout State, at now: Int64, zone: any ScheduleTimeZone) -> Status {
        if let until = state.byHand?.until, now >= until { state.byHand = nil }
        let decision = state.schedule.decision(at: now, outside: state.outside, in: zone)
        var status = Status(schedule: state.schedule, outside: state.outside, rate: decision.rate, setByHand: false,
                            nextChange: decision.nextChange, nextRate: decision.nextRate)
        guard let byHand = state.byHand else { return status }
        status.rate = byHand.rate
        status.setByHand = true
        (status.nextChange, status.nextRate) = (nil, nil)
        if let until = byHand.until {
            let after = state.schedule.decision(at: until, outside: state.outside, in: zone)
            (status.nextChange, status.nextRate) = after.rate != byHand.rate ? (until, after.rate) : (after.nextChange, after.nextRate)
        }
        return status
    }

    /// Whole seconds since 1970 (rounded down) of `date`.
    public static func seconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }
}
