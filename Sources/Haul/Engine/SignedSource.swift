import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulCore
import HaulHTTP

/// Where a download's requests go: the request's URL as it is, or, with a ``URLSigner``, a URL
/// signed afresh for every request (each attempt, each segment connection).
///
/// A signed request the server refuses with a 403 because the signature expired (the body
/// says so, see ``isExpiredSignature(status:body:)``, or the signature is older than its
/// lifetime) is signed again and sent once more, from the same byte: nothing on disk is lost.
/// A server `Date` more than ``clockSkewLimit`` away from the local clock is reported once,
/// because a skewed clock makes fresh signatures look expired or not yet valid.
struct SignedSource: Sendable {
    /// How far the server's clock may be from ours before a warning.
    static let clockSkewLimit: Double = 300

    /// The URL naming the file and keying its resume record (the first signed URL with a signer).
    let base: HTTPURL
    private let original: URL
    private let signer: (any URLSigner)?
    private let userHeaders: [(name: String, value: String)]
    private let credentials: Credentials?
    private let skew: SkewWarning
    /// Which of the request's URLs this is (0: its own; `nil`: a mirror a server named).
    var requestIndex: Int? = 0

    /// The source of `request`: with a signer, signs once now to learn the `http(s)` URL.
    ///
    /// - Parameters:
    ///   - request: the download request.
    ///   - warn: called (once per download) with a warning for the user, such as clock skew.
    /// - Throws: `invalidURL`, `unsupportedScheme`, or the signer's failure.
    init(request: DownloadRequest, cancellation: CancellationSignal, warn: @escaping @Sendable (String) -> Void) throws(DownloadError) {
        try self.init(DownloadSource(url: request.url, headers: request.headers, credentials: request.credentials, signer: request.signer),
                      parsed: request.parsedURL, cancellation: cancellation, warn: warn)
    }

    /// The source of one mirror of a request (or of the request itself, `parsed` when known).
    init(_ source: DownloadSource, parsed: HTTPURL? = nil, cancellation: CancellationSignal,
         warn: @escaping @Sendable (String) -> Void) throws(DownloadError) {
        original = source.url
        signer = source.signer
        userHeaders = source.headers
        credentials = source.credentials
        skew = SkewWarning(warn: warn)
        if let signer = source.signer {
            let signed = try Self.sign(original, with: signer, cancellation: cancellation)
            base = try mappingHTTPErrors { () throws(HTTPClientError) in try HTTPURL.parse(signed.url.absoluteString) }
        } else if let parsed {
            base = parsed
        } else {
            base = try mappingHTTPErrors { () throws(HTTPClientError) in try HTTPURL.parse(source.url.absoluteString) }
        }
    }

    /// A mirror a server named (RFC 6249): its URL as it is, with no headers, credentials or signer.
    init(linked url: HTTPURL, warn: @escaping @Sendable (String) -> Void) {
        base = url
        original = URL(string: url.stringWithoutUserinfo) ?? URL(fileURLWithPath: "/")
        signer = nil
        userHeaders = []
        credentials = nil
        skew = SkewWarning(warn: warn)
        requestIndex = nil
    }

    /// Sends a GET (freshly signed with a signer) and returns the final response, redirects
    /// followed, renewing an expired signature once.
    ///
    /// - Throws: what ``HTTPExchange/open(url:userHeaders:range:ifRange:context:cancellation:buffer:)``
    ///   throws; `authenticationRefused` for a 403 that renewing does not cure.
    func open(range: ByteRangeRequest?, ifRange: String?, context: HTTPExchange.Context, cancellation: CancellationSignal,
              buffer: UnsafeMutableRawBufferPointer) throws(DownloadError) -> HTTPExchange {
        guard let signer else {
            return try HTTPExchange.open(url: base, userHeaders: userHeaders, credentials: credentials, range: range, ifRange: ifRange,
                                         context: context, cancellation: cancellation, buffer: buffer)
        }
        var renewed = false
        while true {
            let signed = try Self.sign(original, with: signer, cancellation: cancellation)
            let url = try mappingHTTPErrors { () throws(HTTPClientError) in try HTTPURL.parse(signed.url.absoluteString) }
            let exchange = try HTTPExchange.open(url: url, userHeaders: userHeaders + signed.headers, credentials: credentials, range: range,
                                                 ifRange: ifRange, context: context, cancellation: cancellation, buffer: buffer)
            skew.check(exchange.head)
            guard exchange.head.status == 403, !renewed else { return exchange }
            let body = Self.errorBody(of: exchange, stallTimeout: context.configuration.stallTimeout)
            exchange.close()
            if isExpiredSignature(status: 403, body: body) || signed.isExpired(at: Date()) {
                renewed = true
                continue
            }
            let reason = exchange.head.reason.isEmpty ? "403" : "403 \(exchange.head.reason)"
            throw DownloadError(.authenticationRefused, "the server refused access (\(reason))", httpStatus: 403)
        }
    }

    /// The first 4 KiB of an error response's body (empty when it cannot be read).
    private static func errorBody(of exchange: HTTPExchange, stallTimeout: Duration) -> [UInt8] {
        var body: [UInt8] = []
        _ = try? exchange.readBody(stallTimeout: min(stallTimeout, .seconds(5))) { (slice) throws(DownloadError) -> Bool in
            body += slice.prefix(4096 - body.count)
            return body.count < 4096
        }
        return body
    }

    /// Calls the signer from this (non-async) thread and waits for it; cancellation stops the wait.
    private static func sign(_ url: URL, with signer: any URLSigner,
                             cancellation: CancellationSignal) throws(DownloadError) -> SignedRequest {
        let result = SignResult()
        let done = DispatchSemaphore(value: 0)
        let now = Date()
        let task = Task {
            let outcome: Result<SignedRequest, DownloadError>
            do {
                outcome = .success(try await signer.sign(url, now: now))
            } catch let error as DownloadError {
                outcome = .failure(error)
            } catch {
                outcome = .failure(DownloadError(.authenticationRefused, "the URL signer failed (\(type(of: error)))"))
            }
            result.value.withLock { $0 = outcome }
            done.signal()
        }
        while done.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
            if cancellation.isCancelled {
                task.cancel()
                throw DownloadError(.cancelled, "cancelled")
            }
        }
        guard let outcome = result.value.withLock({ $0 }) else { throw DownloadError(.internalError, "the signer gave no answer") }
        return try outcome.get()
    }
}

/// The signer's answer, handed from its task to the waiting thread.
private final class SignResult: Sendable {
    let value = SharedStateLock<Result<SignedRequest, DownloadError>?>(nil)
}

/// Warns once when a server's `Date` is far from the local clock.
private final class SkewWarning: Sendable {
    private let warned = SharedStateLock(false)
    private let warn: @Sendable (String) -> Void

    init(warn: @escaping @Sendable (String) -> Void) {
        self.warn = warn
    }

    func check(_ head: ResponseHead) {
        guard let text = head.headers["Date"], let server = HTTPDate.secondsSince1970(text) else { return }
        let offset = Double(server) - Date().timeIntervalSince1970
        guard abs(offset) > SignedSource.clockSkewLimit else { return }
        let first = warned.withLock { warned in
            defer { warned = true }
            return !warned
        }
        guard first else { return }
        let minutes = Int((abs(offset) / 60).rounded())
        warn("the server's clock is \(minutes) minutes \(offset > 0 ? "ahead of" : "behind") this computer's "
             + "(Date: \(text)); signed URLs may be refused as expired or not yet valid")
    }
}

/// The IMF-fixdate form of HTTP dates (RFC 9110 section 5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Seconds since 1970 of an IMF-fixdate, or `nil` when `text` is not one.
    static func secondsSince1970(_ text: String) -> Int64? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
              let day = Int64(parts[1]), let monthIndex = months.firstIndex(of: String(parts[2])), let year = Int64(parts[3]) else {
            return nil
        }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, let hour = Int64(clock[0]), let minute = Int64(clock[1]), let second = Int64(clock[2]),
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else {
            return nil
        }
        // Days from the civil date (H. Hinnant's algorithm).
        let month = Int64(monthIndex + 1)
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }
}
