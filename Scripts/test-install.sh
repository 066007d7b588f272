#!/usr/bin/env bash
# Checks Scripts/install.sh for real, in temporary prefixes: it installs every file where it
# should (the unit naming the installed binary), the installed haul runs with no toolchain on PATH
# (--version, and a download from a loopback server with both engines), a second run is an
# update, a file it did not write stops it before it writes anything, --uninstall leaves the
# prefix empty, and with --user a file changed since it was installed is kept.
#
#   Scripts/test-install.sh     # builds with Scripts/build-release.sh once (slow the first time)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/installed.sh"

INSTALL=$HAUL_REPO_ROOT/Scripts/install.sh
# Files under the prefix, with their modes (the unit as --prefix puts it).
EXPECTED=(
    "755 bin/haul" "755 bin/haul-urlsession" "644 share/man/man1/haul.1"
    "644 share/bash-completion/completions/haul" "644 share/zsh/site-functions/_haul"
    "644 share/fish/vendor_completions.d/haul.fish" "644 lib/systemd/user/haul.service"
    "644 share/haul/install-manifest"
)

# Makes a temporary folder, removed when the script exits, and prints its path.
temporary_folder() {
    local folder
    folder=$(mktemp -d)
    on_exit "rm -rf '$folder'"
    echo "$folder"
}

# Fails unless the files under PREFIX are exactly EXPECTED, with their modes.
check_files() {
    local prefix=$1 entry found expected
    found=$(cd "$prefix" && find . -type f -printf '%m %P\n' | sort)
    expected=$(for entry in "${EXPECTED[@]}"; do echo "$entry"; done | sort)
    [[ "$found" == "$expected" ]] || die "files under $prefix:"$'\n'"$found"$'\n'"expected:"$'\n'"$expected"
}

# Fails unless folder $1 is empty.
check_empty() {
    [[ -z "$(find "$1" -mindepth 1 -print -quit)" ]] || die "$1 is not empty: $(find "$1" -mindepth 1 | head -20)"
}

# A prefix: install (building), the files, the programs with no toolchain, an update, uninstall.
check_prefix_install() {
    local prefix manifest
    prefix=$(temporary_folder)
    log "Scripts/install.sh --prefix=$prefix (builds)"
    "$INSTALL" --prefix="$prefix"
    check_files "$prefix"
    grep -qxF "ExecStart=$prefix/bin/haul daemon --dir=%h/Downloads" "$prefix/lib/systemd/user/haul.service" \
        || die "the unit's ExecStart does not name $prefix/bin/haul"
    [[ "$(MANPATH=$prefix/share/man man -w haul)" == "$prefix/share/man/man1/haul.1" ]] || die "man -w haul does not find the page"
    log "$(check_version_line "$prefix/bin/haul")"
    check_download "$prefix/bin/haul"
    check_download "$prefix/bin/haul" --engine=urlsession
    manifest=$(cat "$prefix/share/haul/install-manifest")
    log "again: an update"
    "$INSTALL" --prefix="$prefix" --no-build
    check_files "$prefix"
    [[ "$(cat "$prefix/share/haul/install-manifest")" == "$manifest" ]] || die "a second install changed the manifest"
    check_planted_manifest "$prefix"
    "$INSTALL" --prefix="$prefix" --uninstall
    check_empty "$prefix"
    if "$INSTALL" --prefix="$prefix" --uninstall 2>/dev/null; then die "--uninstall without a manifest succeeded"; fi
}

# A manifest line naming a file outside the prefix stops --uninstall before it removes anything.
check_planted_manifest() {
    local prefix=$1 outside status=0
    outside=$(temporary_folder)/victim
    echo "not haul's" >"$outside"
    cp "$prefix/share/haul/install-manifest" "$prefix/manifest.saved"
    echo "file $(sha256sum "$outside" | cut -d' ' -f1) $outside" >>"$prefix/share/haul/install-manifest"
    "$INSTALL" --prefix="$prefix" --uninstall 2>/dev/null || status=$?
    ((status != 0)) || die "--uninstall with a planted manifest line succeeded"
    [[ -f "$outside" && -x "$prefix/bin/haul" ]] || die "--uninstall with a planted manifest line removed files"
    mv "$prefix/manifest.saved" "$prefix/share/haul/install-manifest"
    log "a manifest naming $outside was refused, nothing removed"
}

# A file the script did not write stops it before it writes anything.
check_refusal() {
    local prefix status=0
    prefix=$(temporary_folder)
    mkdir "$prefix/bin"
    echo "someone else's haul" >"$prefix/bin/haul"
    on_exit "rm -f '$prefix.log'"
    "$INSTALL" --prefix="$prefix" --no-build 2>"$prefix.log" || status=$?
    ((status == 1)) || die "install over a foreign bin/haul exited $status, not 1"
    grep -qF "$prefix/bin/haul" "$prefix.log" || die "the refusal does not name the file: $(cat "$prefix.log")"
    [[ "$(cat "$prefix/bin/haul")" == "someone else's haul" ]] || die "the foreign bin/haul was changed"
    [[ "$(cd "$prefix" && find . -mindepth 1 | sort | tr '\n' ' ')" == "./bin ./bin/haul " ]] || die "the refused install wrote files"
    log "refused to replace a foreign $prefix/bin/haul, as it should"
}

# --user (HOME in a temporary folder): the unit under ~/.config; one changed since installed
# stops an update and survives --uninstall.
check_user_install() {
    local home unit
    home=$(temporary_folder)
    HOME=$home XDG_CONFIG_HOME="" "$INSTALL" --user --no-build
    unit=$home/.config/systemd/user/haul.service
    grep -qxF "ExecStart=$home/.local/bin/haul daemon --dir=%h/Downloads" "$unit" || die "--user: the unit is not $unit naming ~/.local/bin/haul"
    log "$(check_version_line "$home/.local/bin/haul")"
    echo "# changed by its user" >>"$unit"
    if HOME=$home XDG_CONFIG_HOME="" "$INSTALL" --user --no-build 2>/dev/null; then die "an update replaced a unit changed since it was installed"; fi
    HOME=$home XDG_CONFIG_HOME="" "$INSTALL" --user --uninstall
    [[ "$(cd "$home" && find . -type f)" == "./.config/systemd/user/haul.service" ]] || die "--user --uninstall left: $(cd "$home" && find . -type f)"
    log "--user: the changed unit was kept, everything else removed"
}

serve_payload_on_loopback
check_prefix_install
check_refusal
check_user_install
log "install.sh: installed, ran without a toolchain, updated, refused, uninstalled"
