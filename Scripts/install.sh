#!/usr/bin/env bash
# Installs haul under a prefix: the programs, the man page, the shell completions and the systemd
# user unit, and writes a manifest of what it wrote (PREFIX/share/haul/install-manifest), so that
# --uninstall removes exactly that and then the folders it created, if empty.
#
#   Scripts/install.sh                    # builds (Scripts/build-release.sh), installs under /usr/local
#   Scripts/install.sh --user             # under ~/.local; the unit in ~/.config/systemd/user
#   Scripts/install.sh --prefix=/opt/haul
#   Scripts/build-release.sh && sudo Scripts/install.sh --no-build   # build as yourself, install as root
#   Scripts/install.sh --uninstall [--prefix=DIR | --user]
#
# Running it again replaces what it installed (an update). It refuses, before writing anything,
# when a file it would write exists and is not one it installed, or was changed since; and
# --uninstall keeps a file changed since it was installed. See docs/INSTALL.md.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# Prints the usage.
usage() {
    cat <<'EOF'
Usage: Scripts/install.sh [--prefix=DIR | --user] [--no-build] [--uninstall]

Builds haul (Scripts/build-release.sh) and installs it under a prefix:
  bin/haul, bin/haul-urlsession               the programs
  share/man/man1/haul.1                       the man page
  share/bash-completion/completions/haul      completions for bash,
  share/zsh/site-functions/_haul              zsh
  share/fish/vendor_completions.d/haul.fish   and fish
  lib/systemd/user/haul.service               the systemd user unit (ExecStart: PREFIX/bin/haul)
and lists them in share/haul/install-manifest.

Options:
  --prefix=DIR   install under DIR (default /usr/local)
  --user         install under ~/.local, the unit in ~/.config/systemd/user
  --no-build     install the release build made before instead of building
  --uninstall    remove what the manifest under the prefix lists, then the folders
                 the installation created, when empty
  -h, --help     show this help and exit

A file it would write that it did not install (or that was changed since) stops it
before anything is written.
EOF
}

PREFIX=/usr/local
BUILT="(not built yet)"   # the folder of the release build's programs
USER_INSTALL=0
BUILD=1
UNINSTALL=0

# Reads the options into the variables above.
parse_options() {
    local prefix_given=0
    while (($#)); do
        case $1 in
            --prefix=*) PREFIX=${1#--prefix=}; prefix_given=1 ;;
            --prefix) (($# > 1)) || usage_error "--prefix needs a folder"; PREFIX=$2; prefix_given=1; shift ;;
            --user) USER_INSTALL=1 ;;
            --no-build) BUILD=0 ;;
            --uninstall) UNINSTALL=1 ;;
            -h | --help) usage; exit 0 ;;
            *) usage_error "unrecognized option '$1'" ;;
        esac
        shift
    done
    if ((USER_INSTALL)); then
        ((prefix_given == 0)) || usage_error "--user and --prefix exclude each other"
        [[ -n "${HOME:-}" ]] || usage_error "--user needs HOME"
        PREFIX=$HOME/.local
    fi
    [[ -n "$PREFIX" ]] || usage_error "--prefix needs a folder"
    [[ "$PREFIX" == /* ]] || PREFIX=$PWD/$PREFIX
    while [[ "$PREFIX" == */ && "$PREFIX" != / ]]; do PREFIX=${PREFIX%/}; done
    # The prefix goes into the unit's ExecStart, where these would need escapes systemd and the
    # manifest's lines cannot all carry.
    if [[ "$PREFIX" == *[\"\\]* || "$PREFIX" =~ [[:cntrl:]] ]]; then
        usage_error "the prefix may not hold quotes, backslashes or control characters"
    fi
}

# Reports a usage error and exits 2.
usage_error() {
    log "$1"
    echo "Try 'Scripts/install.sh --help' for more information." >&2
    exit 2
}

# Prints the SHA-256 of a file, in hexadecimal.
file_sha256() {
    if command -v sha256sum >/dev/null; then
        sha256sum -- "$1" | cut -d' ' -f1
    else
        shasum -a 256 -- "$1" | cut -d' ' -f1
    fi
}

# ---------------------------------------------------------------------------------------------
# The manifest: "folder PATH" for a folder the installation created, "file SHA256 PATH" for a
# file it wrote; absolute paths, one a line.

MANIFEST_FOLDERS=()   # folders created, parents first
MANIFEST_FILES=()     # files written
MANIFEST_SUMS=()      # their SHA-256, by index

# Fails unless PATH is one this script may have made: the prefix or below it, or with --user
# in the home folder (the unit's folder and its parents).
manifest_path_allowed() {
    [[ "$1" != *"/../"* && "$1" != *"/.." ]] || return 1
    [[ "$1" == "$PREFIX" || "$1" == "$PREFIX/"* ]] || { ((USER_INSTALL)) && [[ "$1" == "$HOME/"* ]]; }
}

# Loads the manifest under the prefix, if there is one. Run as root, it must be root's: a
# manifest someone else wrote would make root remove what they list.
read_manifest() {
    local kind rest
    [[ -f "$MANIFEST" ]] || return 0
    if [[ "$(id -u)" == 0 && "$(stat -c %u "$MANIFEST")" != 0 ]]; then
        die "$MANIFEST is not root's: not read as root"
    fi
    while IFS= read -r line; do
        kind=${line%% *}
        rest=${line#* }
        case $kind in
            folder) manifest_path_allowed "$rest" || die "$MANIFEST: a path outside $PREFIX: $line"
                MANIFEST_FOLDERS+=("$rest") ;;
            file) manifest_path_allowed "${rest#* }" || die "$MANIFEST: a path outside $PREFIX: $line"
                MANIFEST_SUMS+=("${rest%% *}"); MANIFEST_FILES+=("${rest#* }") ;;
            '#'*) ;;
            *) die "$MANIFEST: unreadable line: $line" ;;
        esac
    done <"$MANIFEST"
}

# Writes the manifest from the arrays above (through a temporary file and a rename).
write_manifest() {
    local i temporary="$MANIFEST.new"
    {
        echo "# Written by haul's Scripts/install.sh; Scripts/install.sh --uninstall $(prefix_option) reads it."
        for ((i = 0; i < ${#MANIFEST_FOLDERS[@]}; i++)); do echo "folder ${MANIFEST_FOLDERS[i]}"; done
        for ((i = 0; i < ${#MANIFEST_FILES[@]}; i++)); do echo "file ${MANIFEST_SUMS[i]} ${MANIFEST_FILES[i]}"; done
    } >"$temporary"
    chmod 0644 "$temporary"
    mv -f "$temporary" "$MANIFEST"
}

# Prints the index of PATH among the manifest's files; fails when it is not there.
manifest_index() {
    local i
    for ((i = 0; i < ${#MANIFEST_FILES[@]}; i++)); do
        [[ "${MANIFEST_FILES[i]}" == "$1" ]] && { echo "$i"; return 0; }
    done
    return 1
}

# Succeeds when PATH may be written: nothing is there, or the file the manifest lists with the
# same content.
is_ours_or_free() {
    local index
    [[ -e "$1" || -L "$1" ]] || return 0
    [[ -f "$1" && ! -L "$1" ]] || return 1
    index=$(manifest_index "$1") || return 1
    [[ "$(file_sha256 "$1")" == "${MANIFEST_SUMS[index]}" ]]
}

# Records PATH, just written, in the manifest (replacing its earlier line) and writes it out.
record_file() {
    local index sum
    sum=$(file_sha256 "$1")
    if index=$(manifest_index "$1"); then
        MANIFEST_SUMS[index]=$sum
    else
        MANIFEST_FILES+=("$1")
        MANIFEST_SUMS+=("$sum")
    fi
    write_manifest
}

# ---------------------------------------------------------------------------------------------
# Installing

SOURCES=()        # what to install, by index
DESTINATIONS=()   # where
MODES=()          # with which mode

# Fills SOURCES, DESTINATIONS and MODES (the programs come from BUILT, the release build's folder).
plan() {
    local packaging="$HAUL_REPO_ROOT/Packaging" unit_folder="$PREFIX/lib/systemd/user"
    ((USER_INSTALL)) && unit_folder=${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user
    SOURCES=("$BUILT/haul" "$BUILT/haul-urlsession" "$packaging/haul.1" "$packaging/completions/haul.bash"
             "$packaging/completions/_haul" "$packaging/completions/haul.fish" "$UNIT")
    DESTINATIONS=("$PREFIX/bin/haul" "$PREFIX/bin/haul-urlsession" "$PREFIX/share/man/man1/haul.1"
                  "$PREFIX/share/bash-completion/completions/haul" "$PREFIX/share/zsh/site-functions/_haul"
                  "$PREFIX/share/fish/vendor_completions.d/haul.fish" "$unit_folder/haul.service")
    MODES=(0755 0755 0644 0644 0644 0644 0644)
}

# Fails, naming them, when files of Packaging/ the installation needs are missing.
check_packaging() {
    local file missing=()
    for file in haul.1 haul.service completions/haul.bash completions/_haul completions/haul.fish; do
        [[ -f "$HAUL_REPO_ROOT/Packaging/$file" ]] || missing+=("Packaging/$file")
    done
    ((${#missing[@]} == 0)) || die "missing from the source tree: ${missing[*]}"
}

# Fails, naming them, when a destination holds something this script did not install.
check_destinations() {
    local destination foreign=()
    for destination in "${DESTINATIONS[@]}" "$MANIFEST"; do
        [[ "$destination" == "$MANIFEST" && -f "$MANIFEST" && ! -L "$MANIFEST" ]] && continue
        is_ours_or_free "$destination" || foreign+=("$destination")
    done
    if ((${#foreign[@]})); then
        log "these exist and are not files this script installed there (or were changed since):"
        printf '  %s\n' "${foreign[@]}" >&2
        die "nothing was written; move them away (or run --uninstall if an older install wrote them) and try again"
    fi
}

# Creates FOLDER and its missing parents, recording each it creates in the manifest's folders.
make_folder() {
    local folder=$1 missing=()
    while [[ ! -d "$folder" ]]; do
        missing=("$folder" ${missing[@]+"${missing[@]}"})
        folder=$(dirname "$folder")
    done
    for folder in ${missing[@]+"${missing[@]}"}; do
        mkdir -m 0755 "$folder"
        MANIFEST_FOLDERS+=("$folder")
    done
}

# Copies SOURCE to DESTINATION with MODE: a temporary file beside it, renamed over it, so a
# running program is never written to.
install_file() {
    local source=$1 destination=$2 mode=$3 temporary
    temporary="$(dirname "$destination")/.$(basename "$destination").install-$$"
    cp -- "$source" "$temporary"
    chmod "$mode" "$temporary"
    mv -f -- "$temporary" "$destination"
    record_file "$destination"
}

# Writes Packaging/haul.service into a temporary file with ExecStart naming PREFIX/bin/haul.
prepare_unit() {
    local line binary="$PREFIX/bin/haul" count=0
    UNIT=$(mktemp)
    on_exit "rm -f '$UNIT'"
    binary=${binary//%/%%}                       # systemd's specifier character
    [[ "$binary" == *[[:space:]]* ]] && binary="\"$binary\""
    while IFS= read -r line; do
        if [[ "$line" == "ExecStart=/usr/bin/haul "* ]]; then
            line="ExecStart=$binary ${line#ExecStart=/usr/bin/haul }"
            count=$((count + 1))
        fi
        printf '%s\n' "$line"
    done <"$HAUL_REPO_ROOT/Packaging/haul.service" >"$UNIT"
    ((count == 1)) || die "Packaging/haul.service has no single 'ExecStart=/usr/bin/haul ...' line"
}

# Succeeds when PATH is one of DESTINATIONS.
is_destination() {
    local destination
    for destination in "${DESTINATIONS[@]}"; do
        [[ "$destination" == "$1" ]] && return 0
    done
    return 1
}

# Removes the files of an older manifest this installation no longer writes (unchanged ones).
drop_stale_files() {
    local i destination kept_files=() kept_sums=()
    for ((i = 0; i < ${#MANIFEST_FILES[@]}; i++)); do
        destination=${MANIFEST_FILES[i]}
        if ! is_destination "$destination" && is_ours_or_free "$destination"; then
            rm -f -- "$destination"
            continue
        fi
        kept_files+=("$destination")
        kept_sums+=("${MANIFEST_SUMS[i]}")
    done
    MANIFEST_FILES=(${kept_files[@]+"${kept_files[@]}"})
    MANIFEST_SUMS=(${kept_sums[@]+"${kept_sums[@]}"})
}

# Installs (or updates) everything under the prefix.
install_all() {
    local i
    check_packaging
    prepare_unit
    plan
    check_destinations   # before the slow build, so a refusal comes at once
    if ((BUILD)); then BUILT=$(release_build_folder); else BUILT=$(release_build_folder reuse); fi
    plan
    make_folder "$(dirname "$MANIFEST")"
    write_manifest
    for ((i = 0; i < ${#SOURCES[@]}; i++)); do
        make_folder "$(dirname "${DESTINATIONS[i]}")"
        install_file "${SOURCES[i]}" "${DESTINATIONS[i]}" "${MODES[i]}"
    done
    drop_stale_files
    write_manifest
    log "installed under $PREFIX: $("$PREFIX/bin/haul" --version)"
    log "manifest: $MANIFEST (Scripts/install.sh --uninstall $(prefix_option) removes what it lists)"
}

# The option naming this installation's prefix, for messages.
prefix_option() {
    if ((USER_INSTALL)); then echo "--user"; else printf -- '--prefix=%q' "$PREFIX"; fi
}

# ---------------------------------------------------------------------------------------------
# Uninstalling

# Removes the files the manifest lists (keeping those changed since), the manifest, then the
# folders it lists, newest first, when empty.
uninstall_all() {
    local i path kept=0
    [[ -f "$MANIFEST" ]] || die "no manifest at $MANIFEST: Scripts/install.sh installed nothing under $PREFIX"
    read_manifest
    for ((i = 0; i < ${#MANIFEST_FILES[@]}; i++)); do
        path=${MANIFEST_FILES[i]}
        [[ -e "$path" || -L "$path" ]] || continue
        if is_ours_or_free "$path"; then
            rm -f -- "$path"
        else
            log "kept $path: changed since it was installed"
            kept=$((kept + 1))
        fi
    done
    rm -f -- "$MANIFEST"
    for ((i = ${#MANIFEST_FOLDERS[@]} - 1; i >= 0; i--)); do
        path=${MANIFEST_FOLDERS[i]}
        [[ -d "$path" ]] || continue
        rmdir -- "$path" 2>/dev/null || log "kept the folder $path: something else is in it"
    done
    log "uninstalled from $PREFIX (${#MANIFEST_FILES[@]} files listed, $kept kept)"
}

parse_options "$@"
MANIFEST=$PREFIX/share/haul/install-manifest
if ((UNINSTALL)); then
    uninstall_all
else
    read_manifest
    install_all
fi
