#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul

/// Turns `haul`'s arguments into a ``ParsedCommand``, GNU style.
///
/// Accepted forms: `--name=value`, `--name value`, `-o value`, `-ovalue`, bundled flags (`-kq`,
/// `-kqo FILE`), `--` to end options, options anywhere among the URLs. A lone `-` is an operand.
/// Every mistake is a ``UsageError`` whose message matches GNU `getopt` where it can.
public enum ArgumentParser {
    /// Parses the arguments that follow the program name.
    ///
    /// - Parameter arguments: the arguments, without `argv[0]`.
    /// - Returns: what to do.
    /// - Throws: ``UsageError`` for an unknown option, a missing or invalid value, an option
    ///   that is not supported yet, a missing URL, or `-o` with several URLs.
    public static func parse(_ arguments: [String]) throws(UsageError) -> ParsedCommand {
        try parse(arguments, daemonConfig: { _ throws(UsageError) in nil })
    }

    /// Parses the arguments, `haul daemon`'s under the options of its config file.
    ///
    /// - Parameter daemonConfig: reads the daemon's config file (``DaemonConfigFile/load(_:environment:)``).
    static func parse(_ arguments: [String], daemonConfig: DaemonArguments.ConfigReader) throws(UsageError) -> ParsedCommand {
        if arguments.first == "demo" {
            return try parseDemo(arguments.dropFirst())
        }
        if arguments.first == "daemon" {
            return try DaemonArguments.parseDaemon(arguments.dropFirst(), config: daemonConfig)
        }
        if let first = arguments.first, let action = ClientOptions.Action(rawValue: first) {
            return try DaemonArguments.parseClient(action, arguments.dropFirst())
        }
        let (options, operands) = try scan(arguments[...], table: OptionTable.download)
        var command = CommandOptions()
        for (spec, value) in options {
            switch spec.id {
            case .help: return .help
            case .version: return .version
            default: try apply(spec, value, to: &command)
            }
        }
        command.urls = operands
        if command.urls.isEmpty && command.inputFile == nil {
            throw UsageError("missing URL")
        }
        if command.output != nil && command.urls.count > 1 {
            throw UsageError("--output can only be used with a single URL")
        }
        return .download(command)
    }

    private static func parseDemo(_ arguments: ArraySlice<String>) throws(UsageError) -> ParsedCommand {
        let (options, operands) = try scan(arguments, table: OptionTable.demo)
        var demo = DemoOptions()
        for (spec, value) in options {
            switch spec.id {
            case .help: return .demoHelp
            case .demoSize:
                guard let size = byteCount(value ?? ""), size >= 1 else {
                    throw invalidValue(value, spec, "expected a size such as 512M (suffixes K, M, G)")
                }
                demo.size = size
            case .demoConnections:
                demo.connections = try integer(value, spec, in: 1...16, "a whole number from 1 to 16")
            default:
                break
            }
        }
        if let extra = operands.first {
            throw UsageError("unexpected argument '\(extra)' for demo")
        }
        return .demo(demo)
    }

    /// Stores one option's value into `command`, validating it.
    private static func apply(_ spec: OptionSpec, _ value: String?, to command: inout CommandOptions) throws(UsageError) {
        if spec.availability == .notYetSupported {
            throw UsageError("\(spec.longSpelling) is not yet supported")
        }
        switch spec.id {
        case .output: command.output = try path(value, spec)
        case .directory: command.directory = try path(value, spec)
        case .inputFile: command.inputFile = try path(value, spec)
        case .caCert: command.caCertificateFile = try path(value, spec)
        case .connections:
            command.connections = try integer(value, spec, in: 1...16, "a whole number from 1 to 16")
        case .maxDownloads:
            command.maxDownloads = try integer(value, spec, in: 1...Int.max, "a whole number of at least 1")
        case .retries:
            command.retries = try integer(value, spec, in: 0...Int.max, "a whole number of at least 0")
        case .retryWait: command.retryWait = try duration(value, spec, allowsZero: true)
        case .connectTimeout: command.connectTimeout = try duration(value, spec, allowsZero: false)
        case .headerTimeout: command.headerTimeout = try duration(value, spec, allowsZero: false)
        case .stallTimeout: command.stallTimeout = try duration(value, spec, allowsZero: false)
        case .header: command.headers.append(try header(value ?? ""))
        case .mirror: command.mirrors.append(try controlFree(value, spec))
        case .maxSources: command.maxSources = try integer(value, spec, in: 1...64, "a whole number from 1 to 64")
        case .onConflict: command.conflictPolicy = try chosen(value, spec, as: ConflictPolicy.self)
        case .metalink: command.followsMetalink = try chosen(value, spec, as: CommandOptions.MetalinkMode.self) == .follow
        case .limitRate: command.rateLimit = try rate(value, spec)
        case .noContinue: command.continuesPartial = false
        case .retryConnectionRefused: command.retriesRefusedConnections = true
        case .insecure: command.insecure = true
        case .engine: command.engine = try chosen(value, spec, as: CommandOptions.Engine.self)
        case .json: command.json = true
        case .quiet: command.quiet = true
        case .checksum: command.checksum = try checksum(value, spec)
        case .endpoint: command.endpoint = try endpoint(value, spec)
        case .proxy: command.proxy = try controlFree(value, spec)
        case .noProxy: command.noProxy = try controlFree(value, spec)
        case .proxyCACert: command.proxyCACertificateFile = try path(value, spec)
        case .proxyInsecure: command.proxyInsecure = true
        case .user: command.credentials = try credentials(value, spec)
        case .netrc: command.netrc = true
        case .netrcFile: command.netrcFile = try path(value, spec)
        case .cookies: command.cookieFile = try path(value, spec)
        case .help, .version, .demoSize, .demoConnections, .listen, .secret, .secretFile, .stateFile, .node, .allowOrigin, .rpc,
             .confPath, .onComplete, .onError:
            break  // refused above, handled by the caller, or not in this table
        case .limitSchedule:
            break  // the daemon's
        }
    }

    // MARK: - Scanning

    /// Splits arguments into recognised options (with their values) and operands.
    ///
    /// - Throws: ``UsageError`` for an unknown option or a missing or unexpected value.
    static func scan(_ arguments: ArraySlice<String>, table: [OptionSpec]) throws(UsageError)
        -> (options: [(OptionSpec, String?)], operands: [String])
    {
        var options: [(OptionSpec, String?)] = []
        var operands: [String] = []
        var rest = arguments
        var optionsEnded = false
        while let argument = rest.popFirst() {
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                operands.append(argument)
            } else if argument == "--" {
                optionsEnded = true
            } else if argument.hasPrefix("--") {
                options.append(try scanLong(argument, table: table, rest: &rest))
            } else {
                options += try scanShort(argument, table: table, rest: &rest)
            }
        }
        return (options, operands)
    }

    /// One `--name`, `--name=value` or `--name value` option; takes its value from `rest` when
    /// it needs one and has none attached.
    ///
    /// - Throws: ``UsageError`` for an unknown name, or a missing or unexpected value.
    private static func scanLong(_ argument: String, table: [OptionSpec], rest: inout ArraySlice<String>)
        throws(UsageError) -> (OptionSpec, String?)
    {
        let body = argument.dropFirst(2)
        let name = body.prefix { $0 != "=" }
        let inline = name.endIndex < body.endIndex ? String(body[body.index(after: name.endIndex)...]) : nil
        guard let spec = table.first(where: { $0.long == name }) else {
            throw UsageError("unrecognized option '--\(name)'")
        }
        if spec.takesValue {
            guard let value = inline ?? rest.popFirst() else {
                throw UsageError("option '\(spec.longSpelling)' requires an argument")
            }
            return (spec, value)
        }
        if inline != nil {
            throw UsageError("option '\(spec.longSpelling)' doesn't allow an argument")
        }
        return (spec, nil)
    }

    /// Bundled short options (`-qc`, `-ofile`, `-o file`): flags up to the first letter that
    /// takes a value, whose value is the rest of the argument, or else the next one in `rest`.
    ///
    /// - Throws: ``UsageError`` for an unknown letter or a missing value.
    private static func scanShort(_ argument: String, table: [OptionSpec], rest: inout ArraySlice<String>)
        throws(UsageError) -> [(OptionSpec, String?)]
    {
        var options: [(OptionSpec, String?)] = []
        let letters = Array(argument.dropFirst())
        var position = 0
        while position < letters.count {
            let letter = letters[position]
            position += 1
            guard let spec = table.first(where: { $0.short == letter }) else {
                throw UsageError("invalid option -- '\(letter)'")
            }
            guard spec.takesValue else {
                options.append((spec, nil))
                continue
            }
            let attached = String(letters[position...])
            guard let value = attached.isEmpty ? rest.popFirst() : attached else {
                throw UsageError("option requires an argument -- '\(letter)'")
            }
            options.append((spec, value))
            break
        }
        return options
    }

    // MARK: - Values

    private static func invalidValue(_ value: String?, _ spec: OptionSpec, _ expected: String) -> UsageError {
        UsageError("invalid value '\(value ?? "")' for \(spec.longSpelling): \(expected)")
    }

    /// A value without control characters (CR, LF...), which never goes into a message: it may hold a password.
    private static func controlFree(_ value: String?, _ spec: OptionSpec) throws(UsageError) -> String {
        let value = value ?? ""
        guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else {
            throw UsageError("invalid value for \(spec.longSpelling): it contains a control character (CR, LF...)")
        }
        return value
    }

    /// A value of a fixed set, `T`'s cases: the set the option table gives the completions
    /// (``OptionSpec/ValueKind/choice(of:)``), so the two cannot drift.
    static func chosen<T: CaseIterable & RawRepresentable>(_ value: String?, _ spec: OptionSpec, as type: T.Type) throws(UsageError)
        -> T where T.RawValue == String
    {
        guard let chosen = T(rawValue: value ?? "") else {
            throw invalidValue(value, spec, "expected " + spokenList(type.allCases.map(\.rawValue)))
        }
        return chosen
    }

    /// `a, b or c`.
    static func spokenList(_ words: [String]) -> String {
        guard let last = words.last, words.count > 1 else { return words.first ?? "" }
        return words.dropLast().joined(separator: ", ") + " or " + last
    }

    /// The value of `--limit-rate`, in bytes per second (at least 1).
    private static func rate(_ value: String?, _ spec: OptionSpec) throws(UsageError) -> Int64 {
        guard let rate = byteCount(value ?? ""), rate >= 1 else {
            throw invalidValue(value, spec, "expected bytes per second above 0, such as 500K or 2M (suffixes K, M, G)")
        }
        return rate
    }

    /// The value of `--checksum`, with the checksum parser's message when it is invalid.
    private static func checksum(_ value: String?, _ spec: OptionSpec) throws(UsageError) -> Checksum {
        do throws(DownloadError) {
            return try Checksum(parsing: value ?? "")
        } catch {
            throw invalidValue(value, spec, error.message)
        }
    }

    /// The value of `--endpoint`: an http:// or https:// URL with a host.
    private static func endpoint(_ value: String?, _ spec: OptionSpec) throws(UsageError) -> URL {
        guard let text = value, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", url.host?.isEmpty == false else {
            throw invalidValue(value, spec, "expected an http:// or https:// URL")
        }
        return url
    }

    /// The value of `--user`, `USER:PASSWORD` (the password may hold colons; the user may not be empty).
    private static func credentials(_ value: String?, _ spec: OptionSpec) throws(UsageError) -> Credentials {
        let text = try controlFree(value, spec)
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw UsageError("invalid value for \(spec.longSpelling): expected USER:PASSWORD")
        }
        return Credentials(user: String(text[..<colon]), password: String(text[text.index(after: colon)...]))
    }

    private static func path(_ value: String?, _ spec: OptionSpec) throws(UsageError) -> String {
        guard let value, !value.isEmpty else { throw invalidValue(value, spec, "expected a path") }
        return value
    }

    private static func integer(_ value: String?, _ spec: OptionSpec, in range: ClosedRange<Int>,
                                _ expected: String) throws(UsageError) -> Int {
        guard let value, !value.isEmpty, value.allSatisfy(\.isASCIIDigit), let number = Int(value),
              range.contains(number) else {
            throw invalidValue(value, spec, "expected \(expected)")
        }
        return number
    }

    /// The longest duration accepted, in seconds (beyond it, `Duration` arithmetic could overflow).
    static let maximumSeconds = 1_000_000.0

    /// Seconds with optional decimals: `30`, `2.5`, `.5`.
    private static func duration(_ value: String?, _ spec: OptionSpec, allowsZero: Bool) throws(UsageError) -> Duration {
        let expected = allowsZero ? "expected a number of seconds, such as 1 or 2.5"
                                  : "expected a number of seconds above 0, such as 30 or 2.5"
        guard let seconds = decimal(value ?? ""), seconds <= maximumSeconds, allowsZero || seconds > 0 else {
            throw invalidValue(value, spec, expected)
        }
        return .seconds(seconds)
    }

    /// A plain decimal number (`12`, `2.5`, `.5`, `3.`): digits and at most one dot; no sign,
    /// exponent, hexadecimal, `inf` or `nan`.
    static func decimal(_ text: String) -> Double? {
        guard text.contains(where: \.isASCIIDigit),
              text.allSatisfy({ $0.isASCIIDigit || $0 == "." }),
              text.filter({ $0 == "." }).count <= 1 else { return nil }
        return Double(text.hasPrefix(".") ? "0" + text : text)
    }

    /// A byte count with an optional 1024-based suffix: `512`, `64K`, `1.5M`, `2G` (case-insensitive).
    ///
    /// - Returns: the bytes, or `nil` when malformed or above 1 TiB.
    static func byteCount(_ text: String) -> Int64? {
        var number = Substring(text)
        var multiplier = 1.0
        if let last = number.last?.uppercased() {
            switch last {
            case "K": multiplier = 1024
            case "M": multiplier = 1024 * 1024
            case "G": multiplier = 1024 * 1024 * 1024
            default: break
            }
            if multiplier > 1 { number = number.dropLast() }
        }
        guard let value = decimal(String(number)) else { return nil }
        let bytes = (value * multiplier).rounded()
        guard bytes <= Double(Int64(1) << 40) else { return nil }
        return Int64(bytes)
    }

    /// Validates `Name: value`: the name an HTTP token, the value free of control characters.
    static func header(_ text: String) throws(UsageError) -> CommandOptions.Header {
        let invalid = UsageError("invalid header '\(text)': expected 'Name: value' with a name made of letters, digits and !#$%&'*+-.^_`|~")
        guard let colon = text.firstIndex(of: ":") else { throw invalid }
        let name = String(text[..<colon])
        let tokenSymbols = "!#$%&'*+-.^_`|~"
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || tokenSymbols.unicodeScalars.contains(scalar))
        }) else { throw invalid }
        let value = text[text.index(after: colon)...].trimmingBlanks()
        guard value.unicodeScalars.allSatisfy({ $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) }) else {
            throw UsageError("invalid header '\(name)': the value contains control characters")
        }
        return CommandOptions.Header(name: name, value: value)
    }
}

extension Character {
    /// `0`-`9` only (not other scripts' digits).
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingBlanks() -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else { return "" }
        return String(self[first...last])
    }
}
