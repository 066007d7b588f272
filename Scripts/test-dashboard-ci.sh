#!/usr/bin/env bash
# The dashboard's browser test as .ci/run runs it: headless Chromium against `haul daemon`, which
# serves the page itself (see Scripts/test-dashboard.py). A build whose `haul` has no daemon
# command yet skips it; `python3 Scripts/test-dashboard.py --daemon=aria2c` runs the same
# scenario against aria2c by hand.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$HAUL_REPO_ROOT"

haul="${HAUL_BIN:-$(swift build --show-bin-path)/haul}"
# `haul X --help` prints the general help for any X, so look for the daemon's own options.
if ! "$haul" daemon --help 2>/dev/null | grep -q -- '--secret'; then
    log "skipped: this haul has no 'daemon' command"
    exit 0
fi
require_command python3
exec python3 Scripts/test-dashboard.py --daemon=haul
