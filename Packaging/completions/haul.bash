# bash completion for haul                                  -*- shell-script -*-
#
# Generated from haul's option tables by Sources/HaulCLI/Reference/BashCompletion.swift: do
# not edit. Regenerate with HAUL_UPDATE_README=1 swift test --filter PackagingFilesTests.

# The options of command $1 (haul: the download command); a long one that takes a value ends in =.
_haul_options() {
    case $1 in
    haul) echo '-o --output= -d --dir= -x --connections= -j --max-downloads= -i --input-file= --mirror= --max-sources= --metalink= --checksum= --limit-rate= --retries= --retry-wait= --retry-connrefused --connect-timeout= --header-timeout= --stall-timeout= -H --header= --on-conflict= --no-continue --cacert= -k --insecure --engine= --endpoint= --proxy= --noproxy= --proxy-cacert= --proxy-insecure -u --user= -n --netrc --netrc-file= -b --cookies= --json -q --quiet -h --help -V --version' ;;
    demo) echo '--size= --connections= -h --help' ;;
    daemon) echo '-d --dir= --listen= --secret= --secret-file= --state= --node= --allow-origin= -j --max-downloads= -x --connections= --limit-rate= --limit-schedule= --json --on-complete= --on-error= --conf-path= -h --help' ;;
    add) echo '--rpc= --secret-file= -d --dir= -o --output= -h --help' ;;
    ls) echo '--rpc= --secret-file= -h --help' ;;
    pause) echo '--rpc= --secret-file= -h --help' ;;
    resume) echo '--rpc= --secret-file= -h --help' ;;
    rm) echo '--rpc= --secret-file= -h --help' ;;
    esac
}

# What option $2 of command $1 takes: flag (no value), file, dir, choice WORD..., or none (a value
# not completed).
_haul_value() {
    case $1 in
    haul)
        case $2 in
        -o|--output|-i|--input-file|--cacert|--proxy-cacert|--netrc-file|-b|--cookies) echo 'file' ;;
        -d|--dir) echo 'dir' ;;
        -x|--connections|-j|--max-downloads|--mirror|--max-sources|--checksum|--limit-rate|--retries|--retry-wait|--connect-timeout|--header-timeout|--stall-timeout|-H|--header|--endpoint|--proxy|--noproxy|-u|--user) echo 'none' ;;
        --metalink) echo 'choice follow off' ;;
        --on-conflict) echo 'choice rename overwrite skip fail' ;;
        --engine) echo 'choice native urlsession' ;;
        *) echo flag ;;
        esac ;;
    demo)
        case $2 in
        --size|--connections) echo 'none' ;;
        *) echo flag ;;
        esac ;;
    daemon)
        case $2 in
        -d|--dir) echo 'dir' ;;
        --listen|--secret|--node|--allow-origin|-j|--max-downloads|-x|--connections|--limit-rate|--limit-schedule) echo 'none' ;;
        --secret-file|--state|--on-complete|--on-error|--conf-path) echo 'file' ;;
        *) echo flag ;;
        esac ;;
    add)
        case $2 in
        --rpc|-d|--dir|-o|--output) echo 'none' ;;
        --secret-file) echo 'file' ;;
        *) echo flag ;;
        esac ;;
    ls)
        case $2 in
        --rpc) echo 'none' ;;
        --secret-file) echo 'file' ;;
        *) echo flag ;;
        esac ;;
    pause)
        case $2 in
        --rpc) echo 'none' ;;
        --secret-file) echo 'file' ;;
        *) echo flag ;;
        esac ;;
    resume)
        case $2 in
        --rpc) echo 'none' ;;
        --secret-file) echo 'file' ;;
        *) echo flag ;;
        esac ;;
    rm)
        case $2 in
        --rpc) echo 'none' ;;
        --secret-file) echo 'file' ;;
        *) echo flag ;;
        esac ;;
    esac
}

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
    if ((${#words[@]} > 2)) && [[ " demo daemon add ls pause resume rm " == *" ${words[1]} "* ]]; then
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
        mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "demo daemon add ls pause resume rm" -- "$2")
    fi
}

complete -F _haul haul
