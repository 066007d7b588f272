import HaulTestSupport
import Testing
@testable import Haul

private typealias Segment = SegmentPlanner.Segment
private let mib: Int64 = 1 << 20
private let kib: Int64 = 1 << 10

@Suite struct SegmentPlannerTests {
    @Test func emptyFileIsCompleteAtOnce() {
        var planner = SegmentPlanner(total: 0, completed: [], maximumConnections: 4, minimumSegment: mib)
        #expect(planner.isComplete)
        #expect(planner.start() == [])
        #expect(planner.activeWorkers == [])
        #expect(planner.finished(worker: 0) == nil)
    }

    @Test func connectionRangesKeepTheirStartAsTheyAdvanceAndShrink() throws {
        // Given four workers over 8 MiB
        var planner = SegmentPlanner(total: 8 * mib, completed: [], maximumConnections: 4, minimumSegment: mib)
        _ = planner.start()
        // When worker 1 writes 512 KiB and worker 0 finishes its 2 MiB, then takes over half of the largest rest
        planner.advance(worker: 1, to: 2 * mib + 512 * kib)
        planner.advance(worker: 0, to: 2 * mib)
        let taken = planner.finished(worker: 0)
        // Then each range says where it began, where it is and where it ends now
        #expect(planner.connectionRanges.first { $0.start == 2 * mib } == SegmentInFlight(start: 2 * mib, position: 2 * mib + 512 * kib, end: 4 * mib))
        let stolen = try #require(taken)
        #expect(planner.connectionRanges.contains(SegmentInFlight(start: stolen.start, position: stolen.start, end: stolen.end)))
        #expect(planner.connectionRanges.count == 4)
        #expect(planner.connectionRanges.allSatisfy { $0.start <= $0.position && $0.position <= $0.end })
    }

    @Test func fullyCompletedFileHasNothingToDo() {
        var planner = SegmentPlanner(total: 100, completed: [0..<60, 60..<100], maximumConnections: 4, minimumSegment: 1)
        #expect(planner.isComplete)
        #expect(planner.completed == [0..<100])
        #expect(planner.start() == [])
        #expect(planner.remainingBytes == 0)
    }

    @Test(arguments: [Int64(1), 1000, mib, 2 * mib - 1])
    func smallFileGetsOneSegment(total: Int64) {
        var planner = SegmentPlanner(total: total, completed: [], maximumConnections: 16, minimumSegment: mib)
        #expect(planner.start() == [Segment(worker: 0, start: 0, end: total)])
        #expect(planner.activeWorkers == [0])
        #expect(!planner.isComplete)
    }

    @Test func largeFileSplitsEvenly() {
        var planner = SegmentPlanner(total: 8 * mib, completed: [], maximumConnections: 4, minimumSegment: mib)
        #expect(planner.start() == (0..<4).map { Segment(worker: $0, start: Int64($0) * 2 * mib, end: Int64($0 + 1) * 2 * mib) })
        #expect(planner.activeWorkers == [0, 1, 2, 3])
        #expect(planner.unassigned == [])
    }

    @Test func anOrderedPlanHandsOutPiecesInFileOrderThenTakesOverAsUsual() {
        var planner = SegmentPlanner(total: 10 * mib, completed: [], maximumConnections: 3, minimumSegment: mib, ordered: 2 * mib)
        #expect(planner.start() == (0..<3).map { Segment(worker: $0, start: Int64($0) * 2 * mib, end: Int64($0 + 1) * 2 * mib) })
        #expect(planner.unassigned == [6 * mib..<10 * mib])
        planner.advance(worker: 1, to: 4 * mib)
        #expect(planner.finished(worker: 1) == Segment(worker: 1, start: 6 * mib, end: 8 * mib))
        planner.advance(worker: 0, to: 2 * mib)
        #expect(planner.finished(worker: 0) == Segment(worker: 0, start: 8 * mib, end: 10 * mib))
        #expect(planner.unassigned == [])
        // Nothing unassigned: half of the largest range in flight (a tie: the lowest worker's).
        planner.advance(worker: 2, to: 6 * mib)
        #expect(planner.finished(worker: 2) == Segment(worker: 2, start: 9 * mib, end: 10 * mib))
    }

    @Test func anOrderedPlanLeavesNoPieceSmallerThanTheMinimum() {
        // 5.5 MiB in pieces of 2 MiB: the last piece takes the rest (1.5 MiB) whole; pieces below
        // the minimum segment are raised to it; one connection gets the whole file.
        var planner = SegmentPlanner(total: 11 * mib / 2, completed: [], maximumConnections: 2, minimumSegment: mib,
                                     ordered: 2 * mib)
        #expect(planner.start() == [Segment(worker: 0, start: 0, end: 2 * mib), Segment(worker: 1, start: 2 * mib, end: 4 * mib)])
        planner.advance(worker: 0, to: 2 * mib)
        #expect(planner.finished(worker: 0) == Segment(worker: 0, start: 4 * mib, end: 11 * mib / 2))
        var raised = SegmentPlanner(total: 10 * mib, completed: [], maximumConnections: 4, minimumSegment: 3 * mib, ordered: mib)
        #expect(raised.start().map(\.end) == [3 * mib, 6 * mib, 10 * mib])
        var single = SegmentPlanner(total: 10 * mib, completed: [], maximumConnections: 1, minimumSegment: mib, ordered: mib)
        #expect(single.start() == [Segment(worker: 0, start: 0, end: 10 * mib)])
    }

    @Test func connectionsAreLimitedBySegmentSize() {
        // 10 bytes, pieces of at least 3: three pieces, the remainder spread over the first.
        var planner = SegmentPlanner(total: 10, completed: [], maximumConnections: 8, minimumSegment: 3)
        #expect(planner.start() == [Segment(worker: 0, start: 0, end: 4), Segment(worker: 1, start: 4, end: 7), Segment(worker: 2, start: 7, end: 10)])
    }

    @Test func secondStartHandsOutNothing() {
        var planner = SegmentPlanner(total: 10 * mib, completed: [], maximumConnections: 2, minimumSegment: mib)
        #expect(planner.start().count == 2)
        #expect(planner.start() == [])
    }

    @Test func completedRangesAreNormalised() {
        let planner = SegmentPlanner(
            total: 100, completed: [90..<200, 10..<20, -5..<3, 15..<30, 30..<40, 50..<50, 60..<70],
            maximumConnections: 1, minimumSegment: 1)
        #expect(planner.completed == [0..<3, 10..<40, 60..<70, 90..<100])
        #expect(planner.unassigned == [3..<10, 40..<60, 70..<90])
    }

    @Test func resumeStartsAtTheFirstGapAndCoversEveryGap() {
        // Gaps: [0, 1 KiB) (tiny, first), [1 MiB, 2 MiB) and [4 MiB, 100 MiB).
        var planner = SegmentPlanner(
            total: 100 * mib, completed: [kib..<mib, 2 * mib..<4 * mib], maximumConnections: 5, minimumSegment: mib)
        let segments = planner.start()
        #expect(segments == [
            Segment(worker: 0, start: 0, end: kib),
            Segment(worker: 1, start: mib, end: 2 * mib),
            Segment(worker: 2, start: 4 * mib, end: 36 * mib),
            Segment(worker: 3, start: 36 * mib, end: 68 * mib),
            Segment(worker: 4, start: 68 * mib, end: 100 * mib),
        ])
        #expect(planner.unassigned == [])
    }

    @Test func moreGapsThanConnectionsLeavesTheSmallestUnassigned() {
        // Gaps of 1, 3 and 2 MiB, in that order; two connections: the first gap and the largest other.
        var planner = SegmentPlanner(
            total: 9 * mib, completed: [mib..<2 * mib, 5 * mib..<7 * mib], maximumConnections: 2, minimumSegment: mib)
        #expect(planner.start() == [Segment(worker: 0, start: 0, end: mib), Segment(worker: 1, start: 2 * mib, end: 5 * mib)])
        #expect(planner.unassigned == [7 * mib..<9 * mib])
        planner.advance(worker: 0, to: mib)
        #expect(planner.finished(worker: 0) == Segment(worker: 0, start: 7 * mib, end: 9 * mib))
        #expect(planner.unassigned == [])
    }

    @Test func advanceCompletesBytesAndIsClampedToTheEnd() {
        var planner = SegmentPlanner(total: 4 * mib, completed: [], maximumConnections: 2, minimumSegment: mib)
        _ = planner.start()
        planner.advance(worker: 0, to: 100)
        planner.advance(worker: 0, to: 50)         // backwards: ignored
        planner.advance(worker: 1, to: 3 * mib)
        #expect(planner.completed == [0..<100, 2 * mib..<3 * mib])
        #expect(planner.position(of: 0) == 100)
        planner.advance(worker: 0, to: 3 * mib)   // past its end (2 MiB): counts up to the end only
        #expect(planner.completed == [0..<3 * mib])
        #expect(planner.position(of: 0) == 2 * mib)
        planner.advance(worker: 7, to: 4 * mib)   // unknown worker: ignored
        #expect(planner.completed == [0..<3 * mib])
        #expect(planner.end(of: 7) == 0)
    }

    @Test func finishedWorkerTakesTheSecondHalfOfTheLargestRemainingRange() {
        var planner = SegmentPlanner(total: 40 * mib, completed: [], maximumConnections: 4, minimumSegment: mib)
        _ = planner.start()                         // 10 MiB each
        planner.advance(worker: 0, to: 10 * mib)   // done
        planner.advance(worker: 1, to: 12 * mib)   // 8 MiB left
        planner.advance(worker: 2, to: 21 * mib)   // 9 MiB left: the largest
        planner.advance(worker: 3, to: 35 * mib)   // 5 MiB left
        let next = planner.finished(worker: 0)
        #expect(next == Segment(worker: 0, start: 25 * mib + mib / 2, end: 30 * mib))
        #expect(planner.end(of: 2) == 25 * mib + mib / 2)
        #expect(planner.end(of: 1) == 20 * mib)
        #expect(planner.end(of: 3) == 40 * mib)
    }

    @Test func splitPointIsAlignedDownTo64KiBWhenBothHalvesStayLargeEnough() {
        var planner = SegmentPlanner(total: 10 * mib + 12345, completed: [], maximumConnections: 2, minimumSegment: mib)
        _ = planner.start()                         // [0, 5 MiB + 6173) and [5 MiB + 6173, 10 MiB + 12345)
        planner.advance(worker: 0, to: planner.end(of: 0))
        let next = planner.finished(worker: 0)
        let middle = 5 * mib + 6173 + (5 * mib + 6172) / 2
        let aligned = middle - middle % (64 * kib)
        #expect(next == Segment(worker: 0, start: aligned, end: 10 * mib + 12345))
        #expect(aligned % (64 * kib) == 0 && aligned < middle)
    }

    @Test func splitPointStaysInTheMiddleWhenAligningWouldMakeTheFirstHalfTooSmall() {
        // 200 bytes left with 100-byte minimum: aligning down would leave nothing for the owner.
        var planner = SegmentPlanner(total: 300, completed: [], maximumConnections: 2, minimumSegment: 100)
        #expect(planner.start() == [Segment(worker: 0, start: 0, end: 150), Segment(worker: 1, start: 150, end: 300)])
        planner.advance(worker: 0, to: 150)
        planner.advance(worker: 1, to: 150)
        // 150 left with a 100-byte minimum: not worth splitting.
        #expect(planner.finished(worker: 0) == nil)
        #expect(planner.activeWorkers == [1])

        var second = SegmentPlanner(total: 400, completed: [], maximumConnections: 2, minimumSegment: 100)
        _ = second.start()                          // [0, 200) and [200, 400)
        second.advance(worker: 0, to: 200)
        #expect(second.finished(worker: 0) == Segment(worker: 0, start: 300, end: 400))
        #expect(second.end(of: 1) == 300)
    }

    @Test func stealingTiesGoToTheLowestWorker() {
        var planner = SegmentPlanner(total: 30 * mib, completed: [], maximumConnections: 3, minimumSegment: mib)
        _ = planner.start()
        planner.advance(worker: 2, to: 30 * mib)
        #expect(planner.finished(worker: 2) == Segment(worker: 2, start: 5 * mib, end: 10 * mib))
        #expect(planner.end(of: 0) == 5 * mib)
        #expect(planner.end(of: 1) == 20 * mib)
    }

    @Test func failedWorkerRetriesItsOwnRest() {
        var planner = SegmentPlanner(total: 8 * mib, completed: [], maximumConnections: 2, minimumSegment: mib)
        _ = planner.start()
        planner.advance(worker: 1, to: 5 * mib)
        #expect(planner.failed(worker: 1) == Segment(worker: 1, start: 5 * mib, end: 8 * mib))
        #expect(planner.activeWorkers == [0])
        #expect(planner.unassigned == [5 * mib..<8 * mib])
        #expect(planner.end(of: 1) == 0)
        #expect(planner.retry(worker: 1) == Segment(worker: 1, start: 5 * mib, end: 8 * mib))
        #expect(planner.unassigned == [])
        #expect(planner.activeWorkers == [0, 1])
    }

    @Test func failedRestGoesToTheNextWorkerThatFinishes() {
        var planner = SegmentPlanner(total: 8 * mib, completed: [], maximumConnections: 2, minimumSegment: mib)
        _ = planner.start()
        planner.advance(worker: 1, to: 5 * mib)
        _ = planner.failed(worker: 1)
        planner.advance(worker: 0, to: 4 * mib)
        #expect(planner.finished(worker: 0) == Segment(worker: 0, start: 5 * mib, end: 8 * mib))
        // The failed worker's retry now takes half of what is left, since its own rest is taken.
        #expect(planner.retry(worker: 1) == Segment(worker: 1, start: 6 * mib + mib / 2, end: 8 * mib))
        #expect(planner.end(of: 0) == 6 * mib + mib / 2)
    }

    @Test func retryPrefersItsOwnGapOverEarlierOnes() {
        var planner = SegmentPlanner(total: 12 * mib, completed: [], maximumConnections: 3, minimumSegment: mib)
        _ = planner.start()                         // 4 MiB each
        planner.advance(worker: 0, to: mib)
        planner.advance(worker: 2, to: 9 * mib)
        _ = planner.failed(worker: 0)
        _ = planner.failed(worker: 2)
        #expect(planner.unassigned == [mib..<4 * mib, 9 * mib..<12 * mib])
        #expect(planner.retry(worker: 2) == Segment(worker: 2, start: 9 * mib, end: 12 * mib))
        #expect(planner.retry(worker: 0) == Segment(worker: 0, start: mib, end: 4 * mib))
    }

    @Test func failingWithNothingLeftReturnsNil() {
        var planner = SegmentPlanner(total: 100, completed: [], maximumConnections: 1, minimumSegment: 1)
        _ = planner.start()
        planner.advance(worker: 0, to: 100)
        #expect(planner.failed(worker: 0) == nil)
        #expect(planner.isComplete)
        #expect(planner.failed(worker: 3) == nil)
    }

    @Test func finishingEarlyGivesTheRestBack() {
        var planner = SegmentPlanner(total: 1000, completed: [], maximumConnections: 1, minimumSegment: 1000)
        _ = planner.start()
        planner.advance(worker: 0, to: 400)
        // The worker stops early: its rest is the only gap, so it gets it straight back.
        #expect(planner.finished(worker: 0) == Segment(worker: 0, start: 400, end: 1000))
        planner.advance(worker: 0, to: 1000)
        #expect(planner.finished(worker: 0) == nil)
        #expect(planner.isComplete)
        #expect(planner.activeWorkers == [])
    }

    @Test(arguments: [-1, 2, 100])
    func workerIdsOutsideTheConnectionCountGetNothing(worker: Int) {
        var planner = SegmentPlanner(total: 100, completed: [], maximumConnections: 2, minimumSegment: 1)
        #expect(planner.finished(worker: worker) == nil)
        #expect(planner.activeWorkers == [])
    }

    @Test func unusableSettingsAreClamped() {
        var planner = SegmentPlanner(total: 10, completed: [], maximumConnections: 0, minimumSegment: 0)
        #expect(planner.maximumConnections == 1)
        #expect(planner.minimumSegment == 1)
        #expect(planner.start() == [Segment(worker: 0, start: 0, end: 10)])
        let negative = SegmentPlanner(total: -5, completed: [0..<3], maximumConnections: 2, minimumSegment: 1)
        #expect(negative.isComplete)
        #expect(negative.completed == [])
    }

    @Test func singleConnectionDownloadRunsToCompletion() {
        var planner = SegmentPlanner(total: 5 * mib, completed: [mib..<2 * mib], maximumConnections: 1, minimumSegment: mib)
        #expect(planner.start() == [Segment(worker: 0, start: 0, end: mib)])
        planner.advance(worker: 0, to: mib)
        #expect(planner.finished(worker: 0) == Segment(worker: 0, start: 2 * mib, end: 5 * mib))
        planner.advance(worker: 0, to: 5 * mib)
        #expect(planner.finished(worker: 0) == nil)
        #expect(planner.isComplete)
        #expect(planner.completed == [0..<5 * mib])
    }
}
