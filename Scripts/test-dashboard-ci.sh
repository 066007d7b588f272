#!/usr/bin/env bash
# The dashboard's browser tests as .ci/run runs them: headless Chromium against `haul daemon`, which
# serves the page itself (see Scripts/test-dashboard.py); then the page over 100,000 downloads
# (Scripts/test-dashboard-large.py) against the release build, whose figures are the ones people
# get. Screenshots, figures and the daemons' logs go to .build/dashboard-results/.
# `python3 Scripts/test-dashboard.py --daemon=aria2c` runs the first scenario against aria2c by
# hand, and `--soak` the 10-minute memory and CPU check.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$HAUL_REPO_ROOT"

require_command python3
python3 Scripts/test-dashboard.py --daemon=haul
# Scripts/test-install.sh built it already in CI: this only checks it is current.
release=$(bash Scripts/build-release.sh | tail -1)
HAUL_BIN="$release" exec python3 Scripts/test-dashboard-large.py
