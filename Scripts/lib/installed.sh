# shellcheck shell=bash
# Checks of an installed haul, shared by Scripts/test-install.sh and Scripts/test-deb.sh: its
# --version line, and a real download from a loopback server, each run with no toolchain on PATH.
#
# Source it after common.sh:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib/installed.sh"

# The environment the installed programs run in: no toolchain on PATH, nothing else inherited.
INSTALLED_ENV=(env -i PATH=/usr/bin:/bin LANG=C.UTF-8)

# Serves a folder of 5 MiB of random bytes (`payload`) over HTTP on 127.0.0.1, on a free port,
# with python3's http.server until the script exits. Sets LOOPBACK_URL (the payload's URL) and
# PAYLOAD (its path).
serve_payload_on_loopback() {
    local folder log port="" pid i
    require_command python3
    folder=$(mktemp -d)
    log=$folder.log
    on_exit "rm -rf '$folder' '$log'"
    head -c $((5 << 20)) /dev/urandom >"$folder/payload"
    python3 -u -m http.server --bind 127.0.0.1 --directory "$folder" 0 >"$log" 2>&1 </dev/null &
    pid=$!
    on_exit "kill $pid 2>/dev/null"
    for ((i = 0; i < 100; i++)); do
        port=$(sed -n 's/^Serving HTTP on 127\.0\.0\.1 port \([0-9]*\) .*/\1/p' "$log")
        [[ -n "$port" ]] && break
        kill -0 "$pid" 2>/dev/null || die "python3 -m http.server did not start: $(cat "$log")"
        sleep 0.1
    done
    [[ -n "$port" ]] || die "python3 -m http.server did not say its port"
    LOOPBACK_URL=http://127.0.0.1:$port/payload
    PAYLOAD=$folder/payload
}

# Checks that `BINARY --version`, run in INSTALLED_ENV, prints one line of the expected shape,
# naming git's HEAD (possibly "-dirty") when the repository is a git checkout; prints the line.
check_version_line() {
    local binary=$1 line head
    line=$("${INSTALLED_ENV[@]}" "$binary" --version) || die "$binary --version failed"
    [[ "$line" =~ ^haul\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ ([0-9a-z.+-]+),\ Swift\ [0-9]+\.[0-9]+(\.[0-9]+)?,\ OpenSSL\ [0-9]+\.[0-9]+\.[0-9]+\)$ ]] \
        || die "$binary --version printed an unexpected line: $line"
    if head=$(git -C "$HAUL_REPO_ROOT" rev-parse --short HEAD 2>/dev/null); then
        [[ "${BASH_REMATCH[1]}" == "$head" || "${BASH_REMATCH[1]}" == "$head-dirty" ]] \
            || die "$binary names commit ${BASH_REMATCH[1]}, HEAD is $head"
    fi
    echo "$line"
}

# Downloads LOOPBACK_URL with BINARY (and the options given after it) in INSTALLED_ENV into a
# new folder, and checks the bytes against PAYLOAD.
check_download() {
    local binary=$1 folder
    shift
    folder=$(mktemp -d)
    on_exit "rm -rf '$folder'"
    (cd "$folder" && "${INSTALLED_ENV[@]}" HOME="$folder" timeout 120 "$binary" -q "$@" -o got "$LOOPBACK_URL") \
        || die "$binary $* $LOOPBACK_URL failed"
    cmp -s "$folder/got" "$PAYLOAD" || die "$binary $*: the downloaded bytes differ from the served file"
    log "downloaded $(stat -c %s "$PAYLOAD") bytes from $LOOPBACK_URL with $binary${*:+ $*}"
}
