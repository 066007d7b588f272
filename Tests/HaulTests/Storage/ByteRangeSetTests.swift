import HaulTestSupport
import Testing
@testable import Haul


/// The naive model: one Bool per byte of 0..<size.
private struct BoolModel {
    var present: [Bool]

    init(size: Int) { present = Array(repeating: false, count: size) }

    mutating func insert(_ range: Range<Int64>) {
        for index in range { present[Int(index)] = true }
    }

    func contains(_ range: Range<Int64>) -> Bool { range.allSatisfy { present[Int($0)] } }

    var byteCount: Int64 { Int64(present.filter { $0 }.count) }

    /// Maximal runs of `value` within `bounds`.
    func runs(of value: Bool, within bounds: Range<Int64>) -> [Range<Int64>] {
        var result: [Range<Int64>] = []
        var start: Int64?
        for index in bounds {
            if present[Int(index)] == value {
                if start == nil { start = index }
            } else if let begin = start {
                result.append(begin..<index)
                start = nil
            }
        }
        if let begin = start { result.append(begin..<bounds.upperBound) }
        return result
    }
}

@Suite struct ByteRangeSetTests {
    static let size: Int64 = 64

    private static func randomRange(_ generator: inout SplitMix64) -> Range<Int64> {
        let a = Int64.random(in: 0...size, using: &generator)
        let b = Int64.random(in: 0...size, using: &generator)
        return min(a, b)..<max(a, b)   // sometimes empty, on purpose
    }

    private static func isNormal(_ set: ByteRangeSet) -> Bool {
        set.ranges.allSatisfy { !$0.isEmpty }
            && zip(set.ranges, set.ranges.dropFirst()).allSatisfy { $0.upperBound < $1.lowerBound }
    }

    @Test(arguments: 0..<40)
    func insertMatchesTheModel(seed: Int) {
        var generator = SplitMix64(seed: UInt64(seed))
        var set = ByteRangeSet()
        var model = BoolModel(size: Int(Self.size))
        for _ in 0..<Int.random(in: 1...30, using: &generator) {
            let range = Self.randomRange(&generator)
            set.insert(range)
            model.insert(range)
            #expect(Self.isNormal(set), "not normal after inserting \(range): \(set.ranges)")
            #expect(set.ranges == model.runs(of: true, within: 0..<Self.size))
            #expect(set.byteCount == model.byteCount)
        }
    }

    @Test(arguments: 0..<40)
    func initNormalisesLikeRepeatedInsert(seed: Int) {
        var generator = SplitMix64(seed: UInt64(seed) &+ 1000)
        let ranges = (0..<Int.random(in: 0...20, using: &generator)).map { _ in Self.randomRange(&generator) }
        var inserted = ByteRangeSet()
        for range in ranges { inserted.insert(range) }
        let initialised = ByteRangeSet(ranges)
        #expect(initialised == inserted)
        #expect(Self.isNormal(initialised))
        #expect(ByteRangeSet(ranges.reversed()) == initialised)
    }

    @Test(arguments: 0..<40)
    func gapsAndContainsMatchTheModel(seed: Int) {
        var generator = SplitMix64(seed: UInt64(seed) &+ 2000)
        var model = BoolModel(size: Int(Self.size))
        let ranges = (0..<Int.random(in: 0...12, using: &generator)).map { _ in Self.randomRange(&generator) }
        for range in ranges { model.insert(range) }
        let set = ByteRangeSet(ranges)
        for _ in 0..<30 {
            let probe = Self.randomRange(&generator)
            #expect(set.contains(probe) == model.contains(probe), "contains(\(probe)) in \(set.ranges)")
            #expect(set.gaps(within: probe) == model.runs(of: false, within: probe), "gaps(within: \(probe)) of \(set.ranges)")
        }
        #expect(set.gaps(within: 0..<Self.size) == model.runs(of: false, within: 0..<Self.size))
    }

    @Test func adjacentRangesMerge() {
        var set = ByteRangeSet([0..<10, 20..<30])
        set.insert(10..<20)
        #expect(set.ranges == [0..<30])
        #expect(ByteRangeSet([5..<6, 0..<5, 6..<7]).ranges == [0..<7])
    }

    @Test func emptyRangesAreIgnored() {
        var set = ByteRangeSet([3..<3, 0..<0])
        #expect(set.ranges.isEmpty)
        set.insert(7..<7)
        #expect(set.ranges.isEmpty)
        #expect(set.byteCount == 0)
        #expect(set.contains(5..<5))
        #expect(set.gaps(within: 0..<4) == [0..<4])
        #expect(set.gaps(within: 4..<4) == [])
    }

    @Test func largeOffsetsAreExact() {
        let big: Int64 = 1 << 40
        var set = ByteRangeSet([0..<big])
        set.insert(big + 1..<2 * big)
        #expect(set.byteCount == 2 * big - 1)
        #expect(set.gaps(within: 0..<2 * big + 5) == [big..<big + 1, 2 * big..<2 * big + 5])
        #expect(!set.contains(big - 1..<big + 2))
        #expect(set.contains(big + 1..<2 * big))
    }
}
