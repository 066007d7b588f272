import Haul
import HaulCore

/// Changes asked of downloads this node runs: a pause or a removal, from this node's callers
/// or from another node's through the table.
extension FleetNode {
    /// Stops the download here and writes it as paused (its claim let go) or removed, under its
    /// claim, then tells the fleet.
    func apply(_ request: String, to claim: FleetClaim, via queue: FleetQueue) throws(ServiceError) {
        guard service.state.withLock({ $0.queue.entries[claim.id] != nil }) else { return }
        state.withLock { state in
            state.claims[claim.id] = nil
            state.results[claim.id] = nil
        }
        try? service.remove(claim.id)
        // The run ends (its record synced, its file's lock let go) before the row is read: its
        // bytes are then all counted, and a claim of it here again finds the file free.
        _ = service.state.wait(until: .now + .seconds(10)) { $0.runs[claim.id] != nil }
        guard var row = service.state.withLock({ $0.queue.entries[claim.id].map(StoreRow.init) }) else { return }
        try? service.forgetResult(claim.id)
        row.status = request == "pause" ? .paused : .removed
        if try queue.write(row, under: claim) {
            try queue.notify(claim.id, request == "pause" ? .paused : .removed, wakesNodes: false)
        }
        wakeup.signal()   // a slot is free
    }

    /// Restarts the transfer of a download this node runs with the options and URLs its row now has.
    private func applyChange(to claim: FleetClaim, via queue: FleetQueue) throws(ServiceError) {
        guard let row = try queue.row(claim.id)?.row else { return }
        try? service.changeOptions(claim.id, to: row.options)
        try? service.changeURLs(claim.id, to: row.urls)
        try queue.clearRequest(claim)
    }

    /// Whether a download's file may take its name: the claim is still this node's (its lease is
    /// extended by a full lease for the rename). When PostgreSQL cannot be reached, yes: the fence
    /// still guards the row, and the transfer was this node's to finish.
    func mayCommit(_ id: DownloadID) -> Bool {
        guard let claim = state.withLock({ $0.claims[id] }) else { return false }
        do throws(ServiceError) {
            return try withCaller { (queue) throws(ServiceError) in try queue.extend(claim, lease: configuration.lease) }
        } catch {
            return true
        }
    }

    /// Carries out the changes other nodes asked of this node's downloads.
    func applyRequests(_ worker: FleetQueue) throws(ServiceError) {
        for (claim, request) in try worker.requests() where state.withLock({ $0.claims[claim.id] == claim }) {
            if request == "change" {
                try applyChange(to: claim, via: worker)
            } else {
                try apply(request, to: claim, via: worker)
            }
        }
    }
}
