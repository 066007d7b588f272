#!/usr/bin/env bash
# Benchmark: haul against other download clients, all fed by a private nginx on loopback. Five
# parts, all in one run (PARTS picks some):
#   single  one big file (2 GiB) over plain HTTP and HTTPS: haul (its defaults) vs curl and
#           aria2c on one connection                                      (lib/bench-single.sh)
#   capped  a server capping each connection at 25 MiB/s, one 500 MiB file split across 8
#           connections: haul -x 8 vs aria2c -x8 -s8 -k1M vs axel -n 8    (lib/bench-capped.sh)
#   small   1,000 files of 64 KiB, 16 at once from a URL list: haul -j16 -i vs aria2c -j16 -i
#           vs curl --parallel --parallel-max 16                          (lib/bench-small.sh)
#   ratelimit  each client's own rate limit (20 MiB/s for 10 s): haul --limit-rate vs curl
#           --limit-rate vs aria2c --max-overall-download-limit           (lib/bench-ratelimit.sh)
#   checksum  the 2 GiB file with and without --checksum=sha256 (4 and 1 connections) vs
#           openssl dgst -sha256 of the same file                         (lib/bench-checksum.sh)
#
# Within a part the clients run interleaved, round-robin (haul, curl, aria2c, haul, curl, ...), so
# a slow spell of the machine hits all of them alike. Every run writes to the same disk as the
# source, is verified (byte for byte; nothing left beside the files for capped and small) and
# deleted before the next. For each run the script records wall seconds, CPU seconds (user + sys)
# and peak RSS of the client, then prints one table per part (and protocol) with medians, haul's
# ratios to the others and, for capped and small, whether issue 3's targets are met.
#
#   Scripts/bench.sh                                 # everything: 1 warm-up + 5 runs each
#   RUNS=1 SIZE_MIB=256 Scripts/bench.sh             # quick check
#   PARTS=capped Scripts/bench.sh                    # one part
#   PARTS="capped small" HAUL_STANDIN=curl RUNS=1 Scripts/bench.sh   # debug the script
#
# Environment (the parts' own knobs are listed in their files under lib/):
#   PARTS="single capped small ratelimit checksum"   which parts to run, in this order
#   WARMUP=1 RUNS=5        warm-up rounds (not counted) and measured rounds, per part and protocol
#   SIZE_MIB=2048 PROTOCOLS="http https" CLIENTS="haul curl aria2c curl+sync" HAUL_ARGS=""
#     HTTP_EXTRA_CLIENTS="haul-urlsession disk" DISK_WRITERS=16                        (single)
#   CAPPED_SIZE_MIB=500 CAPPED_CONNECTIONS=8 CAPPED_CLIENTS="haul aria2c axel"
#     CAPPED_HAUL_ARGS="" NGINX_CAPPED_RATE=25m                                       (capped)
#   SMALL_COUNT=1000 SMALL_KIB=64 SMALL_JOBS=16 SMALL_CLIENTS="haul aria2c curl curl+sync"
#     SMALL_HAUL_ARGS="" HAUL_B_BIN=PATH (client haul-b: another build, for an A/B)   (small)
#   RATELIMIT_MIB_S=20 RATELIMIT_SECONDS=10 RATELIMIT_CLIENTS="haul curl aria2c"
#     RATELIMIT_HAUL_ARGS=""                                                       (ratelimit)
#   CHECKSUM_CLIENTS="haul haul+sum haul-x1 haul-x1+sum haul-x1-link haul-x1-link+sum openssl"
#   CHECKSUM_LINK_RATE=400M                                  (checksum; SIZE_MIB as single)
#   HAUL_BIN=PATH          haul binary to use (default: the one Scripts/build-release.sh builds)
#   HAUL_STANDIN=curl      time curl in haul's row (to debug this script)
#   BENCH_TIMEOUT=600      seconds one run may take before it is killed and counted as failed
#   PROBE_MIB=256          MiB dd writes into the output folder before and after the runs, into
#                          the page cache and past it (lib/bench-probe.sh): the machine's phase;
#                          0 skips it
#   RESULTS_DIR=DIR        where the raw TSV and the summary go (default: a new temp dir, kept)
#   WORK_DIR=DIR           server work dir, kept; the files made there are reused next time
set -euo pipefail

SCRIPTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=Scripts/lib/nginx.sh
source "$SCRIPTS_DIR/lib/nginx.sh"
# shellcheck source=Scripts/lib/bench-measure.sh
source "$SCRIPTS_DIR/lib/bench-measure.sh"
# shellcheck source=Scripts/lib/bench-report.sh
source "$SCRIPTS_DIR/lib/bench-report.sh"
# shellcheck source=Scripts/lib/bench-single.sh
source "$SCRIPTS_DIR/lib/bench-single.sh"
# shellcheck source=Scripts/lib/bench-capped.sh
source "$SCRIPTS_DIR/lib/bench-capped.sh"
# shellcheck source=Scripts/lib/bench-small.sh
source "$SCRIPTS_DIR/lib/bench-small.sh"
# shellcheck source=Scripts/lib/bench-ratelimit.sh
source "$SCRIPTS_DIR/lib/bench-ratelimit.sh"
# shellcheck source=Scripts/lib/bench-checksum.sh
source "$SCRIPTS_DIR/lib/bench-checksum.sh"
# shellcheck source=Scripts/lib/bench-probe.sh
source "$SCRIPTS_DIR/lib/bench-probe.sh"

PARTS=${PARTS:-single capped small ratelimit checksum}
WARMUP=${WARMUP:-1}
RUNS=${RUNS:-5}

# ---------------------------------------------------------------------------------------------
# Tools, haul, server, data

for part in $PARTS; do
    case $part in
        single | capped | small | ratelimit | checksum) "${part}_check" ;;
        *) die "unknown part '$part' (known: single capped small ratelimit checksum)" ;;
    esac
done
probe_check
require_command cmp diffutils
require_command python3 python3
# GNU time by its path: `time` alone is a shell keyword.
require_command /usr/bin/time time
resolve_haul
if [[ " $PARTS " == *" single "* && " $HTTP_EXTRA_CLIENTS " == *" haul-urlsession "* ]]; then
    if [[ "${HAUL_STANDIN:-}" == curl ]]; then
        log "single: no haul-urlsession client with the curl stand-in"
        HTTP_EXTRA_CLIENTS=${HTTP_EXTRA_CLIENTS//haul-urlsession/}
    elif [[ ! -x "$(dirname "$HAUL_BIN")/haul-urlsession" ]]; then
        die "single: the haul-urlsession client needs $(dirname "$HAUL_BIN")/haul-urlsession (haul --engine=urlsession runs it); build it or set HTTP_EXTRA_CLIENTS=\"\""
    fi
fi
nginx_setup
nginx_start

# Downloads go next to the sources: the same disk, never a tmpfs if the work dir is not one.
OUT_DIR=$NGINX_WORK/out
mkdir -p "$OUT_DIR"
out_fs=$(stat -f -c %T "$OUT_DIR")
if [[ "$out_fs" == tmpfs ]]; then
    log "warning: $OUT_DIR is on tmpfs; set WORK_DIR to a folder on disk for realistic numbers"
fi

for part in $PARTS; do
    "${part}_prepare"
done

RESULTS_DIR=${RESULTS_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/haul-bench.XXXXXX")}
mkdir -p "$RESULTS_DIR"
stamp=$(date +%Y%m%d-%H%M%S)
TSV=$RESULTS_DIR/bench-$stamp.tsv
SUMMARY=$RESULTS_DIR/bench-$stamp.txt
bench_measure_setup

# ---------------------------------------------------------------------------------------------
# The runs

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
probe_before=$(bench_probe "$OUT_DIR")
((PROBE_MIB == 0)) || log "writes into $OUT_DIR before the runs: $probe_before"
log "client under test: $(haul_description)"
log "parts: ${PARTS// /, }; $WARMUP warm-up + $RUNS runs of each client, output on $out_fs"
for part in $PARTS; do
    log "$("${part}_describe")"
    case $part in
        single)
            for protocol in $PROTOCOLS; do
                if [[ $protocol == http ]]; then
                    bench_rounds single http "$CLIENTS $HTTP_EXTRA_CLIENTS"
                else
                    bench_rounds single "$protocol" "$CLIENTS"
                fi
            done
            ;;
        capped) bench_rounds capped http "$CAPPED_CLIENTS" ;;
        small)
            bench_rounds small http "$SMALL_CLIENTS"
            small_finish
            ;;
        ratelimit) bench_rounds ratelimit http "$RATELIMIT_CLIENTS" ;;
        checksum) bench_rounds checksum http "$CHECKSUM_CLIENTS" ;;
    esac
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
probe_after=$(bench_probe "$OUT_DIR")

# ---------------------------------------------------------------------------------------------
# The report

# Prints NAME="value" for each named knob (to rebuild the command line).
knobs() {
    local name
    for name in "$@"; do
        printf '%s="%s" ' "$name" "${!name}"
    done
}

reproduce="$(knobs PARTS WARMUP RUNS)"
for part in $PARTS; do
    case $part in
        single) reproduce+="$(knobs SIZE_MIB PROTOCOLS CLIENTS HTTP_EXTRA_CLIENTS DISK_WRITERS HAUL_ARGS)" ;;
        capped) reproduce+="$(knobs CAPPED_SIZE_MIB CAPPED_CONNECTIONS CAPPED_CLIENTS CAPPED_HAUL_ARGS NGINX_CAPPED_RATE)" ;;
        small) reproduce+="$(knobs SMALL_COUNT SMALL_KIB SMALL_JOBS SMALL_CLIENTS SMALL_HAUL_ARGS)" ;;
        ratelimit) reproduce+="$(knobs RATELIMIT_MIB_S RATELIMIT_SECONDS RATELIMIT_CLIENTS RATELIMIT_HAUL_ARGS)" ;;
        checksum) reproduce+="$(knobs SIZE_MIB CHECKSUM_CLIENTS CHECKSUM_LINK_RATE)" ;;
    esac
done
[[ "${HAUL_STANDIN:-}" == curl ]] && reproduce+="HAUL_STANDIN=curl "
[[ -n "${HAUL_BIN:-}" && -z "${HAUL_STANDIN:-}" ]] && reproduce+="HAUL_BIN=$HAUL_BIN "
[[ " ${SMALL_CLIENTS:-} " == *" haul-b "* ]] && reproduce+="HAUL_B_BIN=${HAUL_B_BIN:-} "
reproduce+="Scripts/bench.sh"
commit=$(git -C "$HAUL_REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n "$(git -C "$HAUL_REPO_ROOT" status --porcelain 2>/dev/null)" ]]; then
    commit+=" (with uncommitted changes)"
fi

{
    echo "haul bench: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit, $(nproc) cores, $(uname -sr)"
    echo "server: nginx $(nginx -v 2>&1 | sed 's|.*/||') on 127.0.0.1 (sendfile on); downloads written to $out_fs"
    echo "load average (1, 5, 15 min): $load_before before the runs, $load_after after (above $(nproc), other work shared the cores)"
    if ((PROBE_MIB > 0)); then
        echo "writes of $PROBE_MIB MiB into the output folder: $probe_before before the runs, $probe_after after (the VM's phase: see README, Benchmarks)"
    fi
    echo "haul: $(haul_description)"
    echo "curl: $(curl --version | head -1 | cut -d' ' -f1-2,5-6)"
    if command -v aria2c >/dev/null; then
        echo "aria2c: $(aria2c --version | head -1)"
    fi
    for part in $PARTS; do
        "${part}_describe"
    done
    bench_report "$TSV"
    echo
    echo "reproduce: $reproduce"
    echo "raw results: $TSV"
} | tee "$SUMMARY"

if ((BENCH_FAILURES > 0)); then
    log "$BENCH_FAILURES run(s) failed verification or exited non-zero"
    exit 1
fi
