#!/usr/bin/env bash
# Builds and runs every example in Examples/ (each serves itself from the built-in loopback
# server, so no internet is needed) and fails when one fails or runs longer than its time limit.
#
#   Scripts/run-examples.sh                  # all of them
#   EXAMPLES="single-shot" Scripts/run-examples.sh
#   EXAMPLE_TIMEOUT=120 Scripts/run-examples.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

EXAMPLES=${EXAMPLES:-"progress-stream single-shot download-manager"}
EXAMPLE_TIMEOUT=${EXAMPLE_TIMEOUT:-60}

for example in $EXAMPLES; do
    echo "+ swift build --product $example"
    swift build --product "$example" </dev/null
done
bin="$(swift build --show-bin-path)"

failed=()
for example in $EXAMPLES; do
    echo
    echo "==> $example (time limit ${EXAMPLE_TIMEOUT}s)"
    status=0
    timeout --kill-after=5 "$EXAMPLE_TIMEOUT" "$bin/$example" </dev/null || status=$?
    if [ "$status" -eq 0 ]; then
        echo "<== $example: passed"
    else
        [ "$status" -eq 124 ] && echo "<== $example: timed out after ${EXAMPLE_TIMEOUT}s" >&2
        echo "<== $example: FAILED (status $status)" >&2
        failed+=("$example")
    fi
done

echo
if [ "${#failed[@]}" -gt 0 ]; then
    echo "run-examples: ${#failed[@]} failed: ${failed[*]}" >&2
    exit 1
fi
echo "run-examples: all passed ($EXAMPLES)"
