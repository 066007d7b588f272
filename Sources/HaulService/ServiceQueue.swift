/// The list of a ``DownloadService`` as a pure value: the active downloads, the waiting queue
/// (paused ones keep their place in it), the results, and each download's run of the engine.
///
/// Every operation changes the value and returns what the service must then do (``Effect``):
/// start or stop a run of the engine, save or delete a row of the store, publish an event. The
/// service applies them; nothing here touches a file, a socket or a clock, so the rules are
/// tested without any.
///
/// A run is numbered (its generation); what the engine reports about a run that is no longer
/// the download's current one is ignored. A download whose previous run is still ending (its
/// connections closing, its partial file still locked) starts again only once that run ended.
struct ServiceQueue {
    /// One download and its run.
    struct Entry {
        var id: DownloadID
        var urls: [String]
        var options: ServiceDownloadOptions
        var status: ServiceDownload.Status
        /// Its order in its list (the queue, or the results); kept in the store.
        var position: Double
        /// The file's path once known.
        var file: String?
        var totalBytes: Int64?
        var completedBytes: Int64 = 0
        /// The ranges of the last checkpoint, when the transfer published them.
        var completedRanges: [Range<Int64>]?
        var bytesPerSecond: Double = 0
        var connections = 0
        var failure: ServiceFailure?
        var run: Run = .idle
    }

    /// A download's run of the engine.
    enum Run: Equatable {
        /// None.
        case idle
        /// Running, with this generation.
        case running(Int)
        /// Asked to stop, not ended yet; `restart` starts another run once it has.
        case ending(Int, restart: Bool)
    }

    /// What the service does after an operation, in order.
    enum Effect: Equatable {
        /// Start a run of the engine for the download, with this generation.
        case start(DownloadID, generation: Int)
        /// Stop that run (its partial file is kept).
        case stop(DownloadID, generation: Int)
        /// Write the download's row as it is now.
        case save(DownloadID)
        /// Write the download's status as it is now (nothing else of its row changed).
        case saveStatus(DownloadID)
        /// Delete the download's row.
        case delete(DownloadID)
        /// Publish an event.
        case event(ServiceEvent)
    }

    /// How the engine's run ended.
    enum Outcome: Equatable {
        case finished(file: String, bytes: Int64)
        case failed(ServiceFailure)
        case cancelled
    }

    var entries: [DownloadID: Entry] = [:]
    /// Active downloads, in the order they started.
    var active: [DownloadID] = []
    /// The queue by position (waiting and paused downloads).
    var queued = RankedList()
    /// The waiting downloads of the queue by position: the next to start is the first.
    var ready = RankedList()
    /// Every result by position, oldest first: those in ``entries`` and the ones kept only in
    /// the store.
    var results = RankedList()
    /// Results kept only in the store, with their positions: the oldest beyond the last
    /// ``residentResultsLimit``.
    var storedResults: [DownloadID: Double] = [:]
    /// Results held in ``entries``: the newest ones.
    var residentResults = 0
    /// The most results held in memory.
    let residentResultsLimit: Int
    /// Downloads active at once.
    var maximumActive: Int
    /// Results ever made, including the ones removed since.
    var stoppedTotal = 0
    /// Once set, nothing starts any more.
    var isShuttingDown = false
    var nextGeneration = 1
    var nextStoppedPosition = 1.0
    /// Past every position the queue has given: where a download added at the back goes.
    var tailPosition = 0.0
    /// Rows the restore changed and the store has not been told of.
    var restoredChanges: [DownloadID] = []

    /// An empty list that holds up to `residentResults` results in memory.
    init(maximumActive: Int, residentResults: Int = 1_000) {
        self.maximumActive = max(1, maximumActive)
        self.residentResultsLimit = max(1, residentResults)
    }

    /// The list as a store kept it: active downloads first (they continue from their partial
    /// files), then the queue in its order, then the results in theirs; `stored` are results
    /// the store holds without their rows read (identifier and position). Nothing is started:
    /// call ``fillSlots()``.
    init(restoring restored: [Entry], stored: [(id: DownloadID, position: Double)] = [], maximumActive: Int,
         residentResults: Int = 1_000) {
        self.init(maximumActive: maximumActive, residentResults: residentResults)
        let byPosition = restored.sorted { $0.position < $1.position }
        restoreQueue(previouslyActive: byPosition.filter { $0.status == .active },
                     queued: byPosition.filter { $0.status == .waiting || $0.status == .paused })
        for (id, position) in stored {
            storedResults[id] = position
            results.insert(id, at: position)
            nextStoppedPosition = max(nextStoppedPosition, position + 1)
        }
        for entry in byPosition where entry.status.isStopped {
            entries[entry.id] = entry
            results.insert(entry.id, at: entry.position)
            self.residentResults += 1
            nextStoppedPosition = max(nextStoppedPosition, entry.position + 1)
        }
        stoppedTotal = results.count
        evictResults()
    }

    /// Puts the downloads that were active (now waiting) before the queue, with positions below
    /// its first; the queue is renumbered only when its positions are not strictly increasing.
    /// What changed is in ``restoredChanges`` for the store.
    private mutating func restoreQueue(previouslyActive: [Entry], queued: [Entry]) {
        let front = queued.first?.position ?? 0
        for (index, var entry) in previouslyActive.enumerated() {
            entry.status = .waiting
            entry.position = front - Double(previouslyActive.count - index) * 1024
            entries[entry.id] = entry
            restoredChanges.append(entry.id)
        }
        for entry in queued { entries[entry.id] = entry }
        let order = (previouslyActive + queued).map(\.id)
        let positions = order.map { entries[$0]!.position }
        tailPosition = (positions.max() ?? -1024) + 1024
        if zip(positions, positions.dropFirst()).contains(where: { $0 >= $1 }) {
            renumber(order)
            restoredChanges = order
        } else {
            for id in order { place(id) }
        }
    }

    /// The rows the restore changed (positions, the status of a download that was active),
    /// to be saved; asked for once.
    mutating func takeRestoredChanges() -> [Effect] {
        defer { restoredChanges = [] }
        return restoredChanges.map { .save($0) }
    }

    /// Whether `id` names a download in the list.
    func contains(_ id: DownloadID) -> Bool { entries[id] != nil || storedResults[id] != nil }

    /// Whether `id` is a result kept only in the store (its row is read from there).
    func isStored(_ id: DownloadID) -> Bool { storedResults[id] != nil }

    /// The queue, front first (every download in it: for tests and whole-queue operations).
    var waiting: [DownloadID] { queued.all.map(\.id) }

    /// Every result, oldest first.
    var stopped: [DownloadID] { results.all.map(\.id) }

    /// The downloads of the queue at `places` (0 is the front), clamped.
    func waiting(at places: Range<Int>) -> [DownloadID] { queued.elements(in: places).map(\.id) }

    /// The results at `places` (0 is the oldest), clamped.
    func stopped(at places: Range<Int>) -> [DownloadID] { results.elements(in: places).map(\.id) }
}

