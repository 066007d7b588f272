import Haul

/// One command-line option: its names, its value, its help and whether it works yet.
///
/// The tables below are the only place options are described: ``ArgumentParser`` reads them to
/// recognise options, ``HelpText`` to write `--help`, and ``ManPage`` and the completion scripts
/// (Sources/HaulCLI/Reference) to write `haul.1` and the shells' completions, so none can drift.
struct OptionSpec: Sendable {
    /// Identifies an option; the parser switches over it exhaustively.
    enum ID: Sendable, CaseIterable {
        case output, directory, connections, maxDownloads, inputFile, mirror, maxSources, metalink, checksum, limitRate
        case retries, retryWait, retryConnectionRefused, connectTimeout, headerTimeout, stallTimeout, header, onConflict
        case noContinue, caCert, insecure, engine, endpoint, json, quiet, help, version
        case proxy, noProxy, proxyCACert, proxyInsecure, user, netrc, netrcFile, cookies
        case demoSize, demoConnections
        case listen, secret, secretFile, stateFile, node, allowOrigin, rpc
        case confPath, onComplete, onError, limitSchedule
    }

    /// What an option's value is: the completions offer names of this kind.
    enum ValueKind: Sendable, Equatable {
        /// A local file: completed with file names.
        case file
        /// A local folder: completed with folder names.
        case directory
        /// A number, perhaps with a unit suffix: not completed.
        case number
        /// A URL: not completed (zsh offers what it knows of URLs).
        case url
        /// One word of a fixed set: completed with the set, in this order.
        case choice([String])
        /// Any other text: not completed.
        case text

        /// The raw values of `type`'s cases: the set the parser accepts (``ArgumentParser``
        /// reads the same cases), so the completions cannot offer a word it refuses.
        static func choice<T: CaseIterable & RawRepresentable>(of type: T.Type) -> ValueKind where T.RawValue == String {
            .choice(type.allCases.map(\.rawValue))
        }
    }

    /// Whether the option's feature exists yet.
    enum Availability: Sendable {
        /// Parsed and honoured.
        case available
        /// Parsed, then refused with a usage error; marked "(not yet supported)" in `--help`.
        case notYetSupported
    }

    /// The parser's key.
    let id: ID
    /// The one-letter name (`o` for `-o`), if any.
    let short: Character?
    /// The long name without dashes (`output` for `--output`).
    let long: String
    /// The value's placeholder in help (`FILE`), or `nil` for a flag that takes no value.
    let placeholder: String?
    /// One sentence for `--help`.
    let help: String
    /// Whether the feature exists yet.
    let availability: Availability
    /// What the value is, for the completions; `.text` unless the table says otherwise, and
    /// unused for a flag.
    let kind: ValueKind

    init(_ id: ID, _ short: Character? = nil, _ long: String, _ placeholder: String? = nil,
         _ help: String, _ availability: Availability = .available, kind: ValueKind = .text) {
        self.id = id
        self.short = short
        self.long = long
        self.placeholder = placeholder
        self.help = help
        self.availability = availability
        self.kind = kind
    }

    /// Whether the option needs a value.
    var takesValue: Bool { placeholder != nil }

    /// `--long` as the user types it.
    var longSpelling: String { "--" + long }
}

/// The option tables of `haul` and `haul demo`.
enum OptionTable {
    /// Every option of `haul [OPTION]... URL...`, in help order.
    static let download: [OptionSpec] = [
        OptionSpec(.output, "o", "output", "FILE",
                   "save the (single) URL as FILE; an existing FILE is replaced only when the download succeeds", kind: .file),
        OptionSpec(.directory, "d", "dir", "DIR",
                   "save into DIR (created if missing); default: the current directory; a relative -o "
                   + "is inside DIR, an absolute one ignores it", kind: .directory),
        OptionSpec(.connections, "x", "connections", "N",
                   "connections per download, 1-16; default 4; 1 disables splitting", kind: .number),
        OptionSpec(.maxDownloads, "j", "max-downloads", "N",
                   "downloads running at once; default 4; the others wait in a queue", kind: .number),
        OptionSpec(.inputFile, "i", "input-file", "FILE",
                   "read URLs from FILE, one per line ('-' = stdin); URLs separated by tabs on one line are servers "
                   + "of one file; blank lines and # comments are ignored", kind: .file),
        OptionSpec(.mirror, nil, "mirror", "URL",
                   "another server of the (single) URL's file, repeatable: segments come from every server (-x "
                   + "each), and one that fails or lags far behind is set aside; -H and -u go to the URL given only", kind: .url),
        OptionSpec(.maxSources, nil, "max-sources", "N",
                   "servers one download uses at most: its URL, its mirrors and those its server names "
                   + "(Link: rel=duplicate, never https to http); 1-64; default 5; 1 uses the URL alone", kind: .number),
        OptionSpec(.metalink, nil, "metalink", "MODE",
                   "follow: a download whose server names a Metalink document (Link: rel=describedby) gives way to "
                   + "it, and the document's files come with their servers, hashes and pieces; off (default)", kind: .choice(of: CommandOptions.MetalinkMode.self)),
        OptionSpec(.checksum, nil, "checksum", "ALGO=HEX",
                   "verify the file (sha256, sha512, sha1 or md5) before it gets its final name"),
        OptionSpec(.limitRate, nil, "limit-rate", "RATE",
                   "overall cap in bytes/s shared by all downloads, suffixes K, M, G (1024-based)", kind: .number),
        OptionSpec(.retries, nil, "retries", "N",
                   "attempts after a retryable failure; default 5; 0 = none; once a download used them "
                   + "all failing to connect to a host, the others do not retry that failure", kind: .number),
        OptionSpec(.retryWait, nil, "retry-wait", "SECONDS",
                   "first backoff delay; default 1; doubles, jittered, capped at 60", kind: .number),
        OptionSpec(.retryConnectionRefused, nil, "retry-connrefused", nil,
                   "retry a refused connection too (a server that is restarting); by default a download "
                   + "whose server never answered fails at once when refused"),
        OptionSpec(.connectTimeout, nil, "connect-timeout", "SECONDS",
                   "time allowed to connect; default 30", kind: .number),
        OptionSpec(.headerTimeout, nil, "header-timeout", "SECONDS",
                   "time allowed for the response head once the request is sent; default 30", kind: .number),
        OptionSpec(.stallTimeout, nil, "stall-timeout", "SECONDS",
                   "drop and retry a connection that delivers no byte for this long, waiting for the "
                   + "response head included; default 30", kind: .number),
        OptionSpec(.header, "H", "header", "'Name: value'",
                   "extra request header, repeatable; sent to the original origin only"),
        OptionSpec(.onConflict, nil, "on-conflict", "MODE",
                   "when the chosen name exists: rename (default, name.1.ext), overwrite, skip or fail", kind: .choice(of: ConflictPolicy.self)),
        OptionSpec(.noContinue, nil, "no-continue", nil,
                   "discard any partial download of this file and start over (a file an earlier run finished is downloaded again too)"),
        OptionSpec(.caCert, nil, "cacert", "FILE",
                   "also trust the CA certificates in this PEM file", kind: .file),
        OptionSpec(.insecure, "k", "insecure", nil,
                   "do not verify TLS certificates (warns once)"),
        OptionSpec(.engine, nil, "engine", "NAME",
                   "native (default) or urlsession", kind: .choice(of: CommandOptions.Engine.self)),
        OptionSpec(.endpoint, nil, "endpoint", "URL",
                   "the server for s3:// and oss:// URLs (an S3- or OSS-compatible one); credentials come from "
                   + "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION or "
                   + "OSS_ACCESS_KEY_ID, OSS_ACCESS_KEY_SECRET", kind: .url),
        OptionSpec(.proxy, nil, "proxy", "URL",
                   "proxy for every URL (long form only: -x is --connections): http:// (the default), https://, "
                   + "socks5:// (names resolved here) or socks5h:// (by the proxy); USER:PASSWORD@ in it are the "
                   + "proxy's credentials; overrides http_proxy, https_proxy and all_proxy; --proxy= turns them off", kind: .url),
        OptionSpec(.noProxy, nil, "noproxy", "LIST",
                   "comma-separated hosts, domains, IP addresses and CIDR blocks that bypass the proxy ('*' for all); "
                   + "overrides no_proxy; --noproxy= cancels it"),
        OptionSpec(.proxyCACert, nil, "proxy-cacert", "FILE",
                   "also trust the CA certificates in this PEM file for an https:// proxy", kind: .file),
        OptionSpec(.proxyInsecure, nil, "proxy-insecure", nil,
                   "do not verify an https:// proxy's certificate (origins are still verified)"),
        OptionSpec(.user, "u", "user", "USER:PASSWORD",
                   "Basic credentials for the URL's origin only (never after a redirect to another origin)"),
        OptionSpec(.netrc, "n", "netrc", nil,
                   "credentials per host from $NETRC or ~/.netrc (which must be private: chmod 600)"),
        OptionSpec(.netrcFile, nil, "netrc-file", "FILE",
                   "like --netrc, from FILE", kind: .file),
        OptionSpec(.cookies, "b", "cookies", "FILE",
                   "send the cookies of this Netscape cookies.txt file where they match, redirects included", kind: .file),
        OptionSpec(.json, nil, "json", nil,
                   "machine-readable events on stdout, one JSON object per line; no progress bar"),
        OptionSpec(.quiet, "q", "quiet", nil,
                   "print nothing but errors"),
        OptionSpec(.help, "h", "help", nil,
                   "show this help and exit"),
        OptionSpec(.version, "V", "version", nil,
                   "show the version and exit"),
    ]

    /// The options of `haul demo`.
    static let demo: [OptionSpec] = [
        OptionSpec(.demoSize, nil, "size", "SIZE",
                   "size of the generated file, suffixes K, M, G (1024-based); default 512M", kind: .number),
        OptionSpec(.demoConnections, nil, "connections", "N",
                   "connections for the second download, 1-16; default 4", kind: .number),
        OptionSpec(.help, "h", "help", nil,
                   "show this help and exit"),
    ]
}
