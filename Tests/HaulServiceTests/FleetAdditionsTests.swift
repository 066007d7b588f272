import Testing
@testable import HaulService

/// The RPC's additions to a fleet's queue are committed together, and a failed commit fails
/// every ticket it held and no other (pure: no database).
@Suite struct FleetAdditionsTests {
    static func row(_ value: UInt64) -> StoreRow {
        FleetQueueTests.rows(1, from: value)[0]
    }

    @Test func theFirstWaiterCommitsEveryRowQueuedAndTheOthersFindThemCommitted() {
        var additions = FleetAdditions()
        let tickets = (1...3).map { additions.queue(Self.row($0)) }
        guard case .commit(let rows, let upTo) = additions.step(for: tickets[1]) else {
            Issue.record("the first waiter does not commit")
            return
        }
        #expect(rows.map(\.id.rawValue) == [1, 2, 3] && upTo == 3)
        additions.finish(upTo: upTo, error: nil)
        for ticket in tickets {
            guard case .done = additions.step(for: ticket) else {
                Issue.record("ticket \(ticket) is not done")
                return
            }
        }
    }

    @Test func aCallerWhoseTicketsAnotherCommittedAndFailedIsToldSoEvenAfterItsOwnCommitPassed() {
        var additions = FleetAdditions()
        let first = additions.queue(Self.row(1))            // caller A's first addition
        let other = additions.queue(Self.row(2))            // caller B's
        if case .commit(_, let upTo) = additions.step(for: other) { additions.finish(upTo: upTo, error: ServiceError(.store, "down")) }
        let last = additions.queue(Self.row(3))             // A's last one, committed by A later
        if case .commit(_, let upTo) = additions.step(for: last, since: first) {
            Issue.record("A's tickets include a failed commit: no new commit is to be made for them")
            additions.finish(upTo: upTo, error: nil)
        }
        guard case .failed = additions.step(for: last, since: first) else {
            Issue.record("A is told its additions are durable though the first was rolled back")
            return
        }
        #expect(additions.pending.isEmpty, "A's last addition goes with the error it was told")
    }

    @Test func everyFailedCommitIsRememberedNotOnlyTheLast() {
        var additions = FleetAdditions()
        let (one, two) = (additions.queue(Self.row(1)), additions.queue(Self.row(2)))
        if case .commit(_, let upTo) = additions.step(for: two) { additions.finish(upTo: upTo, error: ServiceError(.store, "first")) }
        let three = additions.queue(Self.row(3))
        if case .commit(_, let upTo) = additions.step(for: three) { additions.finish(upTo: upTo, error: ServiceError(.store, "second")) }
        for ticket in [one, two] {
            guard case .failed(let error) = additions.step(for: ticket) else {
                Issue.record("ticket \(ticket) of the first failed commit is not failed")
                return
            }
            #expect(error.message == "first")
        }
    }

    @Test func aFailedCommitFailsItsTicketsOnly() {
        var additions = FleetAdditions()
        let first = additions.queue(Self.row(1))
        if case .commit(_, let upTo) = additions.step(for: first) { additions.finish(upTo: upTo, error: nil) }
        let (second, third) = (additions.queue(Self.row(2)), additions.queue(Self.row(3)))
        guard case .commit(let rows, let upTo) = additions.step(for: third) else {
            Issue.record("no commit for the second batch")
            return
        }
        #expect(rows.count == 2)
        additions.finish(upTo: upTo, error: ServiceError(.store, "down"))
        for ticket in [second, third] {
            guard case .failed(let error) = additions.step(for: ticket) else {
                Issue.record("ticket \(ticket) of the failed commit is not failed")
                return
            }
            #expect(error.message == "down")
        }
        guard case .done = additions.step(for: first) else {
            Issue.record("the first commit's ticket changed")
            return
        }
        let fourth = additions.queue(Self.row(4))
        guard case .commit(let next, _) = additions.step(for: fourth), next.map(\.id.rawValue) == [4] else {
            Issue.record("a failed commit's rows came back")
            return
        }
    }
}
