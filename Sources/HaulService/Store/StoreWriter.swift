import HaulCore

/// Writes a ``ServiceStore``'s changes on a thread of its own, many changes per commit.
///
/// ``submit(_:)`` queues changes and returns a ticket at once; ``waitUntilCommitted(_:)`` blocks
/// until the commit that holds them is durable. While one commit (and its sync) runs, the
/// changes that arrive meanwhile gather for the next one, so a burst of additions costs a few
/// syncs, not one each. For one download only its latest row is written. A commit that fails
/// throws to its waiters and its changes are tried again with the next ones (a newer change to
/// the same download wins).
final class StoreWriter: @unchecked Sendable {   // all mutable state is under `monitor`
    /// A position in the sequence of submissions.
    typealias Ticket = UInt64

    /// The store, used by one thread at a time: the writer's commits and ``read(_:)``.
    private let store: SharedStateLock<StoreAccess>
    private let monitor = Monitor()
    private var pending: [DownloadID: ServiceStore.Change] = [:]
    private var submitted: Ticket = 0
    private var committed: Ticket = 0
    private var failed: (upTo: Ticket, error: ServiceError)?
    private var closing = false
    private var running = true
    private let thread = ThreadPool(maximumThreads: 1)

    /// Starts the writer thread of `store`.
    ///
    /// - Throws: `store` when the system gives no thread (the store is closed then).
    init(store: ServiceStore) throws(ServiceError) {
        self.store = SharedStateLock(StoreAccess(store: store))
        do throws(ResourceError) {
            try thread.run(name: "haul-store") { [self] in writeUntilClosed() }
        } catch {
            store.close()
            throw ServiceError(.store, "the state file has no writer: \(error.message)")
        }
    }

    /// Queues changes; returns the ticket to wait for.
    func submit(_ changes: [ServiceStore.Change]) -> Ticket {
        monitor.withLock {
            pending.reserveCapacity(pending.count + changes.count)
            for change in changes {
                switch change {
                case .save(let row): pending[row.id] = change
                case .delete(let id): pending[id] = change
                case .status(let id, let status):
                    switch pending[id] {
                    case .save(var row)?:
                        row.status = status
                        pending[id] = .save(row)
                    case .delete?: break
                    default: pending[id] = change
                    }
                }
            }
            submitted += 1
            monitor.broadcast()
            return submitted
        }
    }

    /// Blocks until the changes of `ticket` (and all before) are durable.
    ///
    /// - Throws: `store` when their commit failed, `closed` when the writer closed first.
    func waitUntilCommitted(_ ticket: Ticket) throws(ServiceError) {
        try monitor.withLock { () throws(ServiceError) in
            while committed < ticket {
                if let failed, failed.upTo >= ticket { throw failed.error }
                if !running { throw ServiceError(.closed, "the state file is closed") }
                monitor.wait()
            }
        }
    }

    /// Commits what is queued, stops the thread and closes the file (its lock goes with it);
    /// later submissions are never written.
    func close() {
        let firstToClose = monitor.withLock { () -> Bool in
            let first = !closing
            closing = true
            monitor.broadcast()
            while running { monitor.wait() }
            return first
        }
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
    func read<Value>(_ body: (ServiceStore) throws(ServiceError) -> Value) throws(ServiceError) -> Value {
        try waitUntilCommitted(monitor.withLock { submitted })
        return try store.withLock { access throws(ServiceError) -> Value in
            guard !access.closed else { throw ServiceError(.closed, "the state file is closed") }
            return try body(access.store)
        }
    }

    private func writeUntilClosed() {
        while let (batch, upTo) = nextBatch() {
            do throws(ServiceError) {
                try store.withLock { access throws(ServiceError) in try access.store.apply(batch.values) }
                monitor.withLock {
                    committed = max(committed, upTo)
                    if let failed, failed.upTo <= upTo { self.failed = nil }
                    monitor.broadcast()
                }
            } catch {
                monitor.withLock {
                    failed = (upTo, error)
                    pending.merge(batch) { newer, _ in newer }
                    monitor.broadcast()
                    // A new submission is what makes a retry worth it (a full disk does not empty itself).
                    let seen = submitted
                    while submitted == seen && !closing { monitor.wait() }
                }
            }
        }
    }

    /// The next changes to commit and the ticket they complete; `nil` once closed and drained.
    private func nextBatch() -> ([DownloadID: ServiceStore.Change], Ticket)? {
        monitor.withLock {
            while pending.isEmpty && !closing { monitor.wait() }
            guard !pending.isEmpty, failed == nil || !closing else {
                running = false
                monitor.broadcast()
                return nil
            }
            let batch = pending
            pending = [:]
            return (batch, submitted)
        }
    }
}

/// The store behind the writer's lock.
struct StoreAccess: @unchecked Sendable {   // the store is used only with the lock held
    let store: ServiceStore
    var closed = false
}
