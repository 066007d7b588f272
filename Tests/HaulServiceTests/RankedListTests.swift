import Testing
@testable import HaulService

/// The ordered index of the queue and the results against a sorted array doing the same, over
/// seeded random operations.
@Suite struct RankedListTests {
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func agreesWithASortedArray(seed: UInt64) {
        var random = Generator(state: seed)
        var list = RankedList()
        var model: [(position: Double, id: DownloadID)] = []
        for step in 0..<4_000 {
            let position = Double(Int.random(in: 0..<600, using: &random))
            let id = DownloadID(rawValue: UInt64(step + 1))!
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                list.insert(id, at: position)
                model.removeAll { $0.position == position }
                model.append((position, id))
                model.sort { $0.position < $1.position }
            case 5..<8:
                let removed = list.remove(at: position)
                let index = model.firstIndex { $0.position == position }
                #expect(removed == index.map { model[$0].id })
                if let index { model.remove(at: index) }
            default:
                #expect(list.rank(of: position) == model.filter { $0.position < position }.count)
            }
            #expect(list.count == model.count)
            let place = Int.random(in: 0...max(0, model.count), using: &random)
            #expect(list.element(at: place)?.id == (place < model.count ? model[place].id : nil))
        }
        #expect(list.all.map(\.id) == model.map(\.id))
        #expect(list.all.map(\.position) == model.map(\.position))
        #expect(list.first?.id == model.first?.id)
        let start = model.count / 3
        #expect(list.elements(in: start..<(start + 50)).map(\.id) == model[start..<min(model.count, start + 50)].map(\.id))
        #expect(list.elements(in: -5..<3).map(\.id) == model.prefix(3).map(\.id))
    }

    @Test func aHundredThousandInOrderStayShallowEnoughToWalk() {
        var list = RankedList()
        for index in 0..<100_000 { list.insert(DownloadID(rawValue: UInt64(index + 1))!, at: Double(index) * 1024) }
        #expect(list.count == 100_000)
        #expect(list.rank(of: 50_000 * 1024) == 50_000)
        #expect(list.element(at: 99_999)?.id == DownloadID(rawValue: 100_000))
        for index in stride(from: 0, to: 100_000, by: 2) { list.remove(at: Double(index) * 1024) }
        #expect(list.count == 50_000)
        #expect(list.first?.id == DownloadID(rawValue: 2))
        #expect(list.elements(in: 10..<13).map(\.id) == [22, 24, 26].map { DownloadID(rawValue: $0)! })
    }
}
