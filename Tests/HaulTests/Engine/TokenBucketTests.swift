import HaulTestSupport
import Testing
@testable import Haul

@Suite struct TokenBucketTests {
    @Test func fullBucketLetsTheBurstThroughThenCountsDebt() {
        var bucket = TokenBucket(rate: 1000, burst: 100)
        #expect(bucket.consume(100, now: 5) == 0)
        #expect(bucket.consume(500, now: 5) == 0.5)    // 500 bytes of debt at 1000 B/s
        #expect(bucket.consume(0, now: 5.25) == 0.25)  // half paid back
        #expect(bucket.consume(0, now: 5.5) == 0)
        #expect(bucket.consume(10, now: 5.5) == 0.01)
    }

    @Test func idleRefillsNoMoreThanTheBurst() {
        var bucket = TokenBucket(rate: 1000, burst: 100)
        #expect(bucket.consume(100, now: 0) == 0)
        // A long idle period refills to the burst, not to 100 s worth.
        #expect(bucket.consume(100, now: 100) == 0)
        #expect(bucket.consume(1000, now: 100) == 1)
    }

    @Test func timeGoingBackwardsAddsNothing() {
        var bucket = TokenBucket(rate: 1000, burst: 100)
        #expect(bucket.consume(100, now: 10) == 0)
        #expect(bucket.consume(100, now: 9) == 0.1)
        #expect(bucket.consume(0, now: 9.5) == 0.1)    // still before 10: nothing refilled
        #expect(bucket.consume(0, now: 10.2) == 0)
    }

    @Test func unusableValuesAreClamped() {
        var bucket = TokenBucket(rate: 0, burst: -4)
        #expect(bucket.rate == 1 && bucket.burst == 1)
        #expect(bucket.consume(-50, now: 0) == 0)
        #expect(bucket.consume(3, now: 0) == 2)
    }

    /// Traffic at 90% of the rate, in pieces no larger than the burst, never waits.
    @Test(arguments: [Int64(10 << 10), 1 << 20, 100 << 20, 1 << 30])
    func noWaitBelowTheRate(rate: Int64) {
        let burst = rate / 10
        var bucket = TokenBucket(rate: rate, burst: burst)
        var generator = SplitMix64(seed: UInt64(rate))
        var now = 0.0
        var waits = 0
        for _ in 0..<5000 {
            let count = Int64.random(in: 1...burst, using: &generator)
            if bucket.consume(count, now: now) > 0 { waits += 1 }
            now += Double(count) / (0.9 * Double(rate))
        }
        #expect(waits == 0)
    }

    /// Whatever the pattern, the bytes allowed by time t never exceed burst + rate * t.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func waitsNeverLetMoreThroughThanRateAndBurst(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        let rate = Int64.random(in: 1000...(1 << 30), using: &generator)
        let burst = Int64.random(in: 1...rate, using: &generator)
        var bucket = TokenBucket(rate: rate, burst: burst)
        var now = 0.0
        var consumed = 0.0
        for _ in 0..<2000 {
            let count = Int64.random(in: 0...(2 * burst), using: &generator)
            let wait = bucket.consume(count, now: now)
            consumed += Double(count)
            // The caller may go on once the wait is over: by then the budget covers every byte.
            let allowedAt = now + wait
            #expect(consumed <= Double(burst) + Double(rate) * allowedAt + 1e-6 * consumed)
            now = allowedAt + (Bool.random(using: &generator) ? 0 : Double.random(in: 0...0.01, using: &generator))
        }
    }
}
