#!/usr/bin/env bash
# Daemon soak: SOAK_DAEMON_COUNT downloads (default 1,000, 1 KiB .. 64 MiB, most small) added
# to `haul daemon` over its JSON-RPC (addUri alone and in system.multicall batches) against
# haul-test-origin with faults on (drops, stalls, 503s, resets, files that change between
# requests), the daemon killed with SIGKILL SOAK_DAEMON_KILLS times at seeded moments and
# restarted on the same state. Afterwards every acknowledged download is listed once and is
# complete and byte-identical or failed with a typed error: 0 lost, 0 duplicated, 0 corrupt, no
# stray file, and the daemon's descriptors and RSS after an idle period at the level of a fresh
# daemon on the same list. Scripts/soak-daemon.py does the work and documents the knobs.
#
#   Scripts/soak-daemon.sh                                                 # the full soak (release)
#   SOAK_DAEMON_COUNT=100 SOAK_DAEMON_KILLS=3 SOAK_CONFIG=debug Scripts/soak-daemon.sh  # CI's
#
# SOAK_CONFIG=release|debug picks the build; HAUL_BIN (as .ci/run sets it) skips building haul.
set -euo pipefail

SCRIPTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPTS_DIR/lib/common.sh"
cd "$HAUL_REPO_ROOT"
soak_binaries

# The driver bounds itself (SOAK_DAEMON_TIMEOUT); the outer bound catches a hang it cannot see.
limit=$(( ${SOAK_DAEMON_TIMEOUT:-1200} + 120 + 300 ))   # 300: the failure phase's own bound
exec timeout --signal=KILL "$limit" python3 "$SCRIPTS_DIR/soak-daemon.py"
