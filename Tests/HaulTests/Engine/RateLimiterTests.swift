import Synchronization
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP

@Suite struct RateLimiterTests {
    static let rates: [Int64] = [10 << 10, 100 << 10, 1 << 20, 25 << 20, 200 << 20, 1 << 30]

    /// Connections taking turns on a simulated clock: each reads a random amount (at most
    /// `readSize`) at a random speed above the rate, then sleeps as the limiter says.
    @Test(arguments: rates, [1, 4, 16])
    func aggregateRateOverTenSecondsIsWithinFivePercent(rate: Int64, connections: Int) {
        let clock = SimulatedClock()
        let limiter = RateLimiter(bytesPerSecond: rate, now: { clock.now })
        var generator = SplitMix64(seed: UInt64(rate) &* 31 &+ UInt64(connections))
        var ready = [Double](repeating: 0, count: connections)
        var received: Int64 = 0
        while let next = ready.indices.min(by: { ready[$0] < ready[$1] }), ready[next] < 10 {
            // The network delivers a read at twice the rate or faster.
            let count = Int.random(in: 1...limiter.readSize, using: &generator)
            let transfer = Double(count) / Double(rate) * Double.random(in: 0...1, using: &generator)
            clock.set(ready[next] + transfer)
            received += Int64(count)
            var slept = 0.0
            let uninterrupted = limiter.consume(count) { seconds in
                slept = seconds
                return true
            }
            #expect(uninterrupted)
            ready[next] = clock.now + slept
        }
        let ratio = Double(received) / 10 / Double(rate)
        #expect(ratio > 0.95, "measured \(ratio) of the rate")
        #expect(ratio < 1.05, "measured \(ratio) of the rate")
    }

    @Test(arguments: rates)
    func burstPassesWithoutWaitingAndNoMore(rate: Int64) {
        let clock = SimulatedClock()
        let limiter = RateLimiter(bytesPerSecond: rate, now: { clock.now })
        var sleeps: [Double] = []
        let record: (Double) -> Bool = { sleeps.append($0); return true }
        // Default burst: a tenth of a second.
        #expect(limiter.consume(Int(rate / 10), sleep: record))
        #expect(sleeps.isEmpty)
        #expect(limiter.consume(Int(rate / 100), sleep: record))
        #expect(sleeps.count == 1)
        #expect(abs(sleeps[0] - Double(rate / 100) / Double(rate)) < 1e-9)
        // After a long idle period, again a burst and no more.
        clock.set(1000)
        #expect(limiter.consume(Int(rate / 10), sleep: record))
        #expect(sleeps.count == 1)
        #expect(limiter.consume(1, sleep: record))
        #expect(sleeps.count == 2)
    }

    @Test func explicitBurstIsTheCapacity() {
        let clock = SimulatedClock()
        let limiter = RateLimiter(bytesPerSecond: 1000, burst: 5000, now: { clock.now })
        var slept: Double?
        #expect(limiter.consume(5000) { slept = $0; return true })
        #expect(slept == nil)
        #expect(limiter.consume(2000) { slept = $0; return true })
        #expect(slept == 2)
    }

    @Test func interruptedSleepIsReported() {
        let clock = SimulatedClock()
        let limiter = RateLimiter(bytesPerSecond: 1000, burst: 1, now: { clock.now })
        var asked: Double?
        #expect(!limiter.consume(501) { asked = $0; return false })
        #expect(asked == 0.5)
        // The debt stays: the next bytes wait for it too.
        #expect(limiter.consume(500) { asked = $0; return true })
        #expect(asked == 1)
    }

    static let readSizes: [(rate: Int64, expected: Int)] = [
        (1, 256),
        (10 << 10, 256),
        (1 << 20, (1 << 20) / 50),
        (25 << 20, (25 << 20) / 50),
        (50 << 20, 1 << 20),
        (1 << 30, 1 << 20),
    ]

    @Test(arguments: readSizes)
    func readSizeIsAFiftiethOfASecondWithinBounds(rate: Int64, expected: Int) {
        #expect(RateLimiter(bytesPerSecond: rate).readSize == expected)
    }
}

/// The limiter against the real clock: its sleeps and real threads sharing it.
///
/// Exclusive: real threads sleep as the limiter says and the elapsed time is asserted.
@Suite(.exclusive, .serialized) struct RateLimiterRealTimeTests {
    @Test func sleepUninterruptedSleepsAtLeastThatLong() {
        let start = ContinuousClock.now
        #expect(RateLimiter.sleepUninterrupted(0.02))
        #expect(ContinuousClock.now - start >= .milliseconds(20))
        #expect(RateLimiter.sleepUninterrupted(0))
        #expect(RateLimiter.sleepUninterrupted(-1))
    }

    /// Four real threads share one limiter. Sleeps never end early, so the transfer can never
    /// beat the rate: the wall time is at least (bytes - burst) / rate. (No upper bound: a busy
    /// machine may be slower, and that is not what this checks.)
    @Test func realThreadsNeverBeatTheRate() async {
        let rate: Int64 = 64 << 20
        let limiter = RateLimiter(bytesPerSecond: rate)
        let threads = ThreadPool()
        let perThread = 8 << 20
        let counts = ThreadCounts(running: 4)
        let start = ContinuousClock.now
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for _ in 0..<4 {
                threads.runInTest {
                    var left = perThread
                    var ok = true
                    while left > 0 {
                        let count = min(left, limiter.readSize)
                        ok = limiter.consume(count, sleep: RateLimiter.sleepUninterrupted) && ok
                        left -= count
                    }
                    if ok { counts.uninterrupted.add(1, ordering: .relaxed) }
                    if counts.running.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { continuation.resume() }
                }
            }
        }
        let elapsed = ContinuousClock.now - start
        let floor = Double(4 * Int64(perThread) - rate / 10) / Double(rate)   // 0.4 s
        #expect(counts.uninterrupted.load(ordering: .relaxed) == 4)
        #expect(elapsed >= .milliseconds(Int64(floor * 1000) - 5), "took \(elapsed)")
    }
}

/// A clock the test moves by hand.
private final class SimulatedClock: Sendable {
    private let time = SharedStateLock(0.0)
    var now: Double { time.withLock { $0 } }
    func set(_ value: Double) { time.withLock { $0 = value } }
}

/// What the threads of one test report.
private final class ThreadCounts: Sendable {
    let running: Atomic<Int>
    let uninterrupted = Atomic<Int>(0)
    init(running: Int) { self.running = Atomic(running) }
}

/// A cap changed while connections use it, lifted, and a download's own cap under the downloader's.
@Suite struct RateLimiterChangeTests {
    @Test func aNewRateAppliesToTheNextBytes() {
        let clock = SimulatedClock()
        let limiter = RateLimiter(bytesPerSecond: 1000, burst: 1, now: { clock.now })
        var asked: Double?
        #expect(limiter.consume(1001) { asked = $0; return true })
        #expect(asked == 1)
        clock.set(1)
        limiter.setRate(4000)
        #expect(limiter.bytesPerSecond == 4000)
        #expect(limiter.consume(2000) { asked = $0; return true })
        #expect(asked == 0.5, "2000 bytes at 4000 bytes/s")
    }

    @Test func aLiftedCapNeverWaitsAndReadsAreLarge() {
        let clock = SimulatedClock()
        let limiter = RateLimiter(bytesPerSecond: 1000, burst: 1, now: { clock.now })
        limiter.setRate(nil)
        #expect(!limiter.isLimited)
        #expect(limiter.current == nil)
        #expect(limiter.readSize == 1 << 20)
        var slept = false
        #expect(limiter.consume(1 << 30) { _ in slept = true; return true })
        #expect(!slept)
        limiter.setRate(1000)   // a cap set after none starts with a full burst (100 bytes)
        #expect(limiter.current === limiter)
        #expect(limiter.consume(100) { _ in slept = true; return true })
        #expect(!slept)
    }

    @Test func aDownloadsOwnCapAndTheDownloadersBothCount() {
        let clock = SimulatedClock()
        let overall = RateLimiter(bytesPerSecond: 500, burst: 1, now: { clock.now })
        let own = RateLimiter(bytesPerSecond: 1000, burst: 1, parent: overall, now: { clock.now })
        var asked: Double?
        #expect(own.consume(501) { asked = $0; return true })
        #expect(asked == 1, "the slower cap (the downloader's 500 bytes/s) decides")
        #expect(own.readSize == 256)
        overall.setRate(nil)
        clock.set(10)
        #expect(own.consume(1001) { asked = $0; return true })
        #expect(asked == 1, "with the downloader's cap lifted, the download's own decides")
        #expect(own.isLimited)
    }
}
