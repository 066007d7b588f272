import HaulCore
/// Decides whether and where to follow redirects, and what may be sent after each hop.
///
/// A pure value: the connection code asks ``follow(status:location:)`` for the next URL and
/// builds the request from ``current``, ``userHeaders`` and ``sendsUserinfo``. The user's
/// headers (including `Authorization`, `Cookie`, `Proxy-Authorization`) and the URL's userinfo
/// are sent to the original origin only: the first change of scheme, host or port drops them
/// for good, even if a later hop comes back.
package struct RedirectPolicy: Sendable {
    /// The URL to request next.
    package private(set) var current: HTTPURL
    /// The user's headers; emptied for good on the first change of origin.
    package private(set) var userHeaders: [(name: String, value: String)]
    /// Whether the URL's user and password may be sent; `false` for good after leaving the original origin.
    package private(set) var sendsUserinfo: Bool
    /// How many redirects were followed.
    package private(set) var hops: Int

    private let maximumRedirects: Int
    private let allowsInsecureRedirects: Bool
    private var visited: Set<String>
    /// The first URL (the first of ``visited``, once a redirect comes).
    private let original: HTTPURL

    /// Starts a chain at the URL the user gave.
    ///
    /// - Parameters:
    ///   - original: the first URL.
    ///   - userHeaders: the user's extra headers.
    ///   - maximumRedirects: the most redirects followed (20 like browsers).
    ///   - allowsInsecureRedirects: whether an https URL may redirect to http.
    package init(original: HTTPURL, userHeaders: [(name: String, value: String)], maximumRedirects: Int = 20,
         allowsInsecureRedirects: Bool = false) {
        self.current = original
        self.original = original
        self.userHeaders = userHeaders
        self.sendsUserinfo = true
        self.hops = 0
        self.maximumRedirects = maximumRedirects
        self.allowsInsecureRedirects = allowsInsecureRedirects
        self.visited = []   // the original goes in at the first redirect: most chains have none
    }

    /// Whether a status is a redirect Haul follows: 301, 302, 303, 307 or 308.
    package static func isRedirect(_ status: Int) -> Bool {
        [301, 302, 303, 307, 308].contains(status)
    }

    /// Follows a redirect answer and returns the next URL (also in ``current``).
    ///
    /// - Parameters:
    ///   - status: the redirect status.
    ///   - location: the `Location` header value.
    /// - Returns: the URL to request next, with the original userinfo only while on the original origin.
    /// - Throws: `.redirectRefused` for a missing, empty or invalid Location, a non-http(s) target
    ///   or https to http (unless allowed); `.tooManyRedirects` for a loop or too many hops.
    package mutating func follow(status: Int, location: String?) throws(HTTPClientError) -> HTTPURL {
        guard Self.isRedirect(status) else {
            throw HTTPClientError(.internalError, "status \(status) is not a redirect")
        }
        let location = location?.trimmingOWS() ?? ""
        guard !location.isEmpty else {
            throw HTTPClientError(.redirectRefused, "redirect (status \(status)) without a Location header refused")
        }
        var next: HTTPURL
        do {
            next = try current.resolving(location)
        } catch where error.kind == .invalidURL {
            throw HTTPClientError(.redirectRefused, "redirect to an invalid URL refused: \(error.message)")
        }
        if current.scheme == .https && next.scheme == .http && !allowsInsecureRedirects {
            throw HTTPClientError(.redirectRefused, "redirect from https to http refused (\(next))")
        }
        if visited.isEmpty { visited.insert(original.stringWithoutUserinfo) }
        guard visited.insert(next.stringWithoutUserinfo).inserted else {
            throw HTTPClientError(.tooManyRedirects, "redirect loop at \(next)")
        }
        guard hops < maximumRedirects else {
            throw HTTPClientError(.tooManyRedirects, "more than \(maximumRedirects) redirects")
        }
        if next.origin != current.origin {
            userHeaders = []
            sendsUserinfo = false
        }
        if sendsUserinfo {
            next.user = current.user
            next.password = current.password
        } else {
            next = next.withoutUserinfo()
        }
        hops += 1
        current = next
        return next
    }
}
