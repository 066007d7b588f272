import HaulCore
import HaulHTTP
extension Downloader {
    /// The HTTP client that moves a download's bytes.
    ///
    /// Either way the engine is the same: resume records, segments, naming, locking, checksums,
    /// status and `Content-Range` checks and the redirect policy are Haul's. Only the request and
    /// the response travel differently.
    ///
    /// - ``native``: Haul's own HTTP/1.1 client (sockets, OpenSSL, keep-alive pool). The default.
    ///   It enforces Haul's header size limits, reports framing errors itself and honours
    ///   ``TLSOptions`` on every platform.
    /// - `urlSession`: Foundation's `URLSession`, from the `HaulURLSession` module (`import
    ///   HaulURLSession`). It lives apart so that programs which do not use it do not load
    ///   Foundation's networking (on Linux FoundationNetworking, libcurl and their libraries,
    ///   which cost memory and start-up time in every process that links them).
    ///
    /// A transport is known by its ``name``, so another module can add one (as `HaulURLSession`
    /// adds `urlSession`).
    public struct Transport: Sendable, Hashable, CustomStringConvertible {
        /// The transport's name (`native`, `urlSession`).
        public let name: String
        /// Makes another client's transport for a downloader; `nil` for the native client.
        package let make: (@Sendable (Downloader.Configuration) -> any AlternateTransport)?

        /// Haul's own HTTP/1.1 client. The default.
        public static let native = Transport(name: "native", make: nil)

        /// A transport over another HTTP client, made once per ``Downloader``.
        package init(name: String, make: (@Sendable (Downloader.Configuration) -> any AlternateTransport)?) {
            self.name = name
            self.make = make
        }

        /// Whether two transports are the same client (by name).
        public static func == (lhs: Transport, rhs: Transport) -> Bool { lhs.name == rhs.name }

        /// Hashes the name.
        public func hash(into hasher: inout Hasher) { hasher.combine(name) }

        /// The transport's name.
        public var description: String { name }
    }
}

/// Another HTTP client behind the engine (the `URLSession` transport of `HaulURLSession`): sends
/// a GET, follows redirects under ``RedirectPolicy`` and hands the final response's body over.
/// One per ``Downloader`` (kept by its ``ConnectionPool``).
package protocol AlternateTransport: AnyObject, Sendable {
    /// Sends a GET for `url` and returns the body reader, the final response head and its URL.
    ///
    /// - Throws: network, TLS, protocol and redirect errors; `notSupported` for settings the
    ///   client cannot honour.
    func open(url: HTTPURL, userHeaders: [(name: String, value: String)], range: ByteRangeRequest?, ifRange: String?,
              configuration: Downloader.Configuration, cancellation: CancellationSignal,
              buffer: UnsafeMutableRawBufferPointer) throws(DownloadError) -> (any AlternateResponse, ResponseHead, HTTPURL)
}

/// The body of a response an ``AlternateTransport`` received, read through the receive buffer.
package protocol AlternateResponse: AnyObject {
    /// How the body is delimited, when the head says.
    var framing: ResponseParser.Framing? { get }
    /// The most bytes one read hands over.
    var readLimit: Int { get set }
    /// Reads body bytes into the buffer and passes them to `sink` until the end (`true`), or
    /// until `sink` returns `false` (`false`).
    func readBody(stallTimeout: Duration, _ sink: (UnsafeRawBufferPointer) throws(DownloadError) -> Bool) throws(DownloadError) -> Bool
    /// Moves cancellation to `signal` (a connection handed to another worker).
    func rebind(to signal: CancellationSignal)
    /// Stops the transfer.
    func close()
}
