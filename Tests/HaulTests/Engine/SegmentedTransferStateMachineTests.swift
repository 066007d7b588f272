@testable import Haul
import HaulTestSupport
import Testing

/// The decisions of a segmented transfer, without sockets, files or a clock: events in, actions
/// out, and every host slot given back.
@Suite("Segmented transfer state machine")
struct SegmentedTransferStateMachineTests {
    typealias Machine = SegmentedTransfer.StateMachine
    static let megabyte: Int64 = 1 << 20
    static let start = ContinuousClock.now

    /// A machine for a file of `megabytes` MiB over `connections`, segments of at least 1 MiB.
    static func machine(megabytes: Int64 = 8, connections: Int = 4, completed: [Range<Int64>] = [],
                        retries: Int = 2) -> Machine {
        let planner = SegmentPlanner(total: megabytes * megabyte, completed: completed, maximumConnections: connections,
                                     minimumSegment: megabyte)
        var retry = RetryPolicy()
        retry.maximumRetries = retries
        retry.initialDelay = .seconds(2)
        return Machine(planner: planner, pieces: [], retry: retry, recordInterval: .milliseconds(25))
    }

    static let network = DownloadError(.connectionReset, "reset")

    @Test("the first worker transfers under the first response's slot; the others ask for a slot each")
    func startHandsOutSegments() {
        var machine = Self.machine()
        let starts = machine.start(now: Self.start)
        #expect(starts.map(\.segment.worker) == [0, 1, 2, 3])
        #expect(starts[0].action == .transfer(starts[0].segment))
        #expect(starts.dropFirst().allSatisfy { $0.action == .acquireSlot })
        #expect(machine.slotsHeld == 1)
        #expect(machine.runningWorkers == 4)
    }

    static let noThread = DownloadError(.resourceExhausted, "cannot start a thread: Resource temporarily unavailable")

    @Test("a worker that gets no thread ends, and its range goes to a worker that finishes")
    func workerWithoutThreadLeavesItsRangeToTheOthers() {
        var machine = Self.machine(megabytes: 8, connections: 2)
        let starts = machine.start(now: Self.start)
        #expect(machine.notStarted(worker: 1, error: Self.noThread) == .end(releasingSlot: false, stopsTransfer: false))
        machine.exited(worker: 1)
        _ = machine.wrote(worker: 0, upTo: starts[0].segment.end, finished: [], grown: nil)
        #expect(machine.segmentEnded(worker: 0, progressed: true) == .transfer(SegmentPlanner.Segment(worker: 0, start: starts[1].segment.start, end: starts[1].segment.end)))
        #expect(machine.failure == nil)
        #expect(machine.runningWorkers == 1)
    }

    @Test("when the last worker left gets no thread, the transfer fails with that error and its slot goes back")
    func lastWorkerWithoutThreadFailsTheTransfer() {
        var machine = Self.machine(megabytes: 8, connections: 2)
        _ = machine.start(now: Self.start)
        #expect(machine.notStarted(worker: 1, error: Self.noThread) == .end(releasingSlot: false, stopsTransfer: false))
        machine.exited(worker: 1)
        #expect(machine.notStarted(worker: 0, error: Self.noThread) == .end(releasingSlot: true, stopsTransfer: true))
        machine.exited(worker: 0)
        #expect(machine.failure?.code == .resourceExhausted)
        #expect(machine.slotsHeld == 0)
        #expect(machine.runningWorkers == 0)
    }

    @Test("a granted slot fetches the segment as it is then: a back taken over meanwhile is not asked for")
    func grantedSlotAsksForTheRangeAsItIsNow() {
        var machine = Self.machine(megabytes: 8, connections: 2)
        let starts = machine.start(now: Self.start)
        let second = starts[1].segment
        // Worker 0 finishes its half and takes over the back half of worker 1's, which still waits for a slot.
        _ = machine.wrote(worker: 0, upTo: starts[0].segment.end, finished: [], grown: nil)
        guard case .transfer(let stolen) = machine.segmentEnded(worker: 0, progressed: true) else {
            Issue.record("worker 0 should take over a range")
            return
        }
        #expect(stolen.end == second.end)
        guard case .transfer(let asked) = machine.slotGranted(worker: 1) else {
            Issue.record("worker 1 should transfer")
            return
        }
        #expect(asked.start == second.start && asked.end == stolen.start)
        #expect(machine.slotsHeld == 2)
    }

    @Test("the worker that writes the last byte stops the transfer and gives its slot back; the rest give theirs")
    func completionStopsEveryone() {
        var machine = Self.machine(megabytes: 2, connections: 2)
        let starts = machine.start(now: Self.start)
        #expect(machine.slotGranted(worker: 1) == .transfer(starts[1].segment))
        _ = machine.wrote(worker: 1, upTo: starts[1].segment.end, finished: [], grown: nil)
        #expect(machine.segmentEnded(worker: 1, progressed: true) == .end(releasingSlot: true, stopsTransfer: false))
        _ = machine.wrote(worker: 0, upTo: starts[0].segment.end, finished: [], grown: nil)
        #expect(machine.segmentEnded(worker: 0, progressed: true) == .end(releasingSlot: true, stopsTransfer: true))
        #expect(machine.slotsHeld == 0)
        machine.exited(worker: 0)
        machine.exited(worker: 1)
        #expect(machine.runningWorkers == 0)
        #expect((try? machine.outcome.get()) != nil)
    }

    @Test("a retryable failure backs off without the slot, then waits for one again and takes its own rest back")
    func retryGivesTheSlotBackWhileWaiting() {
        var machine = Self.machine(megabytes: 4, connections: 1)
        let first = machine.start(now: Self.start)[0].segment
        _ = machine.wrote(worker: 0, upTo: first.start + Self.megabyte, finished: [], grown: nil)
        let action = machine.failed(worker: 0, error: Self.network, stopped: false, jitter: 0)
        #expect(action == .backOff(.seconds(1), releasingSlot: true))
        #expect(machine.slotsHeld == 0)
        #expect(machine.backOffEnded(worker: 0, interrupted: false) == .acquireSlot)
        #expect(machine.slotGranted(worker: 0) == .transfer(.init(worker: 0, start: Self.megabyte, end: first.end)))
        #expect(machine.slotsHeld == 1)
    }

    @Test("failures past the retries, or not retryable, stop the transfer with that failure")
    func failuresThatEndTheTransfer() {
        var machine = Self.machine(megabytes: 4, connections: 2, retries: 1)
        _ = machine.start(now: Self.start)
        _ = machine.slotGranted(worker: 1)
        #expect(machine.failed(worker: 0, error: Self.network, stopped: false, jitter: 0)
                == .backOff(.seconds(1), releasingSlot: true))
        #expect(machine.backOffEnded(worker: 0, interrupted: false) == .acquireSlot)
        _ = machine.slotGranted(worker: 0)
        #expect(machine.failed(worker: 0, error: Self.network, stopped: false, jitter: 0)
                == .end(releasingSlot: true, stopsTransfer: true))
        // The other worker's failure is the stop's consequence: it ends with its slot, no retry.
        #expect(machine.failed(worker: 1, error: DownloadError(.cancelled, "cancelled"), stopped: true, jitter: 0)
                == .end(releasingSlot: true, stopsTransfer: true))
        #expect(machine.slotsHeld == 0)
        #expect(machine.failure?.code == .connectionReset)

        var other = Self.machine(megabytes: 4, connections: 1)
        _ = other.start(now: Self.start)
        let protocolError = DownloadError(.rangeMismatch, "another range")
        #expect(other.failed(worker: 0, error: protocolError, stopped: false, jitter: 0)
                == .end(releasingSlot: true, stopsTransfer: true))
        #expect(other.failure?.code == .rangeMismatch)
    }

    @Test("a pause reaches every worker wherever it is: waiting for a slot, backing off, transferring")
    func cancellationEndsEveryWorker() {
        var machine = Self.machine(megabytes: 8, connections: 3)
        _ = machine.start(now: Self.start)
        _ = machine.slotGranted(worker: 1)
        _ = machine.failed(worker: 1, error: Self.network, stopped: false, jitter: 0)
        #expect(machine.failed(worker: 0, error: DownloadError(.cancelled, "cancelled"), stopped: true, jitter: 0)
                == .end(releasingSlot: true, stopsTransfer: false))
        #expect(machine.backOffEnded(worker: 1, interrupted: true) == .end(releasingSlot: false, stopsTransfer: false))
        #expect(machine.slotWaitEnded(worker: 2) == .end(releasingSlot: false, stopsTransfer: false))
        #expect(machine.slotsHeld == 0)
        #expect(machine.outcome.failureCode == .cancelled)
    }

    @Test("a slot granted after the transfer stopped goes straight back")
    func lateGrantIsReturned() {
        var machine = Self.machine(megabytes: 4, connections: 2)
        _ = machine.start(now: Self.start)
        machine.cancel()
        #expect(machine.slotGranted(worker: 1) == .end(releasingSlot: true, stopsTransfer: false))
        #expect(machine.slotsHeld == 1, "only worker 0's, which it gives back when it ends")
    }

    @Test("random events: a worker never holds two slots, and every slot granted is given back exactly once",
          arguments: 0..<64)
    func slotsBalance(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var machine = Self.machine(megabytes: 16, connections: 4, retries: 3)
        var pending: [Int: Machine.WorkerAction] = [:]
        for start in machine.start(now: Self.start) { pending[start.segment.worker] = start.action }
        var granted = 1, released = 0   // worker 0 starts with the first response's slot
        var steps = 0
        while let worker = pending.keys.sorted().randomElement(using: &random), steps < 2000 {
            steps += 1
            var next: Machine.WorkerAction?
            switch pending[worker]! {
            case .acquireSlot:
                if random.next() % 8 == 0 {
                    next = machine.slotWaitEnded(worker: worker)
                } else {
                    granted += 1
                    next = machine.slotGranted(worker: worker)
                }
            case .transfer(let segment):
                next = Self.transferOutcome(segment, of: worker, in: &machine, random: &random)
            case .backOff:
                next = machine.backOffEnded(worker: worker, interrupted: random.next() % 10 == 0)
            case .end:
                machine.exited(worker: worker)
                next = nil
            }
            switch next {   // the slot is the machine's until the action that gives it back
            case .backOff(_, true)?, .end(true, _)?: released += 1
            default: break
            }
            pending[worker] = next
            #expect(machine.slotsHeld == granted - released, "seed \(seed), step \(steps)")
            #expect(machine.slotsHeld <= 4)
        }
        #expect(pending.isEmpty, "seed \(seed): every worker ended")
        #expect(granted == released, "seed \(seed)")
        #expect(machine.slotsHeld == 0 && machine.runningWorkers == 0)
    }

    /// A random outcome for a transfer: all of it, part of it then a failure, or a cancellation.
    private static func transferOutcome(_ segment: SegmentPlanner.Segment, of worker: Int, in machine: inout Machine,
                                        random: inout SplitMix64) -> Machine.WorkerAction {
        switch random.next() % 10 {
        case 0:
            return machine.failed(worker: worker, error: DownloadError(.cancelled, "cancelled"), stopped: true, jitter: 0)
        case 1...3:
            let part = Int64(random.next() % UInt64(max(1, segment.end - segment.start)))
            _ = machine.wrote(worker: worker, upTo: segment.start + part, finished: [], grown: nil)
            return machine.failed(worker: worker, error: network, stopped: false, jitter: random.nextUnitDouble())
        default:
            _ = machine.wrote(worker: worker, upTo: machine.end(of: worker), finished: [], grown: nil)
            return machine.segmentEnded(worker: worker, progressed: true)
        }
    }
}

/// The checkpoint timer of the state machine.
@Suite("Segmented transfer records")
struct SegmentedTransferRecordTests {
    typealias Machine = SegmentedTransfer.StateMachine
    let start = SegmentedTransferStateMachineTests.start

    @Test("a record every interval when something new is complete, none for nothing new")
    func recordsOnTheTimer() {
        var machine = SegmentedTransferStateMachineTests.machine(megabytes: 4, connections: 1)
        _ = machine.start(now: start)
        #expect(machine.tick(now: start + .milliseconds(10)) == .wait(until: start + .milliseconds(25)))
        let early = machine.takeTimerWakeUp()
        #expect(!early)
        #expect(machine.tick(now: start + .milliseconds(30)) == .wait(until: nil),
                "nothing complete yet: no sync, no write, and no tick until bytes arrive")
        let piece = BlockHash(range: 0..<1000, crc32c: 7)
        _ = machine.wrote(worker: 0, upTo: 1000, finished: [], grown: piece)
        let wake = machine.takeTimerWakeUp(), again = machine.takeTimerWakeUp()
        #expect(wake, "the write wakes the sleeping timer")
        #expect(!again, "once")
        #expect(machine.tick(now: start + .milliseconds(60)) == .save(ranges: [0..<1000], pieces: [piece], verified: [], savedBefore: false))
        #expect(machine.tick(now: start + .milliseconds(61)) == .wait(until: start + .milliseconds(86)), "one save at a time")
        machine.recordSaved([0..<1000])
        #expect(machine.tick(now: start + .milliseconds(70)) == .wait(until: start + .milliseconds(85)))
        #expect(machine.tick(now: start + .milliseconds(90)) == .wait(until: nil))
    }

    @Test("a trickle is recorded every five seconds, a faster transfer every interval")
    func trickleRecords() {
        var machine = SegmentedTransferStateMachineTests.machine(megabytes: 4, connections: 1)
        _ = machine.start(now: start)
        _ = machine.wrote(worker: 0, upTo: 1000, finished: [], grown: nil)
        guard case .save(let first, _, _, _) = machine.tick(now: start + .milliseconds(30)) else {
            Issue.record("the first bytes are recorded")
            return
        }
        machine.recordSaved(first)
        _ = machine.wrote(worker: 0, upTo: 1100, finished: [], grown: nil)
        #expect(machine.tick(now: start + .milliseconds(60)) == .wait(until: start + .milliseconds(5030)),
                "100 bytes in 30 ms (3 kB/s) wait for five seconds after the last record")
        #expect(machine.tick(now: start + .milliseconds(5030)) == .save(ranges: [0..<1100], pieces: [], verified: [], savedBefore: true))
        machine.recordSaved([0..<1100])
        _ = machine.wrote(worker: 0, upTo: 1100 + 20_000, finished: [], grown: nil)
        #expect(machine.tick(now: start + .milliseconds(5060)) == .save(ranges: [0..<21_100], pieces: [], verified: [], savedBefore: true),
                "20 kB in 30 ms are recorded at the next interval")
    }

    @Test("the last record: written when the transfer stopped short, or complete after an earlier one; none for a short complete one")
    func finalRecord() {
        var complete = SegmentedTransferStateMachineTests.machine(megabytes: 1, connections: 1)
        _ = complete.start(now: start)
        _ = complete.wrote(worker: 0, upTo: 1 << 20, finished: [], grown: nil)
        _ = complete.segmentEnded(worker: 0, progressed: true)
        complete.exited(worker: 0)
        #expect(complete.tick(now: start) == .finished, "complete before any record: nothing to keep")

        var paused = SegmentedTransferStateMachineTests.machine(megabytes: 4, connections: 1)
        _ = paused.start(now: start)
        _ = paused.wrote(worker: 0, upTo: 4096, finished: [], grown: nil)
        _ = paused.failed(worker: 0, error: DownloadError(.cancelled, "cancelled"), stopped: true, jitter: 0)
        paused.exited(worker: 0)
        #expect(paused.tick(now: start) == .save(ranges: [0..<4096], pieces: [], verified: [], savedBefore: false))
        paused.recordSaved([0..<4096])
        #expect(paused.tick(now: start) == .finished)
        #expect(paused.recordsFinished)
    }

    @Test("a record that cannot be written stops the transfer with that failure")
    func recordFailure() {
        var machine = SegmentedTransferStateMachineTests.machine(megabytes: 4, connections: 1)
        _ = machine.start(now: start)
        _ = machine.wrote(worker: 0, upTo: 4096, finished: [], grown: nil)
        _ = machine.tick(now: start + .milliseconds(30))
        machine.recordFailed(DownloadError(.diskFull, "full"))
        #expect(machine.failed(worker: 0, error: DownloadError(.cancelled, "cancelled"), stopped: true, jitter: 0)
                == .end(releasingSlot: true, stopsTransfer: true))
        #expect(machine.outcome.failureCode == .diskFull)
    }

    @Test("an inline transfer wants its timer thread only after one interval, and only once")
    func inlineTimer() {
        var machine = SegmentedTransferStateMachineTests.machine(megabytes: 4, connections: 1)
        _ = machine.start(now: start)
        let early = machine.timerWanted(now: start + .milliseconds(10), inline: true)
        let due = machine.timerWanted(now: start + .milliseconds(25), inline: true)
        let again = machine.timerWanted(now: start + .milliseconds(90), inline: true)
        #expect(!early && due && !again)
        #expect(machine.hasTimer)
    }
}

extension Result where Failure == DownloadError {
    /// The failure's code, or `nil` for a success.
    var failureCode: DownloadError.Code? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}
