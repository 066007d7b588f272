import Foundation
import HaulCore
@testable import HaulService

/// A zone from the system's time zone database (Foundation's), for days with summer time.
struct DatabaseTimeZone: ScheduleTimeZone {
    let zone: TimeZone

    init(_ identifier: String) {
        zone = TimeZone(identifier: identifier)!
    }

    func secondsEastOfUTC(at instant: Int64) -> Int {
        zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant)))
    }
}

/// A clock the test sets: fixed, or the real time shifted (so that a boundary comes soon), and
/// moved at will (a clock set forward).
final class SettableClock: WallClock {
    private let state: SharedStateLock<(fixed: Date?, shift: TimeInterval)>

    init(fixed: Date) {
        state = SharedStateLock((fixed, 0))
    }

    /// The real time, shifted so that it reads `reading` now.
    init(reading: Date) {
        state = SharedStateLock((nil, reading.timeIntervalSinceNow))
    }

    func now() -> Date {
        state.withLock { $0.fixed ?? Date().addingTimeInterval($0.shift) }
    }

    /// Sets a fixed clock to `date`, or shifts a running one so that it reads `date` now.
    func set(_ date: Date) {
        state.withLock { state in
            if state.fixed != nil { state.fixed = date } else { state.shift = date.timeIntervalSinceNow }
        }
    }
}

/// The rates a scheduler applied, each with the real time it did.
final class AppliedRates: Sendable {
    private let list = SharedStateLock<[(rate: Int64?, at: Date)]>([])

    func apply(_ status: RateScheduler.Status) {
        list.withLock { $0.append((status.rate, Date())) }
    }

    var rates: [Int64?] { list.withLock { $0.map(\.rate) } }
    var last: (rate: Int64?, at: Date)? { list.withLock { $0.last } }
}
