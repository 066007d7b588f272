# shellcheck shell=bash
# shellcheck disable=SC2034 # CMD and the *_BYTES and *_FILES variables are read by lib/bench-measure.sh
# Part "small" of Scripts/bench.sh: many small files (SMALL_COUNT, default 1,000, of SMALL_KIB,
# default 64 KiB, deterministic content) from nginx over plain HTTP, SMALL_JOBS (default 16) at
# once, listed in a URL file:
#   haul -j16 -i LIST -d DIR, aria2c -j16 -i LIST -d DIR,
#   curl --parallel --parallel-max 16 --remote-name-all --output-dir DIR -K CONFIG
# `curl+sync` is the same curl followed by `sync -f DIR` (one sync of the file system): the time
# until curl's files are on the disk, as haul's are when it exits. The target compares haul with
# plain curl.
# Each run writes into a fresh empty folder; afterwards it must hold exactly the source's file
# names (nothing else: no .aria2 or .part files), each byte for byte equal to its source.
#
# Knobs: SMALL_COUNT=1000  SMALL_KIB=64  SMALL_JOBS=16  SMALL_CLIENTS="haul aria2c curl curl+sync"
#        SMALL_HAUL_ARGS=""  (extra haul options)
#        HAUL_B_BIN=PATH     another haul build, run as client haul-b with the same options (an A/B
#                            of two builds in one run: SMALL_CLIENTS="haul haul-b curl" RUNS=13)

SMALL_COUNT=${SMALL_COUNT:-1000}
SMALL_KIB=${SMALL_KIB:-64}
SMALL_JOBS=${SMALL_JOBS:-16}
SMALL_CLIENTS=${SMALL_CLIENTS:-haul aria2c curl curl+sync}
SMALL_HAUL_ARGS=${SMALL_HAUL_ARGS:-}

# Checks the knobs and installs the clients (before the server starts).
small_check() {
    bench_check_clients small "$SMALL_CLIENTS" "haul haul-b aria2c curl curl+sync"
    if [[ " $SMALL_CLIENTS " == *" haul-b "* ]]; then
        [[ -x "${HAUL_B_BIN:-}" ]] || die "small: client haul-b needs HAUL_B_BIN, an executable haul (got '${HAUL_B_BIN:-}')"
    fi
    ((SMALL_JOBS >= 1 && SMALL_JOBS <= 256)) || die "small: SMALL_JOBS must be 1-256, not $SMALL_JOBS"
    ((SMALL_KIB >= 1)) || die "small: SMALL_KIB must be at least 1, not $SMALL_KIB"
    if [[ " $SMALL_CLIENTS " == *" aria2c "* ]]; then
        require_command aria2c aria2
    fi
    require_command curl curl
}

# Makes the files, the URL list (plain, for haul and aria2c) and curl's config.
small_prepare() {
    SMALL_SOURCE=$(nginx_make_files small "$SMALL_COUNT" "$SMALL_KIB")
    SMALL_BYTES=$((SMALL_COUNT * SMALL_KIB * 1024))
    SMALL_FILES=$SMALL_COUNT
    SMALL_DIR=$OUT_DIR/small
    SMALL_LIST=$NGINX_WORK/small-urls.txt
    SMALL_CURL_CONFIG=$NGINX_WORK/small-urls.curl
    local name
    : >"$SMALL_LIST"
    : >"$SMALL_CURL_CONFIG"
    for name in $(cd "$SMALL_SOURCE" && ls file-*.bin); do
        echo "$NGINX_HTTP_URL/small/$name" >>"$SMALL_LIST"
        echo "url = \"$NGINX_HTTP_URL/small/$name\"" >>"$SMALL_CURL_CONFIG"
    done
    SMALL_VERIFY=$NGINX_WORK/verify-small.py
    cat >"$SMALL_VERIFY" <<'PY'
import os, sys
source, out = sys.argv[1], sys.argv[2]
expected = sorted(n for n in os.listdir(source) if n.startswith("file-"))
found = sorted(os.listdir(out)) if os.path.isdir(out) else []
missing = sorted(set(expected) - set(found))
extra = sorted(set(found) - set(expected))
problems = []
if missing:
    problems.append(f"{len(missing)} of {len(expected)} missing ({' '.join(missing[:3])} ...)")
if extra:
    problems.append(f"{len(extra)} unexpected entries ({' '.join(extra[:3])} ...)")
differ = []
for name in expected:
    if name in missing:
        continue
    with open(os.path.join(source, name), "rb") as a, open(os.path.join(out, name), "rb") as b:
        if a.read() != b.read():
            differ.append(name)
if differ:
    problems.append(f"{len(differ)} differ from their source ({' '.join(differ[:3])} ...)")
if problems:
    print("; ".join(problems))
    sys.exit(1)
PY
}

small_before() {
    rm -rf "$SMALL_DIR"
    mkdir -p "$SMALL_DIR"
}

# curl with SMALL_JOBS transfers at once, names from the URLs, into the run's folder.
_small_curl() {
    CMD=(curl --silent --show-error --fail --parallel --parallel-max "$SMALL_JOBS" --remote-name-all
        --output-dir "$SMALL_DIR" --config "$SMALL_CURL_CONFIG")
}

small_command() {
    local client=$2
    case $client in
        haul)
            if [[ "${HAUL_STANDIN:-}" == curl ]]; then
                _small_curl
            else
                # shellcheck disable=SC2206 # SMALL_HAUL_ARGS is a list of options, split on purpose
                CMD=("$HAUL_BIN" -q -j "$SMALL_JOBS" $SMALL_HAUL_ARGS -i "$SMALL_LIST" -d "$SMALL_DIR")
            fi
            ;;
        haul-b)
            # shellcheck disable=SC2206 # as for haul
            CMD=("$HAUL_B_BIN" -q -j "$SMALL_JOBS" $SMALL_HAUL_ARGS -i "$SMALL_LIST" -d "$SMALL_DIR")
            ;;
        aria2c)
            # SMALL_JOBS downloads at once (one connection each), no renaming, no progress, no
            # summary; control files are removed as each download completes.
            CMD=(aria2c "-j$SMALL_JOBS" --quiet=true --allow-overwrite=true --auto-file-renaming=false
                -i "$SMALL_LIST" -d "$SMALL_DIR")
            ;;
        curl)
            _small_curl
            ;;
        curl+sync)
            _small_curl
            # shellcheck disable=SC2016 # expanded by the inner shell
            CMD=(sh -c 'dir=$1; shift; "$@" && sync -f "$dir"' curl+sync "$SMALL_DIR" "${CMD[@]}")
            ;;
    esac
}

small_verify() {
    python3 "$SMALL_VERIFY" "$SMALL_SOURCE" "$SMALL_DIR"
}

# Each run's folder is moved aside, not removed, until the part is over (small_finish): on ext4
# without a journal (this machine's disk) the inodes of deleted files are not reused for minutes
# and each new file's allocation steps over them, so removing 1,000 files before every run made
# each later run's file creations slower (measured: creating an empty file took 0.5 ms instead of
# 0.01 ms after a few rounds), the same added cost for every client, whichever ran next.
small_after() {
    local aside=$OUT_DIR/small-done
    mkdir -p "$aside"
    mv "$SMALL_DIR" "$aside/$(date +%s%N)"
}

# After the part: removes the runs' folders.
small_finish() {
    rm -rf "$OUT_DIR/small-done"
}

# Lines for the summary's header.
small_describe() {
    echo "small: $SMALL_COUNT files of $SMALL_KIB KiB from /small/, $SMALL_JOBS at once: haul -j $SMALL_JOBS${SMALL_HAUL_ARGS:+ $SMALL_HAUL_ARGS} -i LIST -d DIR, aria2c -j$SMALL_JOBS -i LIST -d DIR, curl --parallel --parallel-max $SMALL_JOBS --remote-name-all (curl+sync: then sync -f DIR)"
    if [[ " $SMALL_CLIENTS " == *" haul-b "* ]]; then
        echo "small: haul-b is $HAUL_B_BIN (the same options)"
    fi
}
