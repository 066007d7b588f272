import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// Caps the speed of every connection that shares it: one ``TokenBucket`` behind a lock.
///
/// The downloader's instance is shared by every connection of every download; a download with
/// a cap of its own has another whose ``parent`` is the downloader's, so its connections wait
/// for whichever of the two asks more. A connection reads at most ``readSize`` bytes, then
/// calls ``consume(_:sleep:)``, which accounts for them and sleeps the calling thread as long as
/// the buckets ask (outside the locks, so others keep going).
///
/// Bytes are counted after they arrive, so the only excess is at the start: the burst (a tenth
/// of a second of traffic) plus one read per connection before the first waits. Reads are
/// therefore small, a fiftieth of a second of traffic: with 16 connections the first ten seconds
/// stay within about 4% of the rate, and from then on the average converges to it.
///
/// The rate can change while connections use it (``setRate(_:)``); `nil` lifts the cap, and the
/// connections then never wait for this limiter.
final class RateLimiter: Sendable {
    private struct State {
        var bucket: TokenBucket
        /// `false` while the cap is lifted.
        var limited: Bool
    }
    private let state: Mutex<State>
    private let now: @Sendable () -> Double
    /// A limiter whose waits count too (the downloader's, under a download's own cap).
    let parent: RateLimiter?

    /// The cap in bytes per second, `nil` while it is lifted.
    var bytesPerSecond: Int64? {
        state.withLock { $0.limited ? $0.bucket.rate : nil }
    }

    /// Whether this limiter or its parent caps the speed now.
    var isLimited: Bool {
        state.withLock { $0.limited } || parent?.isLimited == true
    }

    /// The largest read a connection should make, so that each sleep stays short and connections share fairly.
    ///
    /// A fiftieth of a second of traffic at the lowest cap in force, at least 256 bytes, at most
    /// 1 MiB (1 MiB with no cap in force). At low rates the reads are tiny, and that is cheap:
    /// about fifty reads a second in all. (A 16 KiB floor would let four connections take 6.4 s
    /// of a 10 KiB/s budget before the first wait.) A transfer asks once, when it starts.
    var readSize: Int {
        let own = bytesPerSecond.map { Int(min(1 << 20, max(256, $0 / 50))) } ?? (1 << 20)
        return min(own, parent?.readSize ?? (1 << 20))
    }

    /// Creates a limiter.
    ///
    /// - Parameters:
    ///   - bytesPerSecond: the cap (values below 1 count as 1); `nil` starts with none.
    ///   - burst: bytes allowed at once after an idle period; default a tenth of a second of traffic.
    ///   - parent: a limiter whose waits count too.
    ///   - now: a monotonic clock in seconds (tests pass a simulated one).
    init(
        bytesPerSecond: Int64?,
        burst: Int64? = nil,
        parent: RateLimiter? = nil,
        now: @escaping @Sendable () -> Double = RateLimiter.monotonicSeconds
    ) {
        let rate = max(1, bytesPerSecond ?? 1)
        self.state = Mutex(State(bucket: TokenBucket(rate: rate, burst: burst ?? max(1, rate / 10)),
                                 limited: bytesPerSecond != nil))
        self.parent = parent
        self.now = now
    }

    /// This limiter while it caps the speed, `nil` while its cap is lifted: what a transfer that
    /// starts now uses (without a limiter it may write past the page cache).
    var current: RateLimiter? {
        isLimited ? self : nil
    }

    /// Changes the cap from now on, for the connections that use this limiter already too.
    ///
    /// - Parameter bytesPerSecond: the new cap (values below 1 count as 1), or `nil` to lift it.
    ///   A cap set after none starts with a full burst.
    func setRate(_ bytesPerSecond: Int64?) {
        state.withLock { state in
            guard let bytesPerSecond else {
                state.limited = false
                return
            }
            let rate = max(1, bytesPerSecond)
            if state.limited {
                state.bucket.change(rate: rate, burst: max(1, rate / 10), now: now())
            } else {
                state.bucket = TokenBucket(rate: rate, burst: max(1, rate / 10))
                state.limited = true
            }
        }
    }

    /// Accounts for `count` bytes just received and blocks the calling thread for the wait they cost.
    ///
    /// - Parameters:
    ///   - count: bytes received.
    ///   - sleep: sleeps for the given seconds; returns `false` when interrupted (cancellation).
    ///     The engine passes its cancellable sleep; ``sleepUninterrupted(_:)`` suits tests.
    /// - Returns: `false` when `sleep` was interrupted, `true` otherwise.
    func consume(_ count: Int, sleep: (Double) -> Bool) -> Bool {
        let wait = take(count)
        return wait > 0 ? sleep(wait) : true
    }

    /// Takes `count` bytes from this bucket and the parent's; returns the longer wait.
    private func take(_ count: Int) -> Double {
        let own = state.withLock { $0.limited ? $0.bucket.consume(Int64(count), now: now()) : 0 }
        return max(own, parent?.take(count) ?? 0)
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
