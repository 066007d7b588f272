#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Downloader {
    /// Settings shared by every download of one ``Downloader``.
    public struct Configuration: Sendable {
        /// How long to wait for a TCP (and TLS) connection. Default 30 s.
        public var connectTimeout: Duration = .seconds(30)
        /// How long to wait for the whole response head once the request is sent. Default 30 s.
        public var headerTimeout: Duration = .seconds(30)
        /// A connection that delivers no byte for this long is dropped. Default 30 s.
        public var stallTimeout: Duration = .seconds(30)
        /// TLS trust settings.
        public var tls: TLSOptions = TLSOptions()
        /// Redirects followed before failing with ``DownloadError/Code/tooManyRedirects``. Default 20.
        public var maximumRedirects: Int = 20
        /// Whether a redirect from `https` to `http` is followed. Default `false`.
        public var allowsInsecureRedirects: Bool = false
        /// What to do when the chosen name exists, unless a request says otherwise. Default `.rename`.
        public var conflictPolicy: ConflictPolicy = .rename
        /// The `User-Agent` header.
        public var userAgent: String = "haul/\(HaulInfo.version)"
        /// Size of each connection's receive buffer (reused for the whole transfer). Default 1 MiB.
        public var bufferSize: Int = 1 << 20
        /// Minimum time between two progress events of one download. Default 0.1 s.
        public var progressInterval: Duration = .milliseconds(100)

        /// Creates the default configuration.
        public init() {}
    }

    /// How TLS certificates are verified.
    public struct TLSOptions: Sendable {
        /// A PEM file of extra CA certificates trusted besides the system store.
        public var extraCAFile: String?
        /// Skip certificate and hostname verification entirely (`-k`).
        public var insecure: Bool = false

        /// Creates TLS options.
        ///
        /// - Parameters:
        ///   - extraCAFile: extra CA certificates (PEM) to trust.
        ///   - insecure: when `true`, certificates are not verified.
        public init(extraCAFile: String? = nil, insecure: Bool = false) {
            self.extraCAFile = extraCAFile
            self.insecure = insecure
        }
    }
}

/// Facts about the library itself.
public enum HaulInfo {
    /// The library version, sent in `User-Agent: haul/<version>`.
    public static let version = "0.1.0"
}
