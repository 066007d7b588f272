#!/usr/bin/env bash
# Fails, listing them, when a public symbol of a library module (MODULES below) has no doc
# comment.
#
# Builds the modules, extracts their symbol graphs with the toolchain's swift-symbolgraph-extract
# (public symbols only), and reports every symbol declared in this package whose doc comment is
# missing, empty, or only inherited from another module (a `description` documented only by
# CustomStringConvertible counts as undocumented). Members the compiler synthesises
# (`init(rawValue:)`, ...) have no source location and are not ours to document.
#
#   Scripts/check-docs.sh                    # all of them
#   MODULES="Haul" Scripts/check-docs.sh
#   SKIP_BUILD=1 Scripts/check-docs.sh       # reuse the current debug build
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$HAUL_REPO_ROOT"

MODULES=${MODULES:-"HaulCore HaulJSON HaulCrypto HaulHTTP HaulMetalink Haul HaulURLSession HaulSigning HaulService HaulModel HaulDaemon HaulServer HaulCLI HaulDashboard"}
require_command jq

if [[ -z "${SKIP_BUILD:-}" ]]; then
    for module in $MODULES; do
        log "building $module"
        swift build --target "$module" </dev/null >&2
    done
fi
bin="$(swift build --show-bin-path)"

# The extractor ships beside swift; prefer the one of the toolchain in use.
extract="$(dirname "$(command -v swift)")/swift-symbolgraph-extract"
[[ -x "$extract" ]] || extract="$(command -v swift-symbolgraph-extract)" || die "swift-symbolgraph-extract not found"
target="$(swift -print-target-info | jq -r '.target.triple')"

graphs="$(mktemp -d)"
on_exit "rm -rf '$graphs'"

# Clang modules (CHaulTLS, CHaulSys) are found through the module maps SwiftPM wrote beside them,
# system libraries (CSQLite) through the module map in their source folder.
includes=(-I "$bin/Modules")
for map in "$bin"/*.build/module.modulemap "$HAUL_REPO_ROOT"/Sources/*/module.modulemap; do
    [[ -e "$map" ]] && includes+=(-I "$(dirname "$map")")
done

undocumented=0
for module in $MODULES; do
    "$extract" -module-name "$module" -target "$target" "${includes[@]}" -output-dir "$graphs" \
        -minimum-access-level public -skip-synthesized-members </dev/null >&2
    graph="$graphs/$module.symbols.json"
    [[ -s "$graph" ]] || die "no symbol graph for $module"
    total="$(jq '.symbols | length' "$graph")"
    missing="$(jq -r --arg mod "$module" --arg root "$HAUL_REPO_ROOT/" '
        .symbols[]
        | select(.location != null)
        | select(
            (.docComment == null)
            or ((.docComment.module // $mod) != $mod)
            or ([.docComment.lines[]?.text] | join("") | test("\\S") | not)
          )
        | "\(.location.uri | sub("^file://"; "") | sub("^" + $root; "")):\(.location.position.line + 1): "
          + "\(.kind.displayName | ascii_downcase) \(.pathComponents | join("."))"
    ' "$graph" | sort)"
    if [[ -n "$missing" ]]; then
        count="$(printf '%s\n' "$missing" | wc -l)"
        undocumented=$((undocumented + count))
        log "$module: $count of $total public symbols have no doc comment:"
        printf '%s\n' "$missing"
    else
        log "$module: all $total public symbols are documented"
    fi
done

if [[ $undocumented -gt 0 ]]; then
    die "$undocumented public symbol(s) without a doc comment (see above)"
fi
