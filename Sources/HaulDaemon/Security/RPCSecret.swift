import CHaulTLS
import HaulCore

/// The RPC secret (`token:SECRET`), kept as its SHA-256 and compared in constant time.
///
/// A candidate is hashed and the two digests compared byte by byte without an early exit, so
/// the time taken says nothing about how much of the secret a guess got right, nor how long
/// the secret is. The secret itself is not kept.
public struct RPCSecret: Sendable {
    private let digest: [UInt8]

    /// Keeps `secret`'s digest.
    public init(_ secret: String) {
        digest = Self.sha256(Array(secret.utf8))
    }

    /// Whether `candidate` is the secret.
    public func matches(_ candidate: String) -> Bool {
        Self.constantTimeEqual(Self.sha256(Array(candidate.utf8)), digest)
    }

    /// Whether two byte strings of the same length are equal, in time that depends on their
    /// length only.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }

    private static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        _ = haul_digest_once(Int32(HAUL_DIGEST_SHA256), bytes, bytes.count, &out)
        return out
    }
}

/// Delays the answers to wrong tokens: every wrong token is one guess, wherever it is (a call,
/// each call of a batch, each call inside `system.multicall`), and a budget of guesses is
/// spent at one per ``interval`` (10 a second), so an answer about `n` guesses comes no sooner
/// than the guesses before it plus `n` intervals, and never sooner than ``minimumDelay`` after
/// the request.
///
/// The budget belongs to the peer's address class, not its address: every loopback address
/// (127.0.0.0/8, `::1`) is one budget, so the processes of one machine share it however many
/// addresses and connections they use. Each other address has its own.
public final class AuthThrottle: Sendable {
    /// The throttle's decisions as a pure value: when the answer about some guesses may go.
    public struct Schedule: Sendable {
        /// The least delay of an answer to a wrong token.
        public let minimumDelay: Duration
        /// The time each guess spends of its budget.
        public let interval: Duration
        private var spentUntil: [String: ContinuousClock.Instant] = [:]

        /// Creates a schedule with every budget unspent.
        public init(minimumDelay: Duration, interval: Duration) {
            self.minimumDelay = minimumDelay
            self.interval = interval
        }

        /// Spends `guesses` of `key`'s budget at `now`; returns when their answer may be sent.
        public mutating func answerTime(guesses: Int, key: String, now: ContinuousClock.Instant) -> ContinuousClock.Instant {
            if spentUntil.count > 4096 { spentUntil = spentUntil.filter { $0.value > now } }
            let end = max(now, spentUntil[key] ?? now) + interval * max(guesses, 1)
            spentUntil[key] = end
            return max(now + minimumDelay, end)
        }
    }

    private let schedule: SharedStateLock<Schedule>

    /// Creates a throttle.
    ///
    /// - Parameters:
    ///   - delay: the least delay of an answer to a wrong token (default 1 s).
    ///   - interval: the time each guess spends (default 0.1 s: 10 guesses a second).
    public init(delay: Duration = .seconds(1), interval: Duration = .milliseconds(100)) {
        schedule = SharedStateLock(Schedule(minimumDelay: delay, interval: interval))
    }

    /// The budget `peer` (an address as text) spends: `loopback` for every loopback address.
    public static func budgetKey(for peer: String) -> String {
        var host = peer.lowercased()
        if host.hasPrefix("::ffff:") { host.removeFirst(7) }
        return ListenAddress.isLoopback(host) ? "loopback" : host
    }

    /// The instant the answer about `guesses` wrong tokens from `peer` may be sent; spends them.
    public func answerTime(guesses: Int, from peer: String, now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant {
        schedule.withLock { $0.answerTime(guesses: guesses, key: Self.budgetKey(for: peer), now: now) }
    }
}
