import HaulCore

/// Writes a ``StateStore``'s changes on a thread of its own, many changes per commit.
///
/// ``submit(_:)`` queues changes and returns a ticket at once; ``waitUntilCommitted(_:)`` blocks
/// until the commit that holds them is durable. While one commit (and its sync) runs, the
/// changes that arrive meanwhile gather for the next one, so a burst of additions costs a few
/// syncs, not one each. For one download only its latest row is written. A commit that fails
/// throws to its waiters and its changes are tried again with the next ones (a newer change to
/// the same download wins).
final class StoreWriter: Sendable {
    /// A position in the sequence of submissions.
    typealias Ticket = UInt64

    /// The store, used by one thread at a time: the writer's commits and ``read(_:)``.
    private let store: SharedStateLock<StoreAccess>
    private let state = ConditionLock(State())

    /// What the submitters, the waiters and the writer thread share.
    private struct State {
        /// The changes not committed yet, the latest one per download.
        var pending: [DownloadID: StoreChange] = [:]
        var submitted: Ticket = 0
        var committed: Ticket = 0
        /// The last commit that failed, and the tickets it held.
        var failed: (upTo: Ticket, error: ServiceError)?
        var closing = false
        /// Whether the writer thread runs.
        var running = true
    }
    private let thread = ThreadPool(maximumThreads: 1)

    /// Starts the writer thread of `store`.
    ///
    /// - Throws: `store` when the system gives no thread (the store is closed then).
    init(store: any StateStore) throws(ServiceError) {
        self.store = SharedStateLock(StoreAccess(store: store))
        do throws(ResourceError) {
            try thread.run(name: "haul-store") { [self] in writeUntilClosed() }
        } catch {
            store.close()
            throw ServiceError(.store, "the state file has no writer: \(error.message)")
        }
    }

    /// Queues changes; returns the ticket to wait for.
    func submit(_ changes: [StoreChange]) -> Ticket {
        state.withLockBroadcasting { state in
            state.pending.reserveCapacity(state.pending.count + changes.count)
            for change in changes {
                switch change {
                case .save(let row): state.pending[row.id] = change
                case .delete(let id): state.pending[id] = change
                case .status(let id, let status):
                    switch state.pending[id] {
                    case .save(var row)?:
                        row.status = status
                        state.pending[id] = .save(row)
                    case .delete?: break
                    default: state.pending[id] = change
                    }
                }
            }
            state.submitted += 1
            return state.submitted
        }
    }

    /// Blocks until the changes of `ticket` (and all before) are durable.
    ///
    /// - Throws: `store` when their commit failed, `closed` when the writer closed first.
    func waitUntilCommitted(_ ticket: Ticket) throws(ServiceError) {
        let waiting = { (state: State) -> Bool in
            state.committed < ticket && (state.failed.map { $0.upTo < ticket } ?? true) && state.running
        }
        try state.withLock(waitingWhile: waiting) { (state: inout State) throws(ServiceError) in
            guard state.committed < ticket else { return }
            if let failed = state.failed, failed.upTo >= ticket { throw failed.error }
            throw ServiceError(.closed, "the state file is closed")
        }
    }

    /// Commits what is queued, stops the thread and closes the file (its lock goes with it);
    /// later submissions are never written.
    func close() {
        let firstToClose = state.withLockBroadcasting { state -> Bool in
            defer { state.closing = true }
            return !state.closing
        }
        state.wait(until: nil) { $0.running }
        if firstToClose {
            store.withLock { access in
                access.store.close()
                access.closed = true
            }
        }
    }

    /// Reads the store once every change submitted so far is committed, so that it reads what
    /// the service had when it asked.
    ///
    /// - Throws: `store` when a commit or the read fails, `closed` once the writer closed.
    func read<Value>(_ body: (any StateStore) throws(ServiceError) -> Value) throws(ServiceError) -> Value {
        try waitUntilCommitted(state.withLock { $0.submitted })
        return try store.withLock { access throws(ServiceError) -> Value in
            guard !access.closed else { throw ServiceError(.closed, "the state file is closed") }
            return try body(access.store)
        }
    }

    private func writeUntilClosed() {
        while let (batch, upTo) = nextBatch() {
            do throws(ServiceError) {
                try store.withLock { access throws(ServiceError) in try access.store.apply(Array(batch.values)) }
                state.withLockBroadcasting { state in
                    state.committed = max(state.committed, upTo)
                    if let failed = state.failed, failed.upTo <= upTo { state.failed = nil }
                }
            } catch {
                let seen = state.withLockBroadcasting { state -> Ticket in
                    state.failed = (upTo, error)
                    state.pending.merge(batch) { newer, _ in newer }
                    return state.submitted
                }
                // A new submission is what makes a retry worth it (a full disk does not empty itself).
                state.wait(until: nil) { $0.submitted == seen && !$0.closing }
            }
        }
    }

    /// The next changes to commit and the ticket they complete; `nil` once closed and drained.
    private func nextBatch() -> ([DownloadID: StoreChange], Ticket)? {
        let next = state.withLock(waitingWhile: { $0.pending.isEmpty && !$0.closing }) {
            state -> ([DownloadID: StoreChange], Ticket)? in
            guard !state.pending.isEmpty, state.failed == nil || !state.closing else {
                state.running = false
                return nil
            }
            defer { state.pending = [:] }
            return (state.pending, state.submitted)
        }
        if next == nil { state.broadcast() }   // close waits for the thread's end
        return next
    }
}

/// The store behind the writer's lock.
struct StoreAccess: @unchecked Sendable {   // the store is used only with the lock held
    let store: any StateStore
    var closed = false
}
