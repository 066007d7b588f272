#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulCore
import HaulHTTP

/// Drives one download on its own thread: find what is already on disk, ask for the rest,
/// choose the name, move the bytes (over several connections when the server allows), verify.
/// What is left then is the commit (``FileCommit``), which the caller runs or hands on.
/// Retryable failures start another attempt after a backoff (see ``RetryPolicy``); a pause
/// waits for ``Download/resume()`` and continues from the resume record.
package struct DownloadJob {
    /// How a job ends when nothing failed.
    enum Ending {
        /// Nothing left to do: the file was skipped (``ConflictPolicy/skip``), or an earlier run
        /// finished it (``DownloadResult/alreadyComplete``).
        case done(DownloadResult)
        /// Every byte is written and verified; the file is not durable and has no name yet.
        case commit(FileCommit)
    }

    let request: DownloadRequest
    let destination: Destination
    let configuration: Downloader.Configuration
    let control: DownloadControl
    let events: EventQueue
    let resources: DownloaderResources
    /// The download's own rate limit (``DownloadRequest/rateLimit``), whose parent is the downloader's.
    let ownLimiter: RateLimiter?

    func run() throws(DownloadError) -> Ending {
        try Self.validate(configuration, request: request)
        let events = self.events
        let source = try SignedSource(request: request, cancellation: control.signal, warn: { events.yield(.warning($0)) })
        let url = source.base
        // Bad headers are usage errors: find them before any network I/O.
        _ = try mappingHTTPErrors { () throws(HTTPClientError) in
            try RequestHead.make(method: .get, url: url, userAgent: configuration.userAgent, userHeaders: request.headers,
                                 sendUserinfo: true, range: nil, ifRange: nil)
        }
        let sources = [source] + mirrors(of: url, cancellation: control.signal)
        let target = try DownloadTarget(destination: destination, folders: resources.folders)
        let context = HTTPExchange.Context(configuration: configuration, resources: resources)
        try context.checkProxies()   // a bad proxy URL is a usage error too
        let buffer = try resources.buffers.take(size: configuration.bufferSize)
        defer { resources.buffers.give(buffer) }

        var state = RetryState(startFresh: request.startOver)
        while true {
            let signal = control.signal
            control.publish(completed: nil)
            do throws(DownloadError) {
                let attempt = DownloadAttempt(job: self, sources: sources, target: target, context: context, buffer: buffer,
                                              signal: signal, limiter: ownLimiter ?? resources.limiter.current)
                return try attempt.run(startFresh: state.startFresh)
            } catch {
                state.startFresh = false
                state.answered = state.answered || error.httpStatus != nil || error.code != .connectionRefused
                    && error.unreachableOrigin == nil
                try recover(from: error, signal: signal, state: &state)
            }
        }
    }

    /// The request's mirrors that can be asked: one that is not a URL Haul can fetch, or that
    /// is the request's own URL again, is left out with a warning (the others still serve).
    private func mirrors(of url: HTTPURL, cancellation: CancellationSignal) -> [SignedSource] {
        var seen: Set<String> = [url.stringWithoutUserinfo]
        var sources: [SignedSource] = []
        for (index, mirror) in request.mirrors.enumerated() where sources.count + 1 < configuration.maximumSources {
            do throws(DownloadError) {
                var source = try SignedSource(mirror, cancellation: cancellation, warn: { [events] in events.yield(.warning($0)) })
                source.requestIndex = index + 1
                _ = try mappingHTTPErrors { () throws(HTTPClientError) in
                    try RequestHead.make(method: .get, url: source.base, userAgent: configuration.userAgent, userHeaders: mirror.headers,
                                         sendUserinfo: true, range: nil, ifRange: nil)
                }
                guard seen.insert(source.base.stringWithoutUserinfo).inserted else { continue }
                sources.append(source)
            } catch {
                events.yield(.warning("mirror \(index + 1) left out: \(error.message)"))
            }
        }
        return sources
    }

    /// What the attempts of one job have met so far.
    private struct RetryState {
        var startFresh: Bool
        var failures = 0
        var restarts = 0
        /// Consecutive failures to connect to one origin: when they outlast the retries, the
        /// other downloads stop retrying that failure (see ``UnreachableHosts``).
        var unreachable = (origin: HTTPURL.Origin?.none, count: 0)
        /// Whether the server answered any attempt (a refusal after that is a restart, retried).
        var answered = false
    }

    /// Returns when another attempt should run (after a pause, a start-over, or a backoff), or
    /// throws the error that ends the job.
    private func recover(from error: DownloadError, signal: CancellationSignal,
                         state: inout RetryState) throws(DownloadError) {
        let cancelled = DownloadError(.cancelled, "cancelled; the partial file is kept")
        if control.isCancelled { throw cancelled }
        if control.isPaused {
            events.yield(.paused)
            guard try control.waitWhilePaused() else { throw cancelled }
            events.yield(.resumed)
            return
        }
        if signal !== control.signal {   // restarted, or paused and resumed before this thread noticed
            if control.takeRestart() { return }
            events.yield(.paused)
            events.yield(.resumed)
            return
        }
        if error.code == .resourceChanged, state.restarts < 3 {
            state.restarts += 1
            state.startFresh = true
            events.yield(.startingOver(reason: error.message))
            return
        }
        if signal.isCancelled { throw cancelled }
        if error.code == .connectionRefused, !state.answered, !configuration.retry.retriesRefusedConnections {
            throw error   // a wrong port or a host that is down: said at once, as curl and wget do
        }
        state.failures += 1
        try checkReachable(error, state: &state)
        guard error.isRetryable, state.failures <= configuration.retry.maximumRetries else { throw error }
        let delay = configuration.retry.delay(beforeRetry: state.failures, jitter: Double.random(in: 0...1),
                                              retryAfter: error.retryAfter)
        events.yield(.retrying(attempt: state.failures, delay: delay.seconds, error: error))
        if !signal.sleep(for: delay), !control.isPaused, !control.takeRestart() { throw cancelled }
    }

    /// A failure to connect to an origin that another download of the downloader gave up on is
    /// not retried; one that outlasts the retries gives up on the origin for the others.
    private func checkReachable(_ error: DownloadError, state: inout RetryState) throws(DownloadError) {
        guard let origin = error.unreachableOrigin else {
            state.unreachable = (nil, 0)
            return
        }
        let unreachable = resources.pool.unreachable
        state.unreachable = (origin, state.unreachable.origin == origin ? state.unreachable.count + 1 : 1)
        if state.unreachable.count > configuration.retry.maximumRetries {
            unreachable.gaveUp(on: origin)
        } else if state.failures <= configuration.retry.maximumRetries, unreachable.contains(origin) {
            var given = error
            given.message += " (not retried: an earlier download gave up connecting to this host)"
            throw given
        }
    }

    /// Any final status other than 2xx is an error, and its body is never saved. A 206 is fine
    /// only for a request that asked for a range; a 416 only as an answer to one (resume decides).
    /// A retryable status carries the server's `Retry-After`, if any.
    package static func validate(_ head: ResponseHead, askedForRange: Bool) throws(DownloadError) {
        let status = head.status
        // Built only for an error: every response passes through here.
        var said: String { head.reason.isEmpty ? "\(status)" : "\(status) \(head.reason)" }
        switch status {
        case 200...205:
            return
        case 206:
            if askedForRange { return }
            throw DownloadError(.rangeMismatch, "the server answered 206 Partial Content to a request without Range", httpStatus: status)
        case 416 where askedForRange:
            return
        case 300..<400:
            // Redirects were followed already; any other 3xx (300, 304, 305...) leaves nothing to download.
            throw DownloadError(.redirectRefused, "the server answered \(said), which Haul cannot follow", httpStatus: status)
        case 401, 403, 407:
            throw DownloadError(.authenticationRefused, "the server refused access (\(said))", httpStatus: status)
        default:
            var error = DownloadError(.httpStatus, "the server answered \(said)", httpStatus: status)
            if error.isRetryable {
                error.retryAfter = RetryAfter.delay(head.headers["Retry-After"], now: Date().timeIntervalSince1970)
            }
            throw error
        }
    }

    /// Settings that cannot work are usage errors, reported before any I/O.
    static func validate(_ configuration: Downloader.Configuration, request: DownloadRequest) throws(DownloadError) {
        func invalid(_ what: String) -> DownloadError { DownloadError(.invalidArgument, what) }
        if configuration.bufferSize < 64 * 1024 { throw invalid("the buffer size must be at least 64 KiB") }
        if configuration.connectTimeout <= .zero { throw invalid("the connect timeout must be positive") }
        if configuration.headerTimeout <= .zero { throw invalid("the header timeout must be positive") }
        if configuration.stallTimeout <= .zero { throw invalid("the stall timeout must be positive") }
        if let floor = configuration.lowSpeedLimit, floor.bytesPerSecond < 1 || floor.period <= .zero {
            throw invalid("the low-speed limit needs at least 1 byte per second and a positive period")
        }
        if configuration.progressInterval < .milliseconds(10) { throw invalid("the progress interval must be at least 10 ms") }
        if configuration.resumeRecordInterval < .milliseconds(10) { throw invalid("the resume record interval must be at least 10 ms") }
        if configuration.maximumRedirects < 0 { throw invalid("the redirect limit cannot be negative") }
        if !(1...16).contains(configuration.connectionsPerDownload) { throw invalid("connections per download must be 1 to 16") }
        if !(1...64).contains(configuration.maximumSources) { throw invalid("the most sources of a download must be 1 to 64") }
        if let connections = request.connections, !(1...16).contains(connections) {
            throw invalid("connections per download must be 1 to 16")
        }
        if let rate = request.rateLimit, rate < 1 { throw invalid("the rate limit must be at least 1 byte per second") }
        if configuration.minimumSegmentSize < 64 * 1024 { throw invalid("the minimum segment size must be at least 64 KiB") }
        if let rate = configuration.rateLimit, rate < 1 { throw invalid("the rate limit must be at least 1 byte per second") }
        if configuration.retry.maximumRetries < 0 || configuration.retry.initialDelay < .zero {
            throw invalid("retries and their delay cannot be negative")
        }
    }
}
