#!/usr/bin/env bash
# Interop check: haul against a real nginx on loopback, over plain HTTP and over HTTPS.
#
# Each case prints one PASS/FAIL line; the script exits non-zero when any case fails.
#
#   Scripts/interop-nginx.sh
#
# Environment:
#   HAUL_BIN=PATH        the haul binary to test (default: build release, see lib/common.sh)
#   HAUL_STANDIN=curl    run the cases with a curl stand-in instead (to debug this script)
#   SIZE_MIB=256         size of the large file
#   HAUL_TIMEOUT=300     seconds one haul run may take before it is killed (exit 124)
#   WORK_DIR=DIR         use (and keep) this work dir instead of a temp dir
#   KEEP_WORK=1          keep the temp work dir (server logs, downloads) for inspection
set -euo pipefail

SCRIPTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=Scripts/lib/nginx.sh
source "$SCRIPTS_DIR/lib/nginx.sh"

SIZE_MIB=${SIZE_MIB:-256}

resolve_haul
nginx_setup
nginx_start

DOWNLOADS=$NGINX_WORK/downloads
rm -rf "$DOWNLOADS"   # a kept WORK_DIR: the last run's files would be found finished
mkdir -p "$DOWNLOADS"

large=$(nginx_make_file "large.bin" "$SIZE_MIB")
small=$(nginx_make_file "small.bin" 1)
large_sha=$(sha256sum "$large" | cut -d' ' -f1)
small_sha=$(sha256sum "$small" | cut -d' ' -f1)

passed=0
failed=0

pass() {
    passed=$((passed + 1))
    printf 'PASS  %s\n' "$1"
}

fail() {
    failed=$((failed + 1))
    printf 'FAIL  %s: %s\n' "$1" "$2"
}

# Runs haul; on success checks that FILE has the expected sha256 and that no partial or resume
# file was left beside it.
# Usage: check_download NAME FILE EXPECTED_SHA256 HAUL_ARGS...
check_download() {
    local name=$1 file=$2 expected=$3
    shift 3
    local status=0 started ended
    started=$(date +%s.%N)
    haul -q "$@" || status=$?
    ended=$(date +%s.%N)
    if [[ $status -ne 0 ]]; then
        fail "$name" "haul exited $status"
        return 0
    fi
    if [[ ! -f "$file" ]]; then
        fail "$name" "haul exited 0 but $file does not exist"
        return 0
    fi
    local actual
    actual=$(sha256sum "$file" | cut -d' ' -f1)
    if [[ "$actual" != "$expected" ]]; then
        fail "$name" "sha256 $actual, expected $expected ($(stat -c %s "$file") bytes)"
        return 0
    fi
    local leftovers
    leftovers=$(find "$(dirname "$file")" -maxdepth 1 \( -name '*.part' -o -name '*.resume' -o -name '*.lock' \) -print)
    if [[ -n "$leftovers" ]]; then
        fail "$name" "left behind: $leftovers"
        return 0
    fi
    pass "$name (sha256 matches, $(awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.2f", b - a }') s)"
}

log "client under test: $(haul_description)"

# 1-3. Byte identity of a large file, plain and TLS (by IP and by name, both in the SAN).
check_download "http ${SIZE_MIB} MiB -o" "$DOWNLOADS/http.bin" "$large_sha" \
    -o "$DOWNLOADS/http.bin" "$NGINX_HTTP_URL/large.bin"
check_download "https ${SIZE_MIB} MiB -o --cacert (127.0.0.1)" "$DOWNLOADS/https.bin" "$large_sha" \
    --cacert="$NGINX_CA" -o "$DOWNLOADS/https.bin" "$NGINX_HTTPS_URL/large.bin"
check_download "https 1 MiB -o --cacert (localhost)" "$DOWNLOADS/https-localhost.bin" "$small_sha" \
    --cacert="$NGINX_CA" -o "$DOWNLOADS/https-localhost.bin" "https://localhost:$NGINX_HTTPS_PORT/small.bin"

# 4. A certificate from an unknown CA is refused with the TLS exit code and leaves no file.
case_name="https without --cacert is refused (exit 5)"
status=0
haul -q -o "$DOWNLOADS/untrusted.bin" "$NGINX_HTTPS_URL/small.bin" 2>"$NGINX_WORK/untrusted.err" || status=$?
if [[ $status -ne 5 ]]; then
    fail "$case_name" "exit $status; stderr: $(head -c 300 "$NGINX_WORK/untrusted.err")"
elif [[ -e "$DOWNLOADS/untrusted.bin" ]]; then
    fail "$case_name" "exit 5 but $DOWNLOADS/untrusted.bin exists"
else
    pass "$case_name"
fi

# 5-7. Naming: the file is named from the URL; the same URL again finds it finished (nothing
# downloaded, exit 0); once the file changed on the server (new ETag), the new version is another
# file, and --on-conflict=rename gives it name.1.ext.
NAMED=$DOWNLOADS/named
named=$NGINX_ROOT/named.bin   # a copy of small.bin that these cases change (small.bin stays as made)
cp "$small" "$named.new"
touch -d "@$(stat -c %Y "$small")" "$named.new"
mv "$named.new" "$named"
check_download "-d names the file from the URL (named.bin)" "$NAMED/named.bin" "$small_sha" \
    -d "$NAMED" "$NGINX_HTTP_URL/named.bin"
case_name="the same URL again: the finished file is recognised, not downloaded again"
status=0
haul -d "$NAMED" "$NGINX_HTTP_URL/named.bin" 2>"$NGINX_WORK/again.err" || status=$?
if [[ "${HAUL_STANDIN:-}" == curl ]]; then
    log "skipped: $case_name (the curl stand-in renames instead)"
    rm -f "$NAMED/named.1.bin"
elif [[ $status -ne 0 ]]; then
    fail "$case_name" "exit $status; stderr: $(head -c 300 "$NGINX_WORK/again.err")"
elif ! grep -q "^named.bin: complete already" "$NGINX_WORK/again.err"; then
    fail "$case_name" "stderr: $(head -c 300 "$NGINX_WORK/again.err")"
else
    pass "$case_name"
fi
# nginx's ETag is the modification time (seconds) and the length: move the time on.
head -c 1048576 /dev/urandom >"$named.new"
touch -d "@$(( $(stat -c %Y "$named") + 10 ))" "$named.new"
mv "$named.new" "$named"
new_named_sha=$(sha256sum "$named" | cut -d' ' -f1)
check_download "a changed file with --on-conflict=rename gives named.1.bin" "$NAMED/named.1.bin" "$new_named_sha" \
    -d "$NAMED" --on-conflict=rename "$NGINX_HTTP_URL/named.bin"
case_name="-d folder holds exactly named.bin (old) and named.1.bin (new)"
listing=$(find "$NAMED" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | LC_ALL=C sort | tr '\n' ' ' || true)
if [[ "$listing" != "named.1.bin named.bin " ]]; then
    fail "$case_name" "found: ${listing:-nothing}"
elif [[ "$(sha256sum "$NAMED/named.bin" | cut -d' ' -f1)" != "$small_sha" ]]; then
    fail "$case_name" "named.bin was changed"
else
    pass "$case_name"
fi

total=$((passed + failed))
if [[ $failed -eq 0 ]]; then
    echo "interop-nginx: all $total cases passed ($(haul_description))"
else
    echo "interop-nginx: $failed of $total cases FAILED ($(haul_description))"
    if [[ "${KEEP_WORK:-0}" == 1 || -n "${WORK_DIR:-}" ]]; then
        echo "server logs and downloads kept in $NGINX_WORK"
    else
        echo "rerun with KEEP_WORK=1 to keep the server logs and downloads"
    fi
    exit 1
fi
