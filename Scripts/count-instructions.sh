#!/usr/bin/env bash
# Counts the user-space instructions haul and curl execute for the same many-small-files job,
# with valgrind's callgrind: COUNT files of KIB KiB from a private nginx, JOBS at once
# (haul -j JOBS -i LIST -d DIR against curl --parallel --parallel-max JOBS). Unlike wall and CPU
# time, which a shared machine moves from one hour to the next, the count is repeatable (within
# about 1%: threads interleave differently), so it tells whether a change to
# the per-file path did less work. It says nothing about what the kernel does, nor about cache
# misses and thread switches: Scripts/bench.py, part small, measures the time.
#
# Each client runs ROUNDS times (1 warm-up round first, not counted); the script prints the
# median count of each, the ratio, and checks every run's files against the sources.
#
#   Scripts/count-instructions.sh                        # 1,000 files of 64 KiB, 16 at once
#   HAUL_BIN=/path/to/haul Scripts/count-instructions.sh # another build (a copy is stripped)
#
# Knobs: COUNT=1000  KIB=64  JOBS=16  ROUNDS=3  WORK_DIR=DIR (kept; its files are reused)
#        HAUL_BIN=PATH (default: the binary Scripts/build-release.sh builds)
#
# valgrind 3.19 cannot read the DWARF that Swift writes, so haul runs as a copy without debug
# information (`strip -g`); the count is the same.
set -euo pipefail

# shellcheck source=Scripts/lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/nginx.sh"

COUNT=${COUNT:-1000}
KIB=${KIB:-64}
JOBS=${JOBS:-16}
ROUNDS=${ROUNDS:-3}
((COUNT >= 1 && COUNT <= 10000)) || die "COUNT must be 1-10000, not $COUNT"
((JOBS >= 1 && JOBS <= 256)) || die "JOBS must be 1-256, not $JOBS"
((ROUNDS >= 1)) || die "ROUNDS must be at least 1, not $ROUNDS"
((KIB >= 1)) || die "KIB must be at least 1, not $KIB"

require_command valgrind valgrind
require_command curl curl
require_command strip binutils
require_command python3 python3
resolve_haul
[[ "${HAUL_STANDIN:-}" != curl ]] || die "HAUL_STANDIN=curl makes no sense here: count curl twice by hand"

nginx_setup
nginx_start
source_dir=$(nginx_make_files small "$COUNT" "$KIB")
scratch=$(mktemp -d "$NGINX_WORK/count.XXXXXX")
on_exit "rm -rf '$scratch'"
list=$scratch/urls.txt
config=$scratch/urls.curl
for name in $(cd "$source_dir" && ls file-*.bin); do
    echo "$NGINX_HTTP_URL/small/$name" >>"$list"
    echo "url = \"$NGINX_HTTP_URL/small/$name\"" >>"$config"
done
haul_copy=$scratch/haul
cp "$HAUL_BIN" "$haul_copy"
strip -g "$haul_copy"

# Runs one client under callgrind into a fresh folder, checks the files, prints the count.
count_once() {
    local client=$1 out=$scratch/out report=$scratch/callgrind.out
    rm -rf "$out" "$report"
    mkdir -p "$out"
    local command
    case $client in
        haul) command=("$haul_copy" -q -j "$JOBS" -i "$list" -d "$out") ;;
        curl) command=(curl --silent --show-error --fail --parallel --parallel-max "$JOBS" --remote-name-all
            --output-dir "$out" --config "$config") ;;
    esac
    valgrind --tool=callgrind --callgrind-out-file="$report" "${command[@]}" >"$scratch/valgrind.log" 2>&1 \
        || { cat "$scratch/valgrind.log" >&2; die "$client failed under valgrind"; }
    local made
    made=$(find "$out" -maxdepth 1 -type f -name 'file-*.bin' | wc -l)
    ((made == COUNT)) || die "$client wrote $made of $COUNT files"
    diff -rq "$source_dir" "$out" -x .complete >/dev/null || die "$client's files differ from the sources"
    # The totals line of callgrind's output (only Ir is collected): "summary: N" or "totals: N".
    sed -n -E 's/^(summary|totals): ([0-9]+)$/\2/p' "$report" | head -1
}

log "haul: $(haul_description)"
log "$COUNT files of $KIB KiB, $JOBS at once; 1 warm-up + $ROUNDS counted rounds of each client"
declare -A counts=([haul]="" [curl]="")
for round in $(seq 0 "$ROUNDS"); do
    for client in haul curl; do
        value=$(count_once "$client") || exit 1
        [[ $value =~ ^[0-9]+$ ]] || die "no instruction count in callgrind's report for $client (got '$value')"
        if ((round == 0)); then
            log "warm-up $client: $value"
        else
            log "round $round $client: $value"
            counts[$client]+="$value "
        fi
    done
done

python3 - "${counts[haul]}" "${counts[curl]}" "$COUNT" <<'PY'
import statistics, sys
haul = [int(x) for x in sys.argv[1].split()]
curl = [int(x) for x in sys.argv[2].split()]
files = int(sys.argv[3])
h, c = statistics.median(haul), statistics.median(curl)
spread = lambda v: (max(v) - min(v)) / statistics.median(v) * 100
print(f"user-space instructions, median of {len(haul)} rounds (spread between rounds):")
print(f"  haul  {h / 1e6:8.1f} M  ({h / files / 1e3:6.1f} k per file, spread {spread(haul):.1f}%)")
print(f"  curl  {c / 1e6:8.1f} M  ({c / files / 1e3:6.1f} k per file, spread {spread(curl):.1f}%)")
print(f"  haul / curl: {h / c:.3f}")
PY
