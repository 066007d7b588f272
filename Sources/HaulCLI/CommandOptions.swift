#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul

/// What one `haul` invocation asks for, once the arguments are parsed and validated.
public enum ParsedCommand: Sendable, Equatable {
    /// Download the URLs with these options.
    case download(CommandOptions)
    /// `haul demo ...`.
    case demo(DemoOptions)
    /// `-h` / `--help`: print the help.
    case help
    /// `haul demo --help`.
    case demoHelp
    /// `-V` / `--version`: print the version.
    case version
    /// `haul daemon ...`.
    case daemon(DaemonOptions)
    /// `haul daemon --help`.
    case daemonHelp
    /// `haul add|ls|pause|resume|rm ...`: a call to a running daemon.
    case client(ClientOptions)
    /// The client commands' `--help`.
    case clientHelp
}

/// The options of a download run, with the contract's defaults.
public struct CommandOptions: Sendable, Equatable {
    /// One `-H 'Name: value'` header.
    public struct Header: Sendable, Equatable {
        /// The field name (an HTTP token).
        public var name: String
        /// The field value, trimmed of surrounding spaces.
        public var value: String

        /// Creates a header.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The download engine (`--engine`).
    public enum Engine: String, Sendable, Equatable, CaseIterable {
        /// Haul's own HTTP/1.1 engine.
        case native
        /// Foundation's `URLSession` (data tasks; Haul's engine, storage and redirect policy).
        case urlSession = "urlsession"
    }

    /// The values of `--metalink`: whether a server's Metalink link is followed.
    public enum MetalinkMode: String, Sendable, CaseIterable {
        /// Follow `Link: rel=describedby` to a Metalink document.
        case follow
        /// Download the URL itself (the default).
        case off
    }

    /// The URLs given as arguments, in order.
    public var urls: [String] = []
    /// `-o FILE`: the single URL's exact destination.
    public var output: String?
    /// `-d DIR`: the folder downloads land in; the current directory when `nil`.
    public var directory: String?
    /// `-x N`: connections per download, 1...16.
    public var connections = 4
    /// `-j N`: downloads running at once, at least 1.
    public var maxDownloads = 4
    /// `--mirror URL` (repeatable): other servers of the single URL's file.
    public var mirrors: [String] = []
    /// `--max-sources N`: servers one download uses at most, 1...64.
    public var maxSources = 5
    /// `--metalink=follow`: a download whose server names a Metalink document gives way to it.
    public var followsMetalink = false
    /// `-i FILE`: more URLs, one per line; `-` is standard input.
    public var inputFile: String?
    /// `--limit-rate RATE`: the overall cap in bytes per second; `nil` for none.
    public var rateLimit: Int64?
    /// `--retries N`: attempts after a retryable failure.
    public var retries = 5
    /// `--retry-wait SECONDS`: the first backoff delay.
    public var retryWait: Duration = .seconds(1)
    /// `--retry-connrefused`: retry a refused connection before the server ever answered.
    public var retriesRefusedConnections = false
    /// `--connect-timeout SECONDS`.
    public var connectTimeout: Duration = .seconds(30)
    /// `--header-timeout SECONDS`.
    public var headerTimeout: Duration = .seconds(30)
    /// `--stall-timeout SECONDS`.
    public var stallTimeout: Duration = .seconds(30)
    /// `-H`: extra request headers, in order.
    public var headers: [Header] = []
    /// `--on-conflict MODE`.
    public var conflictPolicy: ConflictPolicy = .rename
    /// `false` with `--no-continue`: discard any partial download and start over.
    public var continuesPartial = true
    /// `--cacert FILE`.
    public var caCertificateFile: String?
    /// `-k`: skip certificate verification.
    public var insecure = false
    /// `--engine NAME`.
    public var engine: Engine = .native
    /// `--json`: one JSON event per line on standard output.
    public var json = false
    /// `-q`: nothing but errors.
    public var quiet = false
    /// `--checksum ALGO=HEX`.
    public var checksum: Checksum?
    /// `--endpoint URL`: the server for `s3://` and `oss://` URLs.
    public var endpoint: URL?
    /// `--proxy URL`: `nil` reads the environment, `""` turns proxies off.
    public var proxy: String?
    /// `--noproxy LIST`: `nil` reads `no_proxy`, `""` bypasses nothing.
    public var noProxy: String?
    /// `--proxy-cacert FILE`.
    public var proxyCACertificateFile: String?
    /// `--proxy-insecure`.
    public var proxyInsecure = false
    /// `-u USER:PASSWORD`.
    public var credentials: Credentials?
    /// `-n`: credentials from `$NETRC` or `~/.netrc`.
    public var netrc = false
    /// `--netrc-file FILE`.
    public var netrcFile: String?
    /// `-b FILE`: a Netscape cookies.txt.
    public var cookieFile: String?

    /// Creates the default options.
    public init() {}
}

/// The options of `haul demo`.
public struct DemoOptions: Sendable, Equatable {
    /// `--size SIZE`: bytes in the generated file. Default 512 MiB.
    public var size: Int64 = 512 << 20
    /// `--connections N`: connections of the second download. Default 4.
    public var connections = 4

    /// Creates the default demo options.
    public init() {}
}

/// A command-line mistake: printed as `haul: <message>` and a hint, exit status 2.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, in one sentence without the `haul: ` prefix.
    public var message: String

    /// Creates a usage error.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
