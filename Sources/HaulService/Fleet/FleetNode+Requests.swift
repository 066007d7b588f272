import Haul
import HaulCore

/// Changes asked of downloads this node runs: a pause or a removal, from this node's callers
/// or from another node's through the table.
extension FleetNode {
    /// Stops the downloads asked to pause or go here, waits for their runs to end (records
    /// synced, files' locks let go: their bytes are then all counted, and a claim here again finds
    /// the file free), and writes each as paused (its claim let go) or removed under its claim,
    /// telling the fleet.
    func stop(_ asked: [(FleetClaim, String)], via queue: FleetQueue) throws(ServiceError) {
        for (claim, _) in asked { try? service.remove(claim.id) }
        let ids = asked.map(\.0.id)
        _ = service.state.wait(until: .now + configuration.lease / 3) { state in ids.contains { state.runs[$0] != nil } }
        for (claim, request) in asked {
            guard var row = service.state.withLock({ $0.queue.entries[claim.id].map(StoreRow.init) }) else { continue }
            state.withLock { state in
                state.claims[claim.id] = nil
                state.results[claim.id] = nil
            }
            try? service.forgetResult(claim.id)
            row.status = request == "pause" ? .paused : .removed
            if try queue.write(row, under: claim) {
                try queue.notify(claim.id, request == "pause" ? .paused : .removed, wakesNodes: false)
            }
        }
    }

    /// Restarts the transfer of a download this node runs with the options and URLs its row now has.
    private func applyChange(to claim: FleetClaim, via queue: FleetQueue) throws(ServiceError) {
        guard let row = try queue.row(claim.id)?.row else { return }
        try? service.changeOptions(claim.id, to: row.options)
        try? service.changeURLs(claim.id, to: row.urls)
        try queue.clearRequest(claim, appliedFrom: row)
    }

    /// Whether a download's file may take its name: the claim is still this node's, with half a
    /// lease left for the rename (else extended). When PostgreSQL cannot be reached, yes: the fence
    /// still guards the row, and the transfer was this node's to finish.
    func mayCommit(_ id: DownloadID) -> Bool {
        guard let claim = state.withLock({ $0.claims[id] }) else { return false }
        do throws(ServiceError) {
            return try withCaller { (queue) throws(ServiceError) in try queue.holds(claim, lease: configuration.lease) }
        } catch {
            return true
        }
    }

    /// Carries out the changes other nodes asked of this node's downloads.
    func applyRequests(_ worker: FleetQueue) throws(ServiceError) {
        let asked = try worker.requests().filter { claim, _ in state.withLock { $0.claims[claim.id] == claim } }
        for (claim, request) in asked where request == "change" { try applyChange(to: claim, via: worker) }
        try stop(asked.filter { $0.1 != "change" }, via: worker)
    }
}
