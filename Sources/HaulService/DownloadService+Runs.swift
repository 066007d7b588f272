#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Haul
import HaulCore

// MARK: - Applying the queue's effects

extension DownloadService {
    /// What is left to do once the lock is released.
    struct Work {
        var observe: [(DownloadID, Int, Download)] = []
        var cancel: [Download] = []
        var failedStarts: [(DownloadID, Int, ServiceFailure)] = []
        var changed: [DownloadID] = []
    }

    /// Runs `body` on the queue under the lock, submits the rows it changed to the state file
    /// and queues its events (both under the lock, so in the order of the changes), then tells
    /// the engine and delivers the events after the lock.
    func perform<Value: Sendable>(
        _ body: (inout ServiceQueue) throws(ServiceError) -> (Value, [ServiceQueue.Effect])
    ) throws(ServiceError) -> Acknowledged<Value> {
        let (value, work, ticket) = try state.withLock { state throws(ServiceError) -> (Value, Work, UInt64?) in
            guard !state.closed else { throw ServiceError(.closed, "the download service is shut down") }
            let (value, effects) = try body(&state.queue)
            let (work, ticket) = prepare(effects, state: &state)
            return (value, work, ticket)
        }
        carryOut(work)
        return Acknowledged(value: value, ticket: ticket)
    }

    /// Turns effects into store changes and events (now) and engine work (for later). A run
    /// is created here, under the lock, so that a stop decided right after it finds it.
    private func prepare(_ effects: [ServiceQueue.Effect], state: inout State) -> (Work, UInt64?) {
        var work = Work()
        var changes: [ServiceStore.Change] = []
        var events: [ServiceEvent] = []
        for effect in effects {
            switch effect {
            case .save(let id):
                if let entry = state.queue.entries[id] { changes.append(.save(StoreRow(entry))) }
                work.changed.append(id)
            case .delete(let id):
                changes.append(.delete(id))
            case .event(let event):
                events.append(event)
                work.changed.append(event.id)
            case .start(let id, let generation):
                guard let entry = state.queue.entries[id] else { continue }
                do throws(ServiceError) {
                    let (request, destination) = try runPlan(entry)
                    let download = downloader.download(request, to: destination)
                    state.runs[id] = ActiveRun(generation: generation, download: download)
                    work.observe.append((id, generation, download))
                } catch {
                    work.failedStarts.append((id, generation, Self.failure(startingWith: error)))
                }
            case .stop(let id, let generation):
                if let run = state.runs[id], run.generation == generation { work.cancel.append(run.download) }
            }
        }
        hub.enqueue(events)
        return (work, changes.isEmpty ? nil : writer.submit(changes))
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
        for download in work.cancel { download.cancel() }
        for (id, generation, download) in work.observe { observe(download, id: id, generation: generation) }
        hub.deliver()
        for id in work.changed where hub.isFollowed(id) { publishSnapshot(id) }
        for (id, generation, failure) in work.failedStarts {
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
        runEnded.withLock { runEnded.broadcast() }
    }
}

// MARK: - Requests for the engine

extension DownloadService {
    /// A new entry for `request`, its options checked (the identifier is filled in later).
    func newEntry(_ request: ServiceRequest) throws(ServiceError) -> ServiceQueue.Entry {
        guard let first = request.urls.first else { throw ServiceError(.invalidArgument, "URI is not provided.") }
        for url in request.urls {
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  parsed.host?.isEmpty == false, !url.contains(where: { $0 == "\n" || $0 == "\r" }) else {
                throw ServiceError(.invalidArgument, "No URI to download: '\(first.prefix(200))' is not an http(s) URL")
            }
        }
        let options = try checkOptions(request.options)
        return ServiceQueue.Entry(id: request.id ?? DownloadID(rawValue: 1)!, urls: request.urls, options: options,
                                  status: request.paused ? .paused : .waiting, position: 0)
    }

    /// The options with their folder in canonical form, or why they are refused.
    func checkOptions(_ options: ServiceDownloadOptions) throws(ServiceError) -> ServiceDownloadOptions {
        var checked = options
        checked.directory = try root.relativeFolder(options.directory)
        if let name = options.fileName { try root.checkFileName(name) }
        if let connections = options.connections, !(1...16).contains(connections) {
            throw ServiceError(.invalidArgument, "connections must be 1 to 16, not \(connections)")
        }
        if let rate = options.rateLimit, rate < 1 {
            throw ServiceError(.invalidArgument, "a rate limit must be at least 1 byte per second")
        }
        for header in options.headers {
            let token = header.name.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "!#$%&'*+-.^_`|~".unicodeScalars.contains($0))
            }
            guard token, !header.name.isEmpty,
                  header.value.unicodeScalars.allSatisfy({ $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) }) else {
                throw ServiceError(.invalidArgument, "invalid header '\(header.name)'")
            }
        }
        return checked
    }

    /// The engine's request and destination for a run of `entry` (the folder checked again: a
    /// link may have appeared since it was added).
    func runPlan(_ entry: ServiceQueue.Entry) throws(ServiceError) -> (DownloadRequest, Destination) {
        guard let url = entry.urls.first.flatMap(URL.init(string:)) else {
            throw ServiceError(.invalidArgument, "the download has no usable URL")
        }
        try root.checkNoLinks(entry.options.directory, shown: entry.options.directory)
        let folder = root.absolute(entry.options.directory)
        var request = DownloadRequest(url: url, headers: entry.options.headers.map { ($0.name, $0.value) },
                                      conflictPolicy: entry.options.overwrite ? .overwrite : .rename, key: entry.id.hex,
                                      checksum: entry.options.checksum)
        request.connections = entry.options.connections
        request.rateLimit = entry.options.rateLimit
        if let file = entry.file {
            return (request, .file(URL(fileURLWithPath: file)))
        }
        request.startOver = !entry.options.continues
        guard let name = entry.options.fileName else {
            return (request, .directory(URL(fileURLWithPath: folder, isDirectory: true)))
        }
        let path = folder + "/" + name
        var info = stat()
        if !entry.options.overwrite, lstat(path, &info) == 0 {
            throw ServiceError(.invalidState, "the file \(path) exists (allow-overwrite is false)")
        }
        return (request, .file(URL(fileURLWithPath: path)))
    }
}
