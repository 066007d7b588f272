import HaulCore
/// Tells a body that trickles in (a byte a second, never silent for a whole stall timeout) from
/// one that is merely slow: a pure state machine fed with each read's byte count and wait.
///
/// Only time spent waiting for the server is counted, so reads held back by Haul (a rate limit,
/// a slow disk) never make a fast server look slow. Once the waits add up to the limit's
/// period, the bytes of that window are compared with the floor; a window above it starts the
/// next one afresh.
package struct LowSpeedMonitor {
    /// The slowest a body may arrive: `bytesPerSecond` averaged over `period` of waiting.
    package struct SpeedFloor: Sendable, Equatable {
        package var bytesPerSecond: Int64
        package var period: Duration

        package init(bytesPerSecond: Int64, period: Duration) {
            self.bytesPerSecond = bytesPerSecond
            self.period = period
        }
    }

    package let limit: SpeedFloor
    private var waited: Duration = .zero
    private var bytes: Int64 = 0

    package init(_ limit: SpeedFloor) {
        self.limit = limit
    }

    /// Records one read of `count` bytes that waited `wait` for the server.
    ///
    /// - Returns: `true` when the window that just closed stayed below the floor.
    package mutating func received(_ count: Int, after wait: Duration) -> Bool {
        waited += wait
        bytes += Int64(count)
        guard waited >= limit.period else { return false }
        if Double(bytes) < Double(limit.bytesPerSecond) * waited.seconds { return true }
        waited = .zero
        bytes = 0
        return false
    }

    /// The failure to report: `stalled`, naming the floor and the period.
    package var failure: HTTPClientError {
        let period = limit.period.seconds
        let shown = period == period.rounded() ? String(Int64(period)) : String(period)
        return HTTPClientError(.stalled, "the body arrived slower than \(limit.bytesPerSecond) bytes/s for \(shown) s (stalled)")
    }
}
