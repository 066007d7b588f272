#!/usr/bin/env bash
# Soak: SOAK_COUNT downloads (default 300, sizes 1 KiB .. 8 MiB, the larger ones over 4
# connections) through the library, 32 at once, against an in-process HaulServer that drops,
# stalls, resets connections and answers 503 at random (seeded). Every file must end
# byte-identical or failed with a typed error, nothing unexpected may be left in the folder, and
# the process must hold no more file descriptors afterwards than before (open fds and RSS are
# printed before and after). Loopback only; bounded in time.
#
#   Scripts/soak.sh                                   # the full soak (release build)
#   SOAK_COUNT=100 SOAK_CONFIG=debug Scripts/soak.sh  # the short one CI runs
#
# Environment:
#   SOAK_COUNT=300      downloads
#   SOAK_SEED=2026      seed of the sizes and of the server's faults
#   SOAK_JOBS=32        downloads at once
#   SOAK_RETRIES=3      retries per download (0 makes failures, to check what they leave)
#   SOAK_IDLE=6         seconds of idle before measuring again (idle threads retire after 5 s)
#   SOAK_TIMEOUT=240    seconds the soak may take before it fails
#   SOAK_CONFIG=release build configuration (debug reuses the test build: no release compile)
set -euo pipefail

SCRIPTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPTS_DIR/lib/common.sh"
cd "$HAUL_REPO_ROOT"
config="$(soak_config)"

echo "soak.sh: building haul-soak ($config)" >&2
swift build -c "$config" --product haul-soak </dev/null >&2
bin="$(swift build -c "$config" --show-bin-path)/haul-soak"

# The program bounds itself (SOAK_TIMEOUT); the outer bound catches a hang it cannot see.
limit=$(( ${SOAK_TIMEOUT:-240} + 60 ))
exec timeout --signal=KILL "$limit" "$bin"
