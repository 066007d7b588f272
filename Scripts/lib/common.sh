# shellcheck shell=bash
# Shared helpers for the scripts under Scripts/: logging, cleanup on exit, installing Debian
# packages on demand, and finding the `haul` binary (or a curl stand-in while haul is young).
#
# Source it; it defines functions and a few variables and runs nothing else:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# Guard against being sourced twice (nginx.sh sources it too).
if [[ -n "${HAUL_SCRIPTS_COMMON_LOADED:-}" ]]; then
    return 0
fi
HAUL_SCRIPTS_COMMON_LOADED=1

# Root of the package (the folder holding Package.swift).
HAUL_REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export HAUL_REPO_ROOT

# ---------------------------------------------------------------------------------------------
# Logging

# Prints a progress message to stderr, prefixed with the script's name.
log() {
    printf '%s: %s\n' "$(basename "$0")" "$*" >&2
}

# Prints an error and exits with status 1.
die() {
    log "error: $*"
    exit 1
}

# ---------------------------------------------------------------------------------------------
# Cleanup: one EXIT trap that runs every registered command, newest first.

HAUL_CLEANUP_COMMANDS=()

# Registers a command string to run when the script exits (normally, on error, or on a signal).
on_exit() {
    HAUL_CLEANUP_COMMANDS+=("$1")
}

_run_cleanup() {
    local status=$? i
    set +e
    for ((i = ${#HAUL_CLEANUP_COMMANDS[@]} - 1; i >= 0; i--)); do
        eval "${HAUL_CLEANUP_COMMANDS[i]}"
    done
    exit "$status"
}
trap _run_cleanup EXIT
# A signal becomes an ordinary exit so the EXIT trap runs the cleanup.
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------------------------
# Packages

HAUL_APT_UPDATED=0

# Installs Debian package PACKAGE unless COMMAND is already on PATH.
# Usage: require_command COMMAND [PACKAGE]   (PACKAGE defaults to COMMAND)
require_command() {
    local command=$1 package=${2:-$1}
    if command -v "$command" >/dev/null 2>&1; then
        return 0
    fi
    if [[ $EUID -ne 0 ]]; then
        die "'$command' is missing; install the Debian package '$package' (needs root)"
    fi
    log "installing Debian package '$package' (for '$command')"
    if [[ $HAUL_APT_UPDATED -eq 0 ]]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null >&2
        HAUL_APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends "$package" </dev/null >&2
    command -v "$command" >/dev/null 2>&1 || die "installing '$package' did not provide '$command'"
}

# ---------------------------------------------------------------------------------------------
# The client under test
#
#   HAUL_BIN=/path/to/haul   use this binary (nothing is built)
#   HAUL_STANDIN=curl        use a curl-based stand-in that mimics the few haul options the
#                            scripts use (-o, -d, -q, --cacert, --on-conflict=rename); for
#                            debugging the scripts before haul can download
#   neither                  build haul and use the binary made: by default as it is installed
#                            (Scripts/build-release.sh: release, on Linux with the Swift runtime
#                            linked in); with HAUL_BUILD_CONFIG=debug, `swift build --product haul`
#                            (and haul-urlsession, which `haul --engine=urlsession` runs)

# Sets HAUL_BIN (building haul if needed) unless the curl stand-in was asked for.
resolve_haul() {
    if [[ "${HAUL_STANDIN:-}" == curl ]]; then
        log "using the curl stand-in for haul (HAUL_STANDIN=curl)"
        return 0
    fi
    if [[ -z "${HAUL_BIN:-}" ]]; then
        local config=${HAUL_BUILD_CONFIG:-release}
        if [[ $config == release ]]; then
            log "building haul: Scripts/build-release.sh"
            HAUL_BIN=$("$HAUL_REPO_ROOT/Scripts/build-release.sh")
        else
            log "building haul: swift build -c $config --product haul (and haul-urlsession)"
            (cd "$HAUL_REPO_ROOT" && swift build -c "$config" --product haul >&2 \
                && swift build -c "$config" --product haul-urlsession >&2)
            HAUL_BIN="$(cd "$HAUL_REPO_ROOT" && swift build -c "$config" --show-bin-path)/haul"
        fi
    fi
    [[ -x "$HAUL_BIN" ]] || die "haul binary not found or not executable: $HAUL_BIN"
    export HAUL_BIN
}

# Prints the folder of the installable build (haul and haul-urlsession): built now by
# Scripts/build-release.sh, or with "reuse" the one it made before; fails when there is none.
release_build_folder() {
    local folder
    if [[ "${1:-}" != reuse ]]; then
        log "building: Scripts/build-release.sh"
        folder=$(dirname "$("$HAUL_REPO_ROOT/Scripts/build-release.sh")")
    elif [[ "$(uname -s)" == Linux ]]; then
        folder=$HAUL_REPO_ROOT/.build/static/release
    else
        folder=$HAUL_REPO_ROOT/.build/release
    fi
    [[ -x "$folder/haul" && -x "$folder/haul-urlsession" ]] \
        || die "no release build in $folder (haul and haul-urlsession): run Scripts/build-release.sh"
    echo "$folder"
}

# Describes the client for messages and reproduction commands.
haul_description() {
    if [[ "${HAUL_STANDIN:-}" == curl ]]; then
        echo "curl stand-in"
    else
        echo "$HAUL_BIN"
    fi
}

# Runs haul with the given arguments (or the stand-in when HAUL_STANDIN=curl). A run that takes
# longer than HAUL_TIMEOUT seconds (default 300) is killed and returns 124, so a hang cannot
# stall CI.
haul() {
    if [[ "${HAUL_STANDIN:-}" == curl ]]; then
        haul_standin_curl "$@"
    else
        local status=0
        timeout --kill-after=10 "${HAUL_TIMEOUT:-300}" "$HAUL_BIN" "$@" || status=$?
        if [[ $status -eq 124 || $status -eq 137 ]]; then
            log "haul did not finish within ${HAUL_TIMEOUT:-300} s: haul $*"
        fi
        return "$status"
    fi
}

# A curl-based imitation of the parts of haul's command line the scripts use. It follows the
# contract just enough to debug the scripts: -o/--output, -d/--dir, -q/--quiet, --cacert,
# --on-conflict=rename|overwrite (naming from the URL's last path component), -x (ignored),
# and maps curl's "certificate not trusted" exit (60) to haul's TLS exit code 5.
haul_standin_curl() {
    local output="" dir="." conflict=rename url="" arg
    local -a curl_args=(--silent --show-error --fail --location)
    while (($#)); do
        arg=$1
        shift
        case $arg in
            -o) output=$1; shift ;;
            --output=*) output=${arg#*=} ;;
            -d) dir=$1; shift ;;
            --dir=*) dir=${arg#*=} ;;
            -q | --quiet) ;;
            -x) shift ;;
            -x* | --connections=*) ;;
            --cacert=*) curl_args+=(--cacert "${arg#*=}") ;;
            --on-conflict=*) conflict=${arg#*=} ;;
            -*) log "stand-in: unsupported option $arg"; return 2 ;;
            *) url=$arg ;;
        esac
    done
    [[ -n "$url" ]] || { log "stand-in: no URL"; return 2; }
    if [[ -z "$output" ]]; then
        mkdir -p "$dir"
        local name=${url%%[?#]*}
        name=${name##*/}
        [[ -n "$name" ]] || name=download
        output="$dir/$name"
        if [[ -e "$output" && "$conflict" == rename ]]; then
            local stem=${name%.*} ext="" n=1
            [[ "$name" == *.* ]] && ext=".${name##*.}"
            [[ "$name" == *.* ]] || stem=$name
            while [[ -e "$dir/$stem.$n$ext" ]]; do n=$((n + 1)); done
            output="$dir/$stem.$n$ext"
        fi
    fi
    local status=0
    curl "${curl_args[@]}" -o "$output.part" "$url" || status=$?
    if [[ $status -ne 0 ]]; then
        rm -f "$output.part"
        [[ $status -eq 60 ]] && return 5
        return 4
    fi
    mv -f "$output.part" "$output"
}

# ---------------------------------------------------------------------------------------------
# Soaks

# Prints the build configuration of a soak (SOAK_CONFIG: release, the default, or debug); exits 2
# for anything else.
soak_config() {
    local config="${SOAK_CONFIG:-release}"
    case "$config" in
        release|debug) echo "$config" ;;
        *) log "SOAK_CONFIG must be release or debug, not '$config'"; exit 2 ;;
    esac
}

# Sets and exports HAUL_BIN (built in the soak's configuration unless already set, as .ci/run
# sets it) and ORIGIN_BIN (haul-test-origin beside it, built).
soak_binaries() {
    local config
    config="$(soak_config)" || exit 2
    if [[ -z "${HAUL_BIN:-}" ]]; then
        log "building haul ($config)"
        nice swift build -c "$config" --product haul </dev/null >&2
        HAUL_BIN="$(swift build -c "$config" --show-bin-path)/haul"
    fi
    ORIGIN_BIN="$(dirname "$HAUL_BIN")/haul-test-origin"
    log "building haul-test-origin ($config)"
    nice swift build -c "$config" --product haul-test-origin </dev/null >&2
    export HAUL_BIN ORIGIN_BIN
}
