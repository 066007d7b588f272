#!/usr/bin/env bash
# Benchmark: haul against curl and aria2c (one connection) downloading one big file from a
# private nginx on loopback, over plain HTTP and over HTTPS.
#
# The clients run interleaved, round-robin (haul, curl, aria2c, haul, curl, aria2c, ...), so a
# slow spell of the machine hits all of them alike. Every download is written to the same disk as
# the source, compared byte for byte with it, and deleted before the next run. For each run the
# script records wall seconds, CPU seconds (user + sys) and peak RSS of the client, then prints a
# table per protocol with medians and haul's ratios to the others.
#
#   Scripts/bench.sh                        # 2 GiB, 1 warm-up + 5 runs per client and protocol
#   RUNS=1 SIZE_MIB=256 Scripts/bench.sh    # quick check
#
# Environment:
#   SIZE_MIB=2048          file size in MiB
#   WARMUP=1 RUNS=5        warm-up rounds (not counted) and measured rounds
#   PROTOCOLS="http https" CLIENTS="haul curl aria2c"
#   HAUL_ARGS=""           extra haul options, e.g. "-x 1" (default: haul's own defaults)
#   HAUL_BIN=PATH          haul binary to use (default: `swift build -c release`, then its haul)
#   HAUL_STANDIN=curl      time curl in haul's row (to debug this script)
#   RESULTS_DIR=DIR        where the raw TSV and the summary go (default: a new temp dir, kept)
#   WORK_DIR=DIR           server work dir, kept; the big file made there is reused next time
set -euo pipefail

SCRIPTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=Scripts/lib/nginx.sh
source "$SCRIPTS_DIR/lib/nginx.sh"

SIZE_MIB=${SIZE_MIB:-2048}
WARMUP=${WARMUP:-1}
RUNS=${RUNS:-5}
PROTOCOLS=${PROTOCOLS:-http https}
CLIENTS=${CLIENTS:-haul curl aria2c}
HAUL_ARGS=${HAUL_ARGS:-}

# ---------------------------------------------------------------------------------------------
# Tools, haul, server, data

require_command curl curl
require_command aria2c aria2
require_command cmp diffutils
require_command python3 python3
# GNU time by its path: `time` alone is a shell keyword.
require_command /usr/bin/time time
resolve_haul
nginx_setup
nginx_start

source_file=$(nginx_make_file "bench.bin" "$SIZE_MIB")
source_bytes=$(stat -c %s "$source_file")

# Downloads go next to the source: the same disk, never a tmpfs if the work dir is not one.
OUT_DIR=$NGINX_WORK/out
mkdir -p "$OUT_DIR"
out_fs=$(stat -f -c %T "$OUT_DIR")
if [[ "$out_fs" == tmpfs ]]; then
    log "warning: $OUT_DIR is on tmpfs; set WORK_DIR to a folder on disk for realistic numbers"
fi

RESULTS_DIR=${RESULTS_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/haul-bench.XXXXXX")}
mkdir -p "$RESULTS_DIR"
stamp=$(date +%Y%m%d-%H%M%S)
TSV=$RESULTS_DIR/bench-$stamp.tsv
SUMMARY=$RESULTS_DIR/bench-$stamp.txt
CLIENT_LOG=$NGINX_WORK/client.log

# ---------------------------------------------------------------------------------------------
# Measuring one run

# A tiny wrapper: runs a command, prints "exit wall user sys maxrss_kib" for it.
# - wall: a monotonic clock around the run;
# - CPU: wait4() on that child alone (the client and anything it waited for, and nothing the
#   python launcher ran before, which getrusage(RUSAGE_CHILDREN) would count);
# - peak RSS: from GNU time wrapped around the client. A child's ru_maxrss starts at the size of
#   the process that forked it, so forking straight from python would report python's ~13 MiB as
#   a floor; GNU time is ~1 MiB.
MEASURE=$NGINX_WORK/measure.py
cat >"$MEASURE" <<'PY'
import os, subprocess, sys, time
log, rss_file, command = sys.argv[1], sys.argv[2], sys.argv[3:]
start = time.perf_counter()
with open(log, "ab") as out:
    child = subprocess.Popen(["/usr/bin/time", "-q", "-f", "%M", "-o", rss_file, *command],
                             stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    _, status, usage = os.wait4(child.pid, 0)
wall = time.perf_counter() - start
with open(rss_file) as f:
    rss = int(f.read().split()[-1])
print(f"{os.waitstatus_to_exitcode(status)}\t{wall:.4f}\t{usage.ru_utime:.4f}\t{usage.ru_stime:.4f}\t{rss}")
PY

# Fills the array CMD with the command line for CLIENT fetching URL into OUT.
client_command() {
    local client=$1 url=$2 out=$3 tls=$4
    case $client in
        haul)
            if [[ "${HAUL_STANDIN:-}" == curl ]]; then
                CMD=(curl --silent --show-error --fail -o "$out")
                [[ $tls == 1 ]] && CMD+=(--cacert "$NGINX_CA")
            else
                # shellcheck disable=SC2206 # HAUL_ARGS is a list of options, split on purpose
                CMD=("$HAUL_BIN" -q $HAUL_ARGS -o "$out")
                [[ $tls == 1 ]] && CMD+=("--cacert=$NGINX_CA")
            fi
            ;;
        curl)
            CMD=(curl --silent --show-error --fail -o "$out")
            [[ $tls == 1 ]] && CMD+=(--cacert "$NGINX_CA")
            ;;
        aria2c)
            # One connection, no renaming, no progress; space is reserved with fallocate (what
            # aria2's docs recommend on ext4/xfs/btrfs) rather than by writing zeros first.
            CMD=(aria2c -x1 -s1 --quiet=true --allow-overwrite=true --auto-file-renaming=false
                --file-allocation=falloc --dir="$(dirname "$out")" --out="$(basename "$out")")
            [[ $tls == 1 ]] && CMD+=("--ca-certificate=$NGINX_CA")
            ;;
        *) die "unknown client '$client' (known: haul curl aria2c)" ;;
    esac
    CMD+=("$url")
}

failures=0

# Runs CLIENT once, verifies and deletes its output, appends a TSV row.
run_once() {
    local protocol=$1 phase=$2 round=$3 client=$4
    local url tls=0 out=$OUT_DIR/bench.bin
    if [[ $protocol == https ]]; then
        url=$NGINX_HTTPS_URL/bench.bin
        tls=1
    else
        url=$NGINX_HTTP_URL/bench.bin
    fi
    rm -f "$out"
    client_command "$client" "$url" "$out" "$tls"
    : >"$CLIENT_LOG"
    local result status wall user sys rss verified=1
    result=$(python3 "$MEASURE" "$CLIENT_LOG" "$NGINX_WORK/rss" "${CMD[@]}")
    IFS=$'\t' read -r status wall user sys rss <<<"$result"
    if [[ $status -ne 0 ]] || ! cmp -s "$out" "$source_file"; then
        verified=0
        failures=$((failures + 1))
        log "FAIL: $client over $protocol (exit $status, $(stat -c %s "$out" 2>/dev/null || echo no) bytes): $(tail -c 300 "$CLIENT_LOG")"
    fi
    rm -f "$out" "$out.aria2"
    sync
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$protocol" "$client" "$phase" "$round" \
        "$status" "$verified" "$source_bytes" "$wall" "$user" "$sys" "$rss" >>"$TSV"
    log "$protocol $phase $round $client: ${wall}s wall, $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')s cpu, $((rss / 1024)) MiB rss$([[ $verified == 1 ]] || echo ', FAILED')"
}

# ---------------------------------------------------------------------------------------------
# The runs

printf 'protocol\tclient\tphase\tround\texit\tverified\tbytes\twall_s\tuser_s\tsys_s\tmaxrss_kib\n' >"$TSV"
log "client under test: $(haul_description) ${HAUL_ARGS}"
log "$WARMUP warm-up + $RUNS runs of ${CLIENTS// /, } per protocol, $SIZE_MIB MiB, output on $out_fs"

for protocol in $PROTOCOLS; do
    for ((round = 1; round <= WARMUP + RUNS; round++)); do
        phase=run
        number=$((round - WARMUP))
        if ((round <= WARMUP)); then
            phase=warmup
            number=$round
        fi
        for client in $CLIENTS; do
            run_once "$protocol" "$phase" "$number" "$client"
        done
    done
done

# ---------------------------------------------------------------------------------------------
# The report

reproduce="SIZE_MIB=$SIZE_MIB WARMUP=$WARMUP RUNS=$RUNS PROTOCOLS=\"$PROTOCOLS\" CLIENTS=\"$CLIENTS\""
[[ -n "$HAUL_ARGS" ]] && reproduce+=" HAUL_ARGS=\"$HAUL_ARGS\""
[[ "${HAUL_STANDIN:-}" == curl ]] && reproduce+=" HAUL_STANDIN=curl"
[[ -n "${HAUL_BIN:-}" && -z "${HAUL_STANDIN:-}" ]] && reproduce+=" HAUL_BIN=$HAUL_BIN"
reproduce+=" Scripts/bench.sh"
commit=$(git -C "$HAUL_REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n "$(git -C "$HAUL_REPO_ROOT" status --porcelain 2>/dev/null)" ]]; then
    commit+=" (with uncommitted changes)"
fi

{
    echo "haul bench: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit, $(nproc) cores, $(uname -sr)"
    echo "file: $SIZE_MIB MiB from nginx $(nginx -v 2>&1 | sed 's|.*/||') on 127.0.0.1 (sendfile on), written to $out_fs"
    echo "haul: $(haul_description) ${HAUL_ARGS}"
    echo "curl: $(curl --version | head -1 | cut -d' ' -f1-2,5-6)"
    echo "aria2c: $(aria2c --version | head -1) (-x1 -s1 --file-allocation=falloc)"
    python3 - "$TSV" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]), delimiter="\t") if r["phase"] == "run"]
protocols = list(dict.fromkeys(r["protocol"] for r in rows))
clients = list(dict.fromkeys(r["client"] for r in rows))
for protocol in protocols:
    stats = {}
    for client in clients:
        ok = [r for r in rows if r["protocol"] == protocol and r["client"] == client and r["verified"] == "1"]
        total = sum(1 for r in rows if r["protocol"] == protocol and r["client"] == client)
        if not ok:
            stats[client] = None, total
            continue
        wall = [float(r["wall_s"]) for r in ok]
        stats[client] = {
            "wall": statistics.median(wall),
            "mbps": statistics.median(int(r["bytes"]) / float(r["wall_s"]) / 1e6 for r in ok),
            "cpu": statistics.median(float(r["user_s"]) + float(r["sys_s"]) for r in ok),
            "rss": statistics.median(int(r["maxrss_kib"]) / 1024 for r in ok),
            "n": len(ok),
        }, total
    print()
    print(f"{protocol.upper()}  (medians over verified runs; ratios are haul/other: MB/s above 1 and CPU below 1 favour haul)")
    print(f"{'client':<8} {'runs':>5} {'wall s':>8} {'MB/s':>8} {'CPU s':>7} {'RSS MiB':>8} {'MB/s ratio':>11} {'CPU ratio':>10}")
    haul, _ = stats.get("haul", (None, 0))
    for client in clients:
        s, total = stats[client]
        if s is None:
            runs = f"0/{total}"
            print(f"{client:<8} {runs:>5}   every run failed")
            continue
        speed_ratio = f"{haul['mbps'] / s['mbps']:.2f}" if haul else "-"
        cpu_ratio = f"{haul['cpu'] / s['cpu']:.2f}" if haul and s["cpu"] > 0 else "-"
        runs = f"{s['n']}/{total}"
        print(f"{client:<8} {runs:>5} {s['wall']:>8.3f} {s['mbps']:>8.1f} {s['cpu']:>7.3f} {s['rss']:>8.1f} {speed_ratio:>11} {cpu_ratio:>10}")
PY
    echo
    echo "reproduce: $reproduce"
    echo "raw results: $TSV"
} | tee "$SUMMARY"

if ((failures > 0)); then
    log "$failures run(s) failed verification or exited non-zero"
    exit 1
fi
