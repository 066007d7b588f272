import HaulCrypto
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
        Digest.hash(.sha256, bytes)
    }
}

/// Paces the checks of the token and delays the answers to wrong ones: every wrong token is one
/// guess, wherever it is (a call, each call of a batch, each call inside `system.multicall`),
/// and a budget of guesses is spent at one per ``interval`` (10 a second).
///
/// An answer about `n` guesses comes no sooner than the guesses before it plus `n` intervals,
/// and never sooner than ``minimumDelay`` after the request. A request from a connection that
/// has not shown the valid token is checked only while its budget is spent less than
/// ``window`` ahead, and its check spends the first interval (given back when it finds no wrong
/// token), so a right guess is not answered before the guesses sent ahead of it: checks, not
/// only answers, come at 10 a second. A connection that has shown the token is checked at once.
///
/// The budget belongs to the peer's address class, not its address: every loopback address
/// (127.0.0.0/8, `::1`) is one budget, so the processes of one machine share it however many
/// addresses and connections they use. Each other address has its own.
public final class AuthThrottle: Sendable {
    /// The throttle's decisions as a pure value: when a check may run and an answer may go.
    public struct Schedule: Sendable {
        /// The least delay of an answer to a wrong token.
        public let minimumDelay: Duration
        /// The time each guess spends of its budget.
        public let interval: Duration
        /// How far ahead a budget may be spent before checks wait.
        public let window: Duration
        private var spentUntil: [String: ContinuousClock.Instant] = [:]

        /// Creates a schedule with every budget unspent.
        public init(minimumDelay: Duration, interval: Duration, window: Duration = .seconds(1)) {
            self.minimumDelay = minimumDelay
            self.interval = interval
            self.window = window
        }

        /// How many wrong tokens one request may have checked: the window's worth (the rest
        /// are refused unchecked).
        public var guessesPerRequest: Int { max(1, Int(window / interval)) }

        /// Whether a check for `key` may run at `now`; if so, it spends one interval.
        public mutating func admit(key: String, now: ContinuousClock.Instant) -> Bool {
            if let at = admissionTime(key: key), at > now { return false }
            spend(interval, of: key, now: now)
            return true
        }

        /// Gives back the interval an admitted check spent when it found no wrong token.
        public mutating func refund(key: String, now: ContinuousClock.Instant) {
            guard let spent = spentUntil[key], spent > now else { return }
            spentUntil[key] = max(now, spent - interval)
        }

        /// When a check for `key` may run: once its interval fits in the window (`nil`: its
        /// budget was never spent).
        public func admissionTime(key: String) -> ContinuousClock.Instant? {
            spentUntil[key].map { $0 - window + interval }
        }

        /// Spends `guesses` of `key`'s budget at `now`; returns when their answer may be sent.
        public mutating func answerTime(guesses: Int, key: String, now: ContinuousClock.Instant) -> ContinuousClock.Instant {
            max(now + minimumDelay, spend(interval * max(guesses, 0), of: key, now: now))
        }

        /// Spends `amount` of `key`'s budget from `now` on; returns how far it is spent. Budgets
        /// spent only in the past are forgotten once there are many.
        @discardableResult
        private mutating func spend(_ amount: Duration, of key: String, now: ContinuousClock.Instant) -> ContinuousClock.Instant {
            if spentUntil.count > 4096 { spentUntil = spentUntil.filter { $0.value > now } }
            let end = max(now, spentUntil[key] ?? now) + amount
            spentUntil[key] = end
            return end
        }
    }

    private let schedule: SharedStateLock<Schedule>
    /// How many wrong tokens one request may have checked.
    public let guessesPerRequest: Int

    /// Creates a throttle.
    ///
    /// - Parameters:
    ///   - delay: the least delay of an answer to a wrong token (default 1 s).
    ///   - interval: the time each guess spends (default 0.1 s: 10 guesses a second).
    ///   - window: how far ahead a budget may be spent before checks wait (default 1 s).
    public init(delay: Duration = .seconds(1), interval: Duration = .milliseconds(100), window: Duration = .seconds(1)) {
        let schedule = Schedule(minimumDelay: delay, interval: interval, window: window)
        guessesPerRequest = schedule.guessesPerRequest
        self.schedule = SharedStateLock(schedule)
    }

    /// The budget `peer` (an address as text) spends: `loopback` for every loopback address.
    public static func budgetKey(for peer: String) -> String {
        var host = peer.lowercased()
        if host.hasPrefix("::ffff:") { host.removeFirst(7) }
        return ListenAddress.isLoopback(host) ? "loopback" : host
    }

    /// Whether a request from `peer` may have its tokens checked now (spending one interval).
    public func admit(_ peer: String, now: ContinuousClock.Instant = .now) -> Bool {
        schedule.withLock { $0.admit(key: Self.budgetKey(for: peer), now: now) }
    }

    /// Gives back the interval a check of `peer`'s spent when it found no wrong token (a right
    /// token costs nobody's budget).
    public func refund(_ peer: String, now: ContinuousClock.Instant = .now) {
        schedule.withLock { $0.refund(key: Self.budgetKey(for: peer), now: now) }
    }

    /// When a request from `peer` may have its tokens checked (`nil`: at once).
    public func admissionTime(for peer: String) -> ContinuousClock.Instant? {
        schedule.withLock { $0.admissionTime(key: Self.budgetKey(for: peer)) }
    }

    /// The instant the answer about `guesses` more wrong tokens from `peer` may be sent; spends them.
    public func answerTime(guesses: Int, from peer: String, now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant {
        schedule.withLock { $0.answerTime(guesses: guesses, key: Self.budgetKey(for: peer), now: now) }
    }
}
