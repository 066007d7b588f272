#!/usr/bin/env bash
# The short soak .ci/run runs: 100 downloads through the chaos server, on the debug build the
# tests already made (see Scripts/soak.sh for the full one and its knobs).
set -euo pipefail
SOAK_COUNT=${SOAK_COUNT:-100} SOAK_CONFIG=${SOAK_CONFIG:-debug} exec "$(dirname "${BASH_SOURCE[0]}")/soak.sh"
