#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import Haul
import HaulCore
import HaulHTTP

/// The engine's side of a `URLSession` exchange: opens the data task (following the redirects
/// the session did not follow itself under the same ``RedirectPolicy``) and hands the body to
/// the engine slice by slice, on the engine's thread.
///
/// Where a task cannot be paused (Linux, see ``SessionTaskState``), a ranged request is sent in
/// windows of ``rangeWindow`` bytes, one after the other on the same final URL with `If-Range`,
/// so a body never runs more than a window ahead of the engine. The engine sees one response:
/// the first window's head, its `Content-Range` and length widened to the whole span asked for.
///
/// Used by one thread at a time, like ``ResponseReader``.
final class SessionReader: AlternateResponse {
    #if os(Linux)
    /// The most bytes one request asks for where a task cannot be paused.
    static let rangeWindow: Int64? = 16 << 20
    #else
    /// Tasks are suspended instead (see ``SessionTaskState``): no windows.
    static let rangeWindow: Int64? = nil
    #endif

    private var state: SessionTaskState
    /// Keeps the session alive while its task runs.
    private let transport: URLSessionTransport
    private var cancellation: CancellationSignal
    /// How the body is delimited, from the final response.
    let framing: ResponseParser.Framing?
    /// The most bytes handed to the sink at once (a rate limit keeps slices small).
    var readLimit = Int.max
    private let lowSpeedLimit: Downloader.LowSpeedLimit?
    private var monitor: LowSpeedMonitor?
    private var tooSlow = false
    private var pending = Data()
    private var offset = 0
    /// The engine's receive buffer: queued chunks are gathered here before the sink sees them.
    private let buffer: UnsafeMutableRawBufferPointer
    /// The windows still to ask for, when the span is asked for in windows.
    private var windows: Windows?

    /// The rest of a span asked for window by window.
    private struct Windows {
        var next: Int64
        let last: Int64
        let complete: Int64
        let size: Int64
        let template: SessionRequestTemplate
        let policy: RedirectPolicy
        let headDeadline: Duration
    }

    private init(state: SessionTaskState, transport: URLSessionTransport, cancellation: CancellationSignal,
                 framing: ResponseParser.Framing?, lowSpeedLimit: Downloader.LowSpeedLimit?,
                 buffer: UnsafeMutableRawBufferPointer, windows: Windows?) {
        self.state = state
        self.buffer = buffer
        self.transport = transport
        self.cancellation = cancellation
        self.framing = framing
        self.lowSpeedLimit = lowSpeedLimit
        self.windows = windows
    }

    /// Sends a GET for `url` as a data task and waits for the final response head.
    ///
    /// - Parameter buffer: the engine's receive buffer, owned by the caller for the exchange's life.
    /// - Returns: the reader positioned at the body, the final head and the URL that answered.
    /// - Throws: `notSupported` for settings this transport cannot honour (see
    ///   ``Downloader/Transport/urlSession``); redirect, network, timeout and TLS errors.
    static func open(url: HTTPURL, userHeaders: [(name: String, value: String)], range: ByteRangeRequest?,
                     ifRange: String?, configuration: Downloader.Configuration, transport: URLSessionTransport,
                     cancellation: CancellationSignal,
                     buffer: UnsafeMutableRawBufferPointer) throws(DownloadError) -> (SessionReader, ResponseHead, HTTPURL) {
        try checkSupported(configuration)
        var policy = RedirectPolicy(original: url, userHeaders: userHeaders, maximumRedirects: configuration.maximumRedirects,
                                    allowsInsecureRedirects: configuration.allowsInsecureRedirects)
        var template = SessionRequestTemplate(
            userAgent: configuration.userAgent, range: range, ifRange: ifRange,
            timeout: max(configuration.connectTimeout + configuration.headerTimeout, configuration.stallTimeout) + .seconds(30))
        // Waiting for the head counts as a stall too (URLSession does not say when it connected).
        let headDeadline = configuration.connectTimeout + min(configuration.headerTimeout, configuration.stallTimeout)
        var window = rangeWindow.flatMap { size in range.map { (size, $0) } }
        while true {
            if let (size, range) = window, size < (range.last.map { $0 - range.first + 1 } ?? .max) {
                template.range = ByteRangeRequest(first: range.first, last: range.first + size - 1)
            } else {
                template.range = range
            }
            let (state, head) = try start(template, policy: policy, transport: transport, cancellation: cancellation,
                                          headDeadline: headDeadline)
            policy = state.policy
            if RedirectPolicy.isRedirect(head.status) {
                // A redirect the session delivered instead of following (a status it does not
                // follow, a Location it cannot use): the policy decides, as for the native client.
                state.cancel()
                _ = try mappingHTTPErrors { () throws(HTTPClientError) in
                    try policy.follow(status: head.status, location: head.headers["Location"])
                }
                continue
            }
            var shown = (head: head, length: state.expectedLength, windows: Windows?.none)
            if let (size, range) = window, let asked = template.range, asked != range, head.status == 206 {
                // The server honoured the window: widen its answer to the whole span, or, when that
                // cannot be done safely, ask for the span whole.
                guard let widened = widened(shown, span: range, asked: asked, size: size, template: template,
                                            ifRange: ifRange, policy: policy, headDeadline: headDeadline) else {
                    state.cancel()
                    window = nil
                    continue
                }
                shown = widened
            }
            let reader = SessionReader(state: state, transport: transport, cancellation: cancellation,
                                       framing: framing(of: shown.head, expectedLength: shown.length),
                                       lowSpeedLimit: configuration.lowSpeedLimit, buffer: buffer, windows: shown.windows)
            return (reader, shown.head, policy.current)
        }
    }

    /// A 206 answer to the first window of `span`, as the engine is to see it: the head widened
    /// to the whole span (`Content-Range`, `Content-Length`), the body's length, and the windows
    /// still to fetch with `If-Range`. `nil` when it cannot be widened safely (no complete length,
    /// no validator, a range other than asked), and the span is to be asked for whole.
    private static func widened(_ answer: (head: ResponseHead, length: Int64?, windows: Windows?), span range: ByteRangeRequest,
                                asked: ByteRangeRequest, size: Int64, template: SessionRequestTemplate, ifRange: String?,
                                policy: RedirectPolicy, headDeadline: Duration) -> (head: ResponseHead, length: Int64?, windows: Windows?)? {
        let head = answer.head
        let facts = ResumeDecision.ResponseFacts(head, framing: nil)
        guard case .satisfied(let first, let last, let complete?)? = head.headers["Content-Range"].flatMap(ContentRange.parse),
              first == range.first, last == asked.last || last == complete - 1,
              let validator = ifRange ?? facts.strongETag ?? facts.lastModified else { return nil }
        let wanted = min(range.last ?? complete - 1, complete - 1)
        guard last < wanted else { return answer }
        var shown = head
        shown.headers.remove(name: "Content-Range")
        shown.headers.add(name: "Content-Range", value: "bytes \(first)-\(wanted)/\(complete)")
        shown.headers.remove(name: "Content-Length")
        shown.headers.add(name: "Content-Length", value: "\(wanted - first + 1)")
        var next = template
        next.ifRange = validator
        let windows = Windows(next: last + 1, last: wanted, complete: complete, size: size, template: next,
                              policy: policy, headDeadline: headDeadline)
        return (shown, wanted - first + 1, windows)
    }

    /// Starts a data task for the policy's current URL and waits for its final head.
    private static func start(_ template: SessionRequestTemplate, policy: RedirectPolicy, transport: URLSessionTransport,
                              cancellation: CancellationSignal,
                              headDeadline: Duration) throws(DownloadError) -> (SessionTaskState, ResponseHead) {
        if cancellation.isCancelled { throw DownloadError(.cancelled, "cancelled") }
        let request = try template.request(for: policy)
        let state = SessionTaskState(policy: policy, template: template)
        transport.start(request, state: state)
        do throws(DownloadError) {
            return (state, try state.waitForHead(until: .now + headDeadline, cancellation: cancellation))
        } catch {
            state.cancel()
            throw error
        }
    }

    /// The body of the current window ended: asks for the next one. Returns `false` when the
    /// span is complete.
    ///
    /// - Throws: `resourceChanged` when the server sends the whole file (the validator no longer
    ///   matches), `rangeMismatch` for any other answer than exactly the asked window.
    private func nextWindow() throws(DownloadError) -> Bool {
        guard var windows, windows.next <= windows.last else { return false }
        var template = windows.template
        let last = min(windows.next + windows.size - 1, windows.last)
        template.range = ByteRangeRequest(first: windows.next, last: last)
        let (next, head) = try Self.start(template, policy: windows.policy, transport: transport, cancellation: cancellation,
                                          headDeadline: windows.headDeadline)
        state = next
        guard head.status == 206 else {
            next.cancel()
            if head.status == 200 {
                throw DownloadError(.resourceChanged, "the server sent the whole file for the next window: the file changed")
            }
            try DownloadJob.validate(head, askedForRange: true)
            throw DownloadError(.rangeMismatch, "the server answered \(head.status) for bytes \(windows.next)-\(last)")
        }
        guard case .satisfied(windows.next, last, windows.complete)? = head.headers["Content-Range"].flatMap(ContentRange.parse) else {
            next.cancel()
            throw DownloadError(.rangeMismatch, "asked for bytes \(windows.next)-\(last) of \(windows.complete); the server answered "
                                + "'\(head.headers["Content-Range"] ?? "no Content-Range")'")
        }
        windows.next = last + 1
        self.windows = windows
        return true
    }

    /// Settings the transport cannot honour here are refused before any request.
    static func checkSupported(_ configuration: Downloader.Configuration) throws(DownloadError) {
        // URLSession verifies certificates itself. Custom trust would need the authentication
        // challenge delegate with SecTrust (Apple only); FoundationNetworking has no SecTrust.
        if configuration.tls.extraCAFile != nil || configuration.tls.insecure {
            throw DownloadError(.notSupported, "the URLSession transport cannot use --cacert or --insecure; use the native engine")
        }
    }

    private static func framing(of head: ResponseHead, expectedLength: Int64?) -> ResponseParser.Framing {
        if let expectedLength { return .length(expectedLength) }
        if head.status == 204 || head.status == 304 { return .none }
        let chunked = head.headers["Transfer-Encoding"].map { $0.lowercased().contains("chunked") } ?? false
        return chunked ? .chunked : .untilClose
    }

    /// Reads the body, calling `sink` with each slice in order, until the body ends or `sink`
    /// returns `false`.
    ///
    /// - Returns: `true` when the body ended, `false` when `sink` stopped early.
    /// - Throws: `stalled` (no byte for `stallTimeout`, or slower than the low-speed limit),
    ///   `truncatedBody` and network errors, `cancelled`, and whatever `sink` throws.
    @discardableResult
    func readBody(stallTimeout: Duration, _ sink: (UnsafeRawBufferPointer) throws(DownloadError) -> Bool) throws(DownloadError) -> Bool {
        if monitor == nil, let lowSpeedLimit {
            monitor = LowSpeedMonitor(LowSpeedMonitor.SpeedFloor(bytesPerSecond: lowSpeedLimit.bytesPerSecond,
                                                                 period: lowSpeedLimit.period))
        }
        let limit = min(readLimit, buffer.count)
        while true {
            // Gather what is queued into the receive buffer (waiting only while it is empty), so the
            // engine writes large slices instead of URLSession's 16 KiB chunks.
            var filled = 0
            while filled < limit {
                if offset == pending.count {
                    if filled > 0 {
                        guard let data = state.nextIfQueued() else { break }
                        pending = data
                    } else {
                        if tooSlow, let monitor { throw DownloadError(monitor.failure) }
                        if cancellation.isCancelled {
                            state.cancel()
                            throw DownloadError(.cancelled, "cancelled")
                        }
                        let started = ContinuousClock.now
                        switch try state.next(stallTimeout: stallTimeout, cancellation: cancellation) {
                        case .end:
                            if try nextWindow() { continue }
                            return true
                        case .chunk(let data):
                            if monitor?.received(data.count, after: ContinuousClock.now - started) == true { tooSlow = true }
                            pending = data
                        }
                    }
                    offset = 0
                }
                let count = min(limit - filled, pending.count - offset)
                let start = offset
                pending.withUnsafeBytes { raw in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<filled + count])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[start..<start + count]))
                }
                offset += count
                filled += count
            }
            if try !sink(UnsafeRawBufferPointer(rebasing: buffer[0..<filled])) { return false }
        }
    }

    /// Moves the exchange to another cancellation signal.
    func rebind(to signal: CancellationSignal) {
        cancellation = signal
    }

    /// Ends the exchange: the task is cancelled unless it already completed.
    func close() {
        state.cancel()
    }
}
