import HaulCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One running (or finished) download: its events, its result, and the controls over it.
///
/// Every download has its own event stream and state; nothing is shared between two downloads.
public final class Download: Sendable {
    /// The key this download is known by in its ``Downloader``.
    public let key: String
    /// The request as given.
    public let request: DownloadRequest
    /// This download's events; see ``DownloadEvents``.
    public var events: DownloadEvents {
        DownloadEvents(queue: queue, onCancel: { [weak self] in self?.cancel() })
    }

    let destination: Destination
    let configuration: Downloader.Configuration
    let queue = EventQueue()
    let control = DownloadControl()
    /// The download's own rate limit (``DownloadRequest/rateLimit``), kept across its attempts.
    private let ownLimiter: RateLimiter?

    private struct Outcome {
        var result: Result<DownloadResult, DownloadError>?
        var waiters: [CheckedContinuation<Result<DownloadResult, DownloadError>, Never>] = []
    }
    private let outcome = SharedStateLock(Outcome())

    /// Where the download is in its life: waiting in the downloader's queue, running, or over.
    private enum Phase { case queued, running, ended }
    private let phase = SharedStateLock(Phase.queued)
    private let resources: DownloaderResources
    /// Tells the downloader what the download gives back, and returns the queued download that
    /// takes a released running slot over, to be run by the caller.
    private let onEnd: @Sendable (_ download: Download, _ release: Downloader.Release) -> Download?

    init(key: String, request: DownloadRequest, destination: Destination, configuration: Downloader.Configuration,
         resources: DownloaderResources, onEnd: @escaping @Sendable (Download, Downloader.Release) -> Download?) {
        self.key = key
        self.request = request
        self.destination = destination
        self.configuration = configuration
        self.resources = resources
        self.onEnd = onEnd
        ownLimiter = request.rateLimit.map { RateLimiter(bytesPerSecond: $0, parent: resources.limiter) }
    }

    /// Runs the transfer on a thread of its own; the caller gave it a running slot. The same
    /// thread then runs each queued download the downloader hands the slot to as one ends, so a
    /// queue moves on without a thread wake-up between two downloads.
    ///
    /// When the system gives no thread, the download fails with `resourceExhausted` (its
    /// `failed` event says so) and passes its slot on; the next queued download asks for a
    /// thread in turn.
    func start() {
        var next: Download? = self
        while let download = next {
            do throws(ResourceError) {
                try resources.threads.run(name: "haul-download") { download.runQueue() }
                return
            } catch {
                next = download.claim()
                    ? download.end(with: .failure(DownloadError(error)), release: .slotAndKey)
                    : download.onEnd(download, .slotAndKey)
            }
        }
    }

    /// Runs this download and then each one the downloader hands its slot to, on the calling thread.
    private func runQueue() {
        var next: Download? = self
        while let download = next {
            // One cancelled before it could run (while queued, or between being handed the
            // slot and here) passes the slot on.
            next = download.claim() ? download.runClaimed() : download.onEnd(download, .slotAndKey)
        }
    }

    /// Queued -> running; false when it was cancelled while queued.
    private func claim() -> Bool {
        phase.withLock { phase -> Bool in
            guard phase == .queued else { return false }
            phase = .running
            return true
        }
    }

    /// Runs the transfer on the calling thread and returns the queued download that takes its
    /// slot over, if any.
    ///
    /// A small file's commit goes to the ``BatchCommitter``: the slot is given back at once (the
    /// transfer is over), the key when the file has its name.
    private func runClaimed() -> Download? {
        let job = DownloadJob(request: request, destination: destination, configuration: configuration,
                              control: control, events: queue, resources: resources, ownLimiter: ownLimiter)
        let result: Result<DownloadResult, DownloadError>
        do throws(DownloadError) {
            switch try job.run() {
            case .done(let done):
                result = .success(done)
            case .commit(let commit) where BatchCommitter.takes(commit):
                resources.committer.submit(commit) { [self] result in _ = end(with: result, release: .key) }
                return onEnd(self, .slot)
            case .commit(let commit):
                result = .success(try commit.run())
            }
        } catch {
            result = .failure(error)
        }
        return end(with: result, release: .slotAndKey)
    }

    private func end(with result: Result<DownloadResult, DownloadError>, release: Downloader.Release) -> Download? {
        phase.withLock { $0 = .ended }
        let next = onEnd(self, release)   // first, so the key is free again by the time anyone learns the result
        complete(with: result)
        return next
    }

    private func complete(with result: Result<DownloadResult, DownloadError>) {
        queue.finish(result)
        let waiters = outcome.withLock { outcome in
            outcome.result = result
            defer { outcome.waiters = [] }
            return outcome.waiters
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// Stops the download. Connections close at once, the partial file is kept for a later
    /// resume, and the events and ``result()`` end with ``DownloadError/Code/cancelled``.
    public func cancel() {
        control.cancel()
        let wasQueued = phase.withLock { phase -> Bool in
            guard phase == .queued else { return false }
            phase = .ended
            return true
        }
        if wasQueued {
            _ = onEnd(self, .queuedKey)   // it held no slot: nothing takes one over
            complete(with: .failure(DownloadError(.cancelled, "cancelled before it started")))
        }
    }

    /// Pauses the download: its connections close, the partial file and its resume record stay,
    /// and ``DownloadEvent/paused`` is sent. Nothing happens when it is not running.
    public func pause() {
        control.pause()
    }

    /// Resumes a paused download from its resume record (``DownloadEvent/resumed`` is sent).
    public func resume() {
        control.resume()
    }

    /// Calls `onEvent` for every event (the ones so far first) and `completion` once with the
    /// result, as ``Downloader/start(_:to:onEvent:completion:)`` does, on the thread that
    /// produced each.
    package func observe(onEvent: @escaping @Sendable (DownloadEvent) -> Void,
                         completion: @escaping @Sendable (Result<DownloadResult, DownloadError>) -> Void) {
        queue.observe { observation in
            switch observation {
            case .event(let event): onEvent(event)
            case .ended(let result): completion(result)
            }
        }
    }

    /// The ranges of the file on disk and valid as of the last resume-record checkpoint, for a
    /// transfer over ranges; `nil` before the first checkpoint and for a file that streams from
    /// byte 0 (its progress's completed bytes are then one range from 0).
    package var completedRanges: [Range<Int64>]? {
        control.completedRanges
    }

    /// Each connection's segment of the running transfer over ranges, by connection; empty when
    /// nothing is in flight (not running, or a file that streams over one connection from byte 0).
    package var segmentsInFlight: [SegmentInFlight] {
        control.segmentsInFlight
    }

    /// The servers of the running transfer over ranges, in use or set aside; empty when nothing is
    /// in flight.
    package var sourcesInUse: [SourceInUse] {
        control.sourcesInUse
    }

    /// Ends the running attempt and starts another at once, from the bytes on disk, with no
    /// event; for a change that a running transfer takes only when it starts (a rate limit set
    /// where there was none). Nothing happens unless the download is running.
    func restartTransfer() {
        guard phase.withLock({ $0 == .running }) else { return }
        control.restart()
    }

    /// Waits for the download to end and returns its result.
    ///
    /// Cancelling the calling task cancels the download.
    ///
    /// - Returns: the final response head and file URL.
    /// - Throws: the download's ``DownloadError``.
    public func result() async throws(DownloadError) -> DownloadResult {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<DownloadResult, DownloadError>, Never>) in
                let ready = outcome.withLock { outcome -> Result<DownloadResult, DownloadError>? in
                    if let result = outcome.result { return result }
                    outcome.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            self.cancel()
        }
        return try result.get()
    }
}
