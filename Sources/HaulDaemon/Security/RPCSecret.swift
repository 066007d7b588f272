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

/// Delays the answers to failed authentications, per peer: each waits at least ``delay`` after
/// it arrived and after the peer's previous failed answer, so a peer guessing the secret gets
/// one answer per ``delay`` however many connections it opens.
public final class AuthThrottle: Sendable {
    /// The least time between two failed answers to one peer.
    public let delay: Duration
    private let answers = SharedStateLock([String: ContinuousClock.Instant]())

    /// Creates a throttle.
    ///
    /// - Parameter delay: the least delay (default 1 s).
    public init(delay: Duration = .seconds(1)) {
        self.delay = delay
    }

    /// The instant a failed answer to `peer` (its address) may be sent; reserves it.
    public func answerTime(for peer: String, now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant {
        answers.withLock { answers in
            if answers.count > 4096 { answers = answers.filter { $0.value > now } }
            let at = max(now + delay, (answers[peer] ?? now) + delay)
            answers[peer] = at
            return at
        }
    }
}
