import Testing
@testable import HaulCore

/// The queue of waiting downloads: first in, first out, whatever the mix of appends and takes.
@Suite
struct FIFOQueueTests {
    @Test func elementsComeOutInTheOrderTheyWentIn() {
        var queue = FIFOQueue<Int>()
        #expect(queue.isEmpty && queue.popFirst() == nil)
        var model: [Int] = [], next = 0, taken: [Int] = []
        for round in 0..<2_000 {
            if round % 3 == 2, !model.isEmpty {
                taken.append(queue.popFirst()!)
                model.removeFirst()
            } else {
                queue.append(next)
                model.append(next)
                next += 1
            }
            #expect(queue.count == model.count)
        }
        while let element = queue.popFirst() { taken.append(element) }
        #expect(taken == Array(0..<next), "every element once, in order, across compactions")
        #expect(queue.isEmpty)
    }

    @Test func removalsMixedWithAppendsAndTakesMatchAnArray() {
        var queue = FIFOQueue<Int>()
        var model: [Int] = [], next = 0
        for round in 0..<3_000 {
            switch round % 5 {
            case 0, 1, 2:
                queue.append(next)
                model.append(next)
                next += 1
            case 3:
                #expect(queue.popFirst() == (model.isEmpty ? nil : model.removeFirst()))
            default:
                let unlucky = round % 7
                queue.removeAll { $0 % 7 == unlucky }
                model.removeAll { $0 % 7 == unlucky }
            }
            #expect(queue.count == model.count)
        }
        queue.removeAll { _ in false }
        var rest: [Int] = []
        while let element = queue.popFirst() { rest.append(element) }
        #expect(rest == model)
        queue.append(1)
        queue.removeAll { _ in true }
        #expect(queue.isEmpty)
    }

    @Test func removingKeepsTheOthersInOrder() {
        var queue = FIFOQueue<Int>()
        for element in 0..<200 { queue.append(element) }
        for _ in 0..<100 { _ = queue.popFirst() }
        queue.removeAll { $0 % 2 == 0 }
        #expect(queue.count == 50)
        var rest: [Int] = []
        while let element = queue.popFirst() { rest.append(element) }
        #expect(rest == Array(stride(from: 101, to: 200, by: 2)))
    }

    @Test func aTakenElementIsLetGo() {
        final class Token {}
        var queue = FIFOQueue<Token>()
        weak var first: Token?
        do {
            let token = Token()
            first = token
            queue.append(token)
            queue.append(Token())
        }
        #expect(first != nil)
        _ = queue.popFirst()
        #expect(first == nil, "the queue no longer holds what it gave out")
    }
}
