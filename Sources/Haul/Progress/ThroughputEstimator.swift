import HaulCore
/// Turns (time, completed bytes) samples into a speed and an ETA: a pure value type.
///
/// Speed is measured over a sliding window (default 3 s) of samples, so it follows changes
/// within seconds but does not jitter with every read.
struct ThroughputEstimator: Sendable {
    private var samples: [(seconds: Double, bytes: Int64)] = []
    private let window: Double

    /// - Parameter window: seconds of history the speed is computed over.
    init(window: Double = 3) {
        self.window = window
    }

    /// Records that `bytes` were complete at `seconds` (any monotonic origin).
    mutating func record(seconds: Double, bytes: Int64) {
        samples.append((seconds, bytes))
        let horizon = seconds - window
        // Keep one sample at or before the horizon so the window is always fully covered.
        while samples.count > 2 && samples[1].seconds <= horizon { samples.removeFirst() }
    }

    /// Bytes per second over the window (0 until two samples exist).
    var bytesPerSecond: Double {
        guard let first = samples.first, let last = samples.last, last.seconds > first.seconds else { return 0 }
        return max(0, Double(last.bytes - first.bytes) / (last.seconds - first.seconds))
    }

    /// Seconds until `total` at the current speed; `nil` when unknown or stalled.
    func estimatedTimeRemaining(total: Int64?) -> Double? {
        guard let total, let last = samples.last else { return nil }
        let left = total - last.bytes
        if left <= 0 { return 0 }
        let speed = bytesPerSecond
        return speed > 0 ? Double(left) / speed : nil
    }
}
