#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulCore

/// The fleet's whole list through this node: what any node's JSON-RPC reads and changes.
///
/// Reads and changes go to PostgreSQL on the caller's connection; a change is durable when it
/// returns (no ticket to wait for). A download this node runs is paused or removed here at
/// once; one another node runs is asked through the table (`requested`) and that node does it
/// within a second of the notification.
extension FleetNode: DownloadQueue {
    /// The default name of a node: the host's name, the process's number and a random part (two
    /// containers may share a host name and a process number; two nodes of one name would take
    /// each other's claims).
    public static var defaultName: String {
        let random = UInt16.random(in: .min ... .max)
        return "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)-\(String(random, radix: 16))"
    }

    /// Runs `body` on the callers' connection (made at first use, and again when lost).
    func withCaller<Value>(_ body: (FleetQueue) throws(ServiceError) -> Value) throws(ServiceError) -> Value {
        try adder.withLock { (queue: inout FleetQueue?) throws(ServiceError) -> Value in
            if queue == nil { queue = try FleetQueue(configuration.database, node: configuration.node) }
            guard let queue else { throw ServiceError(.closed, "the fleet node is stopped") }
            try queue.reconnectIfLost(listening: false)
            return try body(queue)
        }
    }

    private func done<Value>(_ value: Value) -> DownloadService.Acknowledged<Value> {
        DownloadService.Acknowledged(value: value, ticket: nil)
    }

    package func enqueueAdd(_ request: ServiceRequest) throws(ServiceError) -> DownloadService.Acknowledged<DownloadID> {
        let row = try row(request)
        if let id = request.id {   // a GID given is checked now: taken, it would fail the other additions of its commit
            let queued = additions.withLock { $0.pending.contains { $0.row.id == id } }
            let stored = try withCaller { (queue) throws(ServiceError) in try queue.row(id) }
            if queued || stored != nil { throw ServiceError(.idInUse, "GID \(id.hex) is in use") }
        }
        return DownloadService.Acknowledged(value: row.id, ticket: additions.withLock { $0.queue(row) })
    }

    package func enqueuePause(_ id: DownloadID) throws(ServiceError) -> DownloadService.Acknowledged<Void> {
        try change(id, local: "pause", from: FleetQueue.waitingOnly, to: .paused, kind: .paused,
                   refusal: "GID#\(id.hex) cannot be paused now")
    }

    package func enqueueRemove(_ id: DownloadID) throws(ServiceError) -> DownloadService.Acknowledged<Void> {
        try change(id, local: "remove", from: FleetQueue.queueStatuses, to: .removed, kind: .removed,
                   refusal: "Active Download not found for GID#\(id.hex)")
    }

    package func enqueueResume(_ id: DownloadID) throws(ServiceError) -> DownloadService.Acknowledged<Void> {
        try change(id, local: nil, from: "('paused')", to: .waiting, kind: .unpaused, refusal: "GID#\(id.hex) cannot be unpaused now")
    }

    /// A change of one download: made in the table when its status is in `from`, else asked of
    /// the node that runs it (`local`: the request; this node's loop does its own), otherwise
    /// refused with aria2's words (`refusal`), as one service refuses it.
    private func change(_ id: DownloadID, local request: String?, from: String, to status: ServiceDownload.Status,
                        kind: ServiceEvent.Kind, refusal: String) throws(ServiceError) -> DownloadService.Acknowledged<Void> {
        try withCaller { (queue) throws(ServiceError) in
            if try queue.setStatus(id, from: from, to: status, kind: kind) { return }
            if let request, try queue.request(id, request) { return }
            guard try queue.row(id) != nil else { throw ServiceError(.notFound, "GID \(id.hex) is not found") }
            throw ServiceError(.invalidState, refusal)
        }
        return done(())
    }

    package func enqueuePauseAll() throws(ServiceError) -> DownloadService.Acknowledged<Void> {
        try withCaller { (queue) throws(ServiceError) in try queue.changeAll(pausing: true) }
        return done(())
    }

    package func enqueueResumeAll() throws(ServiceError) -> DownloadService.Acknowledged<Void> {
        try withCaller { (queue) throws(ServiceError) in try queue.changeAll(pausing: false) }
        return done(())
    }

    package func enqueueForgetResult(_ id: DownloadID) throws(ServiceError) -> DownloadService.Acknowledged<Void> {
        try withCaller { (queue) throws(ServiceError) in
            if try queue.forget(id) { return }
            guard try queue.row(id) != nil else { throw ServiceError(.notFound, "GID \(id.hex) is not found") }
            throw ServiceError(.invalidState, "Could not remove download result of GID#\(id.hex)")
        }
        return done(())
    }

    package func enqueueForgetResults() throws(ServiceError) -> DownloadService.Acknowledged<Void> {
        try withCaller { (queue) throws(ServiceError) in try queue.forgetAll() }
        return done(())
    }

    package func enqueueMove(_ id: DownloadID, by offset: Int, from origin: DownloadService.QueueOrigin) throws(ServiceError)
        -> DownloadService.Acknowledged<Int> {
        done(try withCaller { (queue) throws(ServiceError) in try queue.move(id, by: offset, from: origin) })
    }

    package func enqueueChangeOptions(_ id: DownloadID, to options: ServiceDownloadOptions) throws(ServiceError)
        -> DownloadService.Acknowledged<Void> {
        let checked = try service.checkOptions(options)
        try withCaller { (queue) throws(ServiceError) in try queue.change(id, options: checked, urls: nil) }
        wakeup.signal()   // this node may run it: its loop carries the change out
        return done(())
    }

    package func enqueueChangeURLs(_ id: DownloadID, to urls: [String]) throws(ServiceError) -> DownloadService.Acknowledged<Void> {
        _ = try service.newEntry(ServiceRequest(urls: urls))   // checks the URLs
        try withCaller { (queue) throws(ServiceError) in try queue.change(id, options: nil, urls: urls) }
        wakeup.signal()
        return done(())
    }

    /// Commits the additions queued up to `ticket` (with every other one queued by then) unless
    /// another caller did.
    /// Whether rows whose commit failed with the connection lost (the server stopping as the
    /// COMMIT went) are in the table after all: asked again for up to 5 s once it answers. A
    /// transaction is whole, so the first row tells. `false` while the server stays away.
    func committedAfterAll(_ rows: [StoreRow], _ queue: FleetQueue) -> Bool {
        guard let first = rows.first, !queue.connection.isConnected else { return false }
        for _ in 0..<20 {
            do throws(ServiceError) {
                try queue.reconnectIfLost(listening: false)
                return try queue.row(first.id) != nil
            } catch {
                _ = state.wait(until: .now + .milliseconds(250)) { _ in true }   // a pause (a change of state may end it early)
            }
        }
        return false
    }

    package func waitUntilDurable(_ ticket: UInt64?, since first: UInt64?) throws(ServiceError) {
        guard let ticket else { return }
        // The callers' connection's lock makes one committer at a time: a waiter whose rows
        // another is committing finds the outcome when it gets the lock.
        try adder.withLock { (queue: inout FleetQueue?) throws(ServiceError) in
            switch additions.withLock({ $0.step(for: ticket, since: first) }) {
            case .done: return
            case .failed(let error): throw error
            case .commit(let rows, let upTo):
                do throws(ServiceError) {
                    if queue == nil { queue = try FleetQueue(configuration.database, node: configuration.node) }
                    try queue?.reconnectIfLost(listening: false)
                    try queue?.add(rows)
                    additions.withLock { $0.finish(upTo: upTo, error: nil) }
                } catch {
                    let committed = queue.map { committedAfterAll(rows, $0) } ?? false
                    additions.withLock { $0.finish(upTo: upTo, error: committed ? nil : error) }
                    if !committed { throw error }
                }
            }
        }
    }
}
