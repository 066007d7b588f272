# shellcheck shell=bash
# The measuring core of Scripts/bench.sh: runs one client command, times it, verifies what it
# wrote, and appends one row to the raw TSV.
#
# Source it after lib/nginx.sh and after nginx_setup, then call bench_measure_setup once.
#
# A part of the benchmark (single, capped, small) is a set of functions named after it:
#   PART_before VARIANT CLIENT    clear the place the client writes to
#   PART_command VARIANT CLIENT   fill the array CMD with the client's command line
#   PART_verify VARIANT CLIENT    return 0 when the output is right; otherwise print why
#   PART_after VARIANT CLIENT     remove the output
# and two variables set by its prepare function: PART_BYTES (bytes one run downloads) and
# PART_FILES (files one run downloads).
#
# bench_rounds PART "VARIANTS" "CLIENTS" runs WARMUP + RUNS rounds per variant; in each round
# every client runs once, in the order given (round-robin), so a slow spell of the machine hits
# all of them alike.

BENCH_FAILURES=0

# Writes the measuring helper and the TSV header. Needs TSV and NGINX_WORK.
bench_measure_setup() {
    CLIENT_LOG=$NGINX_WORK/client.log
    MEASURE=$NGINX_WORK/measure.py
    # A tiny wrapper: runs a command, prints "exit wall user sys maxrss_kib" for it.
    # - wall: a monotonic clock around the run;
    # - CPU: wait4() on that child alone (the client and anything it waited for, and nothing the
    #   python launcher ran before, which getrusage(RUSAGE_CHILDREN) would count);
    # - peak RSS: from GNU time wrapped around the client. A child's ru_maxrss starts at the size
    #   of the process that forked it, so forking straight from python would report python's
    #   ~13 MiB as a floor; GNU time is ~1 MiB.
    # - a run longer than BENCH_TIMEOUT seconds is killed (its whole process group) and reported
    #   as exit 124.
    cat >"$MEASURE" <<'PY'
import os, signal, subprocess, sys, time
log, rss_file, timeout, command = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
timed_out = False
start = time.perf_counter()
with open(log, "ab") as out:
    child = subprocess.Popen(["/usr/bin/time", "-q", "-f", "%M", "-o", rss_file, *command],
                             stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                             start_new_session=True)
    def expire(signum, frame):
        global timed_out
        timed_out = True
        os.killpg(child.pid, signal.SIGKILL)
    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    _, status, usage = os.wait4(child.pid, 0)
    signal.setitimer(signal.ITIMER_REAL, 0)
wall = time.perf_counter() - start
try:
    with open(rss_file) as f:
        rss = int(f.read().split()[-1])
except (OSError, ValueError, IndexError):
    rss = 0
code = 124 if timed_out else os.waitstatus_to_exitcode(status)
if code < 0:
    code = 128 - code
print(f"{code}\t{wall:.4f}\t{usage.ru_utime:.4f}\t{usage.ru_stime:.4f}\t{rss}")
PY
    printf 'part\tprotocol\tclient\tphase\tround\texit\tverified\tbytes\tfiles\twall_s\tuser_s\tsys_s\tmaxrss_kib\n' >"$TSV"
}

# Runs PART's client once: clear, measure, verify, record, remove.
# Usage: bench_run_once PART VARIANT PHASE ROUND CLIENT
bench_run_once() {
    local part=$1 variant=$2 phase=$3 round=$4 client=$5
    local bytes_var="${part^^}_BYTES" files_var="${part^^}_FILES"
    "${part}_before" "$variant" "$client"
    "${part}_command" "$variant" "$client"
    : >"$CLIENT_LOG"
    local result status wall user sys rss verified=1 reason=""
    result=$(python3 "$MEASURE" "$CLIENT_LOG" "$NGINX_WORK/rss" "${BENCH_TIMEOUT:-600}" "${CMD[@]}")
    IFS=$'\t' read -r status wall user sys rss <<<"$result"
    if [[ $status -ne 0 ]]; then
        verified=0
        reason="exit $status$([[ $status -eq 124 ]] && echo " (killed after ${BENCH_TIMEOUT:-600} s)")"
    elif ! reason=$("${part}_verify" "$variant" "$client"); then
        verified=0
    fi
    if [[ $verified -eq 0 ]]; then
        BENCH_FAILURES=$((BENCH_FAILURES + 1))
        log "FAIL: $part $variant $client: $reason; client said: $(tail -c 300 "$CLIENT_LOG")"
    fi
    "${part}_after" "$variant" "$client"
    sync
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$part" "$variant" "$client" \
        "$phase" "$round" "$status" "$verified" "${!bytes_var}" "${!files_var}" \
        "$wall" "$user" "$sys" "$rss" >>"$TSV"
    log "$part $variant $phase $round $client: ${wall}s wall, $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')s cpu, $((rss / 1024)) MiB rss$([[ $verified == 1 ]] || echo ', FAILED')"
}

# Runs WARMUP + RUNS rounds of every client, round-robin, for each variant.
# Usage: bench_rounds PART "VARIANTS" "CLIENTS"
bench_rounds() {
    local part=$1 variants=$2 clients=$3 variant round phase number client
    for variant in $variants; do
        for ((round = 1; round <= WARMUP + RUNS; round++)); do
            phase=run
            number=$((round - WARMUP))
            if ((round <= WARMUP)); then
                phase=warmup
                number=$round
            fi
            for client in $clients; do
                bench_run_once "$part" "$variant" "$phase" "$number" "$client"
            done
        done
    done
}

# Adds the options that make haul's TLS trust the private CA to CMD (or the stand-in's).
# Usage: bench_haul_tls TLS(0|1)
bench_haul_tls() {
    [[ $1 == 1 ]] || return 0
    if [[ "${HAUL_STANDIN:-}" == curl ]]; then
        CMD+=(--cacert "$NGINX_CA")
    else
        CMD+=("--cacert=$NGINX_CA")
    fi
}

# Fails with a clear message when CLIENT is not one PART knows.
# Usage: bench_check_clients PART "CLIENTS" "KNOWN"
bench_check_clients() {
    local part=$1 clients=$2 known=$3 client
    [[ -n "${clients// /}" ]] || die "$part: no clients to run"
    for client in $clients; do
        [[ " $known " == *" $client "* ]] || die "$part: unknown client '$client' (known: $known)"
    done
}
