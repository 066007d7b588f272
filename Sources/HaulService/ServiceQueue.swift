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

    private(set) var entries: [DownloadID: Entry] = [:]
    /// Active downloads, in the order they started.
    private(set) var active: [DownloadID] = []
    /// The waiting queue, front first (waiting and paused downloads).
    private(set) var waiting: [DownloadID] = []
    /// Results, oldest first.
    private(set) var stopped: [DownloadID] = []
    /// Downloads active at once.
    private(set) var maximumActive: Int
    /// Results ever made, including the ones removed since.
    private(set) var stoppedTotal = 0
    /// Once set, nothing starts any more.
    private(set) var isShuttingDown = false
    private var nextGeneration = 1
    private var nextStoppedPosition = 1.0

    /// An empty list.
    init(maximumActive: Int) {
        self.maximumActive = max(1, maximumActive)
    }

    /// The list as a store kept it: active downloads first (they continue from their partial
    /// files), then the queue in its order, then the results in theirs. Nothing is started:
    /// call ``fillSlots()``.
    init(restoring restored: [Entry], maximumActive: Int) {
        self.init(maximumActive: maximumActive)
        let byPosition = restored.sorted { $0.position < $1.position }
        let previouslyActive = byPosition.filter { $0.status == .active }
        for var entry in previouslyActive + byPosition.filter({ $0.status == .waiting || $0.status == .paused }) {
            if entry.status == .active { entry.status = .waiting }
            entries[entry.id] = entry
            waiting.append(entry.id)
        }
        for entry in byPosition where entry.status.isStopped {
            entries[entry.id] = entry
            stopped.append(entry.id)
            nextStoppedPosition = max(nextStoppedPosition, entry.position + 1)
        }
        if !previouslyActive.isEmpty { _ = renumberWaiting() }
        stoppedTotal = stopped.count
    }

    /// Whether `id` names a download in the list.
    func contains(_ id: DownloadID) -> Bool { entries[id] != nil }
}

// MARK: - The queue

extension ServiceQueue {
    /// Adds a download (status `waiting` or `paused`) to the queue at `index` (the end when
    /// `nil` or beyond it), then fills the free slots.
    mutating func add(_ entry: Entry, at index: Int?) -> [Effect] {
        var entry = entry
        entry.run = .idle
        let at = min(max(0, index ?? waiting.count), waiting.count)
        entries[entry.id] = entry
        var effects = insertWaiting(entry.id, at: at)
        effects.append(.event(ServiceEvent(id: entry.id, kind: .added)))
        return effects + fillSlots()
    }

    /// Pauses an active or waiting download: an active one stops and goes to the front of the
    /// queue, a waiting one stays where it is.
    ///
    /// - Throws: `invalidState` for a paused download or a result.
    mutating func pause(_ id: DownloadID) throws(ServiceError) -> [Effect] {
        guard let entry = entries[id], entry.status == .active || entry.status == .waiting else {
            throw ServiceError(.invalidState, "GID#\(id.hex) cannot be paused now")
        }
        var effects: [Effect] = []
        if entry.status == .active {
            effects += stopRun(id)
            active.removeAll { $0 == id }
            effects += insertWaiting(id, at: 0)
        }
        entries[id]!.status = .paused
        entries[id]!.bytesPerSecond = 0
        entries[id]!.connections = 0
        effects += [.save(id), .event(ServiceEvent(id: id, kind: .paused))]
        return effects + fillSlots()
    }

    /// Pauses every active and waiting download (the waiting ones first, so that no slot the
    /// active ones free starts one of them).
    mutating func pauseAll() -> [Effect] {
        var effects: [Effect] = []
        for id in waiting + active where entries[id]?.status != .paused {
            effects += (try? pause(id)) ?? []
        }
        return effects
    }

    /// Puts a paused download back in the queue, where it was.
    ///
    /// - Throws: `invalidState` unless it is paused.
    mutating func unpause(_ id: DownloadID) throws(ServiceError) -> [Effect] {
        guard entries[id]?.status == .paused else {
            throw ServiceError(.invalidState, "GID#\(id.hex) cannot be unpaused now")
        }
        entries[id]!.status = .waiting
        return [.save(id), .event(ServiceEvent(id: id, kind: .unpaused))] + fillSlots()
    }

    /// Puts every paused download back in the queue.
    mutating func unpauseAll() -> [Effect] {
        var effects: [Effect] = []
        for id in waiting where entries[id]?.status == .paused {
            entries[id]!.status = .waiting
            effects += [.save(id), .event(ServiceEvent(id: id, kind: .unpaused))]
        }
        return effects + fillSlots()
    }

    /// Removes an active, waiting or paused download: it stops and becomes a result with
    /// status `removed`.
    ///
    /// - Throws: `invalidState` for a result.
    mutating func remove(_ id: DownloadID) throws(ServiceError) -> [Effect] {
        guard let entry = entries[id], !entry.status.isStopped else {
            throw ServiceError(.invalidState, "Active Download not found for GID#\(id.hex)")
        }
        var effects: [Effect] = []
        if entry.status == .active {
            effects += stopRun(id)
            active.removeAll { $0 == id }
        } else {
            waiting.removeAll { $0 == id }
        }
        effects += makeResult(id, status: .removed)
        effects.append(.event(ServiceEvent(id: id, kind: .removed)))
        return effects + fillSlots()
    }

    /// Forgets a result.
    ///
    /// - Throws: `invalidState` unless the download is a result.
    mutating func forget(_ id: DownloadID) throws(ServiceError) -> [Effect] {
        guard let entry = entries[id], entry.status.isStopped else {
            throw ServiceError(.invalidState, "Could not remove download result of GID#\(id.hex)")
        }
        entries[id] = nil
        stopped.removeAll { $0 == id }
        return [.delete(id), .event(ServiceEvent(id: id, kind: .forgotten))]
    }

    /// Forgets every result.
    mutating func forgetAll() -> [Effect] {
        let results = stopped
        stopped = []
        var effects: [Effect] = []
        for id in results {
            entries[id] = nil
            effects += [.delete(id), .event(ServiceEvent(id: id, kind: .forgotten))]
        }
        return effects
    }

    /// How ``move(_:by:from:)`` counts its offset.
    enum Origin: Sendable {
        /// From the front of the queue.
        case front
        /// From the download's place now.
        case current
        /// From the back of the queue (the last place is offset 0).
        case back
    }

    /// Moves a download of the queue to a new place, clamped to the queue (aria2's
    /// `changePosition`); returns the place it landed at.
    ///
    /// - Throws: `notFound` when the download is not in the queue.
    mutating func move(_ id: DownloadID, by offset: Int, from origin: Origin) throws(ServiceError) -> (Int, [Effect]) {
        guard let current = waiting.firstIndex(of: id) else {
            throw ServiceError(.notFound, "GID#\(id.hex) not found in the waiting queue.")
        }
        let base: Int
        switch origin {
        case .front: base = 0
        case .current: base = current
        case .back: base = waiting.count - 1
        }
        let (sum, overflow) = base.addingReportingOverflow(offset)
        let target = overflow ? (offset < 0 ? 0 : waiting.count - 1) : min(max(0, sum), waiting.count - 1)
        guard target != current else { return (target, []) }
        waiting.remove(at: current)
        return (target, insertWaiting(id, at: target))
    }

    /// Changes how many downloads run at once (at least 1); more start, or the newest active
    /// ones go back to the front of the queue.
    mutating func setMaximumActive(_ count: Int) -> [Effect] {
        maximumActive = max(1, count)
        var effects: [Effect] = []
        while active.count > maximumActive, let newest = active.last {
            effects += stopRun(newest)
            active.removeLast()
            entries[newest]!.status = .waiting
            entries[newest]!.bytesPerSecond = 0
            effects += insertWaiting(newest, at: 0)
        }
        return effects + fillSlots()
    }

    /// Replaces a queued download's options; an active one's run restarts to take them.
    ///
    /// - Throws: `invalidState` for a result.
    mutating func change(_ id: DownloadID, options: ServiceDownloadOptions) throws(ServiceError) -> [Effect] {
        guard let entry = entries[id], !entry.status.isStopped else {
            throw ServiceError(.invalidState, "Cannot change option for GID#\(id.hex)")
        }
        entries[id]!.options = options
        var effects: [Effect] = [.save(id)]
        if entry.status == .active, case .running(let generation) = entry.run {
            entries[id]!.run = .ending(generation, restart: true)
            effects.append(.stop(id, generation: generation))
        }
        return effects
    }

    /// Replaces a queued download's URLs; an active one's run restarts when its first URL
    /// (the one downloaded) changed.
    ///
    /// - Throws: `invalidState` for a result.
    mutating func changeURLs(_ id: DownloadID, to urls: [String]) throws(ServiceError) -> [Effect] {
        guard let entry = entries[id], !entry.status.isStopped else {
            throw ServiceError(.invalidState, "Cannot remove URIs from GID#\(id.hex)")
        }
        entries[id]!.urls = urls
        var effects: [Effect] = [.save(id)]
        if entry.urls.first != urls.first, case .running(let generation) = entry.run {
            entries[id]!.run = .ending(generation, restart: true)
            effects.append(.stop(id, generation: generation))
        }
        return effects
    }

    /// Starts waiting downloads, front first, while slots are free.
    mutating func fillSlots() -> [Effect] {
        var effects: [Effect] = []
        while !isShuttingDown, active.count < maximumActive,
              let index = waiting.firstIndex(where: { entries[$0]?.status == .waiting }) {
            let id = waiting.remove(at: index)
            active.append(id)
            entries[id]!.status = .active
            switch entries[id]!.run {
            case .idle:
                let generation = takeGeneration()
                entries[id]!.run = .running(generation)
                effects.append(.start(id, generation: generation))
            case .ending(let generation, _):
                entries[id]!.run = .ending(generation, restart: true)   // starts once that run ended
            case .running:
                break
            }
            effects += [.save(id), .event(ServiceEvent(id: id, kind: .started))]
        }
        return effects
    }

    /// Stops every run and starts none any more; active downloads stay active (a later
    /// service continues them).
    mutating func shutDown() -> [Effect] {
        isShuttingDown = true
        var effects: [Effect] = []
        for id in active {
            if case .running(let generation) = entries[id]?.run {
                entries[id]!.run = .ending(generation, restart: false)
                effects.append(.stop(id, generation: generation))
            } else if case .ending(let generation, _) = entries[id]?.run {
                entries[id]!.run = .ending(generation, restart: false)
            }
        }
        return effects
    }

    /// Whether any run has not ended yet.
    var hasRuns: Bool {
        entries.values.contains { $0.run != .idle }
    }
}

// MARK: - What the engine reports

extension ServiceQueue {
    /// Whether `generation` is the download's current, running run.
    func isCurrent(_ id: DownloadID, generation: Int) -> Bool {
        entries[id]?.run == .running(generation)
    }

    /// The response head arrived: the file and its length are known (saved, so that a later
    /// run continues the same file).
    mutating func runStarted(_ id: DownloadID, generation: Int, file: String, totalBytes: Int64?,
                             resumedFrom: Int64, connections: Int) -> [Effect] {
        guard isCurrent(id, generation: generation) else { return [] }
        let changed = entries[id]!.file != file || entries[id]!.totalBytes != totalBytes
        entries[id]!.file = file
        entries[id]!.totalBytes = totalBytes
        entries[id]!.completedBytes = resumedFrom
        entries[id]!.connections = connections
        return changed ? [.save(id)] : []
    }

    /// Bytes arrived.
    mutating func progressed(_ id: DownloadID, generation: Int, completedBytes: Int64, totalBytes: Int64?,
                             bytesPerSecond: Double, ranges: [Range<Int64>]?) {
        guard isCurrent(id, generation: generation) else { return }
        entries[id]!.completedBytes = completedBytes
        if let totalBytes { entries[id]!.totalBytes = totalBytes }
        entries[id]!.bytesPerSecond = bytesPerSecond
        entries[id]!.completedRanges = ranges
    }

    /// The transfer started over from byte 0.
    mutating func startedOver(_ id: DownloadID, generation: Int) {
        guard isCurrent(id, generation: generation) else { return }
        entries[id]!.completedBytes = 0
        entries[id]!.completedRanges = nil
    }

    /// A run ended. The current run's end makes a result; an ending run's end may start the
    /// next run; anything else is ignored.
    mutating func runEnded(_ id: DownloadID, generation: Int, outcome: Outcome,
                           ranges: [Range<Int64>]?) -> [Effect] {
        guard let entry = entries[id] else { return [] }
        switch entry.run {
        case .running(generation):
            entries[id]!.run = .idle
            active.removeAll { $0 == id }
            var effects: [Effect]
            switch outcome {
            case .finished(let file, let bytes):
                entries[id]!.file = file
                entries[id]!.totalBytes = entries[id]!.totalBytes ?? bytes
                entries[id]!.completedBytes = bytes
                entries[id]!.completedRanges = nil
                effects = makeResult(id, status: .complete) + [.event(ServiceEvent(id: id, kind: .completed))]
            case .failed(let failure):
                entries[id]!.failure = failure
                effects = makeResult(id, status: .error) + [.event(ServiceEvent(id: id, kind: .failed))]
            case .cancelled:
                entries[id]!.failure = ServiceFailure(code: "cancelled", exitStatus: 130, message: "cancelled")
                effects = makeResult(id, status: .error) + [.event(ServiceEvent(id: id, kind: .failed))]
            }
            return effects + fillSlots()
        case .ending(generation, let restart):
            entries[id]!.run = .idle
            if let ranges { entries[id]!.completedRanges = ranges }
            guard restart, !isShuttingDown, entries[id]!.status == .active else { return [.save(id)] }
            let next = takeGeneration()
            entries[id]!.run = .running(next)
            return [.start(id, generation: next)]
        default:
            return []
        }
    }
}

// MARK: - Helpers

extension ServiceQueue {
    private mutating func takeGeneration() -> Int {
        defer { nextGeneration += 1 }
        return nextGeneration
    }

    /// Asks the download's running run to stop for good.
    private mutating func stopRun(_ id: DownloadID) -> [Effect] {
        switch entries[id]?.run {
        case .running(let generation)?:
            entries[id]!.run = .ending(generation, restart: false)
            return [.stop(id, generation: generation)]
        case .ending(let generation, _)?:
            entries[id]!.run = .ending(generation, restart: false)
            return []
        default:
            return []
        }
    }

    /// Makes a download a result (it is in no other list any more).
    private mutating func makeResult(_ id: DownloadID, status: ServiceDownload.Status) -> [Effect] {
        entries[id]!.status = status
        entries[id]!.bytesPerSecond = 0
        entries[id]!.connections = 0
        entries[id]!.position = nextStoppedPosition
        nextStoppedPosition += 1
        stopped.append(id)
        stoppedTotal += 1
        return [.save(id)]
    }

    /// Puts `id` into the queue at `index`, with a position between its neighbours' (the whole
    /// queue is renumbered when there is no room between them).
    private mutating func insertWaiting(_ id: DownloadID, at index: Int) -> [Effect] {
        waiting.insert(id, at: index)
        let before = index > 0 ? entries[waiting[index - 1]]?.position : nil
        let after = index + 1 < waiting.count ? entries[waiting[index + 1]]?.position : nil
        let position: Double
        switch (before, after) {
        case (nil, nil): position = 0
        case (let low?, nil): position = (low + 1024).rounded(.down)
        case (nil, let high?): position = (high - 1024).rounded(.down)
        case (let low?, let high?): position = low + (high - low) / 2
        }
        if let before, position <= before { return renumberWaiting() }
        if let after, position >= after { return renumberWaiting() }
        entries[id]!.position = position
        return [.save(id)]
    }

    /// Gives the queue positions 1024 apart, in its order.
    private mutating func renumberWaiting() -> [Effect] {
        var effects: [Effect] = []
        for (index, id) in waiting.enumerated() {
            entries[id]!.position = Double(index) * 1024
            effects.append(.save(id))
        }
        return effects
    }
}
