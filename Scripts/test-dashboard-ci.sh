#!/usr/bin/env bash
# The dashboard's browser test as .ci/run runs it: headless Chromium against `haul daemon`, which
# serves the page itself (see Scripts/test-dashboard.py); screenshots and the daemon's log go to
# .build/dashboard-results/. `python3 Scripts/test-dashboard.py --daemon=aria2c` runs the same
# scenario against aria2c by hand, and `--soak` the 10-minute memory and CPU check.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$HAUL_REPO_ROOT"

require_command python3
exec python3 Scripts/test-dashboard.py --daemon=haul
