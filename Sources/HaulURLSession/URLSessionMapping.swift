#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import Haul
import HaulCore
import HaulHTTP

/// What every request of one exchange shares, to build the first request and each redirect hop
/// with the same headers as Haul's own client (see ``RequestHead/make(method:url:userAgent:userHeaders:sendUserinfo:range:ifRange:)``).
struct SessionRequestTemplate: Sendable {
    var userAgent: String
    var range: ByteRangeRequest?
    var ifRange: String?
    /// URLSession's own idle timeout: a backstop behind Haul's header and stall timeouts.
    var timeout: Duration

    /// The request for the policy's current URL, with the headers the policy allows there:
    /// `User-Agent`, `Accept`, `Accept-Encoding: identity`, `Range`/`If-Range`, the user's headers
    /// and userinfo credentials on the original origin only. The URL itself never carries userinfo.
    ///
    /// - Throws: `invalidArgument` for a header Haul's client would refuse; `invalidURL`.
    func request(for policy: RedirectPolicy) throws(DownloadError) -> URLRequest {
        let current = policy.current
        let head = try mappingHTTPErrors { () throws(HTTPClientError) in
            try RequestHead.make(method: .get, url: current, userAgent: userAgent, userHeaders: policy.userHeaders,
                                 sendUserinfo: policy.sendsUserinfo, range: range, ifRange: range == nil ? nil : ifRange)
        }
        guard let url = URL(string: current.stringWithoutUserinfo) else {
            throw DownloadError(.invalidURL, "Foundation cannot represent \(current)")
        }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout.seconds)
        request.httpMethod = "GET"
        request.httpShouldHandleCookies = false
        for field in head.headers where !field.name.asciiCaseInsensitiveEquals("Host") {
            request.addValue(field.value, forHTTPHeaderField: field.name)
        }
        return request
    }
}

extension ResponseHead {
    /// The head of a `URLSession` response (status and fields; the HTTP version and reason
    /// phrase are not exposed by Foundation: HTTP/1.1 and an empty reason are assumed).
    init(_ response: URLResponse) {
        guard let http = response as? HTTPURLResponse else {
            self.init(status: 200)
            return
        }
        var headers = HTTPHeaders()
        let fields = http.allHeaderFields.map { (name: "\($0.key)", value: "\($0.value)") }
        for field in fields.sorted(by: { $0.name < $1.name }) { headers.add(name: field.name, value: field.value) }
        self.init(minorVersion: 1, status: http.statusCode, headers: headers)
    }
}

extension DownloadError {
    /// The Haul error for a `URLSession` task failure.
    ///
    /// - Parameters:
    ///   - error: the task's error (a `URLError` as a rule).
    ///   - afterHead: whether the response head had arrived (a lost connection then cut the body).
    init(urlSessionError error: any Error, afterHead: Bool) {
        guard let urlError = error as? URLError else {
            self.init(.networkError, "URLSession failed: \(error)")
            return
        }
        let code: Code
        switch urlError.code {
        case .cancelled: code = .cancelled
        case .timedOut: code = afterHead ? .stalled : .connectTimeout
        case .cannotFindHost, .dnsLookupFailed: code = .dnsFailure
        case .cannotConnectToHost: code = .connectionRefused
        case .networkConnectionLost: code = afterHead ? .truncatedBody : .connectionReset
        case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData:
            code = .malformedResponse
        case .httpTooManyRedirects: code = .tooManyRedirects
        case .redirectToNonExistentLocation: code = .redirectRefused
        case .unsupportedURL: code = .unsupportedScheme
        case .badURL: code = .invalidURL
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
             .serverCertificateHasUnknownRoot:
            code = .tlsCertificateUntrusted
        case .secureConnectionFailed, .clientCertificateRejected, .clientCertificateRequired:
            code = .tlsHandshakeFailed
        default: code = .networkError
        }
        self.init(code, "URLSession: \(urlError.localizedDescription) (\(urlError.code.rawValue))", underlying: urlError)
    }
}
