#!/usr/bin/env bash
# Checks the committed completions (Packaging/completions: haul.bash, _haul, haul.fish) in real
# bash, zsh and fish, installing Debian's bash-completion, zsh and fish when they are missing.
#
# How each shell is asked for the candidates of a line (the cursor at its end):
# - bash: bash-completion's bash_completion, then haul.bash, are sourced in `bash --norc`;
#   COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT are set as readline sets them (words at
#   spaces, and each "=" a word of its own, COMP_WORDBREAKS: "haul --on-conflict=" is the words
#   haul, --on-conflict, "="), _haul is called, and COMPREPLY is read.
# - zsh: an interactive `zsh -f` runs in a pseudo-terminal of zsh's zpty module, with compinit
#   and Packaging/completions on its fpath. compadd is wrapped: every call first asks the builtin
#   for the matches it would add (compadd -O, which matches the words against the line as zsh
#   itself does) and prints them, then adds them. The line is typed, TAB (complete-word)
#   pressed, and a comppostfuncs hook prints an end marker; what was printed before it is read.
# - fish: `complete -C LINE` in `fish --no-config` after sourcing haul.fish.
# Every check runs in a scratch folder holding two files (file-a, file-b) and two folders
# (folder-a, folder-b), with HOME (and fish's XDG folders) in another one. Candidates are compared without what fish puts
# before a value (--dir=), a trailing "=" (an option waiting for its value) or "/" (a folder).
#
# Prints one line per check (ok or FAIL, the shell, the line, the candidates); exits 1 when any
# check fails.
#
#   Scripts/test-completions.sh
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$HAUL_REPO_ROOT"

COMPLETIONS="$HAUL_REPO_ROOT/Packaging/completions"
BASH_COMPLETION=/usr/share/bash-completion/bash_completion

require_command zsh
require_command fish
if [[ ! -r $BASH_COMPLETION ]]; then
    # Not a command: require_command's apt-get path, for a file.
    [[ $EUID -eq 0 ]] || die "$BASH_COMPLETION is missing; install the Debian package 'bash-completion' (needs root)"
    log "installing Debian package 'bash-completion'"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends bash-completion </dev/null >&2
    [[ -r $BASH_COMPLETION ]] || die "installing bash-completion did not provide $BASH_COMPLETION"
fi

SCRATCH=$(mktemp -d /tmp/haul-completions.XXXXXX)
on_exit "rm -rf '$SCRATCH'"
WORK=$SCRATCH/work
HOME_FOLDER=$SCRATCH/home
mkdir -p "$WORK/folder-a" "$WORK/folder-b" "$HOME_FOLDER"
touch "$WORK/file-a" "$WORK/file-b"

# The zsh harness: prints the matches of line $2 with completions from folder $1, one a line.
cat >"$HOME_FOLDER/capture.zsh" <<'ZSH'
zmodload zsh/zpty
local folder=$1 line=$2 output= chunk
zpty shell zsh -f -i
zpty -w shell "PS1=''; fpath=(${(q)folder} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w shell 'bindkey "^I" complete-word; zstyle ":completion:*" list-grouped false; zstyle ":completion:*" insert-tab false'
# The markers are typed split ("<<H""IT>>") so that the shell's echo of the typing never matches them.
zpty -w shell 'compadd() { local -a __m; builtin compadd -O __m "$@"; (( $#__m )) && print -rl -- "" "<<H""IT>>"${^__m} >/dev/tty; builtin compadd "$@"; }'
zpty -w shell 'comppostfuncs=(__done); __done() { print -r -- "" "<<E""ND>>" >/dev/tty; }'
zpty -w shell "$line"$'\t'
integer deadline=$(( SECONDS + 20 ))
while (( SECONDS < deadline )); do
    if zpty -r -t shell chunk; then
        output+=$chunk
        [[ $output == *'<<END>>'* ]] && break
    else
        sleep 0.05
    fi
done
zpty -d shell
[[ $output == *'<<END>>'* ]] || { print -u2 "zsh: no end marker after 20 s"; exit 1; }
print -r -- "${output%%<<END>>*}" | tr -d '\r' | sed -n 's/^.*<<HIT>>//p'
ZSH

# Prints the candidates bash offers for line $1.
bash_candidates() {
    (cd "$WORK" && HOME=$HOME_FOLDER bash --norc --noprofile -c '
        source "$1"; source "$2"
        COMP_LINE=$3; COMP_POINT=${#3}; COMP_WORDS=()
        read -ra spaced <<<"$3"
        for word in "${spaced[@]}"; do
            while [[ $word == *=* ]]; do
                [[ -n ${word%%=*} ]] && COMP_WORDS+=("${word%%=*}")
                COMP_WORDS+=("=")
                word=${word#*=}
            done
            [[ -n $word ]] && COMP_WORDS+=("$word")
        done
        [[ $3 == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        _haul haul "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf "%s\n" "${COMPREPLY[@]}"' bash "$BASH_COMPLETION" "$COMPLETIONS/haul.bash" "$1")
}

# Prints the candidates zsh offers for line $1.
zsh_candidates() {
    (cd "$WORK" && HOME=$HOME_FOLDER zsh -f "$HOME_FOLDER/capture.zsh" "$COMPLETIONS" "$1")
}

# Prints the candidates fish offers for line $1 (without their descriptions).
fish_candidates() {
    (cd "$WORK" && HOME=$HOME_FOLDER XDG_DATA_HOME=$HOME_FOLDER XDG_CONFIG_HOME=$HOME_FOLDER \
        fish --no-config -c 'source $argv[1]; complete -C $argv[2]' "$COMPLETIONS/haul.fish" "$1") | cut -f1
}

# Reads candidates of line $1 on stdin; prints them sorted, one a line, each without a leading
# --name= (when the line ends in a --name=... word), a trailing "=" or "/"; duplicates once.
normalized() {
    local last=${1##* } prefix=
    [[ $last == --*=* ]] && prefix="${last%%=*}="
    while IFS= read -r candidate; do
        [[ -n $prefix ]] && candidate=${candidate#"$prefix"}
        candidate=${candidate%/}
        printf '%s\n' "${candidate%=}"
    done | sed '/^$/d' | sort -u
}

FAILURES=0

# check SHELL LINE exact|includes WORD...: the candidates of LINE in SHELL are exactly WORDs, or
# include them all. Prints one line.
check() {
    local shell=$1 line=$2 mode=$3
    shift 3
    local got want missing
    got=$("${shell}_candidates" "$line" 2>&1 | normalized "$line") || true
    want=$(printf '%s\n' "$@" | sort -u)
    if [[ $mode == exact ]]; then
        [[ $got == "$want" ]] && missing=no || missing=yes
    else
        missing=$(comm -13 <(printf '%s\n' "$got") <(printf '%s\n' "$want") | paste -sd' ')
        [[ -z $missing ]] && missing=no
    fi
    if [[ $missing == no ]]; then
        printf 'ok    %-4s  %-22s -> %s\n' "$shell" "'$line'" "$(paste -sd' ' <<<"$got")"
    else
        printf 'FAIL  %-4s  %-22s -> %s (expected %s: %s)\n' "$shell" "'$line'" "$(paste -sd' ' <<<"$got")" \
            "$mode" "$(paste -sd' ' <<<"$want")"
        FAILURES=$((FAILURES + 1))
    fi
}

for shell in bash zsh fish; do
    check "$shell" "haul --on-c" exact --on-conflict
    check "$shell" "haul --on-conflict=" exact rename overwrite skip fail
    check "$shell" "haul --on-conflict=ov" exact overwrite
    check "$shell" "haul --on-conflict " exact rename overwrite skip fail
    check "$shell" "haul daemon --" includes --state --listen --dir --conf-path
    check "$shell" "haul --dir " exact folder-a folder-b
    check "$shell" "haul --dir=" exact folder-a folder-b
    check "$shell" "haul -o " exact file-a file-b folder-a folder-b
    check "$shell" "haul --retries " exact
    check "$shell" "haul ls --" exact --help --rpc --secret-file
    check "$shell" "haul da" exact daemon
done

if ((FAILURES > 0)); then
    log "$FAILURES check(s) failed"
    exit 1
fi
log "every check passed"
