/// One command of `haul` as the manual and the completions know it: the word that selects it,
/// what it does in a line, and its option table.
///
/// The files under Packaging/ (``PackagingFiles``) are generated from these and the option
/// tables they point to, so a new option or command reaches `haul.1` and every shell's
/// completion by regenerating them.
struct CommandReference: Sendable {
    /// The word after `haul` that selects the command (`daemon`), or `nil` for the download
    /// command itself.
    let name: String?
    /// What the command does, in a few words (the completions' menus).
    let summary: String
    /// The options it takes.
    let table: [OptionSpec]
    /// Whether its operands may be local files (URLs, or `.meta4` files for the download
    /// command), which the completions then offer; otherwise they offer nothing.
    let operandsAreFiles: Bool

    /// The download command: `haul [OPTION]... URL...`.
    static let download = CommandReference(name: nil, summary: "download files over HTTP(S)", table: OptionTable.download,
                                           operandsAreFiles: true)

    /// Every command, the download command first, then the others in the order `haul --help`
    /// names them.
    static var all: [CommandReference] {
        [download,
         CommandReference(name: "demo", summary: "download a generated file from a local server, with 1 connection and with N",
                          table: OptionTable.demo, operandsAreFiles: false),
         CommandReference(name: "daemon", summary: "run the download service (aria2's JSON-RPC and a web dashboard)",
                          table: DaemonArguments.daemonTable, operandsAreFiles: false)]
            + ClientOptions.Action.allCases.map { action in
                CommandReference(name: action.rawValue, summary: summary(action), table: DaemonArguments.clientTable(for: action),
                                 operandsAreFiles: false)
            }
    }

    /// The commands selected by a word after `haul`.
    static var subcommands: [CommandReference] { all.filter { $0.name != nil } }

    /// The word the completion scripts use for the command: its name, or `haul` for the download
    /// command (no command is named `haul`).
    var key: String { name ?? "haul" }

    /// What client command `action` does, in a few words.
    private static func summary(_ action: ClientOptions.Action) -> String {
        switch action {
        case .add: "add downloads to a running daemon"
        case .list: "list the daemon's downloads"
        case .pause: "pause downloads"
        case .resume: "resume paused downloads"
        case .remove: "remove downloads (or forget ended ones)"
        }
    }
}

extension OptionSpec {
    /// The help up to its first `;`: what the completions' menus show beside the option.
    var summary: String {
        let scalars = help.unicodeScalars
        guard let end = scalars.firstIndex(of: ";") else { return help }
        return String(String.UnicodeScalarView(scalars[..<end]))
    }
}
