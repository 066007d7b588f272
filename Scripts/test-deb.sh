#!/usr/bin/env bash
# Checks the Debian package for real on this machine (root, Debian or Ubuntu): builds it with
# Scripts/package-deb.sh, holds it to lintian (no error), installs it with dpkg -i, runs the
# installed haul with no toolchain on PATH (--version, a download from a loopback server, its
# man page), then removes and purges it and checks that none of its files is left.
#
#   Scripts/test-deb.sh               # builds with Scripts/build-release.sh (slow the first time)
#   Scripts/test-deb.sh --no-build    # packages the release build made before
#
# Refuses to run when a package named haul is installed already: it would be replaced and removed.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/installed.sh"

# Prints whether the package haul is installed ("install ok installed", ...), empty if unknown.
package_status() {
    dpkg-query -W -f='${Status}' haul 2>/dev/null || true
}

# Builds the package into a temporary folder; sets DEB to its path.
build_package() {
    local folder
    folder=$(mktemp -d)
    on_exit "rm -rf '$folder'"
    DEB=$(cd "$folder" && "$HAUL_REPO_ROOT/Scripts/package-deb.sh" "$@")
    log "$(basename "$DEB"): $(stat -c %s "$DEB") bytes"
}

# Runs lintian over the package: its tags are printed, an error fails the check.
run_lintian() {
    local output status=0
    require_command lintian
    output=$(lintian --display-info --fail-on error "$DEB" 2>&1) || status=$?
    printf '%s\n' "$output" | grep -v '^running with root privileges' >&2 || true
    log "lintian: $(grep -c '^E: ' <<<"$output" || true) errors, $(grep -c '^W: ' <<<"$output" || true) warnings," \
        "$(grep -c '^I: ' <<<"$output" || true) notes"
    ((status == 0)) || die "lintian found errors in $(basename "$DEB")"
}

# Checks the installed package: its files, haul on PATH, the man page, a download.
check_installed() {
    local path
    while IFS= read -r path; do
        [[ -e "$path" ]] || die "dpkg -L haul lists $path, which is not there"
    done <"$LISTING"
    [[ "$("${INSTALLED_ENV[@]}" sh -c 'command -v haul')" == /usr/bin/haul ]] || die "haul is not /usr/bin/haul on PATH"
    log "$(check_version_line /usr/bin/haul)"
    [[ "$(man -w haul)" == /usr/share/man/man1/haul.1.gz ]] || die "man -w haul: $(man -w haul 2>&1)"
    MANWIDTH=80 man -P cat haul 2>&1 >/dev/null | grep . && die "man haul: the page renders with warnings"
    check_download /usr/bin/haul
}

# Checks that nothing dpkg -L listed is left after COMMAND, except folders other packages own.
check_gone() {
    local path
    while IFS= read -r path; do
        [[ -e "$path" || -L "$path" ]] || continue
        [[ -d "$path" && ! -L "$path" ]] || die "$path is left after $1"
        dpkg-query -S "$path" >/dev/null 2>&1 || die "the folder $path is left after $1, and no package owns it"
    done <"$LISTING"
}

[[ $EUID -eq 0 ]] || die "run as root: it installs and removes a package"
require_command dpkg-query dpkg
require_command man man-db
[[ -z "$(package_status)" || "$(package_status)" == *not-installed ]] \
    || die "a package named haul is installed ($(package_status)): remove it first, this check installs and purges its own"
build_package "$@"
run_lintian
LISTING=$(mktemp)
on_exit "rm -f '$LISTING'"
# shellcheck disable=SC2016  # expanded when the cleanup runs
on_exit '[[ "$(package_status)" == *" installed" ]] && dpkg --purge haul >/dev/null'
serve_payload_on_loopback
log "dpkg -i $(basename "$DEB")"
dpkg -i "$DEB" >&2
dpkg -L haul | grep -v '^/\.$' >"$LISTING"
check_installed
log "dpkg -r haul, then dpkg --purge haul"
dpkg -r haul >&2
check_gone "dpkg -r haul"
dpkg --purge haul >&2
check_gone "dpkg --purge haul"
[[ -z "$(package_status)" || "$(package_status)" == "unknown ok not-installed" ]] || die "after --purge dpkg says: $(package_status)"
log "the package installed, ran, and left nothing of its $(wc -l <"$LISTING") paths behind"
