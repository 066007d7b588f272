#!/usr/bin/env bash
# The short daemon soak .ci/run runs: 100 downloads, 3 kills, 2,000 failures in a row, on the
# debug build the tests already made (see Scripts/soak-daemon.sh for the full one and Scripts/soak-daemon.py for the knobs).
set -euo pipefail
SOAK_DAEMON_COUNT=${SOAK_DAEMON_COUNT:-100} SOAK_DAEMON_KILLS=${SOAK_DAEMON_KILLS:-3} \
    SOAK_DAEMON_TIMEOUT=${SOAK_DAEMON_TIMEOUT:-170} SOAK_DAEMON_FAILURES=${SOAK_DAEMON_FAILURES:-2000} \
    SOAK_CONFIG=${SOAK_CONFIG:-debug} \
    exec "$(dirname "${BASH_SOURCE[0]}")/soak-daemon.sh"
