#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulCore

/// The fleet's list as snapshots: rows from PostgreSQL, the downloads this node runs as they
/// are now (their progress is not in the table).
extension FleetNode {
    package func download(_ id: DownloadID) throws(ServiceError) -> ServiceDownload? {
        // A download this node runs, as it is now; once it ended here, as the table says (its
        // result is the fleet's when written).
        if state.withLock({ $0.claims[id] != nil }), var live = service.download(id), live.status == .active {
            live.node = configuration.node
            return live
        }
        return try withCaller { (queue) throws(ServiceError) in try queue.row(id) }.map(snapshot)
    }

    package func activeDownloads() throws(ServiceError) -> [ServiceDownload] {
        try list(FleetQueue.activeOnly) { 0..<$0 }
    }

    package func waitingDownloads(_ pick: (Int) -> Range<Int>) throws(ServiceError) -> [ServiceDownload] {
        try list(FleetQueue.queueStatuses, pick)
    }

    package func stoppedDownloads(_ pick: (Int) -> Range<Int>) throws(ServiceError) -> [ServiceDownload] {
        try list(FleetQueue.resultStatuses, pick)
    }

    private func list(_ statuses: String, _ pick: (Int) -> Range<Int>) throws(ServiceError) -> [ServiceDownload] {
        let rows = try withCaller { (queue) throws(ServiceError) in
            try queue.rows(statuses, try Self.places(statuses, pick, queue).clamped(to: 0..<Int.max))
        }
        return rows.map(live)
    }

    package func matches(_ filter: DownloadFilter) throws(ServiceError) -> [DownloadMatch] {
        try withCaller { (queue) throws(ServiceError) in try queue.matching(filter) }
    }

    package func matchingDownloads(_ filter: DownloadFilter, _ pick: (Int) -> Range<Int>)
        throws(ServiceError) -> (total: Int, downloads: [ServiceDownload]) {
        let (total, rows) = try withCaller { (queue) throws(ServiceError) in try queue.matchingPage(filter, pick) }
        return (total, rows.map(live))
    }

    /// A row as a snapshot: a download this node runs as it is now.
    private func live(_ row: FleetRow) -> ServiceDownload {
        if row.node == configuration.node, row.row.status == .active, var live = service.download(row.row.id), live.status == .active {
            live.node = row.node
            return live
        }
        return snapshot(row)
    }

    /// The places `pick` wants, the list counted only when they depend on its length (places
    /// from its end): counting 100,000 rows costs more than reading a page of them.
    private static func places(_ statuses: String, _ pick: (Int) -> Range<Int>, _ queue: FleetQueue) throws(ServiceError) -> Range<Int> {
        let unbounded = pick(Int.max)
        return unbounded.lowerBound < Int.max / 2 ? unbounded : pick(try queue.count(statuses))
    }

    package func identifiers(withPrefix prefix: String, limit: Int) throws(ServiceError) -> [DownloadID] {
        guard prefix.unicodeScalars.allSatisfy({ $0.properties.isASCIIHexDigit }), prefix.unicodeScalars.count <= 16 else { return [] }
        return try withCaller { (queue) throws(ServiceError) in try queue.identifiers(withPrefix: prefix, limit: limit) }
    }

    package func segmentsInFlight(_ id: DownloadID) -> [SegmentInFlight] {
        service.segmentsInFlight(id)
    }

    package func sourcesInUse(_ id: DownloadID) -> [SourceInUse] {
        service.sourcesInUse(id)
    }

    package func currentStatistics() throws(ServiceError) -> ServiceStatistics {
        let counts = try withCaller { (queue) throws(ServiceError) in try queue.counts() }
        return ServiceStatistics(active: counts["active"] ?? 0, waiting: (counts["waiting"] ?? 0) + (counts["paused"] ?? 0),
                                 stopped: (counts["complete"] ?? 0) + (counts["error"] ?? 0) + (counts["removed"] ?? 0),
                                 stoppedTotal: (counts["complete"] ?? 0) + (counts["error"] ?? 0) + (counts["removed"] ?? 0),
                                 bytesPerSecond: service.statistics.bytesPerSecond)
    }

    package var maximumActiveDownloads: Int { service.maximumActiveDownloads }

    package func setMaximumActiveDownloads(_ count: Int) throws(ServiceError) {
        try service.setMaximumActiveDownloads(count)
        wakeup.signal()
    }

    package var rateLimit: Int64? { service.rateLimit }

    package func setRateLimit(_ bytesPerSecond: Int64?) {
        service.setRateLimit(bytesPerSecond)
    }

    package var rootPath: String { service.rootPath }

    package func fleetNodes() throws(ServiceError) -> [FleetNodeStatus] {
        try withCaller { (queue) throws(ServiceError) in try queue.nodes() }
    }

    package func shutDown(timeout: Duration) {
        stop()
    }

    /// A row of the table as a snapshot: as of its node's last renewal when another node runs it
    /// (no connections counted).
    func snapshot(_ row: FleetRow) -> ServiceDownload {
        let entry = row.row.entry
        let folder = entry.file.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
            ?? service.root.absolute(entry.options.directory)
        var download = ServiceDownload(id: entry.id, urls: entry.urls, options: entry.options, status: entry.status,
                                       directoryPath: folder, filePath: entry.file, totalBytes: entry.totalBytes,
                                       completedBytes: entry.completedBytes,
                                       completedRanges: entry.completedRanges ?? (entry.completedBytes > 0 ? [0..<entry.completedBytes] : []),
                                       bytesPerSecond: entry.status == .active ? Double(row.bytesPerSecond) : 0,
                                       connections: 0, failure: entry.failure)
        download.node = row.node
        return download
    }
}

// MARK: - Observers

extension FleetNode {
    /// Calls `observer` for every event of the fleet (from every node), in the order this node
    /// hears of them, on the node's thread.
    @discardableResult
    package func addObserver(_ observer: @escaping @Sendable (ServiceEvent) -> Void) -> Int {
        observers.withLock { observers in
            observers.next += 1
            observers.list[observers.next] = observer
            return observers.next
        }
    }

    package func removeObserver(_ token: Int) {
        _ = observers.withLock { $0.list.removeValue(forKey: token) }
    }

    /// Hands an event heard from the fleet to the observers.
    func deliver(_ event: ServiceEvent) {
        let list = observers.withLock { $0.list.sorted { $0.key < $1.key }.map(\.value) }
        for observer in list { observer(event) }
    }

    struct Observers {
        var list: [Int: @Sendable (ServiceEvent) -> Void] = [:]
        var next = 0
    }
}
