// MARK: - The queue

extension ServiceQueue {
    /// Adds a download (status `waiting` or `paused`) to the queue at `index` (the end when
    /// `nil` or beyond it), then fills the free slots.
    mutating func add(_ entry: Entry, at index: Int?) -> [Effect] {
        var entry = entry
        entry.run = .idle
        let at = min(max(0, index ?? queued.count), queued.count)
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
            entries[id]!.status = .paused
            effects += insertWaiting(id, at: 0)
            entries[id]!.bytesPerSecond = 0
            entries[id]!.connections = 0
            effects += [.save(id), .event(ServiceEvent(id: id, kind: .paused))]
        } else {
            setStatus(id, .paused)
            effects += [.saveStatus(id), .event(ServiceEvent(id: id, kind: .paused))]
        }
        return effects + fillSlots()
    }

    /// Pauses every active and waiting download (the waiting ones first, so that no slot the
    /// active ones free starts one of them).
    mutating func pauseAll() -> [Effect] {
        var effects: [Effect] = []
        for (_, id) in ready.all {
            setStatus(id, .paused)
            effects += [.saveStatus(id), .event(ServiceEvent(id: id, kind: .paused))]
        }
        for id in active { effects += (try? pause(id)) ?? [] }
        return effects
    }

    /// Puts a paused download back in the queue, where it was.
    ///
    /// - Throws: `invalidState` unless it is paused.
    mutating func unpause(_ id: DownloadID) throws(ServiceError) -> [Effect] {
        guard entries[id]?.status == .paused else {
            throw ServiceError(.invalidState, "GID#\(id.hex) cannot be unpaused now")
        }
        setStatus(id, .waiting)
        return [.saveStatus(id), .event(ServiceEvent(id: id, kind: .unpaused))] + fillSlots()
    }

    /// Puts every paused download back in the queue.
    mutating func unpauseAll() -> [Effect] {
        var effects: [Effect] = []
        for (_, id) in queued.all where entries[id]?.status == .paused {
            setStatus(id, .waiting)
            effects += [.saveStatus(id), .event(ServiceEvent(id: id, kind: .unpaused))]
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
            unqueue(id)
        }
        effects += makeResult(id, status: .removed)
        effects.append(.event(ServiceEvent(id: id, kind: .removed)))
        return effects + fillSlots()
    }

    /// Forgets a result, held in memory or only in the store.
    ///
    /// - Throws: `invalidState` unless the download is a result.
    mutating func forget(_ id: DownloadID) throws(ServiceError) -> [Effect] {
        if let position = storedResults.removeValue(forKey: id) {
            results.remove(at: position)
            return [.delete(id), .event(ServiceEvent(id: id, kind: .forgotten))]
        }
        guard let entry = entries[id], entry.status.isStopped else {
            throw ServiceError(.invalidState, "Could not remove download result of GID#\(id.hex)")
        }
        entries[id] = nil
        results.remove(at: entry.position)
        residentResults -= 1
        return [.delete(id), .event(ServiceEvent(id: id, kind: .forgotten))]
    }

    /// Forgets every result.
    mutating func forgetAll() -> [Effect] {
        var effects: [Effect] = []
        for (_, id) in results.all {
            entries[id] = nil
            effects += [.delete(id), .event(ServiceEvent(id: id, kind: .forgotten))]
        }
        results = RankedList()
        storedResults = [:]
        residentResults = 0
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
        guard let entry = entries[id], entry.status == .waiting || entry.status == .paused else {
            throw ServiceError(.notFound, "GID#\(id.hex) not found in the waiting queue.")
        }
        let current = queued.rank(of: entry.position)
        let base: Int
        switch origin {
        case .front: base = 0
        case .current: base = current
        case .back: base = queued.count - 1
        }
        let (sum, overflow) = base.addingReportingOverflow(offset)
        let target = overflow ? (offset < 0 ? 0 : queued.count - 1) : min(max(0, sum), queued.count - 1)
        guard target != current else { return (target, []) }
        unqueue(id)
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

    /// Replaces a queued download's URLs; an active one's run restarts from the bytes on disk
    /// when they changed (every URL is a source of its transfer).
    ///
    /// - Throws: `invalidState` for a result.
    mutating func changeURLs(_ id: DownloadID, to urls: [String]) throws(ServiceError) -> [Effect] {
        guard let entry = entries[id], !entry.status.isStopped else {
            throw ServiceError(.invalidState, "Cannot remove URIs from GID#\(id.hex)")
        }
        entries[id]!.urls = urls
        var effects: [Effect] = [.save(id)]
        if entry.urls != urls, case .running(let generation) = entry.run {
            entries[id]!.run = .ending(generation, restart: true)
            effects.append(.stop(id, generation: generation))
        }
        return effects
    }

    /// Starts waiting downloads, front first, while slots are free.
    mutating func fillSlots() -> [Effect] {
        var effects: [Effect] = []
        while !isShuttingDown, active.count < maximumActive, let (_, id) = ready.first {
            unqueue(id)
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

    /// Whether any run has not ended yet (only active downloads and resident results have one).
    var hasRuns: Bool {
        entries.values.contains { $0.run != .idle }
    }
}
