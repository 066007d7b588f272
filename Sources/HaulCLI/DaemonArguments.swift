import HaulService

/// The option tables of `haul daemon` and of the client commands, and their parsing.
enum DaemonArguments {
    /// The options of `haul daemon`, in help order.
    static let daemonTable: [OptionSpec] = [
        OptionSpec(.directory, "d", "dir", "DIR",
                   "the download root: every download lands in it or below (created if missing); required"),
        OptionSpec(.listen, nil, "listen", "HOST:PORT",
                   "where to serve JSON-RPC (HTTP POST and WebSocket at /jsonrpc); default 127.0.0.1:6800; "
                   + "an address other than loopback needs a secret"),
        OptionSpec(.secret, nil, "secret", "S",
                   "the secret every call carries as token:S; --secret= turns the check off (loopback only)"),
        OptionSpec(.secretFile, nil, "secret-file", "FILE",
                   "read the secret from FILE; with neither option, a random secret is made into a 0600 file "
                   + "beside the state file (its path is printed)"),
        OptionSpec(.stateFile, nil, "state", "FILE|URL",
                   "the SQLite file that holds the list, default $XDG_STATE_HOME/haul/daemon.db; or a "
                   + "postgresql:// URL (its password from PGPASSWORD or ~/.pgpass, never the URL): the queue of "
                   + "a fleet of daemons"),
        OptionSpec(.node, nil, "node", "NAME",
                   "with --state=postgresql://, this daemon's name in the fleet; default HOST-PID-RANDOM"),
        OptionSpec(.allowOrigin, nil, "allow-origin", "ORIGIN",
                   "also accept calls from web pages of ORIGIN (such as https://ui.example), repeatable"),
        OptionSpec(.maxDownloads, "j", "max-downloads", "N", "downloads running at once; default 4"),
        OptionSpec(.connections, "x", "connections", "N", "connections per download, 1-16; default 4"),
        OptionSpec(.limitRate, nil, "limit-rate", "RATE", "overall cap in bytes/s, suffixes K, M, G (1024-based)"),
        OptionSpec(.limitSchedule, nil, "limit-schedule", "SCHEDULE",
                   "the overall cap by local time: comma-separated [DAYS ]HH:MM-HH:MM=RATE, such as "
                   + "'Mon-Fri 09:00-18:00=2M, 23:00-07:00=0' (0 = no limit; the first listed wins); "
                   + "--limit-rate applies outside them"),
        OptionSpec(.json, nil, "json", nil, "log events as JSON lines on stdout instead of text on stderr"),
        OptionSpec(.help, "h", "help", nil, "show this help and exit"),
    ]

    /// The options of `haul add`, `ls`, `pause`, `resume` and `rm`.
    static let clientTable: [OptionSpec] = [
        OptionSpec(.rpc, nil, "rpc", "URL", "the daemon's JSON-RPC address; default http://127.0.0.1:6800/jsonrpc"),
        OptionSpec(.secretFile, nil, "secret-file", "FILE",
                   "the file holding the daemon's secret; default the one haul daemon makes by default"),
        OptionSpec(.directory, "d", "dir", "DIR", "(add) a folder inside the daemon's download root"),
        OptionSpec(.output, "o", "output", "NAME", "(add, one URL) the file name"),
        OptionSpec(.help, "h", "help", nil, "show this help and exit"),
    ]

    /// Parses `haul daemon ...` (the arguments after `daemon`).
    static func parseDaemon(_ arguments: ArraySlice<String>) throws(UsageError) -> ParsedCommand {
        let (options, operands) = try ArgumentParser.scan(arguments, table: daemonTable)
        var daemon = DaemonOptions()
        for (spec, value) in options {
            let text = value ?? ""
            switch spec.id {
            case .help: return .daemonHelp
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
            default: break
            }
        }
        if let extra = operands.first { throw UsageError("unexpected argument '\(extra)' for daemon") }
        guard daemon.directory != nil else { throw UsageError("missing --dir=DIR for daemon") }
        if daemon.secret != nil && daemon.secretFile != nil { throw UsageError("--secret and --secret-file exclude each other") }
        return .daemon(daemon)
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
        if action != .add && (client.directory != nil || client.output != nil) {
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
