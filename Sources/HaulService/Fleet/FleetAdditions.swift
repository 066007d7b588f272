/// Additions made through a node's RPC, committed together: each call queues its row and gets a
/// ticket; the first caller to wait commits every row queued so far in one transaction, and the
/// others find theirs committed (1,000 `addUri` in one `system.multicall` are one commit).
///
/// A commit that fails fails every ticket it held: none of its rows was added, so none is
/// acknowledged.
struct FleetAdditions {
    private(set) var pending: [StoreRow] = []
    private(set) var queued: UInt64 = 0
    private(set) var committed: UInt64 = 0
    /// The last commit that failed: the tickets it held, and why.
    private(set) var failed: (from: UInt64, upTo: UInt64, error: ServiceError)?

    /// Queues a row; its ticket.
    mutating func queue(_ row: StoreRow) -> UInt64 {
        pending.append(row)
        queued += 1
        return queued
    }

    /// What waiting for `ticket` comes to: done, failed, or the rows to commit now (and the ticket they reach).
    enum Step {
        case done
        case failed(ServiceError)
        case commit([StoreRow], upTo: UInt64)
    }

    mutating func step(for ticket: UInt64) -> Step {
        if let failed, (failed.from...failed.upTo).contains(ticket) { return .failed(failed.error) }
        if ticket <= committed { return .done }
        defer { pending = [] }
        return .commit(pending, upTo: queued)
    }

    /// Notes how a commit of the rows up to `upTo` ended.
    mutating func finish(upTo: UInt64, error: ServiceError?) {
        if let error { failed = (committed + 1, upTo, error) }
        committed = upTo
    }
}
