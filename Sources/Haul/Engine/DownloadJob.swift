#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Drives one download on its own thread: check the destination, connect, follow redirects,
/// validate the status, choose the name, stream the body into the partial file, commit.
///
/// Retryable failures start another attempt after a backoff (see ``RetryPolicy``).
struct DownloadJob {
    let request: DownloadRequest
    let destination: Destination
    let configuration: Downloader.Configuration
    let control: DownloadControl
    let events: EventQueue

    func run() throws(DownloadError) -> DownloadResult {
        try Self.validate(configuration)
        let url = try HTTPURL.parse(request.url.absoluteString)
        // Bad headers are usage errors: find them before any network I/O.
        _ = try RequestHead.make(method: .get, url: url, userAgent: configuration.userAgent, userHeaders: request.headers,
                                 sendUserinfo: true, range: nil, ifRange: nil)
        let target = try DownloadTarget(destination: destination)
        let tls = TLSContextCache(options: configuration.tls)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: configuration.bufferSize, alignment: 4096)
        defer { buffer.deallocate() }

        var attempt = 0
        while true {
            let cancellation = control.signal
            do throws(DownloadError) {
                return try attemptOnce(url: url, target: target, tls: tls, buffer: buffer, cancellation: cancellation)
            } catch {
                if cancellation.isCancelled { throw DownloadError(.cancelled, "cancelled; the partial file is kept") }
                attempt += 1
                guard error.isRetryable, attempt <= configuration.retry.maximumRetries else { throw error }
                let delay = configuration.retry.delay(beforeRetry: attempt, jitter: Double.random(in: 0...1))
                events.yield(.retrying(attempt: attempt, delay: delay.seconds, error: error))
                if !cancellation.sleep(for: delay) { throw DownloadError(.cancelled, "cancelled; the partial file is kept") }
            }
        }
    }

    private func attemptOnce(url: HTTPURL, target: DownloadTarget, tls: TLSContextCache,
                             buffer: UnsafeMutableRawBufferPointer, cancellation: CancellationSignal) throws(DownloadError) -> DownloadResult {
        let exchange = try HTTPExchange.open(url: url, userHeaders: request.headers, configuration: configuration,
                                             tls: tls, cancellation: cancellation, buffer: buffer)
        defer { exchange.reader.connection.close() }
        let head = exchange.head
        try Self.validate(head)

        let policy = request.conflictPolicy ?? configuration.conflictPolicy
        let name: String
        let replace: Bool
        switch try target.choose(response: head, originalURL: url, policy: policy) {
        case .skip(let existing):
            return DownloadResult(response: head, fileURL: target.fileURL(existing), byteCount: 0, skipped: true)
        case .write(let chosen, let replaces):
            name = chosen
            replace = replaces
        }
        var reserved = [name]
        defer { for name in reserved { target.release(name) } }

        let partial = try PartialFile(creating: name + PartialFile.suffix, in: target.folder)
        let written: Int64
        do throws(DownloadError) {
            written = try transfer(exchange: exchange, url: url, fileURL: target.fileURL(name), into: partial)
            try partial.finishWriting()
        } catch {
            // Bytes that arrived intact before a network failure, a full disk or a cancellation are
            // kept for a resume; after a protocol or integrity failure they cannot be trusted.
            if error.code == .cancelled || error.code == .diskFull || error.code.exitStatus == 4 || cancellation.isCancelled {
                partial.closeKeeping()
            } else {
                partial.discard()
            }
            throw error
        }

        // The complete file gets its name. If that name appeared meanwhile (another program),
        // `.rename` moves on to the next free name; any other policy keeps the partial and says so.
        var finalName = name
        while true {
            do throws(DownloadError) {
                try partial.publish(as: finalName, replace: replace)
                return DownloadResult(response: head, fileURL: target.fileURL(finalName), byteCount: written, skipped: false)
            } catch {
                guard error.code == .destinationExists, policy == .rename, let next = target.nextFreeName(after: name) else {
                    throw error
                }
                reserved.append(next)
                finalName = next
            }
        }
    }

    /// Streams the body into `partial`; returns the byte count.
    private func transfer(exchange: HTTPExchange, url: HTTPURL, fileURL: URL, into partial: PartialFile) throws(DownloadError) -> Int64 {
        var total: Int64?
        if case .length(let n)? = exchange.reader.parser.framing { total = n }
        let progress = ProgressReporter(events: events, interval: configuration.progressInterval)
        events.yield(.started(DownloadStart(redactedURL: url.description, fileURL: fileURL, totalBytes: total,
                                            resumedFrom: 0, connections: 1, response: exchange.head)))
        progress.start(total: total, alreadyComplete: 0)
        defer { progress.finish() }

        var written: Int64 = 0
        try exchange.reader.readBody(stallTimeout: configuration.stallTimeout) { (slice) throws(DownloadError) in
            try partial.write(slice, at: written)
            written += Int64(slice.count)
            progress.add(slice.count)
        }
        if let total, written != total {
            throw DownloadError(.lengthMismatch, "received \(written) bytes, expected \(total)")
        }
        return written
    }

    /// Any non-2xx final status is an error, and its body is never saved.
    static func validate(_ head: ResponseHead) throws(DownloadError) {
        let status = head.status
        let said = head.reason.isEmpty ? "\(status)" : "\(status) \(head.reason)"
        switch status {
        case 200...205:
            return
        case 206:
            throw DownloadError(.rangeMismatch, "the server answered 206 Partial Content to a request without Range", httpStatus: status)
        case 300..<400:
            // Redirects were followed already; any other 3xx (300, 304, 305...) leaves nothing to download.
            throw DownloadError(.redirectRefused, "the server answered \(said), which Haul cannot follow", httpStatus: status)
        case 401, 403, 407:
            throw DownloadError(.authenticationRefused, "the server refused access (\(said))", httpStatus: status)
        default:
            throw DownloadError(.httpStatus, "the server answered \(said)", httpStatus: status)
        }
    }

    /// Settings that cannot work are usage errors, reported before any I/O.
    static func validate(_ configuration: Downloader.Configuration) throws(DownloadError) {
        func invalid(_ what: String) -> DownloadError { DownloadError(.invalidArgument, what) }
        if configuration.bufferSize < 64 * 1024 { throw invalid("the buffer size must be at least 64 KiB") }
        if configuration.connectTimeout <= .zero { throw invalid("the connect timeout must be positive") }
        if configuration.headerTimeout <= .zero { throw invalid("the header timeout must be positive") }
        if configuration.stallTimeout <= .zero { throw invalid("the stall timeout must be positive") }
        if configuration.progressInterval < .milliseconds(10) { throw invalid("the progress interval must be at least 10 ms") }
        if configuration.maximumRedirects < 0 { throw invalid("the redirect limit cannot be negative") }
        if configuration.retry.maximumRetries < 0 || configuration.retry.initialDelay < .zero {
            throw invalid("retries and their delay cannot be negative")
        }
    }
}

/// One TLS context per download, made on first use (plain HTTP never loads the trust store).
final class TLSContextCache {
    private let options: Downloader.TLSOptions
    private var context: TLSContext?

    init(options: Downloader.TLSOptions) {
        self.options = options
    }

    func get() throws(DownloadError) -> TLSContext {
        if let context { return context }
        let made = try TLSContext(options: options)
        context = made
        return made
    }
}
