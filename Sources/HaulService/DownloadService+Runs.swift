#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulCore

// MARK: - Applying the queue's effects

extension DownloadService {
    /// What is left to do once the lock is released: the engine's runs to start and stop, in
    /// the order the queue decided them, and the downloads whose snapshots may have changed.
    struct Work {
        var runs: [RunAction] = []
        var changed: [DownloadID] = []
    }

    /// One thing the engine is told.
    enum RunAction {
        /// Start a run of the download as its entry was when the queue decided it.
        case start(DownloadID, generation: Int, ServiceQueue.Entry)
        /// Stop that run.
        case stop(DownloadID, generation: Int)
    }

    /// Runs `body` on the queue under the lock, submits the rows it changed to the state file
    /// and queues its events (both under the lock, so in the order of the changes), then hands
    /// what the engine must be told to the service's thread (``carryOutQueuedWork()``).
    func perform<Value: Sendable>(
        _ body: (inout ServiceQueue) throws(ServiceError) -> (Value, [ServiceQueue.Effect])
    ) throws(ServiceError) -> Acknowledged<Value> {
        let (value, ticket, carry) = try state.withLock { state throws(ServiceError) -> (Value, UInt64?, Bool) in
            guard !state.closed else { throw ServiceError(.closed, "the download service is shut down") }
            let (value, effects) = try body(&state.queue)
            let (work, ticket) = prepare(effects, state: &state)
            return (value, ticket, state.work.append(work))
        }
        if carry { handOverQueuedWork() }
        return Acknowledged(value: value, ticket: ticket)
    }

    /// Carries out the queued work on the service's own thread, so that neither a caller nor an
    /// engine thread waits for a run's file system checks or the engine's start; on the caller
    /// when the system gives no thread.
    private func handOverQueuedWork() {
        do throws(ResourceError) {
            try runner.run(name: "haul-service") { [self] in carryOutQueuedWork() }
        } catch {
            carryOutQueuedWork()
        }
    }

    /// Carries out the queued work, in the order it was queued, until none is left; one thread
    /// at a time runs this.
    ///
    /// Work that carrying out makes (a run that failed before it was observed reports its end
    /// at once, and its end starts the next run) is queued behind and done by the same loop,
    /// so a chain of any length of downloads that fail at once runs in constant stack.
    private func carryOutQueuedWork() {
        DrainQueue.drain(take: { batch in state.withLock { $0.work.take(into: &batch) } }, run: { $0.forEach(carryOut) })
        state.broadcast()   // a shutdown waits for the work as for the runs
    }

    /// Queues a change's store rows and events (under the lock, so in the order of the changes)
    /// and returns the engine's work for later, outside the lock.
    ///
    /// The rows are only queued here (the writer commits them on its own thread); their ticket
    /// is taken under the lock because a row queued after a newer one of the same download would
    /// win. The work is carried out in the order it was queued, so a stop decided after a start
    /// finds the run that start made.
    private func prepare(_ effects: [ServiceQueue.Effect], state: inout State) -> (Work, UInt64?) {
        let plan = Self.plan(effects, entries: state.queue.entries)
        for change in plan.changes {
            switch change {
            case .save(let row): state.search.set(row.id, status: row.status, urls: row.urls, file: row.file, fileName: row.options.fileName)
            case .status(let id, let status): state.search.setStatus(id, status)
            case .delete(let id): state.search.remove(id)
            }
        }
        hub.enqueue(plan.events)
        return (plan.work, plan.changes.isEmpty ? nil : writer.submit(plan.changes))
    }

    /// What a change's effects come to: the rows for the state file, the events, and the work
    /// for after the lock.
    struct Plan {
        var work = Work()
        var changes: [StoreChange] = []
        var events: [ServiceEvent] = []
    }

    /// Turns a change's effects into a ``Plan``, given the entries as the change left them.
    ///
    /// A pure function (no lock, no I/O), tested without a service. A start carries its entry as
    /// it is now, so that the run's plan, made after the lock is released, needs no lock; a
    /// start or a row of a download no longer in memory is dropped.
    static func plan(_ effects: [ServiceQueue.Effect], entries: [DownloadID: ServiceQueue.Entry]) -> Plan {
        var plan = Plan()
        for effect in effects {
            switch effect {
            case .save(let id):
                if let entry = entries[id] { plan.changes.append(.save(StoreRow(entry))) }
                plan.work.changed.append(id)
            case .saveStatus(let id):
                if let entry = entries[id] { plan.changes.append(.status(id, entry.status)) }
                plan.work.changed.append(id)
            case .delete(let id):
                plan.changes.append(.delete(id))
            case .event(let event):
                plan.events.append(event)
                plan.work.changed.append(event.id)
            case .start(let id, let generation):
                if let entry = entries[id] { plan.work.runs.append(.start(id, generation: generation, entry)) }
            case .stop(let id, let generation):
                plan.work.runs.append(.stop(id, generation: generation))
            }
        }
        return plan
    }

    /// How a run that could not start fails: an unsafe folder is a local file error (exit 3),
    /// a name that exists a conflict (exit 10), anything else a usage error (exit 2).
    static func failure(startingWith error: ServiceError) -> ServiceFailure {
        switch error.code {
        case .unsafePath: ServiceFailure(code: "unsafePath", exitStatus: 3, message: error.message)
        case .invalidState: ServiceFailure(code: "destinationExists", exitStatus: 10, message: error.message)
        default: ServiceFailure(code: "invalidArgument", exitStatus: 2, message: error.message)
        }
    }

    private func carryOut(_ work: Work) {
        for action in work.runs {
            switch action {
            case .start(let id, let generation, let entry): startRun(id, generation: generation, entry)
            case .stop(let id, let generation):
                let run = state.withLock { $0.runs[id] }
                if let run, run.generation == generation { run.download.cancel() }
            }
        }
        hub.deliver()
        for id in hub.followed(among: work.changed) { publishSnapshot(id) }
    }

    /// Plans a run (its folder checked again: a link may have appeared since it was added),
    /// hands it to the engine and follows it; a run that cannot start ends as a failure.
    private func startRun(_ id: DownloadID, generation: Int, _ entry: ServiceQueue.Entry) {
        do throws(ServiceError) {
            let (request, destination) = try runPlan(entry)
            let download = downloader.download(request, to: destination)
            state.withLock { $0.runs[id] = ActiveRun(generation: generation, download: download) }
            observe(download, id: id, generation: generation)
        } catch {
            let failure = Self.failure(startingWith: error)
            _ = try? perform { queue in ((), queue.runEnded(id, generation: generation, outcome: .failed(failure), ranges: nil)) }
        }
    }

    /// Follows one run's events and its end.
    private func observe(_ download: Download, id: DownloadID, generation: Int) {
        download.observe(onEvent: { [weak self, weak download] event in
            guard let download else { return }
            self?.engineReported(event, id: id, generation: generation, download: download)
        }, completion: { [weak self, weak download] result in
            self?.runEnded(result, id: id, generation: generation, ranges: download?.completedRanges)
        })
    }

    private func engineReported(_ event: DownloadEvent, id: DownloadID, generation: Int, download: Download) {
        switch event {
        case .started(let start):
            _ = try? perform { queue in
                ((), queue.runStarted(id, generation: generation, file: start.fileURL.path, totalBytes: start.totalBytes,
                                      resumedFrom: start.resumedFrom, connections: start.connections))
            }
        case .progress(let progress):
            let ranges = download.completedRanges
            state.withLock { state in
                state.queue.progressed(id, generation: generation, completedBytes: progress.completedBytes,
                                       totalBytes: progress.totalBytes, bytesPerSecond: progress.bytesPerSecond, ranges: ranges)
            }
            if hub.isFollowed(id) { publishSnapshot(id) }
        case .startingOver:
            state.withLock { $0.queue.startedOver(id, generation: generation) }
        default:
            break
        }
    }

    private func runEnded(_ result: Result<DownloadResult, DownloadError>, id: DownloadID, generation: Int,
                          ranges: [Range<Int64>]?) {
        let outcome: ServiceQueue.Outcome
        switch result {
        case .success(let done): outcome = .finished(file: done.fileURL.path, bytes: done.byteCount)
        case .failure(let error) where error.code == .cancelled: outcome = .cancelled
        case .failure(let error): outcome = .failed(ServiceFailure(error))
        }
        state.withLock { state in
            if state.runs[id]?.generation == generation { state.runs[id] = nil }
        }
        _ = try? perform { queue in ((), queue.runEnded(id, generation: generation, outcome: outcome, ranges: ranges)) }
        // The last run ended and none started: an idle service keeps no connection open.
        if state.withLock({ $0.runs.isEmpty }) { downloader.closeIdleConnections() }
        state.broadcast()
    }
}
