#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulCore

extension FleetNode {
    /// The loop of the node's thread: write results, renew, claim, wait for work or a third of
    /// a lease; on stop, give the claims back.
    func loop(_ link: Connections) {
        let renewal = configuration.lease / 3
        var lastRenewal = ContinuousClock.now - renewal
        var heard: [PostgresConnection.Notification] = []
        var backoff = Self.firstBackoff
        // After an outage every lease may have ended: the other nodes get a lease to renew theirs
        // before this one takes any (a restart of PostgreSQL must not move the fleet's work).
        var sweepAfter = ContinuousClock.now, recovering = false
        while !state.withLock({ $0.stopping }) {
            do throws(ServiceError) {
                try link.worker.reconnectIfLost(listening: false)
                try link.listener.reconnectIfLost(listening: true)
                if recovering { (sweepAfter, recovering) = (.now + configuration.lease, false) }
                let renewing = ContinuousClock.now - lastRenewal >= renewal
                try turn(link.worker, renewing: renewing, sweeping: renewing && .now >= sweepAfter, heard: heard)
                if renewing { lastRenewal = .now }
                state.withLock { $0.lastError = nil }
                backoff = Self.firstBackoff
                heard = try link.listener.waitForNotifications(timeout: renewal, wakeup: (try? wakeup.pollDescriptor) ?? -1)
            } catch {
                heard = []   // told already, or lost with the connection
                recovering = true
                state.withLock { $0.lastError = error }
                _ = state.wait(until: .now + backoff) { !$0.stopping }
                backoff = min(backoff * 2, Self.lastBackoff)
            }
            wakeup.drain()
        }
        giveBack(link.worker)
        link.worker.close()
        link.listener.close()
        state.withLockBroadcasting { $0.running = false }
    }

    /// The wait after the first failure to reach PostgreSQL, doubled at each next one up to the last.
    static let firstBackoff = Duration.milliseconds(250)
    static let lastBackoff = Duration.seconds(4)

    /// One turn of the loop: hand on what was heard, write results and tell the fleet what
    /// happened here, carry out requests, renew (every third of a lease), claim.
    private func turn(_ worker: FleetQueue, renewing: Bool, sweeping: Bool, heard: [PostgresConnection.Notification])
        throws(ServiceError) {
        for notification in heard where notification.channel == FleetQueue.eventChannel {
            for event in FleetQueue.events(notification.payload) { deliver(event) }
        }
        try writeResults(worker)
        if renewing || heard.contains(where: { $0.channel == FleetQueue.requestChannel }) { try applyRequests(worker) }
        if renewing {
            try renew(worker)
            try worker.heartbeat(address: configuration.address, active: state.withLock { $0.claims.count },
                                 bytesPerSecond: Int64(service.statistics.bytesPerSecond))
        }
        try adoptClaimsInDoubt(worker)
        try claimWork(worker, sweeping: sweeping)
    }

    /// Records a download of this node that ended, for the loop to write.
    func observe(_ event: ServiceEvent) {
        if event.kind == .started {
            state.withLock { state in if state.claims[event.id] != nil { state.events.append(event) } }
            wakeup.signal()
        }
        guard event.kind == .completed || event.kind == .failed else { return }
        let row = service.state.withLock { $0.queue.entries[event.id].map(StoreRow.init) }
        guard let row else { return }
        state.withLock { state in
            if state.claims[event.id] != nil { state.results[event.id] = row }
        }
        wakeup.signal()
    }

    /// Writes the rows of downloads that ended here under their claims and tells the fleet what
    /// happened here, in one transaction (a commit per turn, not per download), then forgets
    /// the written downloads here.
    private func writeResults(_ worker: FleetQueue) throws(ServiceError) {
        // In the order of their keys, as every writer of many rows: fewer deadlocks to break.
        let pending = state.withLock { state in state.results.compactMap { id, row in state.claims[id].map { (Self.resultRow(row), $0) } } }
            .sorted { Int64(bitPattern: $0.0.id.rawValue) < Int64(bitPattern: $1.0.id.rawValue) }   // as PostgreSQL orders gid
        let events = state.withLock { state in
            defer { state.events = [] }
            return state.events
        }
        guard !pending.isEmpty || !events.isEmpty else { return }
        do throws(ServiceError) {
            try worker.connection.transaction { () throws(ServiceError) in
                let written = try worker.write(pending.map { (row: $0.0, claim: $0.1) })
                let ended = pending.map(\.0).filter { written.contains($0.id) && $0.status.isStopped }
                try worker.notify(events + ended.map { ServiceEvent(id: $0.id, kind: $0.status == .complete ? .completed : .failed) })
            }
        } catch {
            state.withLock { $0.events = events + $0.events }   // told with the next turn's
            throw error
        }
        forget(pending.map(\.0))
    }

    /// The row to write for a download that ended here: one whose partial file another process
    /// holds (in a shared folder, the node that had it and stopped answering) goes back to the
    /// queue instead of failing.
    private static func resultRow(_ found: StoreRow) -> StoreRow {
        var row = found
        if row.failure?.code == DownloadError.Code.locked.name {
            row.status = .waiting
            row.failure = nil
        }
        return row
    }

    /// Lets go of written results here (a claim lost meanwhile wrote nothing: the new owner's row
    /// stands); a download sent back to the queue is not claimed here again for a lease.
    private func forget(_ rows: [StoreRow]) {
        state.withLock { state in
            for row in rows {
                state.results[row.id] = nil
                state.claims[row.id] = nil
                if row.status == .waiting { state.cooldown[row.id] = .now + configuration.lease }
            }
        }
        for row in rows { try? service.forgetResult(row.id) }
    }

    /// Renews the claims; stops here at once the downloads another node took.
    private func renew(_ worker: FleetQueue) throws(ServiceError) {
        var progress: [DownloadID: FleetQueue.Progress] = [:]
        for download in service.activeDownloads() {
            progress[download.id] = FleetQueue.Progress(completed: download.completedBytes, total: download.totalBytes ?? -1,
                                                        bytesPerSecond: Int64(download.bytesPerSecond))
        }
        let lost = try worker.renew(claims, lease: configuration.lease, progress: progress)
        guard !lost.isEmpty else { return }
        state.withLock { state in
            for claim in lost where state.claims[claim.id] == claim { state.claims[claim.id] = nil }
        }
        for claim in lost {
            try? service.remove(claim.id)
            try? service.forgetResult(claim.id)
        }
    }

    /// Claims as many downloads as the node has free slots, and starts them here.
    private func claimWork(_ worker: FleetQueue, sweeping: Bool) throws(ServiceError) {
        let free = service.maximumActiveDownloads - state.withLock { $0.claims.count }
        guard free > 0 else { return }
        let cooling = state.withLock { state in
            state.cooldown = state.cooldown.filter { $0.value > .now }
            return Array(state.cooldown.keys)
        }
        let claimed: [(claim: FleetClaim, row: StoreRow)]
        do throws(ServiceError) {
            claimed = try worker.claim(limit: free, lease: configuration.lease, excluding: cooling, sweeping: sweeping)
        } catch {
            state.withLock { $0.claimsInDoubt = true }   // its commit may have happened
            throw error
        }
        for (claim, row) in claimed { start(claim, row) }
    }

    /// Takes the downloads the table says this node runs but that it does not know of: claims
    /// whose commit's answer was lost (PostgreSQL stopping at that moment), or those of this
    /// node's previous process, with a new fencing number each. Done at start and after a claim
    /// failed; a download being paused or removed here (asked) is left alone.
    private func adoptClaimsInDoubt(_ worker: FleetQueue) throws(ServiceError) {
        guard state.withLock({ $0.claimsInDoubt }) else { return }
        let known = state.withLock { Array($0.claims.keys) }
        for (claim, row) in try worker.adopt(excluding: known, lease: configuration.lease) { start(claim, row) }
        state.withLock { $0.claimsInDoubt = false }
    }

    /// Runs a claimed download here.
    private func start(_ claim: FleetClaim, _ row: StoreRow) {
        state.withLock { $0.claims[claim.id] = claim }
        do throws(ServiceError) {
            _ = try service.add(ServiceRequest(urls: row.urls, options: row.options, id: claim.id))
        } catch {
            // Refused here (a folder outside this node's root): the download fails for the fleet.
            var failed = row
            failed.status = .error
            failed.failure = ServiceFailure(code: error.code.name, exitStatus: 1, httpStatus: nil, message: error.message)
            state.withLock { $0.results[claim.id] = failed }
        }
    }

    /// On stop: writes what ended, then gives every claim back to the queue as waiting.
    private func giveBack(_ worker: FleetQueue) {
        try? writeResults(worker)
        let held = state.withLock { state in Array(state.claims.values) }
        service.shutDown()
        for claim in held {
            guard var row = service.state.withLock({ $0.queue.entries[claim.id].map(StoreRow.init) }) else { continue }
            // One that ended while the service stopped is written as it ended; the others wait.
            if !row.status.isStopped || row.status == .removed { row.status = .waiting }
            // Unreachable now: the claim then ends with its lease and another node takes it.
            _ = try? worker.write(Self.resultRow(row), under: claim)
        }
    }
}
