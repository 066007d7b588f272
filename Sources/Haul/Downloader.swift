#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
import HaulCore
import HaulHTTP

/// Starts downloads and keeps track of the running ones by key.
///
/// A `Downloader` is `Sendable`: share one across tasks. Each download gets its own
/// ``Download`` handle with its own event stream, so two downloads never share state.
///
/// ```swift
/// let downloader = Downloader()
/// let download = downloader.download(url, to: .directory(folder))
/// for try await event in download.events {
///     if case .progress(let p) = event { print(p.completedBytes, p.fractionCompleted ?? 0) }
/// }
/// ```
public final class Downloader: Sendable {
    /// The settings every download of this downloader uses.
    public let configuration: Configuration
    private struct Registry {
        var byKey: [String: Download] = [:]
        var active = 0
        var queue = FIFOQueue<Download>()
    }
    private let registry = SharedStateLock(Registry())
    /// What every download of this downloader shares (internal: tests look at its host slots).
    let resources: DownloaderResources

    /// Creates a downloader.
    ///
    /// - Parameter configuration: timeouts, TLS trust, conflict policy, connections, queue and rate limits.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        resources = DownloaderResources(configuration: configuration)
    }

    /// A downloader whose threads start through `threadStarter` (tests make it fail).
    init(configuration: Configuration, threadStarter: @escaping ThreadPool.Starter) {
        self.configuration = configuration
        resources = DownloaderResources(configuration: configuration, threadStarter: threadStarter)
    }

    /// Starts downloading `url` into `destination` and returns its handle.
    ///
    /// - Parameters:
    ///   - url: an `http` or `https` URL.
    ///   - destination: a folder (the name comes from the server or URL) or an exact file.
    /// - Returns: the download's handle; iterate ``Download/events`` or await ``Download/result()``.
    public func download(_ url: URL, to destination: Destination) -> Download {
        download(DownloadRequest(url: url), to: destination)
    }

    /// Starts downloading a request into `destination` and returns its handle.
    ///
    /// When a download with the same key is running (``DownloadRequest/key``, by default the URL
    /// and the destination), its handle is returned and nothing new starts. Its events can be
    /// iterated by every holder of the handle; cancelling it cancels it for all of them.
    ///
    /// - Parameters:
    ///   - request: the URL, headers, conflict policy and key.
    ///   - destination: a folder or an exact file.
    /// - Returns: the download's handle.
    public func download(_ request: DownloadRequest, to destination: Destination) -> Download {
        let key = request.key ?? "\(request.url.absoluteString) -> \(destination)"
        let (download, startNow) = registry.withLock { registry -> (Download, Bool) in
            if let existing = registry.byKey[key] { return (existing, false) }
            let created = Download(key: key, request: request, destination: destination, configuration: configuration,
                                   resources: resources) { [weak self] download, release in
                self?.ended(download, release: release)
            }
            registry.byKey[key] = created
            if registry.active < max(1, configuration.maximumActiveDownloads) {
                registry.active += 1
                return (created, true)
            }
            registry.queue.append(created)   // run by the thread of the download whose slot it takes (`ended`)
            return (created, false)
        }
        if startNow { download.start() }
        return download
    }

    /// What a download gives back to its downloader.
    enum Release {
        /// Its transfer is over, its commit is not (``BatchCommitter``): the running slot.
        case slot
        /// Its commit ended: the key.
        case key
        /// It was cancelled while queued: the key and its place in the queue.
        case queuedKey
        /// It ended: both.
        case slotAndKey
    }

    /// Takes back what `download` releases. When that is a running slot, returns the next queued
    /// download, which takes the slot over (its caller runs it).
    private func ended(_ download: Download, release: Release) -> Download? {
        registry.withLock { registry -> Download? in
            if release != .slot, registry.byKey[download.key] === download { registry.byKey[download.key] = nil }
            switch release {
            case .key:
                return nil
            case .queuedKey:
                // A walk of the queue, so only for a download that is in it (walking it for every
                // commit that ended made 1,000 small files cost ~7,000 instructions each here).
                registry.queue.removeAll { $0 === download }
                return nil
            case .slot, .slotAndKey:
                break
            }
            guard !registry.queue.isEmpty else {
                registry.active -= 1
                return nil
            }
            return registry.queue.popFirst()
        }
    }

    /// Closes the connections kept for reuse.
    ///
    /// A finished request's connection is parked for a later request to the same server and
    /// expires after a few seconds, but an expired one is closed only when the next request
    /// takes or parks a connection. A program that goes quiet, such as a service whose last
    /// download just ended, calls this so that it holds no sockets while idle. Transfers in
    /// progress keep their connections.
    public func closeIdleConnections() {
        resources.pool.closeAll()
    }

    /// Changes the overall speed cap from now on (``Configuration/rateLimit`` is its first value).
    ///
    /// Connections already limited follow the new rate at once. When a cap is set where there
    /// was none, the running transfers restart (their connections close and the transfer
    /// continues from the bytes on disk, with no event) to take it; a download with a cap of its
    /// own (``DownloadRequest/rateLimit``) follows without a restart.
    ///
    /// - Parameter bytesPerSecond: the new cap (at least 1), or `nil` for none.
    public func setRateLimit(_ bytesPerSecond: Int64?) {
        let wasLimited = resources.limiter.isLimited
        resources.limiter.setRate(bytesPerSecond.map { max(1, $0) })
        guard !wasLimited, bytesPerSecond != nil else { return }
        let downloads = registry.withLock { Array($0.byKey.values) }
        for download in downloads where download.request.rateLimit == nil {
            download.restartTransfer()
        }
    }

    /// The overall speed cap now, in bytes per second; `nil` for none.
    public var rateLimit: Int64? {
        resources.limiter.bytesPerSecond
    }

    /// Downloads a request and returns once the file is complete, verified and in place.
    ///
    /// Cancelling the calling task cancels the download (the partial file is kept for resume).
    ///
    /// - Parameters:
    ///   - request: the URL, headers, conflict policy and key.
    ///   - destination: a folder or an exact file.
    /// - Returns: the final response head and the file's URL.
    /// - Throws: ``DownloadError`` with a status code (`httpStatus`, `authenticationRefused`)
    ///   for any non-2xx answer, or any other code from the transfer; `cancelled` on cancellation.
    public func file(from request: DownloadRequest, to destination: Destination) async throws(DownloadError) -> DownloadResult {
        try await download(request, to: destination).result()
    }

    /// Downloads a URL and returns once the file is complete; see ``file(from:to:)``.
    public func file(from url: URL, to destination: Destination) async throws(DownloadError) -> DownloadResult {
        try await file(from: DownloadRequest(url: url), to: destination)
    }

    /// Starts a download and reports through callbacks, for code that is not `async`.
    ///
    /// The callbacks run as things happen, one at a time and in order: every event (the ones so
    /// far first, when the key was running already), then the completion, once. No task is
    /// created for them: they run on the thread that produced the event, which is the download's
    /// own, the one thread that reports every download's progress, the one that commits small
    /// files (their completion), or the caller's (a replay in this call, the completion of a
    /// queued download cancelled with ``DownloadToken/cancel()``). So keep them short, and never
    /// block in one waiting for another download: hand work to your own queue or actor.
    ///
    /// - Parameters:
    ///   - request: what to download.
    ///   - destination: where it lands.
    ///   - onEvent: called for every event.
    ///   - completion: called once with the result, after the last event.
    /// - Returns: a token whose ``DownloadToken/cancel()`` cancels the download.
    @discardableResult
    public func start(
        _ request: DownloadRequest,
        to destination: Destination,
        onEvent: @escaping @Sendable (DownloadEvent) -> Void = { _ in },
        completion: @escaping @Sendable (Result<DownloadResult, DownloadError>) -> Void
    ) -> DownloadToken {
        let download = download(request, to: destination)
        download.queue.observe { observation in
            switch observation {
            case .event(let event): onEvent(event)
            case .ended(let result): completion(result)
            }
        }
        return DownloadToken(download: download)
    }
}

/// Returned by ``Downloader/start(_:to:onEvent:completion:)``: cancels its download.
public final class DownloadToken: Sendable {
    private let download: Download

    init(download: Download) {
        self.download = download
    }

    /// The servers of the running transfer over ranges, in use or set aside (empty when nothing
    /// is in flight): what each gave so far.
    package var sourcesInUse: [SourceInUse] {
        download.sourcesInUse
    }

    /// Cancels the download; the completion handler then receives `cancelled`.
    public func cancel() {
        download.cancel()
    }
}
