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
    /// Results only in the state file are read from it.
    public func matchingDownloads(_ filter: DownloadFilter, _ pick: (Int) -> Range<Int>) -> (total: Int, downloads: [ServiceDownload]) {
        let ids = matches(filter).map(\.id)
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
    /// The ``SearchIndex`` finds them outside the lock (a copy of it, which costs a reference
    /// until the list next changes); only putting them in order takes the lock.
    public func matches(_ filter: DownloadFilter) -> [DownloadMatch] {
        let found = state.withLock { $0.search }.matches(filter)
        return state.withLock { state in Self.inListOrder(found, state.queue) }
    }

    /// `matches` in the list's order: a few sorted by their places, many picked out of a walk
    /// through the lists (no entry copied either way).
    static func inListOrder(_ matches: [DownloadMatch], _ queue: ServiceQueue) -> [DownloadMatch] {
        guard matches.count > 256 else {
            let present = matches.filter { queue.contains($0.id) }   // forgotten since the search: left out
            let places = present.map { match -> (Int, Double) in
                switch match.status {
                case .active: return (0, Double(queue.active.firstIndex(of: match.id) ?? 0))
                case .waiting, .paused: return (1, queue.entries[match.id]?.position ?? 0)
                default: return (2, queue.entries[match.id]?.position ?? queue.storedResults[match.id] ?? 0)
                }
            }
            return zip(places, present).sorted { $0.0 < $1.0 }.map(\.1)
        }
        let byID = Dictionary(matches.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var ordered: [DownloadMatch] = []
        ordered.reserveCapacity(matches.count)
        for id in queue.active { if let match = byID[id] { ordered.append(match) } }
        for (_, id) in queue.queued.all { if let match = byID[id] { ordered.append(match) } }
        for (_, id) in queue.results.all { if let match = byID[id] { ordered.append(match) } }
        return ordered   // a download changed between the search and the walk may be left out
    }
}
