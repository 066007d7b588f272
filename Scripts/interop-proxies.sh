#!/usr/bin/env bash
# Interop check: haul through real proxies on loopback (Debian's tinyproxy, squid and microsocks)
# to a private nginx, plain and over TLS (CONNECT), with 1 and 4 connections.
#
# Each case prints one PASS/FAIL line; the script exits non-zero when any case fails.
#
#   Scripts/interop-proxies.sh
#
# Environment:
#   HAUL_BIN=PATH        the haul binary to test (default: build release, see lib/common.sh)
#   SIZE_MIB=256         size of the file downloaded through each proxy
#   HAUL_TIMEOUT=300     seconds one haul run may take before it is killed (exit 124)
#   KEEP_WORK=1          keep the temp work dir (configs, proxy logs, downloads) for inspection
set -euo pipefail

SCRIPTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=Scripts/lib/nginx.sh
source "$SCRIPTS_DIR/lib/nginx.sh"
# shellcheck source=Scripts/lib/proxies.sh
source "$SCRIPTS_DIR/lib/proxies.sh"

SIZE_MIB=${SIZE_MIB:-256}

resolve_haul
nginx_setup
nginx_start
proxies_setup "$NGINX_HTTPS_PORT"
proxies_start

DOWNLOADS=$NGINX_WORK/downloads
rm -rf "$DOWNLOADS"
mkdir -p "$DOWNLOADS"
large=$(nginx_make_file "large.bin" "$SIZE_MIB")
large_sha=$(sha256sum "$large" | cut -d' ' -f1)
nginx_make_file "small.bin" 1 >/dev/null

passed=0
failed=0
pass() { passed=$((passed + 1)); printf 'PASS  %s\n' "$1"; }
fail() { failed=$((failed + 1)); printf 'FAIL  %s: %s\n' "$1" "$2"; }

# Runs haul; checks the exit status, the file's sha256 and that nothing was left beside it.
# Usage: check_download NAME FILE HAUL_ARGS...
check_download() {
    local name=$1 file=$2
    shift 2
    local status=0 started ended actual
    started=$(date +%s.%N)
    haul -q "$@" 2>"$file.err" || status=$?
    ended=$(date +%s.%N)
    if [[ $status -ne 0 ]]; then
        fail "$name" "haul exited $status: $(head -c 300 "$file.err")"
        return 0
    fi
    actual=$(sha256sum "$file" | cut -d' ' -f1)
    if [[ "$actual" != "$large_sha" ]]; then
        fail "$name" "sha256 $actual, expected $large_sha"
    elif compgen -G "$file.part" >/dev/null || compgen -G "$file.resume" >/dev/null; then
        fail "$name" "a partial or resume file was left behind"
    else
        pass "$name (byte-identical, $(awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.2f", b - a }') s)"
    fi
    rm -f "$file" "$file.err"
}

log "client under test: $(haul_description)"
declare -A proxy_urls=(
    [tinyproxy]="http://$TINYPROXY_USER:$TINYPROXY_PASSWORD@127.0.0.1:$TINYPROXY_PORT"
    [squid]="http://127.0.0.1:$SQUID_PORT"
    [microsocks]="socks5h://$MICROSOCKS_USER:$MICROSOCKS_PASSWORD@127.0.0.1:$MICROSOCKS_PORT"
)
for proxy in tinyproxy squid microsocks; do
    for connections in 1 4; do
        check_download "$proxy http -x $connections ${SIZE_MIB} MiB" "$DOWNLOADS/$proxy-$connections.bin" \
            --proxy="${proxy_urls[$proxy]}" -x "$connections" -o "$DOWNLOADS/$proxy-$connections.bin" "$NGINX_HTTP_URL/large.bin"
        check_download "$proxy https -x $connections ${SIZE_MIB} MiB" "$DOWNLOADS/$proxy-tls-$connections.bin" \
            --proxy="${proxy_urls[$proxy]}" -x "$connections" --cacert="$NGINX_CA" -o "$DOWNLOADS/$proxy-tls-$connections.bin" \
            "https://localhost:$NGINX_HTTPS_PORT/large.bin"
    done
done

# tinyproxy with the wrong password: 407, exit 6, no file.
case_name="tinyproxy refuses a wrong password (exit 6, no file)"
status=0
haul -q --retries=0 --proxy="http://$TINYPROXY_USER:wrong@127.0.0.1:$TINYPROXY_PORT" -o "$DOWNLOADS/refused.bin" \
    "$NGINX_HTTP_URL/large.bin" 2>"$DOWNLOADS/refused.err" || status=$?
if [[ $status -ne 6 || -e "$DOWNLOADS/refused.bin" ]]; then
    fail "$case_name" "exit $status: $(head -c 300 "$DOWNLOADS/refused.err")"
else
    pass "$case_name"
fi

# What reached squid: a CONNECT carries none of the origin's headers (squid logs every request's
# headers with log_mime_hdrs on).
case_name="squid's log: CONNECT carried no Authorization, Cookie or -H header"
printf '127.0.0.1\tFALSE\t/\tFALSE\t0\tsid\tc00kiesecret\n' >"$DOWNLOADS/cookies.txt"
status=0
haul -q --proxy="${proxy_urls[squid]}" -u "origin:pwsecret" -b "$DOWNLOADS/cookies.txt" -H "X-Secret: hdrsecret" \
    --cacert="$NGINX_CA" -o "$DOWNLOADS/leak.bin" "https://localhost:$NGINX_HTTPS_PORT/small.bin" 2>"$DOWNLOADS/leak.err" \
    || status=$?
sleep 0.5   # squid writes its log line when the tunnel closes
connect_lines=$(grep ' CONNECT ' "$SQUID_ACCESS_LOG" || true)
if [[ $status -ne 0 ]]; then
    fail "$case_name" "exit $status: $(head -c 300 "$DOWNLOADS/leak.err")"
elif [[ -z "$connect_lines" ]]; then
    fail "$case_name" "no CONNECT line in $SQUID_ACCESS_LOG"
elif grep -qiE 'authorization|cookie|x-secret|secret' <<<"$connect_lines"; then
    fail "$case_name" "leaked: $connect_lines"
else
    pass "$case_name"
fi

total=$((passed + failed))
if [[ $failed -eq 0 ]]; then
    echo "interop-proxies: all $total cases passed ($(haul_description))"
else
    echo "interop-proxies: $failed of $total cases FAILED ($(haul_description)); rerun with KEEP_WORK=1 to keep the logs"
    exit 1
fi
