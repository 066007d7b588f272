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
            return resultOfRun(id, outcome) + fillSlots()
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

    /// The result a run's end makes of an active download.
    private mutating func resultOfRun(_ id: DownloadID, _ outcome: Outcome) -> [Effect] {
        switch outcome {
        case .finished(let file, let bytes):
            entries[id]!.file = file
            entries[id]!.totalBytes = entries[id]!.totalBytes ?? bytes
            entries[id]!.completedBytes = bytes
            entries[id]!.completedRanges = nil
            return makeResult(id, status: .complete) + [.event(ServiceEvent(id: id, kind: .completed))]
        case .failed(let failure):
            entries[id]!.failure = failure
            return makeResult(id, status: .error) + [.event(ServiceEvent(id: id, kind: .failed))]
        case .cancelled:
            entries[id]!.failure = ServiceFailure(code: "cancelled", exitStatus: 130, message: "cancelled")
            return makeResult(id, status: .error) + [.event(ServiceEvent(id: id, kind: .failed))]
        }
    }
}

// MARK: - Places

extension ServiceQueue {
    mutating func takeGeneration() -> Int {
        defer { nextGeneration += 1 }
        return nextGeneration
    }

    /// Asks the download's running run to stop for good.
    mutating func stopRun(_ id: DownloadID) -> [Effect] {
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

    /// Makes a download a result (it is in no other list any more); the oldest resident result
    /// beyond the limit is then kept only in the store.
    mutating func makeResult(_ id: DownloadID, status: ServiceDownload.Status) -> [Effect] {
        entries[id]!.status = status
        entries[id]!.bytesPerSecond = 0
        entries[id]!.connections = 0
        entries[id]!.position = nextStoppedPosition
        results.insert(id, at: nextStoppedPosition)
        nextStoppedPosition += 1
        residentResults += 1
        stoppedTotal += 1
        evictResults()
        return [.save(id)]
    }

    /// Leaves the oldest resident results to the store until at most the limit are resident.
    /// The resident results are always the newest ones.
    mutating func evictResults() {
        while residentResults > residentResultsLimit,
              let (position, id) = results.element(at: results.count - residentResults) {
            entries[id] = nil
            storedResults[id] = position
            residentResults -= 1
        }
    }

    /// Changes the status of a download in the queue between waiting and paused.
    mutating func setStatus(_ id: DownloadID, _ status: ServiceDownload.Status) {
        let position = entries[id]!.position
        entries[id]!.status = status
        if status == .waiting { ready.insert(id, at: position) } else { ready.remove(at: position) }
    }

    /// Takes a download out of the queue (it keeps its status and position).
    mutating func unqueue(_ id: DownloadID) {
        let position = entries[id]!.position
        queued.remove(at: position)
        ready.remove(at: position)
    }

    /// Indexes a download at its position in the queue.
    mutating func place(_ id: DownloadID) {
        let entry = entries[id]!
        queued.insert(id, at: entry.position)
        if entry.status == .waiting { ready.insert(id, at: entry.position) }
    }

    /// Puts `id` into the queue at `index`, with a position between its neighbours' (the whole
    /// queue is renumbered when there is no room between them). A download put at the back is
    /// placed after every download added before it, running ones included, so that the active
    /// downloads a store restores keep the order they were added in.
    mutating func insertWaiting(_ id: DownloadID, at index: Int) -> [Effect] {
        let before = queued.element(at: index - 1)?.position
        let after = queued.element(at: index)?.position
        let position: Double
        switch (before, after) {
        case (nil, nil): position = tailPosition
        case (let low?, nil): position = max(low + 1024, tailPosition).rounded(.down)
        case (nil, let high?): position = (high - 1024).rounded(.down)
        case (let low?, let high?): position = low + (high - low) / 2
        }
        if let before, position <= before { return renumber(inserting: id, at: index) }
        if let after, position >= after { return renumber(inserting: id, at: index) }
        entries[id]!.position = position
        tailPosition = max(tailPosition, position + 1024)
        place(id)
        return [.save(id)]
    }

    /// Gives the queue, with `id` inserted at `index`, positions 1024 apart.
    private mutating func renumber(inserting id: DownloadID, at index: Int) -> [Effect] {
        var order = waiting
        order.insert(id, at: index)
        renumber(order)
        return order.map { .save($0) }
    }

    /// Makes `order` the queue, with positions 1024 apart.
    mutating func renumber(_ order: [DownloadID]) {
        queued = RankedList()
        ready = RankedList()
        for (index, id) in order.enumerated() {
            entries[id]!.position = Double(index) * 1024
            place(id)
        }
        tailPosition = max(tailPosition, Double(order.count) * 1024)
    }
}
