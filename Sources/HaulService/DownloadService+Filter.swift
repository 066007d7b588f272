import HaulCore

/// A download a filter found, with its status when found.
public struct DownloadMatch: Sendable, Equatable {
    /// The download.
    public var id: DownloadID
    /// Its status when the filter found it.
    public var status: ServiceDownload.Status

    /// A match of `id`, with `status`.
    public init(id: DownloadID, status: ServiceDownload.Status) {
        self.id = id
        self.status = status
    }
}

extension DownloadService {
    /// The downloads that match `filter`, in the list's order (the active ones as they started,
    /// then the queue front first, then the results oldest first): the places `pick` chooses,
    /// given how many match, and how many match in all.
    ///
    /// The queue and the newest results are matched in memory; older results kept only in the
    /// state file are found there.
    ///
    /// - Throws: `store` when the state file cannot be read.
    public func matchingDownloads(_ filter: DownloadFilter, _ pick: (Int) -> Range<Int>)
        throws(ServiceError) -> (total: Int, downloads: [ServiceDownload]) {
        let ids = try matches(filter).map(\.id)
        let chosen = Array(ids[pick(ids.count).clamped(to: 0..<ids.count)])
        let resident = state.withLock { state in
            chosen.compactMap { id in state.queue.entries[id].map { (id, snapshot($0, runs: state.runs)) } }
        }
        let found = Dictionary(resident, uniquingKeysWith: { first, _ in first })
        let stored = storedResults(chosen.filter { found[$0] == nil })
        return (ids.count, chosen.compactMap { found[$0] ?? stored[$0] })
    }

    /// Every download that matches `filter`, in the list's order (as ``matchingDownloads(_:_:)``).
    ///
    /// - Throws: `store` when the state file cannot be read.
    public func matches(_ filter: DownloadFilter) throws(ServiceError) -> [DownloadMatch] {
        let hasStored = state.withLock { !$0.queue.storedResults.isEmpty }
        let stored = hasStored ? try writer.read { store throws(ServiceError) in try store.matchingResults(filter) } : [:]
        let needle = filter.needle
        return state.withLock { state in
            let queue = state.queue
            let match = { (id: DownloadID) -> DownloadMatch? in
                guard let entry = queue.entries[id] else { return stored[id].map { DownloadMatch(id: id, status: $0) } }
                let found = filter.matches(status: entry.status, urls: entry.urls, file: entry.file,
                                           fileName: entry.options.fileName, needle: needle)
                return found ? DownloadMatch(id: id, status: entry.status) : nil
            }
            var found: [DownloadMatch] = []
            if filter.wants(.active) { found += queue.active.compactMap(match) }
            if filter.wants(.waiting) || filter.wants(.paused) { found += queue.queued.all.compactMap { match($0.id) } }
            if filter.resultStatusList != nil { found += queue.results.all.compactMap { match($0.id) } }
            return found
        }
    }
}
