/// Writes `Packaging/completions/_haul`, zsh's completion of `haul`, from the commands' option
/// tables (``CommandReference``).
///
/// One function per command hands its table to `_arguments`: every option may be repeated (the
/// parser takes the last), a long option that takes a value accepts it after `=` or as the next
/// word, and the value is completed by its kind (`_files`, `_files -/`, `_urls`, the fixed set,
/// or nothing). `_haul` offers the commands and files as the first word and dispatches on it.
enum ZshCompletion {
    /// The whole script.
    static var script: String {
        var text = """
            #compdef haul
            #
            # zsh completion for haul. Generated from haul's option tables by
            # Sources/HaulCLI/Reference/ZshCompletion.swift: do not edit. Regenerate with
            # HAUL_UPDATE_README=1 swift test --filter PackagingFilesTests.


            """
        for command in CommandReference.all {
            text += commandFunction(command)
        }
        return text + dispatcher
    }

    /// `_haul_cmd_NAME`: `_arguments` with the command's options and operands.
    private static func commandFunction(_ command: CommandReference) -> String {
        var specs = command.table.flatMap { spec in
            (spec.short.map { [shortSpec($0, spec)] } ?? []) + [longSpec(spec)]
        }
        if command.operandsAreFiles { specs.append(quoted("*:URL or file:_files")) }
        return "_haul_cmd_\(command.key)() {\n    _arguments -s -S : \\\n"
            + specs.map { "        " + $0 }.joined(separator: " \\\n") + "\n}\n\n"
    }

    /// `'*-o+[summary]:FILE:_files'`, quoted for the shell.
    private static func shortSpec(_ letter: Character, _ spec: OptionSpec) -> String {
        quoted("*-\(letter)" + (spec.takesValue ? "+" : "") + "[\(explanation(spec))]" + argument(spec))
    }

    /// `'*--output=[summary]:FILE:_files'`, quoted for the shell.
    private static func longSpec(_ spec: OptionSpec) -> String {
        quoted("*" + spec.longSpelling + (spec.takesValue ? "=" : "") + "[\(explanation(spec))]" + argument(spec))
    }

    /// `:PLACEHOLDER:ACTION` for an option that takes a value, else nothing.
    private static func argument(_ spec: OptionSpec) -> String {
        guard let placeholder = spec.placeholder else { return "" }
        let message = placeholder.replacing("\\", with: "\\\\").replacing(":", with: "\\:")
        return ":" + message + ":" + action(spec.kind)
    }

    /// The `_arguments` action that completes a value of `kind`; a space completes nothing.
    private static func action(_ kind: OptionSpec.ValueKind) -> String {
        switch kind {
        case .file: "_files"
        case .directory: "_files -/"
        case .url: "_urls"
        case .choice(let words): "(" + words.joined(separator: " ") + ")"
        case .number, .text: " "
        }
    }

    /// The option's summary as `_arguments` reads an explanation: `\`, `[` and `]` escaped.
    private static func explanation(_ spec: OptionSpec) -> String {
        spec.summary.replacing("\\", with: "\\\\").replacing("[", with: "\\[").replacing("]", with: "\\]")
    }

    /// `text` in single quotes for zsh.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }

    /// `_haul_commands` and `_haul`.
    private static var dispatcher: String {
        let names = CommandReference.subcommands.compactMap(\.name)
        let described = CommandReference.subcommands.map { quoted(($0.name ?? "") + ":" + $0.summary) }
        return """
            _haul_commands() {
                local -a commands
                commands=(
                    \(described.joined(separator: "\n        "))
                )
                _describe -t commands command commands
            }

            _haul() {
                if (( CURRENT == 2 )) && [[ $PREFIX != -* ]]; then
                    _alternative 'commands:command:_haul_commands' 'files:URL or file:_files'
                    return
                fi
                case $words[2] in
                (\(names.joined(separator: "|")))
                    local command=$words[2]
                    shift words
                    (( CURRENT-- ))
                    curcontext="${curcontext%:*:*}:haul-$command:"
                    _haul_cmd_$command
                    ;;
                (*)
                    _haul_cmd_haul
                    ;;
                esac
            }

            # Autoloaded from fpath the file is _haul's body; sourced, it registers _haul.
            if [[ $funcstack[1] == _haul ]]; then
                _haul "$@"
            else
                compdef _haul haul
            fi

            """
    }
}
