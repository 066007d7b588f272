import HaulService

/// The option tables of `haul daemon` and of the client commands, and their parsing.
enum DaemonArguments {
    /// The options of `haul daemon`, in help order.
    static let daemonTable: [OptionSpec] = [
        OptionSpec(.directory, "d", "dir", "DIR",
                   "the download root: every download lands in it or below (created if missing); required", kind: .directory),
        OptionSpec(.listen, nil, "listen", "HOST:PORT",
                   "where to serve JSON-RPC (HTTP POST and WebSocket at /jsonrpc); default 127.0.0.1:6800; "
                   + "an address other than loopback needs a secret"),
        OptionSpec(.secret, nil, "secret", "S",
                   "the secret every call carries as token:S; --secret= turns the check off (loopback only)"),
        OptionSpec(.secretFile, nil, "secret-file", "FILE",
                   "read the secret from FILE; with neither option, a random secret is made into a 0600 file "
                   + "beside the state file (its path is printed)", kind: .file),
        OptionSpec(.stateFile, nil, "state", "FILE|URL",
                   "the SQLite file that holds the list, default $XDG_STATE_HOME/haul/daemon.db; or a "
                   + "postgresql:// URL (its password from PGPASSWORD or ~/.pgpass, never the URL): the queue of "
                   + "a fleet of daemons", kind: .file),
        OptionSpec(.node, nil, "node", "NAME",
                   "with --state=postgresql://, this daemon's name in the fleet; default HOST-PID-RANDOM"),
        OptionSpec(.allowOrigin, nil, "allow-origin", "ORIGIN",
                   "also accept calls from web pages of ORIGIN (such as https://ui.example), repeatable", kind: .url),
        OptionSpec(.maxDownloads, "j", "max-downloads", "N", "downloads running at once; default 4", kind: .number),
        OptionSpec(.connections, "x", "connections", "N", "connections per download, 1-16; default 4", kind: .number),
        OptionSpec(.limitRate, nil, "limit-rate", "RATE", "overall cap in bytes/s, suffixes K, M, G (1024-based)", kind: .number),
        OptionSpec(.limitSchedule, nil, "limit-schedule", "SCHEDULE",
                   "the overall cap by local time: comma-separated [DAYS ]HH:MM-HH:MM=RATE, such as "
                   + "'Mon-Fri 09:00-18:00=2M, 23:00-07:00=0' (0 = no limit; the first listed wins); "
                   + "--limit-rate applies outside them"),
        OptionSpec(.json, nil, "json", nil, "log events as JSON lines on stdout instead of text on stderr"),
        OptionSpec(.onComplete, nil, "on-complete", "PROGRAM",
                   "run PROGRAM (no shell) when a download completes: arguments GID, 1, PATH as aria2's hook, the "
                   + "download's facts in HAUL_* variables; one at a time per download, stopped after 60 s, its "
                   + "output in the log", kind: .file),
        OptionSpec(.onError, nil, "on-error", "PROGRAM", "like --on-complete, when a download fails", kind: .file),
        OptionSpec(.confPath, nil, "conf-path", "FILE",
                   "read options from FILE: key=value lines as aria2.conf (keys are these long names, # comments); "
                   + "default $XDG_CONFIG_HOME/haul/daemon.conf when it exists; the command line wins", kind: .file),
        OptionSpec(.help, "h", "help", nil, "show this help and exit"),
    ]

    /// The options of `haul add`, `ls`, `pause`, `resume` and `rm`.
    static let clientTable: [OptionSpec] = [
        OptionSpec(.rpc, nil, "rpc", "URL", "the daemon's JSON-RPC address; default http://127.0.0.1:6800/jsonrpc", kind: .url),
        OptionSpec(.secretFile, nil, "secret-file", "FILE",
                   "the file holding the daemon's secret; default the one haul daemon makes by default", kind: .file),
        // A folder on the daemon's side, relative to its root: local folder names would mislead.
        OptionSpec(.directory, "d", "dir", "DIR", "(add) a folder inside the daemon's download root", kind: .text),
        OptionSpec(.output, "o", "output", "NAME", "(add, one URL) the file name"),
        OptionSpec(.help, "h", "help", nil, "show this help and exit"),
    ]

    /// The client options only `add` takes: the parser refuses them for the other commands.
    static let addOnly: Set<OptionSpec.ID> = [.directory, .output]

    /// The options client command `action` takes: ``clientTable``, without ``addOnly`` unless
    /// `action` is `add`.
    static func clientTable(for action: ClientOptions.Action) -> [OptionSpec] {
        action == .add ? clientTable : clientTable.filter { !addOnly.contains($0.id) }
    }

    /// Reads the daemon's config file: `--conf-path`'s value, or `nil` for the default file
    /// (which may be missing: then `nil`).
    typealias ConfigReader = (String?) throws(UsageError) -> DaemonConfigFile?

    /// Parses `haul daemon ...` (the arguments after `daemon`), under the options of its config file.
    ///
    /// - Parameter config: reads the config file; by default there is none.
    static func parseDaemon(_ arguments: ArraySlice<String>, config: ConfigReader = { _ throws(UsageError) in nil })
        throws(UsageError) -> ParsedCommand {
        let (given, operands) = try ArgumentParser.scan(arguments, table: daemonTable)
        if given.contains(where: { $0.0.id == .help }) { return .daemonHelp }
        if let extra = operands.first { throw UsageError("unexpected argument '\(extra)' for daemon") }
        var daemon = DaemonOptions()
        if let file = try config(given.last(where: { $0.0.id == .confPath })?.1) {
            daemon.configFile = file.path
            for (entry, spec, value) in try options(in: file) where !given.contains(where: { overrides($0.0.id, spec.id) }) {
                do throws(UsageError) {
                    try apply(spec, value, to: &daemon)
                } catch {
                    throw UsageError("\(file.path):\(entry.line): \(error.message)")
                }
            }
        }
        for (spec, value) in given { try apply(spec, value, to: &daemon) }
        guard daemon.directory != nil else { throw UsageError("missing --dir=DIR for daemon") }
        if daemon.secret != nil && daemon.secretFile != nil { throw UsageError("--secret and --secret-file exclude each other") }
        return .daemon(daemon)
    }

    /// The options a config file gives, each with its line; a flag's `false` gives nothing.
    ///
    /// - Throws: ``UsageError`` naming the line for a key that is not a daemon option, `help` or
    ///   `conf-path`, a flag's value other than `true` or `false`, `secret=` in a file that
    ///   group or others may read, or a hook in a file that another user may change.
    static func options(in file: DaemonConfigFile) throws(UsageError) -> [(DaemonConfigFile.Entry, OptionSpec, String?)] {
        var options: [(DaemonConfigFile.Entry, OptionSpec, String?)] = []
        for entry in file.entries {
            let place = "\(file.path):\(entry.line)"
            guard let spec = daemonTable.first(where: { $0.long == entry.key }), spec.id != .help, spec.id != .confPath else {
                throw UsageError("\(place): unknown option '\(entry.key)' (the keys are haul daemon's long option names)")
            }
            if (spec.id == .onComplete || spec.id == .onError) && !file.isGuarded {
                throw UsageError("\(place): \(entry.key)= in a file that another user may change: chmod go-w \(file.path) "
                                 + "(owned by this user or root)")
            }
            if spec.id == .secret && !file.isPrivate {
                throw UsageError("\(place): secret= in a file that group or others may read: chmod 600 \(file.path)")
            }
            if spec.takesValue {
                options.append((entry, spec, entry.value))
            } else if entry.value == "true" {
                options.append((entry, spec, nil))
            } else if entry.value != "false" {
                throw UsageError("\(place): invalid value '\(entry.value)' for \(entry.key): expected true or false")
            }
        }
        return options
    }

    /// Whether an option on the command line replaces `file`'s option from the config file (the
    /// same option, or the other way to give the secret).
    private static func overrides(_ given: OptionSpec.ID, _ file: OptionSpec.ID) -> Bool {
        let secrets: Set<OptionSpec.ID> = [.secret, .secretFile]
        return given == file || (secrets.contains(given) && secrets.contains(file))
    }

    /// Sets one of the daemon's options.
    private static func apply(_ spec: OptionSpec, _ value: String?, to daemon: inout DaemonOptions) throws(UsageError) {
        let text = value ?? ""
        switch spec.id {
        case .directory: daemon.directory = try nonEmpty(text, spec)
        case .listen:
            guard ListenAddressSyntax.isValid(text) else {
                throw UsageError("invalid value '\(text)' for --listen: expected HOST:PORT with an IP address, such as 127.0.0.1:6800")
            }
            daemon.listen = text
            daemon.listenGiven = true
        case .secret: daemon.secret = text
        case .secretFile: daemon.secretFile = try nonEmpty(text, spec)
        case .stateFile: daemon.stateFile = try nonEmpty(text, spec)
        case .node: daemon.node = try nonEmpty(text, spec)
        case .allowOrigin:
            guard text.hasPrefix("http://") || text.hasPrefix("https://") else {
                throw UsageError("invalid value '\(text)' for --allow-origin: expected http(s)://host[:port]")
            }
            daemon.allowedOrigins.append(text)
        case .maxDownloads: daemon.maxDownloads = try number(text, spec, 1...1024)
        case .connections: daemon.connections = try number(text, spec, 1...16)
        case .limitRate:
            guard let rate = ArgumentParser.byteCount(text), rate >= 1 else {
                throw UsageError("invalid value '\(text)' for --limit-rate: expected bytes per second above 0, such as 500K or 2M")
            }
            daemon.rateLimit = rate
        case .limitSchedule:
            do throws(LimitSchedule.ParseError) {
                daemon.limitSchedule = try LimitSchedule(parsing: text)
            } catch {
                throw UsageError("invalid value for --limit-schedule: \(error)")
            }
        case .json: daemon.json = true
        case .onComplete: daemon.onComplete = try nonEmpty(text, spec)
        case .onError: daemon.onError = try nonEmpty(text, spec)
        default: break
        }
    }

    /// Parses `haul add|ls|pause|resume|rm ...` (the arguments after the command).
    static func parseClient(_ action: ClientOptions.Action, _ arguments: ArraySlice<String>) throws(UsageError) -> ParsedCommand {
        let (options, operands) = try ArgumentParser.scan(arguments, table: clientTable)
        var client = ClientOptions(action: action)
        for (spec, value) in options {
            let text = value ?? ""
            switch spec.id {
            case .help: return .clientHelp
            case .rpc:
                guard text.hasPrefix("http://") else { throw UsageError("invalid value '\(text)' for --rpc: expected http://HOST:PORT/jsonrpc") }
                client.rpc = text
            case .secretFile: client.secretFile = try nonEmpty(text, spec)
            case .directory: client.directory = try nonEmpty(text, spec)
            case .output: client.output = try nonEmpty(text, spec)
            default: break
            }
        }
        client.operands = operands
        switch action {
        case .list:
            if let extra = operands.first { throw UsageError("unexpected argument '\(extra)' for ls") }
        case .add:
            if operands.isEmpty { throw UsageError("missing URL for add") }
            if client.output != nil && operands.count > 1 { throw UsageError("--output can only be used with a single URL") }
        case .pause, .resume, .remove:
            if operands.isEmpty { throw UsageError("missing ID for \(action.rawValue)") }
        }
        if action != .add && options.contains(where: { addOnly.contains($0.0.id) }) {
            throw UsageError("--dir and --output apply to add only")
        }
        return .client(client)
    }

    private static func nonEmpty(_ text: String, _ spec: OptionSpec) throws(UsageError) -> String {
        guard !text.isEmpty else { throw UsageError("invalid value '' for \(spec.longSpelling): expected a value") }
        return text
    }

    private static func number(_ text: String, _ spec: OptionSpec, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit), let value = Int(text), range.contains(value) else {
            throw UsageError("invalid value '\(text)' for \(spec.longSpelling): expected a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }
}

/// `HOST:PORT` as `--listen` takes it (checked again, fully, when the daemon starts).
enum ListenAddressSyntax {
    static func isValid(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (0...65535).contains(port) else { return false }
        return !text[..<colon].isEmpty
    }
}
