#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulCore

/// A download service whose list outlives its process: a ``Downloader`` plus a state store (an
/// SQLite file, or a PostgreSQL database).
///
/// Each download has an identifier (``DownloadID``) and a status (``ServiceDownload/Status``):
/// active, waiting or paused in the queue, then complete, failed or removed until its result is
/// forgotten. Add, pause, resume, remove, reorder and change options; follow the service-wide
/// events (``events()``, ``addObserver(_:)``) or one download's snapshots (``snapshots(of:)``,
/// plain ``ServiceDownload`` values; the `HaulModel` module mirrors them in a `DownloadModel`).
///
/// A change returns once it is durable in the state file: a download added and acknowledged
/// is in the list after a `kill -9` or a power loss. The next service made on the same file
/// restores the list: active downloads continue from their partial files, paused ones stay
/// paused, results stay until removed. Progress is not written to the state file (the partial
/// files' resume records hold the bytes), so a transfer costs it nothing.
///
/// Operations never wait for a transfer's network or disk I/O, nor for another caller's file
/// system checks: a change is decided under one lock in memory (``ServiceQueue``, a pure value,
/// returns what is to be done), and what it comes to is done after the lock is released, in the
/// order decided, on the service's own thread: a run's plan (its folder's components and its
/// file looked up), the engine's start and stop, the snapshots. The engine's threads report
/// back the same way.
public final class DownloadService: Sendable {
    /// Where a service keeps its downloads and its list, and how it runs them.
    public struct Configuration: Sendable {
        /// The folder every download lands in or below; created if missing.
        public var root: URL
        /// Where the list is kept.
        public var state: StateLocation
        /// The engine's settings: its `rateLimit` is the overall cap to start with and its
        /// `connectionsPerDownload` the default of downloads without their own.
        public var downloader: Downloader.Configuration
        /// Downloads active at once to start with, 1 to ``DownloadService/activeDownloadsLimit``.
        public var maximumActiveDownloads: Int
        /// The most results (complete, failed, removed) held in memory: the newest ones. Older
        /// results stay in the state file until removed, and are read from it when asked for.
        public var residentResults = 1_000
        /// Asked right before a download's file gets its name (see ``DownloadRequest/commitGate``):
        /// a fleet's node checks its claim there.
        package var commitGate: (@Sendable (DownloadID) -> Bool)?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - root: the download folder.
        ///   - stateFile: the SQLite file.
        ///   - downloader: the engine's settings (`maximumActiveDownloads` is taken from it).
        public init(root: URL, stateFile: URL, downloader: Downloader.Configuration = .init()) {
            self.init(root: root, state: .file(stateFile), downloader: downloader)
        }

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - root: the download folder.
        ///   - state: where the list is kept.
        ///   - downloader: the engine's settings (`maximumActiveDownloads` is taken from it).
        public init(root: URL, state: StateLocation, downloader: Downloader.Configuration = .init()) {
            self.root = root
            self.state = state
            self.downloader = downloader
            self.maximumActiveDownloads = downloader.maximumActiveDownloads
        }
    }

    /// Where a service keeps its list.
    public enum StateLocation: Sendable, Equatable {
        /// An SQLite state file; created if missing (mode 0600).
        case file(URL)
        /// A PostgreSQL database (libpq is loaded when the service starts).
        case postgreSQL(PostgresSettings)
        /// Nowhere: the list ends with the service.
        case memory

        /// The file, or the server without its secrets, for messages.
        public var description: String {
            switch self {
            case .file(let url): url.path
            case .postgreSQL(let settings): "PostgreSQL (\(settings.redacted))"
            case .memory: "memory"
            }
        }

        func open() throws(ServiceError) -> any StateStore {
            switch self {
            case .file(let url): try SQLiteStore(path: url.path)
            case .postgreSQL(let settings): try PostgresStore(settings)
            case .memory: MemoryStore()
            }
        }
    }

    /// The most downloads a service runs at once.
    public static let activeDownloadsLimit = 1024

    /// The configuration the service was made with.
    public let configuration: Configuration
    /// The engine.
    let downloader: Downloader
    let root: DownloadRoot
    let writer: StoreWriter
    let hub = ServiceEventHub()
    /// The state; broadcast when a run ends and when the queued work is all done
    /// (``shutDown(timeout:)`` waits for both).
    let state: ConditionLock<State>
    /// The thread that carries out the queued work (it exits when idle).
    let runner: ThreadPool

    /// The service's mutable state, under one lock.
    struct State {
        var queue: ServiceQueue
        /// What a filter searches: every download of the list, the results only in the store
        /// among them (see ``SearchIndex``).
        var search = SearchIndex()
        /// The engine's current download of each download with a run.
        var runs: [DownloadID: ActiveRun] = [:]
        var closed = false
        /// What the engine is still to be told, in the order of the changes that made it, and
        /// whether a thread is carrying it out (the others leave theirs to it).
        var work = DrainQueue<Work>()
    }

    /// One run of the engine.
    struct ActiveRun {
        let generation: Int
        let download: Download
    }

    /// Opens (or creates) the state file, restores its list and starts what should run.
    ///
    /// - Parameter configuration: the root, the state file and the engine's settings.
    /// - Throws: `store` when the state file cannot be opened or read, or gets no writer thread;
    ///   `unsafePath` when the root cannot be made.
    public convenience init(configuration: Configuration) throws(ServiceError) {
        try self.init(configuration: configuration, fileSystem: SystemFileSystem())
    }

    /// Opens (or creates) the state file, restores its list and starts what should run, looking
    /// at the folders and files below the root through `fileSystem`.
    ///
    /// - Parameters:
    ///   - configuration: the root, the state file and the engine's settings.
    ///   - fileSystem: what checks a download's folder and file before it is added or started
    ///     (tests hold it as a slow mount would; see ``SystemFileSystem``).
    ///   - threadStarter: starts the thread that carries out the queued work (tests make it
    ///     fail: the work is then carried out by the caller).
    /// - Throws: `store` when the state file cannot be opened or read, or gets no writer thread;
    ///   `unsafePath` when the root cannot be made.
    package init(configuration: Configuration, fileSystem: any ServiceFileSystem,
                 threadStarter: @escaping ThreadPool.Starter = ThreadPool.systemStarter) throws(ServiceError) {
        self.configuration = configuration
        runner = ThreadPool(maximumThreads: 1, starter: threadStarter)
        root = DownloadRoot(configuration.root, fileSystem: fileSystem)
        do {
            try FileManager.default.createDirectory(atPath: root.path, withIntermediateDirectories: true)
        } catch {
            throw ServiceError(.unsafePath, "cannot make the download folder \(root.path): \(error)")
        }
        var engine = configuration.downloader
        engine.maximumActiveDownloads = Self.activeDownloadsLimit   // the service keeps its own queue
        downloader = Downloader(configuration: engine)
        let store = try configuration.state.open()
        let (rows, stored) = try store.load(residentResults: configuration.residentResults)
        writer = try StoreWriter(store: store)
        let maximum = min(max(1, configuration.maximumActiveDownloads), Self.activeDownloadsLimit)
        let queue = ServiceQueue(restoring: rows.map(\.entry), stored: stored, maximumActive: maximum,
                                 residentResults: configuration.residentResults)
        var search = SearchIndex()
        // The results left to the store are read once, for the index only.
        for row in rows + (stored.isEmpty ? [] : try store.resultRows()) {
            search.set(row.id, status: row.status, urls: row.urls, file: row.file, fileName: row.options.fileName)
        }
        state = ConditionLock(State(queue: queue, search: search))
        _ = try? perform { queue in ((), queue.takeRestoredChanges() + queue.fillSlots()) }
    }

    /// A change the service made in memory, and the commit that makes it durable.
    package struct Acknowledged<Value>: Sendable where Value: Sendable {
        /// What the change returned.
        package let value: Value
        /// The state file commit it waits for; `nil` when nothing was written.
        package let ticket: UInt64?
    }

    /// Blocks until the commit of `ticket` (and every one before) is durable.
    ///
    /// - Throws: `store` when the commit failed, `closed` when the service shut down first.
    package func waitUntilDurable(_ ticket: UInt64?) throws(ServiceError) {
        guard let ticket else { return }
        try writer.waitUntilCommitted(ticket)
    }

    private func durable<Value>(_ change: Acknowledged<Value>) throws(ServiceError) -> Value {
        try waitUntilDurable(change.ticket)
        return change.value
    }
}

// MARK: - Changes

extension DownloadService {
    /// Adds a download to the queue (running it at once when a slot is free).
    ///
    /// - Parameter request: the URLs, options, place in the queue and identifier.
    /// - Returns: its identifier, once the addition is durable.
    /// - Throws: `invalidArgument` for no URL or a URL that is not `http(s)`, a bad header or
    ///   limit; `unsafePath` for a folder or name outside the root; `idInUse` for an identifier
    ///   taken; `store` when the state file cannot be written.
    public func add(_ request: ServiceRequest) throws(ServiceError) -> DownloadID {
        try durable(enqueueAdd(request))
    }

    /// ``add(_:)`` without waiting for the state file.
    package func enqueueAdd(_ request: ServiceRequest) throws(ServiceError) -> Acknowledged<DownloadID> {
        let entry = try newEntry(request)
        return try perform { queue throws(ServiceError) in
            if let id = request.id, queue.contains(id) {
                throw ServiceError(.idInUse, "GID \(id.hex) is in use")
            }
            var entry = entry
            if request.id == nil { entry.id = DownloadID.random { queue.contains($0) } }
            return (entry.id, queue.add(entry, at: request.position))
        }
    }

    /// Pauses an active or waiting download (an active one stops and goes to the front of the queue).
    ///
    /// - Throws: `notFound`; `invalidState` for a paused download or a result.
    public func pause(_ id: DownloadID) throws(ServiceError) {
        try durable(enqueuePause(id))
    }

    /// ``pause(_:)`` without waiting for the state file.
    package func enqueuePause(_ id: DownloadID) throws(ServiceError) -> Acknowledged<Void> {
        try perform { queue throws(ServiceError) in ((), try queue.pause(try Self.known(id, queue))) }
    }

    /// Pauses every active and waiting download.
    public func pauseAll() throws(ServiceError) {
        try durable(enqueuePauseAll())
    }

    /// ``pauseAll()`` without waiting for the state file.
    package func enqueuePauseAll() throws(ServiceError) -> Acknowledged<Void> {
        try perform { queue in ((), queue.pauseAll()) }
    }

    /// Puts a paused download back in the queue, where it was.
    ///
    /// - Throws: `notFound`; `invalidState` unless it is paused.
    public func resume(_ id: DownloadID) throws(ServiceError) {
        try durable(enqueueResume(id))
    }

    /// ``resume(_:)`` without waiting for the state file.
    package func enqueueResume(_ id: DownloadID) throws(ServiceError) -> Acknowledged<Void> {
        try perform { queue throws(ServiceError) in ((), try queue.unpause(try Self.known(id, queue))) }
    }

    /// Puts every paused download back in the queue.
    public func resumeAll() throws(ServiceError) {
        try durable(enqueueResumeAll())
    }

    /// ``resumeAll()`` without waiting for the state file.
    package func enqueueResumeAll() throws(ServiceError) -> Acknowledged<Void> {
        try perform { queue in ((), queue.unpauseAll()) }
    }

    /// Removes an active, waiting or paused download: it stops (its partial file stays) and
    /// becomes a result with status `removed`.
    ///
    /// - Throws: `notFound`; `invalidState` for a result.
    public func remove(_ id: DownloadID) throws(ServiceError) {
        try durable(enqueueRemove(id))
    }

    /// ``remove(_:)`` without waiting for the state file.
    package func enqueueRemove(_ id: DownloadID) throws(ServiceError) -> Acknowledged<Void> {
        try perform { queue throws(ServiceError) in ((), try queue.remove(try Self.known(id, queue))) }
    }

    /// Forgets a result (complete, failed or removed).
    ///
    /// - Throws: `notFound`; `invalidState` unless the download is a result.
    public func forgetResult(_ id: DownloadID) throws(ServiceError) {
        try durable(enqueueForgetResult(id))
    }

    /// ``forgetResult(_:)`` without waiting for the state file.
    package func enqueueForgetResult(_ id: DownloadID) throws(ServiceError) -> Acknowledged<Void> {
        try perform { queue throws(ServiceError) in ((), try queue.forget(try Self.known(id, queue))) }
    }

    /// Forgets every result.
    public func forgetResults() throws(ServiceError) {
        try durable(enqueueForgetResults())
    }

    /// ``forgetResults()`` without waiting for the state file.
    package func enqueueForgetResults() throws(ServiceError) -> Acknowledged<Void> {
        try perform { queue in ((), queue.forgetAll()) }
    }

    /// Where ``move(_:by:from:)`` counts from.
    public enum QueueOrigin: Sendable {
        /// The front of the queue.
        case front
        /// The download's place now.
        case current
        /// The back of the queue (its last place is offset 0).
        case back
    }

    /// Moves a download of the queue (waiting or paused) by `offset` places from `origin`,
    /// clamped to the queue.
    ///
    /// - Returns: its new place (0 is the front).
    /// - Throws: `notFound` when it is not in the queue.
    public func move(_ id: DownloadID, by offset: Int, from origin: QueueOrigin) throws(ServiceError) -> Int {
        try durable(enqueueMove(id, by: offset, from: origin))
    }

    /// ``move(_:by:from:)`` without waiting for the state file.
    package func enqueueMove(_ id: DownloadID, by offset: Int, from origin: QueueOrigin) throws(ServiceError) -> Acknowledged<Int> {
        let mapped: ServiceQueue.Origin = switch origin {
        case .front: .front
        case .current: .current
        case .back: .back
        }
        return try perform { queue throws(ServiceError) in try queue.move(id, by: offset, from: mapped) }
    }

    /// Replaces a queued download's options (an active one's transfer restarts to take them,
    /// continuing from its partial file; its folder and name stay those it started with).
    ///
    /// - Throws: `notFound`; `invalidState` for a result; `invalidArgument` or `unsafePath` for
    ///   a bad option.
    public func changeOptions(_ id: DownloadID, to options: ServiceDownloadOptions) throws(ServiceError) {
        try durable(enqueueChangeOptions(id, to: options))
    }

    /// ``changeOptions(_:to:)`` without waiting for the state file.
    package func enqueueChangeOptions(_ id: DownloadID, to options: ServiceDownloadOptions) throws(ServiceError)
        -> Acknowledged<Void> {
        let checked = try checkOptions(options)
        return try perform { queue throws(ServiceError) in
            let entry = try Self.entry(id, queue)
            var applied = checked
            if entry.status == .active || entry.file != nil {
                applied.directory = entry.options.directory   // a file that has its place keeps it
                applied.fileName = entry.options.fileName
            }
            return ((), try queue.change(id, options: applied))
        }
    }

    /// Replaces a queued download's URLs (the first is the one downloaded; an active download
    /// whose first URL changes restarts its transfer from its partial file).
    ///
    /// - Throws: `notFound`; `invalidState` for a result; `invalidArgument` for no URL or one
    ///   that is not `http(s)`.
    public func changeURLs(_ id: DownloadID, to urls: [String]) throws(ServiceError) {
        try durable(enqueueChangeURLs(id, to: urls))
    }

    /// ``changeURLs(_:to:)`` without waiting for the state file.
    package func enqueueChangeURLs(_ id: DownloadID, to urls: [String]) throws(ServiceError) -> Acknowledged<Void> {
        _ = try newEntry(ServiceRequest(urls: urls))   // checks the URLs
        return try perform { queue throws(ServiceError) in ((), try queue.changeURLs(try Self.known(id, queue), to: urls)) }
    }

    /// Changes how many downloads run at once (1 to ``activeDownloadsLimit``).
    public func setMaximumActiveDownloads(_ count: Int) throws(ServiceError) {
        _ = try perform { queue in ((), queue.setMaximumActive(min(max(1, count), Self.activeDownloadsLimit))) }
    }

    /// Changes the overall speed cap (`nil`: none); running transfers follow it.
    public func setRateLimit(_ bytesPerSecond: Int64?) {
        downloader.setRateLimit(bytesPerSecond)
    }

    /// Stops every transfer (their partial files and records synced; active downloads stay
    /// active in the state file, to continue in the next service), waits up to `timeout` for
    /// them to end, and closes the state file. Later changes throw `closed`.
    public func shutDown(timeout: Duration = .seconds(30)) {
        _ = try? perform { queue in ((), queue.shutDown()) }
        let deadline = ContinuousClock.now + timeout
        state.wait(until: deadline) { !$0.runs.isEmpty || $0.work.isDraining }
        state.withLock { $0.closed = true }
        writer.close()
    }

    static func known(_ id: DownloadID, _ queue: ServiceQueue) throws(ServiceError) -> DownloadID {
        guard queue.contains(id) else { throw ServiceError(.notFound, "GID \(id.hex) is not found") }
        return id
    }

    static func entry(_ id: DownloadID, _ queue: ServiceQueue) throws(ServiceError) -> ServiceQueue.Entry {
        if queue.isStored(id) { throw ServiceError(.invalidState, "Cannot change option for GID#\(id.hex)") }
        guard let entry = queue.entries[id] else { throw ServiceError(.notFound, "GID \(id.hex) is not found") }
        return entry
    }
}
