#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation

/// The engine's side of a `URLSession` exchange: opens the data task (following the redirects
/// the session did not follow itself under the same ``RedirectPolicy``) and hands the body to
/// the engine slice by slice, on the engine's thread.
///
/// Used by one thread at a time, like ``ResponseReader``.
final class SessionReader {
    private let state: SessionTaskState
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

    private init(state: SessionTaskState, transport: URLSessionTransport, cancellation: CancellationSignal,
                 framing: ResponseParser.Framing?, lowSpeedLimit: Downloader.LowSpeedLimit?,
                 buffer: UnsafeMutableRawBufferPointer) {
        self.state = state
        self.buffer = buffer
        self.transport = transport
        self.cancellation = cancellation
        self.framing = framing
        self.lowSpeedLimit = lowSpeedLimit
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
        let template = SessionRequestTemplate(
            userAgent: configuration.userAgent, range: range, ifRange: ifRange,
            timeout: max(configuration.connectTimeout + configuration.headerTimeout, configuration.stallTimeout) + .seconds(30))
        while true {
            if cancellation.isCancelled { throw DownloadError(.cancelled, "cancelled") }
            let request = try template.request(for: policy)
            let state = SessionTaskState(policy: policy, template: template)
            transport.start(request, state: state)
            let head: ResponseHead
            do throws(DownloadError) {
                head = try state.waitForHead(until: .now + configuration.connectTimeout + configuration.headerTimeout,
                                             cancellation: cancellation)
            } catch {
                state.cancel()
                throw error
            }
            policy = state.policy
            guard RedirectPolicy.isRedirect(head.status) else {
                let reader = SessionReader(state: state, transport: transport, cancellation: cancellation,
                                           framing: framing(of: head, expectedLength: state.expectedLength),
                                           lowSpeedLimit: configuration.lowSpeedLimit, buffer: buffer)
                return (reader, head, policy.current)
            }
            // A redirect the session delivered instead of following (a status it does not
            // follow, a Location it cannot use): the policy decides, as for the native client.
            state.cancel()
            _ = try policy.follow(status: head.status, location: head.headers["Location"])
        }
    }

    /// Settings the transport cannot honour here are refused before any request.
    static func checkSupported(_ configuration: Downloader.Configuration) throws(DownloadError) {
        // URLSession verifies certificates itself. Custom trust would need the authentication
        // challenge delegate with SecTrust (Apple only); FoundationNetworking has no SecTrust.
        if configuration.tls.extraCAFile != nil || configuration.tls.insecure {
            throw DownloadError(.notSupported, "the URLSession transport cannot use --cacert or --insecure; use the native engine")
        }
        #if os(Linux)
        // A suspended FoundationNetworking task sends its request again when resumed, so the
        // body cannot be held back: a rate limit would pile the file up in memory.
        if configuration.rateLimit != nil {
            throw DownloadError(.notSupported, "the URLSession transport cannot limit the rate on Linux; use the native engine")
        }
        #endif
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
        if monitor == nil, let lowSpeedLimit { monitor = LowSpeedMonitor(lowSpeedLimit) }
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
                        if tooSlow, let monitor { throw monitor.failure }
                        if cancellation.isCancelled {
                            state.cancel()
                            throw DownloadError(.cancelled, "cancelled")
                        }
                        let started = ContinuousClock.now
                        switch try state.next(stallTimeout: stallTimeout, cancellation: cancellation) {
                        case .end:
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
