#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulHTTP

/// A user name and password for HTTP Basic authentication (`-u USER:PASSWORD`).
///
/// Sent to the request URL's origin (scheme, host and port) only: never after a redirect to
/// another origin. ``description`` never shows the password.
public struct Credentials: Sendable, Hashable, CustomStringConvertible {
    /// The user name.
    public var user: String
    /// The password.
    public var password: String

    /// Creates credentials.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// `Credentials(user: NAME, password: <redacted>)`.
    public var description: String { "Credentials(user: \(user), password: <redacted>)" }

    var basic: BasicCredentials { BasicCredentials(user: user, password: password) }
}

extension Downloader {
    /// Which proxy each request goes through (every redirect hop chooses again).
    ///
    /// ```swift
    /// var configuration = Downloader.Configuration()
    /// configuration.proxy = .url("http://user:secret@127.0.0.1:3128", noProxy: ["localhost", "10.0.0.0/8"])
    /// ```
    /// The rules are curl's; see the README's "Proxies, logins and cookies".
    public struct ProxyOptions: Sendable, Equatable {
        /// Where the proxy comes from.
        public enum Source: Sendable, Equatable {
            /// `http_proxy`, `https_proxy`/`HTTPS_PROXY`, `all_proxy`/`ALL_PROXY` from these
            /// variables (`nil`: the process environment, read when a download starts).
            case environment([String: String]?)
            /// No proxy at all.
            case none
            /// This proxy for every URL: `http://`, `https://`, `socks5://` or `socks5h://`, with
            /// the proxy's credentials as userinfo.
            case url(String)
        }

        /// Where the proxy comes from. Default: the environment.
        public var source: Source
        /// Hosts that bypass the proxy (names, IP addresses, CIDR blocks; `["*"]` for all);
        /// `nil`: `no_proxy`/`NO_PROXY` from the environment.
        public var noProxy: [String]?
        /// How an `https://` proxy's certificate is verified (apart from the origins' ``Downloader/TLSOptions``).
        public var tls: TLSOptions

        /// Creates proxy options.
        public init(source: Source = .environment(nil), noProxy: [String]? = nil, tls: TLSOptions = TLSOptions()) {
            self.source = source
            self.noProxy = noProxy
            self.tls = tls
        }

        /// Proxies from the process environment, as curl reads them.
        public static var environment: ProxyOptions { ProxyOptions() }
        /// No proxy.
        public static var none: ProxyOptions { ProxyOptions(source: .none) }
        /// One proxy for every URL except those in `noProxy`.
        public static func url(_ url: String, noProxy: [String]? = nil, tls: TLSOptions = TLSOptions()) -> ProxyOptions {
            ProxyOptions(source: .url(url), noProxy: noProxy, tls: tls)
        }

        /// The selector these options stand for.
        ///
        /// - Throws: `invalidArgument` for a malformed proxy URL or an unsupported scheme.
        package func selector() throws(DownloadError) -> ProxySelector {
            // The environment gives `no_proxy` too when no list is given, also with an explicit proxy (as curl).
            let explicit: String?
            var environment: [String: String]?
            switch source {
            case .environment(let variables): explicit = nil; environment = variables
            case .none: explicit = ""
            case .url(let url): explicit = url
            }
            let variables = environment ?? Self.processEnvironment()
            return try mappingHTTPErrors { () throws(HTTPClientError) in
                try ProxySelector(environment: variables, proxy: explicit, noProxy: noProxy?.joined(separator: ","))
            }
        }

        /// Whether ``selector()`` reads the process environment: with the environment as the
        /// source, or without a `noProxy` list (`no_proxy` then comes from there).
        package var readsProcessEnvironment: Bool {
            switch source {
            case .environment(let variables): return variables == nil
            case .none, .url: return noProxy == nil
            }
        }

        /// ``selector()``, or its error.
        package func selectorResult() -> Result<ProxySelector, DownloadError> {
            do throws(DownloadError) {
                return .success(try selector())
            } catch {
                return .failure(error)
            }
        }

        /// The variables ``ProxySelector`` reads, from the process environment (only those: the
        /// whole environment as a dictionary would cost more than the rest of a small download's setup).
        private static func processEnvironment() -> [String: String] {
            var variables: [String: String] = [:]
            for name in ProxySelector.environmentNames {
                if let value = getenv(name) { variables[name] = String(cString: value) }
            }
            return variables
        }
    }
}

/// Credentials per host from a `.netrc` file (`-n`, `--netrc-file`).
///
/// Looked up again for every host a download reaches, redirects included; the request URL's
/// own userinfo and ``DownloadRequest/credentials`` come first on the original origin. Never
/// printed.
public struct NetrcFile: Sendable, CustomStringConvertible {
    let netrc: Netrc

    /// Parses a netrc file's text (see the README for the tokens read).
    public init(parsing text: String) {
        netrc = Netrc(parsing: text)
    }

    /// Reads a netrc file, refusing one that group or others may access (as aria2 does).
    ///
    /// - Parameter path: the file.
    /// - Throws: `unsafePath` for a file that is not private or not a regular file;
    ///   `fileSystem` when it cannot be read.
    public init(contentsOf path: String) throws(DownloadError) {
        self.init(parsing: try readSmallTextFile(path, requirePrivate: true))
    }

    /// `NetrcFile(<redacted>)`.
    public var description: String { "NetrcFile(<redacted>)" }
}

/// Cookies from a Netscape `cookies.txt` (`-b`), sent where they match, redirects included.
public struct CookieFile: Sendable, CustomStringConvertible {
    let jar: CookieJar

    /// How many lines were skipped as malformed.
    public var malformedLines: Int { jar.malformedLines }
    /// How many cookies were loaded (expired ones are dropped).
    public var count: Int { jar.cookies.count }

    /// Parses a cookies.txt text; cookies that expired before `now` are dropped.
    public init(parsing text: String, now: Date = Date()) {
        jar = CookieJar(parsing: text, now: Int64(now.timeIntervalSince1970))
    }

    /// Reads a cookies.txt file.
    ///
    /// - Throws: `fileSystem` when it cannot be read; `unsafePath` when it is not a regular file.
    public init(contentsOf path: String, now: Date = Date()) throws(DownloadError) {
        self.init(parsing: try readSmallTextFile(path, requirePrivate: false), now: now)
    }

    /// `CookieFile(N cookies)`: never the values.
    public var description: String { "CookieFile(\(count) cookies)" }
}

/// Reads a regular file of at most 16 MiB as text.
private func readSmallTextFile(_ path: String, requirePrivate: Bool) throws(DownloadError) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw DownloadError(.fileSystem, "cannot open '\(path)': \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
        throw DownloadError(.unsafePath, "'\(path)' is not a regular file")
    }
    if requirePrivate && info.st_mode & 0o077 != 0 {
        throw DownloadError(.unsafePath, "'\(path)' may be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); "
                            + "not used: make it private with chmod 600")
    }
    guard info.st_size <= 16 << 20 else { throw DownloadError(.fileSystem, "'\(path)' is larger than 16 MiB") }
    var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
    var filled = 0
    while filled < bytes.count {
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        filled += count
    }
    return String(decoding: bytes[..<filled], as: UTF8.self)
}
