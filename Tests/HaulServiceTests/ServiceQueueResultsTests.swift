import Testing
@testable import HaulService

/// The results window: memory holds the newest results, the store the older ones, and the
/// lists, the counts and forgetting see all of them alike.
@Suite struct ServiceQueueResultsTests {
    static func id(_ value: UInt64) -> DownloadID { DownloadID(rawValue: value)! }

    /// A queue of one slot whose first `count` downloads (ids 1...count) failed in order.
    static func failed(_ count: Int, resident: Int) -> ServiceQueue {
        var queue = ServiceQueue(maximumActive: 1, residentResults: resident)
        let failure = ServiceFailure(code: "connectionRefused", exitStatus: 4, message: "refused")
        for value in 1...UInt64(count) {
            _ = queue.add(ServiceQueueTests.entry(value), at: nil)
            guard case .running(let generation)? = queue.entries[id(value)]?.run else { continue }
            _ = queue.runEnded(id(value), generation: generation, outcome: .failed(failure), ranges: nil)
        }
        return queue
    }

    @Test func theNewestResultsStayInMemoryAndTheOlderOnesAreListedFromTheStore() {
        let queue = Self.failed(50, resident: 10)
        #expect(queue.results.count == 50)
        #expect(queue.stopped == (1...50).map(Self.id), "every result, oldest first")
        #expect(queue.entries.count == 10)
        #expect(Set(queue.entries.keys) == Set((41...50).map(Self.id)), "the newest ten are resident")
        #expect(queue.storedResults.count == 40)
        #expect(queue.isStored(Self.id(1)) && !queue.isStored(Self.id(41)))
        #expect(queue.contains(Self.id(1)) && queue.contains(Self.id(50)))
        #expect(queue.stopped(at: 38..<42) == [39, 40, 41, 42].map(Self.id))
        #expect(queue.stoppedTotal == 50)
    }

    @Test func forgettingAStoredOrResidentResultDeletesItsRow() throws {
        var queue = Self.failed(30, resident: 10)
        let stored = try queue.forget(Self.id(5))
        #expect(stored == [.delete(Self.id(5)), .event(ServiceEvent(id: Self.id(5), kind: .forgotten))])
        #expect(!queue.contains(Self.id(5)))
        #expect(throws: ServiceError.self) { try queue.forget(Self.id(5)) }
        _ = try queue.forget(Self.id(30))
        #expect(queue.results.count == 28)
        #expect(queue.stopped.first == Self.id(1) && queue.stopped.last == Self.id(29))
        // A new result keeps the window full: the oldest resident one goes to the store.
        _ = queue.add(ServiceQueueTests.entry(99), at: nil)
        _ = try queue.remove(Self.id(99))
        #expect(queue.entries.values.filter { $0.status.isStopped }.count == 10)
        #expect(queue.stopped.last == Self.id(99))
        let all = queue.forgetAll()
        #expect(all.filter { if case .delete = $0 { true } else { false } }.count == 29)
        #expect(queue.results.isEmpty && queue.storedResults.isEmpty && queue.entries.isEmpty)
    }

    @Test func aStoredResultCannotBePausedMovedOrRemovedAgain() {
        var queue = Self.failed(20, resident: 5)
        #expect(throws: ServiceError.self) { try queue.pause(Self.id(1)) }
        #expect(throws: ServiceError.self) { try queue.unpause(Self.id(1)) }
        #expect(throws: ServiceError.self) { try queue.remove(Self.id(1)) }
        #expect(throws: ServiceError.self) { try queue.move(Self.id(1), by: 0, from: .front) }
        #expect(throws: ServiceError.self) { try queue.changeURLs(Self.id(1), to: ["http://127.0.0.1:1/x"]) }
    }

    @Test func restoringKeepsTheStoredResultsBeforeTheResidentOnes() {
        var resident = ServiceQueueTests.entry(7)
        resident.status = .error
        resident.position = 30
        let queue = ServiceQueue(restoring: [resident], stored: [(Self.id(8), 10), (Self.id(9), 20)], maximumActive: 1,
                                 residentResults: 5)
        #expect(queue.stopped == [8, 9, 7].map(Self.id))
        #expect(queue.isStored(Self.id(8)) && !queue.isStored(Self.id(7)))
        #expect(queue.nextStoppedPosition == 31)
    }

    @Test func pausingAndUnpausingAllKeepTheQueueAndItsReadyIndexInStep() throws {
        var (queue, _) = ServiceQueueTests.queue(active: 2, adding: 6)   // 1 2 active, 3...6 waiting
        _ = queue.pauseAll()
        #expect(queue.active.isEmpty)
        #expect(queue.ready.isEmpty)
        #expect(queue.queued.count == 6)
        _ = try queue.unpause(Self.id(5))
        #expect(queue.active == [Self.id(5)], "an unpaused download takes a free slot")
        #expect(queue.ready.isEmpty)
        _ = queue.unpauseAll()
        #expect(queue.active == [5, 2].map(Self.id), "the front of the queue takes the other slot (once its old run ends)")
        #expect(queue.ready.all.map(\.id) == [1, 3, 4, 6].map(Self.id))
        #expect(queue.queued.count == 4)
        #expect(queue.waiting.allSatisfy { queue.entries[$0]?.status == .waiting })
    }
}

/// The lists in the order aria2 gives them: the downloads added first come first, also after
/// the list is restored from the store.
@Suite struct ServiceQueueOrderTests {
    @Test func activeDownloadsRestoreInTheOrderTheyWereAdded() {
        // Given two downloads that started at once, the second added into an empty queue, with
        // identifiers that sort the other way round (the store returns rows in identifier order)
        var queue = ServiceQueue(maximumActive: 2)
        let first = DownloadID(rawValue: 0xFFFF_0000)!, second = DownloadID(rawValue: 0x1)!
        _ = queue.add(ServiceQueueTests.entry(0xFFFF_0000), at: nil)
        _ = queue.add(ServiceQueueTests.entry(0x1), at: nil)
        #expect(queue.active == [first, second])
        #expect(queue.entries[first]!.position < queue.entries[second]!.position)
        // When the list is restored
        let rows = queue.entries.values.sorted { $0.id < $1.id }
        var restored = ServiceQueue(restoring: rows, maximumActive: 2)
        _ = restored.fillSlots()
        // Then the first added is still the first
        #expect(restored.active == [first, second])
    }
}
