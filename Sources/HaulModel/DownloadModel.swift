#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import Observation

/// One download as an observable object, ready to drive a SwiftUI view.
///
/// The model starts a ``Download`` through a ``Downloader`` and mirrors its events into plain
/// properties on the main actor: ``state``, ``progress``, ``completedBytes``, ``totalBytes``,
/// ``bytesPerSecond``, ``fileURL`` and ``error``. Views (or `withObservationTracking`) see every
/// change; nothing else is needed to keep them current.
///
/// ```swift
/// @State var model = DownloadModel(url: url, to: .directory(downloads))
///
/// var body: some View {
///     ProgressView(value: model.progress)
///     Button(model.state == .paused ? "Resume" : "Pause") {
///         model.state == .paused ? model.resume() : model.pause()
///     }
///     .onAppear { model.start() }
/// }
/// ```
///
/// Unlike a view model that owns a `URLSessionDownloadTask`, the partial file survives a pause,
/// a cancellation or a crash: ``start()`` after ``cancel()`` (or in the next run of the program)
/// continues from the bytes already on disk. A running download keeps its model alive until it
/// ends; call ``cancel()`` to stop it early.
///
/// A model can also mirror a download that something else runs, such as a download service
/// that keeps its list across launches: ``init(observing:)`` with a ``DownloadModelSource``.
@Observable
@MainActor
public final class DownloadModel {
    /// Where a ``DownloadModel`` is in its life.
    public enum State: Sendable, Hashable {
        /// ``DownloadModel/start()`` has not been called yet.
        case idle
        /// Started, but no byte has arrived yet: waiting for a free slot in the downloader's
        /// queue, connecting, or waiting for the server's answer.
        case queued
        /// Bytes are arriving (or an attempt is being retried).
        case running
        /// Paused: the connections are closed, the partial file and its resume record are kept.
        case paused
        /// The file is complete, verified and under its final name (``DownloadModel/fileURL``).
        case finished
        /// The download ended with ``DownloadModel/error``.
        case failed
        /// ``DownloadModel/cancel()`` stopped it; the partial file is kept for a later start.
        case cancelled

        /// Whether the download is over (finished, failed or cancelled).
        public var isOver: Bool {
            switch self {
            case .finished, .failed, .cancelled: true
            case .idle, .queued, .running, .paused: false
            }
        }
    }

    /// What to download.
    public let request: DownloadRequest
    /// Where it lands.
    public let destination: Destination

    /// Where the download is in its life.
    public private(set) var state: State = .idle
    /// The fraction done, 0...1 (0 while the total length is unknown, 1 once finished).
    public private(set) var progress: Double = 0
    /// Bytes of the file on disk and valid, including bytes resumed from an earlier run.
    public private(set) var completedBytes: Int64 = 0
    /// The file's full length, once the server announced it.
    public private(set) var totalBytes: Int64?
    /// Recent throughput in bytes per second; 0 while not running.
    public private(set) var bytesPerSecond: Double = 0
    /// The finished file under its final name; `nil` until ``state`` is ``State/finished``.
    ///
    /// With a conflict policy of `.skip` and an existing file, this is the existing file.
    public private(set) var fileURL: URL?
    /// Why the download failed; `nil` unless ``state`` is ``State/failed``.
    public private(set) var error: DownloadError?

    @ObservationIgnored private let downloader: Downloader
    /// The download's runner when it is not `downloader` (``init(observing:)``).
    @ObservationIgnored private let source: (any DownloadModelSource)?
    @ObservationIgnored private var download: Download?
    @ObservationIgnored private var consumer: Task<Void, Never>?
    /// The run ``cancel()`` stopped, until the next ``start()`` has waited for it to end.
    @ObservationIgnored private var cancelled: Download?
    /// Counts starts, so that a consumer of an earlier run never updates a newer one.
    @ObservationIgnored private var generation = 0
    /// A ``pause()`` that came after ``start()`` but before its task made the download: the
    /// download is paused as soon as it exists.
    @ObservationIgnored private var pauseWhenMade = false

    /// Creates a model for a request; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - request: the URL, headers, conflict policy and key.
    ///   - destination: a folder (named from the server or URL) or an exact file.
    ///   - downloader: the downloader that runs it; share one so its queue and rate limit apply
    ///     to every model.
    public init(request: DownloadRequest, to destination: Destination, downloader: Downloader = Downloader()) {
        self.request = request
        self.destination = destination
        self.downloader = downloader
        self.source = nil
    }

    /// Creates a model that mirrors a download something else runs; nothing happens until
    /// ``start()``, which starts mirroring it.
    ///
    /// ``pause()``, ``resume()`` and ``cancel()`` call the source's own; ``state`` follows the
    /// source's snapshots (so ``cancel()`` shows ``State/cancelled`` once the source says so).
    ///
    /// - Parameter source: the download and its controls.
    public init(observing source: some DownloadModelSource) {
        self.request = source.request
        self.destination = source.destination
        self.downloader = Downloader(configuration: .init())
        self.source = source
    }

    /// Creates a model for a URL; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - url: an `http` or `https` URL.
    ///   - destination: a folder (named from the server or URL) or an exact file.
    ///   - downloader: the downloader that runs it.
    public convenience init(url: URL, to destination: Destination, downloader: Downloader = Downloader()) {
        self.init(request: DownloadRequest(url: url), to: destination, downloader: downloader)
    }

    /// Starts the download, or starts it again after it failed or was cancelled.
    ///
    /// A new start continues from the partial file when its resume record is valid (after a
    /// ``cancel()``, once the cancelled run has let go of it). Does nothing while the download is
    /// queued, running, paused or finished.
    public func start() {
        if let source {
            mirror(source)
            return
        }
        switch state {
        case .idle, .failed, .cancelled: break
        case .queued, .running, .paused, .finished: return
        }
        generation += 1
        let run = generation
        let previous = cancelled
        error = nil
        bytesPerSecond = 0
        state = .queued
        pauseWhenMade = false
        consumer = Task { [weak self, downloader, request, destination] in
            // A cancelled run frees its key and its partial file's lock only once it has ended.
            if let previous { _ = try? await previous.result() }
            guard let self, self.generation == run else { return }
            self.cancelled = nil
            let download = downloader.download(request, to: destination)
            self.download = download
            if self.pauseWhenMade {
                self.pauseWhenMade = false
                download.pause()
            }
            await self.consume(download, run: run)
        }
    }

    /// Applies the events of one run until they end.
    private func consume(_ download: Download, run: Int) async {
        do throws(DownloadError) {
            for try await event in download.events {
                guard generation == run else { return }
                apply(event)
            }
            end(run: run, with: nil)
        } catch {
            end(run: run, with: error)
        }
    }

    /// Pauses the download: its connections close, the partial file and its resume record stay.
    ///
    /// ``state`` becomes ``State/paused`` once the transfer has stopped. Does nothing unless the
    /// download is queued or running.
    public func pause() {
        guard state == .queued || state == .running else { return }
        if let source { return source.pause() }
        guard let download else { return pauseWhenMade = true }
        download.pause()
    }

    /// Resumes a paused download from its resume record.
    ///
    /// Does nothing unless the download is paused; a pause asked for before the download was made
    /// is dropped instead.
    public func resume() {
        if pauseWhenMade { return pauseWhenMade = false }   // the pause had not happened yet
        guard state == .paused else { return }
        if let source { return source.resume() }
        download?.resume()
    }

    /// Cancels the download; the partial file is kept, so a later ``start()`` continues it.
    ///
    /// ``state`` becomes ``State/cancelled`` at once. Does nothing when the download is idle or over.
    public func cancel() {
        guard !state.isOver, state != .idle else { return }
        if let source { return source.cancel() }
        generation += 1   // the consumer's remaining events belong to a run that is over
        download?.cancel()
        consumer?.cancel()
        consumer = nil
        if let download { cancelled = download }   // else the run it waited for is still there
        download = nil
        bytesPerSecond = 0
        state = .cancelled
    }

    /// Follows a source's snapshots (once: a second start while mirroring does nothing).
    private func mirror(_ source: any DownloadModelSource) {
        guard consumer == nil, !state.isOver else { return }
        generation += 1
        let run = generation
        consumer = Task { [weak self] in
            for await snapshot in source.snapshots() {
                guard let self, self.generation == run else { return }
                self.apply(snapshot)
            }
            guard let self, self.generation == run else { return }
            self.consumer = nil
        }
    }

    /// Copies a source's snapshot into the observable properties.
    private func apply(_ snapshot: Snapshot) {
        if state != snapshot.state { state = snapshot.state }
        if completedBytes != snapshot.completedBytes { completedBytes = snapshot.completedBytes }
        if totalBytes != snapshot.totalBytes { totalBytes = snapshot.totalBytes }
        if bytesPerSecond != snapshot.bytesPerSecond { bytesPerSecond = snapshot.bytesPerSecond }
        if fileURL != snapshot.fileURL { fileURL = snapshot.fileURL }
        if error?.message != snapshot.error?.message || error?.code != snapshot.error?.code { error = snapshot.error }
        if state == .finished {
            progress = 1
        } else {
            updateProgress()
        }
    }

    /// Mirrors one event into the observable properties.
    private func apply(_ event: DownloadEvent) {
        switch event {
        case .started(let start):
            if let total = start.totalBytes { totalBytes = total }
            completedBytes = start.resumedFrom
            updateProgress()
            if state == .queued { state = .running }
        case .progress(let snapshot):
            completedBytes = snapshot.completedBytes
            totalBytes = snapshot.totalBytes ?? totalBytes
            bytesPerSecond = state == .paused ? 0 : snapshot.bytesPerSecond
            updateProgress()
            if state == .queued { state = .running }
        case .paused:
            bytesPerSecond = 0
            state = .paused
        case .resumed:
            state = .running
        case .startingOver:
            completedBytes = 0   // the bytes on disk were not usable
            updateProgress()
        case .retrying, .warning:
            break
        case .finished(let url), .skipped(let url):
            fileURL = url
            if let total = totalBytes { completedBytes = total }
            progress = 1
            bytesPerSecond = 0
            state = .finished
        }
    }

    /// The events ended: normally (the last event already said finished) or with an error.
    private func end(run: Int, with failure: DownloadError?) {
        guard run == generation else { return }
        consumer = nil
        download = nil
        bytesPerSecond = 0
        guard let failure else { return }
        if failure.code == .cancelled {
            state = .cancelled   // cancelled from elsewhere: another holder of the same key
        } else {
            error = failure
            state = .failed
        }
    }

    private func updateProgress() {
        guard let total = totalBytes else { return }
        progress = total == 0 ? 1 : min(1, max(0, Double(completedBytes) / Double(total)))
    }
}
