/// Writes `Packaging/completions/haul.fish`, fish's completion of `haul`, from the commands'
/// option tables (``CommandReference``).
///
/// Each option is one `complete` line that applies while its command is the one being typed
/// (`__haul_is`): a value is completed by its kind (files with `-r -F`, folders with
/// `__haul_directories`, the fixed set with `-a`, nothing with `-x`). The commands are
/// offered as the first word; only the download command takes files as operands.
enum FishCompletion {
    /// The whole script.
    static var script: String {
        var text = header
        for command in CommandReference.subcommands {
            text += "complete -c haul -n __haul_first -a \(command.name ?? "") -d \(quoted(command.summary))\n"
        }
        for command in CommandReference.all {
            text += "\n"
            for spec in command.table {
                text += line(spec, of: command) + "\n"
            }
        }
        return text
    }

    /// The `complete` line of one option of `command`.
    private static func line(_ spec: OptionSpec, of command: CommandReference) -> String {
        var words = ["complete -c haul -n", quoted("__haul_is \(command.key)")]
        if let short = spec.short { words.append("-s \(short)") }
        words.append("-l \(spec.long)")
        if spec.takesValue {
            switch spec.kind {
            case .file: words.append("-r -F")
            case .directory: words.append("-x -a " + quoted("(__haul_directories)"))
            case .choice(let values): words.append("-x -a " + quoted(values.joined(separator: " ")))
            case .number, .url, .text: words.append("-x")
            }
        }
        words.append("-d " + quoted(spec.summary))
        return words.joined(separator: " ")
    }

    /// `text` in single quotes for fish (`\` and `'` escaped).
    private static func quoted(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }

    private static var header: String {
        let names = CommandReference.subcommands.compactMap(\.name).joined(separator: " ")
        return """
            # fish completion for haul. Generated from haul's option tables by
            # Sources/HaulCLI/Reference/FishCompletion.swift: do not edit. Regenerate with
            # HAUL_UPDATE_README=1 swift test --filter PackagingFilesTests.

            # The command being typed: the word after haul when it names one, else haul (the download command).
            function __haul_command
                set -l tokens (commandline -opc)
                if set -q tokens[2]; and contains -- $tokens[2] \(names)
                    echo $tokens[2]
                else
                    echo haul
                end
            end

            # Whether the command being typed is $argv[1].
            function __haul_is
                test (__haul_command) = $argv[1]
            end

            # Whether the word being typed is the first after haul.
            function __haul_first
                test (count (commandline -opc)) -eq 1
            end

            # The folders that complete the value being typed (what follows --name= when it is there).
            function __haul_directories
                __fish_complete_directories (string replace -r -- '^--[^=]*=' '' (commandline -ct)) Folder
            end

            # Only the download command takes files as operands.
            complete -c haul -n 'not __haul_is haul' -f

            """
    }
}
