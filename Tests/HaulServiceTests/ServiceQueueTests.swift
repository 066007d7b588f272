import Testing
@testable import HaulService

/// The service's list as a pure value: what each operation changes and which effects it asks
/// for, with no engine, file or socket.
@Suite struct ServiceQueueTests {
    static func id(_ value: UInt64) -> DownloadID { DownloadID(rawValue: value)! }

    static func entry(_ value: UInt64, paused: Bool = false) -> ServiceQueue.Entry {
        ServiceQueue.Entry(id: id(value), urls: ["http://127.0.0.1:1/\(value)"], options: .init(),
                           status: paused ? .paused : .waiting, position: 0)
    }

    /// A queue with `count` downloads added in order (ids 1...count).
    static func queue(active maximum: Int, adding count: Int) -> (ServiceQueue, [ServiceQueue.Effect]) {
        var queue = ServiceQueue(maximumActive: maximum)
        var effects: [ServiceQueue.Effect] = []
        for value in 1...UInt64(count) { effects += queue.add(entry(value), at: nil) }
        return (queue, effects)
    }

    static func starts(_ effects: [ServiceQueue.Effect]) -> [DownloadID] {
        effects.compactMap { if case .start(let id, _) = $0 { id } else { nil } }
    }

    static func generation(_ queue: ServiceQueue, _ id: DownloadID) -> Int? {
        if case .running(let generation)? = queue.entries[id]?.run { generation } else { nil }
    }

    @Test func addingFillsTheFreeSlotsInOrderAndQueuesTheRest() {
        let (queue, effects) = Self.queue(active: 2, adding: 4)
        #expect(Self.starts(effects) == [Self.id(1), Self.id(2)])
        #expect(queue.active == [Self.id(1), Self.id(2)])
        #expect(queue.waiting == [Self.id(3), Self.id(4)])
        #expect(effects.contains(.event(ServiceEvent(id: Self.id(1), kind: .added))))
        #expect(effects.contains(.event(ServiceEvent(id: Self.id(1), kind: .started))))
        #expect(effects.contains(.save(Self.id(4))))
    }

    @Test func addingAtAPositionInsertsThere() {
        var (queue, _) = Self.queue(active: 1, adding: 3)   // 1 active, 2 3 waiting
        _ = queue.add(Self.entry(9), at: 0)
        _ = queue.add(Self.entry(8), at: 1)
        _ = queue.add(Self.entry(7), at: 99)
        #expect(queue.waiting == [9, 8, 2, 3, 7].map(Self.id))
        let positions = queue.waiting.map { queue.entries[$0]!.position }
        #expect(positions == positions.sorted(), "positions keep the order for the store: \(positions)")
    }

    @Test func pausingAnActiveDownloadStopsItsRunPutsItFirstAndStartsTheNext() throws {
        var (queue, _) = Self.queue(active: 1, adding: 3)
        let generation = try #require(Self.generation(queue, Self.id(1)))
        let effects = try queue.pause(Self.id(1))
        #expect(effects.contains(.stop(Self.id(1), generation: generation)))
        #expect(effects.contains(.event(ServiceEvent(id: Self.id(1), kind: .paused))))
        #expect(Self.starts(effects) == [Self.id(2)])
        #expect(queue.entries[Self.id(1)]?.status == .paused)
        #expect(queue.waiting == [Self.id(1), Self.id(3)])
        #expect(throws: ServiceError.self) { try queue.pause(Self.id(1)) }
    }

    @Test func unpausingKeepsThePlaceAndWaitsForTheOldRunToEnd() throws {
        var (queue, _) = Self.queue(active: 1, adding: 2)
        let old = try #require(Self.generation(queue, Self.id(1)))
        _ = try queue.pause(Self.id(1))   // 2 starts
        _ = try queue.pause(Self.id(2))   // nothing left to start: 1 is paused
        let effects = try queue.unpause(Self.id(1))
        #expect(Self.starts(effects).isEmpty, "the paused run has not ended: its partial file is still locked")
        #expect(queue.entries[Self.id(1)]?.status == .active)
        let ended = queue.runEnded(Self.id(1), generation: old, outcome: .cancelled, ranges: [0..<10])
        #expect(Self.starts(ended) == [Self.id(1)])
        #expect(queue.entries[Self.id(1)]?.status == .active, "a stopped run's end is not a failure")
        #expect(Self.generation(queue, Self.id(1)) != old)
    }

    @Test func whatAnOldRunReportsIsIgnored() throws {
        var (queue, _) = Self.queue(active: 1, adding: 1)
        let old = try #require(Self.generation(queue, Self.id(1)))
        _ = try queue.pause(Self.id(1))
        _ = queue.runEnded(Self.id(1), generation: old, outcome: .cancelled, ranges: nil)
        _ = try queue.unpause(Self.id(1))
        let current = try #require(Self.generation(queue, Self.id(1)))
        #expect(queue.runStarted(Self.id(1), generation: old, file: "/x", totalBytes: 5, resumedFrom: 0, connections: 1).isEmpty)
        #expect(queue.runEnded(Self.id(1), generation: old, outcome: .failed(.init(code: "x", exitStatus: 1, message: "")),
                               ranges: nil).isEmpty)
        #expect(queue.entries[Self.id(1)]?.status == .active)
        #expect(queue.runStarted(Self.id(1), generation: current, file: "/x", totalBytes: 5, resumedFrom: 0, connections: 1)
                == [.save(Self.id(1))])
    }

    @Test func aRunThatEndsMakesAResultAndStartsTheNext() throws {
        var (queue, _) = Self.queue(active: 1, adding: 3)
        let first = try #require(Self.generation(queue, Self.id(1)))
        let done = queue.runEnded(Self.id(1), generation: first, outcome: .finished(file: "/d/one", bytes: 7), ranges: nil)
        #expect(done.contains(.event(ServiceEvent(id: Self.id(1), kind: .completed))))
        #expect(Self.starts(done) == [Self.id(2)])
        let second = try #require(Self.generation(queue, Self.id(2)))
        let failure = ServiceFailure(code: "httpStatus", exitStatus: 8, httpStatus: 404, message: "the server answered 404")
        let failed = queue.runEnded(Self.id(2), generation: second, outcome: .failed(failure), ranges: nil)
        #expect(failed.contains(.event(ServiceEvent(id: Self.id(2), kind: .failed))))
        #expect(queue.stopped == [Self.id(1), Self.id(2)])
        #expect(queue.entries[Self.id(1)]?.status == .complete)
        #expect(queue.entries[Self.id(1)]?.completedBytes == 7)
        #expect(queue.entries[Self.id(2)]?.failure == failure)
        #expect(queue.stoppedTotal == 2)
    }

    @Test func removingMakesARemovedResultAndForgettingDeletesIt() throws {
        var (queue, _) = Self.queue(active: 1, adding: 3)
        let generation = try #require(Self.generation(queue, Self.id(1)))
        let removed = try queue.remove(Self.id(1))
        #expect(removed.contains(.stop(Self.id(1), generation: generation)))
        #expect(removed.contains(.event(ServiceEvent(id: Self.id(1), kind: .removed))))
        _ = try queue.remove(Self.id(3))
        #expect(queue.stopped == [Self.id(1), Self.id(3)])
        #expect(queue.active == [Self.id(2)])
        #expect(throws: ServiceError.self) { try queue.remove(Self.id(1)) }
        let forgotten = try queue.forget(Self.id(1))
        #expect(forgotten.contains(.delete(Self.id(1))))
        #expect(!queue.contains(Self.id(1)))
        #expect(throws: ServiceError.self) { try queue.forget(Self.id(2)) }
        #expect(queue.forgetAll().contains(.delete(Self.id(3))))
        #expect(queue.stopped.isEmpty)
    }

    @Test(arguments: [
        (ServiceQueue.Origin.front, 0, [3, 1, 2, 4, 5]), (.front, -5, [3, 1, 2, 4, 5]), (.front, 99, [1, 2, 4, 5, 3]),
        (.current, 1, [1, 2, 4, 3, 5]), (.current, -1, [1, 3, 2, 4, 5]), (.current, -99, [3, 1, 2, 4, 5]),
        (.back, 0, [1, 2, 4, 5, 3]), (.back, -1, [1, 2, 4, 3, 5]), (.back, Int.max, [1, 2, 4, 5, 3]),
    ])
    func movingClampsToTheQueueAsAria2Does(origin: ServiceQueue.Origin, offset: Int, order: [UInt64]) throws {
        var queue = ServiceQueue(maximumActive: 1)
        _ = queue.add(Self.entry(100), at: nil)   // active
        for value in 1...UInt64(5) { _ = queue.add(Self.entry(value), at: nil) }
        let (place, _) = try queue.move(Self.id(3), by: offset, from: origin)
        #expect(queue.waiting == order.map(Self.id))
        #expect(place == queue.waiting.firstIndex(of: Self.id(3)))
        let positions = queue.waiting.map { queue.entries[$0]!.position }
        #expect(positions == positions.sorted())
        #expect(throws: ServiceError.self) { try queue.move(Self.id(100), by: 0, from: .front) }
    }

    @Test func manyMovesToTheFrontKeepPositionsOrdered() throws {
        var (queue, _) = Self.queue(active: 1, adding: 50)
        for round in 0..<200 {
            let id = queue.waiting[queue.waiting.count - 1 - round % 10]
            _ = try queue.move(id, by: 1, from: .front)
        }
        let positions = queue.waiting.map { queue.entries[$0]!.position }
        #expect(positions == positions.sorted() && Set(positions).count == positions.count)
    }

    @Test func pauseAllHoldsEverythingAndStartsNothing() {
        var (queue, _) = Self.queue(active: 2, adding: 5)
        let effects = queue.pauseAll()
        #expect(Self.starts(effects).isEmpty)
        #expect(queue.active.isEmpty)
        #expect(queue.waiting.allSatisfy { queue.entries[$0]?.status == .paused })
        #expect(queue.waiting.prefix(2).sorted() == [Self.id(1), Self.id(2)], "the paused active ones come first")
        let resumed = queue.unpauseAll()
        #expect(resumed.filter { if case .event(let e) = $0 { e.kind == .unpaused } else { false } }.count == 5)
    }

    @Test func loweringTheLimitSendsTheNewestBackFirstAndRaisingItStartsMore() throws {
        var (queue, _) = Self.queue(active: 3, adding: 5)
        let lowered = queue.setMaximumActive(1)
        #expect(queue.active == [Self.id(1)])
        #expect(queue.waiting == [2, 3, 4, 5].map(Self.id))
        #expect(lowered.filter { if case .stop = $0 { true } else { false } }.count == 2)
        let raised = queue.setMaximumActive(2)
        #expect(Self.starts(raised).isEmpty, "2's previous run has not ended")
        #expect(queue.active == [Self.id(1), Self.id(2)])
    }

    @Test func shuttingDownStopsRunsButKeepsThemActive() throws {
        var (queue, _) = Self.queue(active: 2, adding: 3)
        let effects = queue.shutDown()
        #expect(effects.filter { if case .stop = $0 { true } else { false } }.count == 2)
        #expect(queue.active == [Self.id(1), Self.id(2)])
        #expect(queue.hasRuns)
        for id in [Self.id(1), Self.id(2)] {
            if case .ending(let generation, _)? = queue.entries[id]?.run {
                #expect(queue.runEnded(id, generation: generation, outcome: .cancelled, ranges: nil) == [.save(id)])
            }
        }
        #expect(!queue.hasRuns)
        #expect(queue.fillSlots().isEmpty)
    }

    @Test func restoringPutsTheActiveFirstThenTheQueueThenTheResults() {
        var active = Self.entry(5)
        active.status = .active
        active.position = 300
        var paused = Self.entry(6, paused: true)
        paused.position = 100
        var waiting = Self.entry(7)
        waiting.position = 200
        var done = Self.entry(8)
        done.status = .complete
        done.position = 2
        var failed = Self.entry(9)
        failed.status = .error
        failed.position = 1
        var queue = ServiceQueue(restoring: [done, waiting, active, failed, paused], maximumActive: 1)
        #expect(queue.waiting == [5, 6, 7].map(Self.id))
        #expect(queue.entries[Self.id(5)]!.position < 100, "the active download goes before the queue")
        #expect(queue.entries[Self.id(6)]!.position == 100, "the queue keeps its positions")
        #expect(queue.takeRestoredChanges() == [.save(Self.id(5))], "only what the restore changed is saved")
        #expect(queue.takeRestoredChanges().isEmpty)
        #expect(queue.stopped == [9, 8].map(Self.id))
        #expect(Self.starts(queue.fillSlots()) == [Self.id(5)], "the download that was active continues first")
        #expect(queue.entries[Self.id(6)]?.status == .paused)
    }
}
