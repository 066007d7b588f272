#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulCore

/// Counts and speed over a whole ``DownloadService``.
public struct ServiceStatistics: Sendable, Equatable {
    /// Active downloads.
    public var active: Int
    /// Downloads in the queue (waiting and paused).
    public var waiting: Int
    /// Results in the list.
    public var stopped: Int
    /// Results ever made since the service started, including the ones forgotten since.
    public var stoppedTotal: Int
    /// The sum of the active downloads' speeds, in bytes per second.
    public var bytesPerSecond: Double
}

extension DownloadService {
    /// The download with this identifier as it is now, or `nil` (a result kept only in the
    /// state file is read from it).
    public func download(_ id: DownloadID) -> ServiceDownload? {
        let (found, stored) = state.withLock { state in
            (state.queue.entries[id].map { snapshot($0, runs: state.runs) }, state.queue.isStored(id))
        }
        guard stored else { return found }
        return storedResults([id])[id]
    }

    /// Each connection's segment of the download's transfer over ranges, by connection; empty
    /// unless it is active with ranges in flight.
    package func segmentsInFlight(_ id: DownloadID) -> [SegmentInFlight] {
        let run = state.withLock { $0.runs[id]?.download }
        return run?.segmentsInFlight ?? []
    }

    /// The servers of the download's running transfer over ranges (its URLs and the mirrors its
    /// server named), in use or set aside; empty unless it is active with ranges in flight.
    package func sourcesInUse(_ id: DownloadID) -> [SourceInUse] {
        let run = state.withLock { $0.runs[id]?.download }
        return run?.sourcesInUse ?? []
    }

    /// The active downloads, in the order they started.
    public func activeDownloads() -> [ServiceDownload] {
        state.withLock { state in state.queue.active.compactMap { state.queue.entries[$0].map { snapshot($0, runs: state.runs) } } }
    }

    /// A slice of the queue (waiting and paused downloads, front first).
    ///
    /// - Parameter pick: given the queue's length, the places wanted (clamped to the queue).
    public func waitingDownloads(_ pick: (Int) -> Range<Int>) -> [ServiceDownload] {
        state.withLock { state in
            state.queue.waiting(at: pick(state.queue.queued.count)).compactMap { id in
                state.queue.entries[id].map { snapshot($0, runs: state.runs) }
            }
        }
    }

    /// A slice of the results, oldest first (the older ones are read from the state file).
    ///
    /// - Parameter pick: given the number of results, the places wanted (clamped).
    public func stoppedDownloads(_ pick: (Int) -> Range<Int>) -> [ServiceDownload] {
        let (ids, resident) = state.withLock { state -> ([DownloadID], [DownloadID: ServiceDownload]) in
            let ids = state.queue.stopped(at: pick(state.queue.results.count))
            var resident: [DownloadID: ServiceDownload] = [:]
            for id in ids {
                if let entry = state.queue.entries[id] { resident[id] = snapshot(entry, runs: state.runs) }
            }
            return (ids, resident)
        }
        let stored = storedResults(ids.filter { resident[$0] == nil })
        return ids.compactMap { resident[$0] ?? stored[$0] }
    }

    /// Results read from the state file (after every change so far is committed); those no
    /// longer there, or all of them when it cannot be read, are left out.
    func storedResults(_ ids: [DownloadID]) -> [DownloadID: ServiceDownload] {
        guard !ids.isEmpty, let rows = try? writer.read({ store throws(ServiceError) in try store.rows(ids) }) else { return [:] }
        return rows.mapValues { snapshot($0.entry, runs: [:]) }
    }

    /// The identifiers whose hexadecimal form begins with `prefix`, at most `limit` of them.
    public func identifiers(withPrefix prefix: String, limit: Int = 2) -> [DownloadID] {
        if let id = DownloadID(hex: prefix) {
            return state.withLock { $0.queue.contains(id) } ? [id] : []
        }
        return state.withLock { state in
            var found: [DownloadID] = []
            for id in state.queue.entries.keys where id.hasHexPrefix(prefix) {
                found.append(id)
                if found.count >= limit { return found }
            }
            for id in state.queue.storedResults.keys where id.hasHexPrefix(prefix) {
                found.append(id)
                if found.count >= limit { return found }
            }
            return found
        }
    }

    /// Counts and overall speed.
    public var statistics: ServiceStatistics {
        state.withLock { state in
            let speed = state.queue.active.reduce(0.0) { $0 + (state.queue.entries[$1]?.bytesPerSecond ?? 0) }
            return ServiceStatistics(active: state.queue.active.count, waiting: state.queue.queued.count,
                                     stopped: state.queue.results.count, stoppedTotal: state.queue.stoppedTotal,
                                     bytesPerSecond: speed)
        }
    }

    /// Downloads active at once.
    public var maximumActiveDownloads: Int {
        state.withLock { $0.queue.maximumActive }
    }

    /// The overall speed cap in bytes per second, `nil` for none.
    public var rateLimit: Int64? {
        downloader.rateLimit
    }

    /// The folder every download lands in or below.
    public var rootPath: String { root.path }

    /// An entry as the public snapshot.
    func snapshot(_ entry: ServiceQueue.Entry, runs: [DownloadID: ActiveRun]) -> ServiceDownload {
        let ranges = entry.completedRanges ?? (entry.completedBytes > 0 ? [0..<entry.completedBytes] : [])
        return ServiceDownload(id: entry.id, urls: entry.urls, options: entry.options, status: entry.status,
                               directoryPath: root.absolute(entry.options.directory),
                               filePath: entry.file ?? entry.options.fileName.map { root.absolute(entry.options.directory) + "/" + $0 },
                               totalBytes: entry.totalBytes, completedBytes: entry.completedBytes, completedRanges: ranges,
                               bytesPerSecond: entry.status == .active ? entry.bytesPerSecond : 0,
                               connections: entry.status == .active ? max(1, entry.connections) : 0, failure: entry.failure)
    }
}

// MARK: - Events

extension DownloadService {
    /// Calls `observer` for every event from now on, in order, never twice at once, on a thread
    /// of the service's: a caller's or the engine's (keep it short; hand work to your own queue).
    ///
    /// - Returns: a token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(_ observer: @escaping @Sendable (ServiceEvent) -> Void) -> Int {
        hub.addObserver(observer)
    }

    /// Stops calling an observer.
    public func removeObserver(_ token: Int) {
        hub.removeObserver(token)
    }

    /// The service-wide events from now on, as an `AsyncStream` (unbounded: events are changes
    /// of state, not progress).
    public func events() -> AsyncStream<ServiceEvent> {
        let (stream, continuation) = AsyncStream<ServiceEvent>.makeStream()
        let token = hub.addObserver { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in self?.hub.removeObserver(token) }
        return stream
    }

    /// One download's snapshots (the current one first, then one per change, progress at most
    /// about ten a second), until it is a result (the last snapshot) or forgotten; empty when
    /// there is no such download.
    public func snapshots(of id: DownloadID) -> AsyncStream<ServiceDownload> {
        guard let current = download(id) else { return AsyncStream { $0.finish() } }
        return hub.follow(id, current: current, onEnd: {})
    }

    /// Gives the streams that follow `id` its snapshot as it is now.
    func publishSnapshot(_ id: DownloadID) {
        hub.publish(id, download(id))
    }
}
