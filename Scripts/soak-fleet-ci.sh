#!/usr/bin/env bash
# The short fleet soak for .ci/run: 100 downloads (up to 16 MiB) through three nodes, 2 kills, 1
# PostgreSQL restart, on the debug build the tests already made, within about 4 minutes (see
# Scripts/soak-fleet.sh for the full one and Scripts/soak-fleet.py for the knobs).
set -euo pipefail
SOAK_FLEET_COUNT=${SOAK_FLEET_COUNT:-100} SOAK_FLEET_KILLS=${SOAK_FLEET_KILLS:-2} \
    SOAK_FLEET_PG_RESTARTS=${SOAK_FLEET_PG_RESTARTS:-1} SOAK_FLEET_MAX_SIZE=${SOAK_FLEET_MAX_SIZE:-16777216} \
    SOAK_FLEET_ADD_SECONDS=${SOAK_FLEET_ADD_SECONDS:-60} SOAK_FLEET_TIMEOUT=${SOAK_FLEET_TIMEOUT:-180} \
    SOAK_FLEET_RATE=${SOAK_FLEET_RATE:-131072} SOAK_FLEET_CHECK_MARGIN=${SOAK_FLEET_CHECK_MARGIN:-60} \
    SOAK_CONFIG=${SOAK_CONFIG:-debug} \
    exec "$(dirname "${BASH_SOURCE[0]}")/soak-fleet.sh"
