/// A token bucket that paces bytes to a rate: a pure value, time passed in.
///
/// Tokens (bytes) refill at `rate` per second up to `burst`; the bucket starts full. It uses a
/// debt model: ``consume(_:now:)`` always takes the bytes (they were already received), the
/// tokens may go negative, and the answer is how long the caller must wait until the debt is
/// paid. Callers that sleep that long keep the aggregate rate at `rate`, however many share the
/// bucket, and no caller waits while the bytes stay within the rate and the burst.
struct TokenBucket: Sendable {
    /// Bytes per second (at least 1).
    private(set) var rate: Int64
    /// The most bytes allowed at once after an idle period (at least 1).
    private(set) var burst: Int64
    private var tokens: Double
    private var last: Double?

    /// Creates a full bucket.
    ///
    /// - Parameters:
    ///   - rate: bytes per second; values below 1 count as 1.
    ///   - burst: the capacity in bytes; values below 1 count as 1.
    init(rate: Int64, burst: Int64) {
        self.rate = max(1, rate)
        self.burst = max(1, burst)
        self.tokens = Double(self.burst)
    }

    /// Changes the rate and the capacity from now on. Tokens above the new capacity are
    /// dropped; a debt stays, to be paid at the new rate.
    ///
    /// - Parameters:
    ///   - rate: bytes per second; values below 1 count as 1.
    ///   - burst: the capacity in bytes; values below 1 count as 1.
    ///   - now: a monotonic time in seconds.
    mutating func change(rate: Int64, burst: Int64, now: Double) {
        _ = consume(0, now: now)   // refill at the old rate up to now
        self.rate = max(1, rate)
        self.burst = max(1, burst)
        tokens = min(tokens, Double(self.burst))
    }

    /// Takes `count` bytes at time `now` and returns how long to wait before they are allowed.
    ///
    /// - Parameters:
    ///   - count: bytes received (negative counts as 0).
    ///   - now: a monotonic time in seconds; a time before the previous one counts as the previous one.
    /// - Returns: the wait in seconds, 0 when the bucket held enough tokens.
    mutating func consume(_ count: Int64, now: Double) -> Double {
        if let last, now > last {
            tokens = min(Double(burst), tokens + (now - last) * Double(rate))
        }
        last = max(last ?? now, now)
        tokens -= Double(max(0, count))
        return tokens >= 0 ? 0 : -tokens / Double(rate)
    }
}
