/// Additions made through a node's RPC, committed together: each call queues its row and gets a
/// ticket; the first caller to wait commits every row queued so far in one transaction, and the
/// others find theirs committed (1,000 `addUri` in one `system.multicall` are one commit).
///
/// A commit that fails fails every ticket it held: none of its rows was added, so none is
/// acknowledged. A caller whose tickets include a failed one is told so, and its rows not yet
/// committed are dropped with it: an error answered is never followed by the row appearing.
struct FleetAdditions {
    private(set) var pending: [(ticket: UInt64, row: StoreRow)] = []
    private(set) var queued: UInt64 = 0
    private(set) var committed: UInt64 = 0
    /// The tickets that failed, newest last, and why (the oldest let go past ``remembered``).
    private(set) var failed: [(tickets: ClosedRange<UInt64>, error: ServiceError)] = []
    static let remembered = 4_096

    /// Queues a row; its ticket.
    mutating func queue(_ row: StoreRow) -> UInt64 {
        queued += 1
        pending.append((queued, row))
        return queued
    }

    /// What waiting for tickets comes to: done, failed, or the rows to commit now (and the ticket they reach).
    enum Step {
        case done
        case failed(ServiceError)
        case commit([StoreRow], upTo: UInt64)
    }

    /// What waiting for the tickets `first` to `ticket` comes to.
    mutating func step(for ticket: UInt64, since first: UInt64? = nil) -> Step {
        let asked = min(first ?? ticket, ticket)...ticket
        if let failure = failed.last(where: { asked.overlaps($0.tickets) }) {
            pending.removeAll { asked.contains($0.ticket) }
            return .failed(failure.error)
        }
        if ticket <= committed && !pending.contains(where: { asked.contains($0.ticket) }) { return .done }
        defer { pending = [] }
        return .commit(pending.map(\.row), upTo: pending.last?.ticket ?? committed)
    }

    /// Notes how a commit of the rows up to `upTo` ended.
    mutating func finish(upTo: UInt64, error: ServiceError?) {
        if let error, upTo > committed {
            failed.append(((committed + 1)...upTo, error))
            if failed.count > Self.remembered { failed.removeFirst(failed.count - Self.remembered) }
        }
        committed = max(committed, upTo)
    }
}
