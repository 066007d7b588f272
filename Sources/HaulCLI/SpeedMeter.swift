/// Throughput as a moving average: the bytes gained over a sliding window of recent samples.
///
/// The caller records a running count of bytes with the time it was observed (an offset from
/// any origin), including when nothing new arrived, so a stall brings the speed down. Samples
/// closer together than ``resolution`` are merged, so memory stays bounded however often
/// the caller records.
struct SpeedMeter: Sendable {
    /// How far back the average looks.
    let window: Duration
    /// Samples closer together than this are merged into the newer one.
    let resolution: Duration
    private var samples: [(time: Duration, bytes: Int64)] = []

    /// Creates a meter.
    ///
    /// - Parameters:
    ///   - window: how far back the average looks (default 5 s).
    ///   - resolution: the shortest distance between two kept samples (default 0.1 s).
    init(window: Duration = .seconds(5), resolution: Duration = .milliseconds(100)) {
        self.window = window
        self.resolution = resolution
    }

    /// Records that `bytes` bytes had been transferred in total at `now`.
    mutating func record(_ bytes: Int64, at now: Duration) {
        if samples.count >= 2, let last = samples.last, now - samples[samples.count - 2].time < resolution,
           now >= last.time {
            samples[samples.count - 1] = (now, bytes)
        } else {
            samples.append((now, bytes))
        }
        // Keep one sample at or before the window's start, as the average's anchor.
        while samples.count > 2, now - samples[1].time >= window {
            samples.removeFirst()
        }
    }

    /// Bytes per second over the window (0 until two samples are apart in time).
    var bytesPerSecond: Double {
        guard let first = samples.first, let last = samples.last else { return 0 }
        let seconds = (last.time - first.time).secondsValue
        guard seconds > 0 else { return 0 }
        return max(0, Double(last.bytes - first.bytes) / seconds)
    }
}
