/// Writes `Packaging/completions/haul.bash`, bash's completion of `haul`, from the commands'
/// option tables (``CommandReference``).
///
/// The script needs nothing from the bash-completion package. It joins again what bash splits at
/// `=` (`--on-conflict=` `re` are one word to it), offers a command's options (a long one that
/// takes a value as `--name=`, with no space after), the values of an option by its kind (files,
/// folders, a fixed set, or nothing), the commands after `haul`, and files as the download
/// command's operands.
enum BashCompletion {
    /// The whole script.
    static var script: String {
        header + optionsFunction + valueFunction + body
    }

    private static let header = """
        # bash completion for haul                                  -*- shell-script -*-
        #
        # Generated from haul's option tables by Sources/HaulCLI/Reference/BashCompletion.swift: do
        # not edit. Regenerate with HAUL_UPDATE_README=1 swift test --filter PackagingFilesTests.


        """

    /// `_haul_options COMMAND`: the options of COMMAND (`haul` for downloads), one a word.
    private static var optionsFunction: String {
        var text = "# The options of command $1 (haul: the download command); a long one that takes a value ends in =.\n"
        text += "_haul_options() {\n    case $1 in\n"
        for command in CommandReference.all {
            let words = command.table.flatMap { spec in
                spec.short.map { ["-\($0)"] }.map { $0 + [longWord(spec)] } ?? [longWord(spec)]
            }
            text += "    \(command.key)) echo '\(words.joined(separator: " "))' ;;\n"
        }
        return text + "    esac\n}\n\n"
    }

    /// `_haul_value COMMAND OPTION`: what OPTION of COMMAND takes (`flag` when no value).
    private static var valueFunction: String {
        var text = "# What option $2 of command $1 takes: flag (no value), file, dir, choice WORD..., or none (a value\n"
        text += "# not completed).\n_haul_value() {\n    case $1 in\n"
        for command in CommandReference.all {
            text += "    \(command.key))\n        case $2 in\n"
            var kinds: [String] = []
            var patterns: [String: [String]] = [:]
            for spec in command.table where spec.takesValue {
                let kind = kindWord(spec.kind)
                if patterns[kind] == nil { kinds.append(kind) }
                patterns[kind, default: []] += (spec.short.map { ["-\($0)"] } ?? []) + [spec.longSpelling]
            }
            for kind in kinds {
                text += "        \(patterns[kind]!.joined(separator: "|"))) echo '\(kind)' ;;\n"
            }
            text += "        *) echo flag ;;\n        esac ;;\n"
        }
        return text + "    esac\n}\n\n"
    }

    /// `--name=` for an option that takes a value, `--name` for a flag.
    private static func longWord(_ spec: OptionSpec) -> String {
        spec.longSpelling + (spec.takesValue ? "=" : "")
    }

    /// The word `_haul_value` prints for `kind`.
    private static func kindWord(_ kind: OptionSpec.ValueKind) -> String {
        switch kind {
        case .file: "file"
        case .directory: "dir"
        case .choice(let words): (["choice"] + words).joined(separator: " ")
        case .number, .url, .text: "none"
        }
    }

    /// The completion function, the value completer and the `complete` line.
    private static var body: String {
        let commands = CommandReference.subcommands.compactMap(\.name).joined(separator: " ")
        return #"""
            # Sets COMPREPLY to the values of kind $1 (as _haul_value prints it) that begin with $2, each after $3.
            _haul_complete_value() {
                case $1 in
                file) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$2") ;;
                dir) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$2") ;;
                choice\ *) mapfile -t COMPREPLY < <(compgen -W "${1#choice }" -- "$2") ;;
                *) COMPREPLY=() ;;
                esac
                [[ -n $3 ]] && COMPREPLY=("${COMPREPLY[@]/#/$3}")
                return 0
            }

            _haul() {
                local cur prev word command=haul kind i start=1
                local -a words=()
                # bash splits "--name=value" at the "=" (COMP_WORDBREAKS): join the pieces again.
                for ((i = 0; i <= COMP_CWORD; i++)); do
                    word=${COMP_WORDS[i]-}
                    if ((i > 0)) && [[ ${words[-1]} == --* && ($word == "=" || ${COMP_WORDS[i-1]} == "=") ]]; then
                        words[-1]+=$word
                    else
                        words+=("$word")
                    fi
                done
                cur=${words[-1]}
                prev=${words[-2]-}
                COMPREPLY=()
                if ((${#words[@]} > 2)) && [[ " \#(commands) " == *" ${words[1]} "* ]]; then
                    command=${words[1]}
                    start=2
                fi
                for word in "${words[@]:start:${#words[@]}-start-1}"; do
                    [[ $word == -- ]] && { _haul_operands "$command" "$cur" "${#words[@]}"; return 0; }
                done
                if [[ $cur == --*=* ]]; then
                    kind=$(_haul_value "$command" "${cur%%=*}")
                    # With "=" a word break, bash replaces only what follows it.
                    if [[ $COMP_WORDBREAKS == *=* ]]; then _haul_complete_value "$kind" "${cur#*=}" ""
                    else _haul_complete_value "$kind" "${cur#*=}" "${cur%%=*}="; fi
                elif [[ $prev == -* && $prev != *=* && $(_haul_value "$command" "$prev") != flag ]]; then
                    _haul_complete_value "$(_haul_value "$command" "$prev")" "$cur" ""
                elif [[ $cur == -* ]]; then
                    mapfile -t COMPREPLY < <(compgen -W "$(_haul_options "$command")" -- "$cur")
                    [[ ${COMPREPLY[*]} == *= || ${COMPREPLY[*]} == *=\ * ]] && compopt -o nospace 2>/dev/null
                else
                    _haul_operands "$command" "$cur" "${#words[@]}"
                fi
                return 0
            }

            # Sets COMPREPLY to the operands of command $1 that begin with $2, $3 the number of words: the commands
            # (first word only) and files for the download command, nothing for the others.
            _haul_operands() {
                [[ $1 == haul ]] || return 0
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$2")
                if (($3 == 2)); then
                    mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "\#(commands)" -- "$2")
                fi
            }

            complete -F _haul haul

            """#
    }
}
