import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// Caps the speed of every connection that shares it: one ``TokenBucket`` behind a lock.
///
/// One instance is shared by every connection of every download. A connection reads at most
/// ``readSize`` bytes, then calls ``consume(_:sleep:)``, which accounts for them and sleeps
/// the calling thread as long as the bucket asks (outside the lock, so others keep going).
///
/// Bytes are counted after they arrive, so the only excess is at the start: the burst (a tenth
/// of a second of traffic) plus one read per connection before the first waits. Reads are
/// therefore small, a fiftieth of a second of traffic: with 16 connections the first ten seconds
/// stay within about 4% of the rate, and from then on the average converges to it.
final class RateLimiter: Sendable {
    private let bucket: Mutex<TokenBucket>
    private let now: @Sendable () -> Double
    /// The cap in bytes per second.
    let bytesPerSecond: Int64

    /// The largest read a connection should make, so that each sleep stays short and connections share fairly.
    ///
    /// A fiftieth of a second of traffic, at least 256 bytes, at most 1 MiB. At low rates the
    /// reads are tiny, and that is cheap: about fifty reads a second in all. (A 16 KiB floor would
    /// let four connections take 6.4 s of a 10 KiB/s budget before the first wait.)
    let readSize: Int

    /// Creates a limiter.
    ///
    /// - Parameters:
    ///   - bytesPerSecond: the cap (values below 1 count as 1).
    ///   - burst: bytes allowed at once after an idle period; default a tenth of a second of traffic.
    ///   - now: a monotonic clock in seconds (tests pass a simulated one).
    init(
        bytesPerSecond: Int64,
        burst: Int64? = nil,
        now: @escaping @Sendable () -> Double = RateLimiter.monotonicSeconds
    ) {
        let rate = max(1, bytesPerSecond)
        self.bytesPerSecond = rate
        self.bucket = Mutex(TokenBucket(rate: rate, burst: burst ?? max(1, rate / 10)))
        self.now = now
        self.readSize = Int(min(1 << 20, max(256, rate / 50)))
    }

    /// Accounts for `count` bytes just received and blocks the calling thread for the wait they cost.
    ///
    /// - Parameters:
    ///   - count: bytes received.
    ///   - sleep: sleeps for the given seconds; returns `false` when interrupted (cancellation).
    ///     The engine passes its cancellable sleep; ``sleepUninterrupted(_:)`` suits tests.
    /// - Returns: `false` when `sleep` was interrupted, `true` otherwise.
    func consume(_ count: Int, sleep: (Double) -> Bool) -> Bool {
        let wait = bucket.withLock { $0.consume(Int64(count), now: now()) }
        return wait > 0 ? sleep(wait) : true
    }

    /// Seconds on a monotonic clock, from an arbitrary origin.
    @Sendable static func monotonicSeconds() -> Double {
        let elapsed = ContinuousClock.now - origin
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }

    private static let origin = ContinuousClock.now

    /// Sleeps the calling thread for `seconds` (at least that long, resuming after signals). Always `true`.
    @Sendable static func sleepUninterrupted(_ seconds: Double) -> Bool {
        guard seconds > 0 else { return true }
        let whole = seconds.rounded(.down)
        let nanoseconds = min(999_999_999, Int(((seconds - whole) * 1e9).rounded(.up)))
        var request = timespec(tv_sec: Int(whole), tv_nsec: nanoseconds)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
        return true
    }
}
