#!/usr/bin/env bash
# Fleet soak: three `haul daemon` nodes (--node=a, b, c) on one PostgreSQL queue and one shared
# download folder; SOAK_FLEET_COUNT downloads (default 1,000, 1 KiB .. 32 MiB, most small) added
# through random nodes over the JSON-RPC (addUri alone and in system.multicall batches) against
# haul-test-origin with faults on (drops, stalls, 503s, resets, files that change between
# requests); a random node killed with SIGKILL SOAK_FLEET_KILLS times (default 5) at seeded
# moments and restarted with the same name, and PostgreSQL restarted SOAK_FLEET_PG_RESTARTS times
# (default 1) mid-run. Afterwards every acknowledged download is listed once and is complete and
# byte-identical or failed with a typed error: 0 lost, 0 duplicated, 0 corrupt, no stray file;
# none run by two nodes at the same time (the origin's log of who fetched what when, the nodes'
# logs, and the fencing numbers show it); every claim of a killed node taken over. Prints the
# figures (takeovers and the time each took after its kill, the outage, the time).
# Scripts/soak-fleet.py does the work and documents the knobs.
#
#   Scripts/soak-fleet.sh                                        # the full soak (release)
#   Scripts/soak-fleet-ci.sh                                     # CI's: 100 downloads, 2 kills (debug)
#
# SOAK_CONFIG=release|debug picks the build; HAUL_BIN (as .ci/run sets it) skips building haul.
# The private PostgreSQL cluster (Scripts/postgres-cluster.sh) lives in a temporary folder and is
# stopped at the end whatever happens; the run is bounded by SOAK_FLEET_TIMEOUT (seconds, 1500)
# plus a margin for the checks.
set -euo pipefail

SCRIPTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPTS_DIR/lib/common.sh"
cd "$HAUL_REPO_ROOT"
soak_binaries

# The cluster's folder is its own (postgres must reach it); the driver lists the processes it
# starts in the pid file, so that a driver ended by the time limit leaves none behind.
pg_folder="$(mktemp -d /tmp/haul-soak-fleet-pg.XXXXXX)"
pid_file="$(mktemp /tmp/haul-soak-fleet-pids.XXXXXX)"
cleanup() {
    local pid
    while read -r pid; do
        if [[ -n "$pid" && -e "/proc/$pid" ]]; then
            case "$(readlink "/proc/$pid/exe" 2>/dev/null)" in
                "$HAUL_BIN"|"$ORIGIN_BIN") kill -KILL "$pid" 2>/dev/null || true ;;
            esac
        fi
    done <"$pid_file"
    rm -f "$pid_file"
    bash "$SCRIPTS_DIR/postgres-cluster.sh" stop "$pg_folder" >/dev/null 2>&1 || true
}
trap cleanup EXIT

SOAK_FLEET_PG="$(nice bash "$SCRIPTS_DIR/postgres-cluster.sh" start "$pg_folder" 2>/dev/null)"
SOAK_FLEET_PG_BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
SOAK_FLEET_PIDS="$pid_file"
export SOAK_FLEET_PG SOAK_FLEET_PG_BIN SOAK_FLEET_PIDS
echo "soak-fleet.sh: PostgreSQL at $SOAK_FLEET_PG" >&2

# The driver bounds itself (SOAK_FLEET_TIMEOUT); this bound catches a hang it cannot see:
# SIGTERM (the driver then ends its processes), SIGKILL 20 s later.
limit=$(( ${SOAK_FLEET_TIMEOUT:-1500} + ${SOAK_FLEET_CHECK_MARGIN:-120} ))
status=0
timeout --kill-after=20 "$limit" nice python3 "$SCRIPTS_DIR/soak-fleet.py" || status=$?
[[ $status -eq 124 ]] && echo "soak-fleet.sh: FAIL: not done in $limit s" >&2
exit "$status"
