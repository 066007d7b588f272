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
        while !state.withLock({ $0.stopping }) {
            do throws(ServiceError) {
                try link.worker.reconnectIfLost(listening: false)
                try link.listener.reconnectIfLost(listening: true)
                try writeResults(link.worker)
                if ContinuousClock.now - lastRenewal >= renewal {
                    try renew(link.worker)
                    lastRenewal = .now
                }
                try claimWork(link.worker)
                state.withLock { $0.lastError = nil }
                _ = try link.listener.waitForNotifications(timeout: renewal, wakeup: (try? wakeup.pollDescriptor) ?? -1)
            } catch {
                state.withLock { $0.lastError = error }
                _ = state.wait(until: .now + .milliseconds(500)) { !$0.stopping }
            }
            wakeup.drain()
        }
        giveBack(link.worker)
        link.worker.close()
        link.listener.close()
        state.withLockBroadcasting { $0.running = false }
    }

    /// Records a download of this node that ended, for the loop to write.
    func observe(_ event: ServiceEvent) {
        guard event.kind == .completed || event.kind == .failed else { return }
        let row = service.state.withLock { $0.queue.entries[event.id].map(StoreRow.init) }
        guard let row else { return }
        state.withLock { state in
            if state.claims[event.id] != nil { state.results[event.id] = row }
        }
        wakeup.signal()
    }

    /// Writes the rows of downloads that ended here under their claims, then forgets them here.
    private func writeResults(_ worker: FleetQueue) throws(ServiceError) {
        let pending = state.withLock { state in state.results.compactMap { id, row in state.claims[id].map { (row, $0) } } }
        for (row, claim) in pending {
            _ = try worker.write(row, under: claim)   // a claim lost meanwhile writes nothing: the new owner's row stands
            state.withLock { state in
                state.results[row.id] = nil
                state.claims[row.id] = nil
            }
            try? service.forgetResult(row.id)
        }
    }

    /// Renews the claims; stops here at once the downloads another node took.
    private func renew(_ worker: FleetQueue) throws(ServiceError) {
        let lost = try worker.renew(claims, lease: configuration.lease)
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
    private func claimWork(_ worker: FleetQueue) throws(ServiceError) {
        let free = service.maximumActiveDownloads - state.withLock { $0.claims.count }
        guard free > 0 else { return }
        for (claim, row) in try worker.claim(limit: free, lease: configuration.lease) {
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
    }

    /// On stop: writes what ended, then gives every claim back to the queue as waiting.
    private func giveBack(_ worker: FleetQueue) {
        try? writeResults(worker)
        let held = state.withLock { state in Array(state.claims.values) }
        service.shutDown()
        for claim in held {
            guard var row = service.state.withLock({ $0.queue.entries[claim.id].map(StoreRow.init) }) else { continue }
            row.status = .waiting
            _ = try? worker.write(row, under: claim)
        }
    }
}
