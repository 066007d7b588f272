#!/usr/bin/env bash
# Builds haul-fuzz (release, with libFuzzer and AddressSanitizer: a debug build renames main for
# testable executables, which leaves libFuzzer's main unlinked) and runs every fuzz target (or those named)
# for SECONDS each, starting from Fuzz/Corpus/<target>; new inputs go to a scratch corpus, never
# into the repository. A crash leaves its input in FUZZ_RESULTS/<target>/ and fails the script:
# copy it into Fuzz/Regressions/<target>/ with the fix, and the tests replay it from then on.
#
#   Scripts/fuzz.sh              # every target, 30 s each
#   Scripts/fuzz.sh 600 url      # one target, 10 minutes
#   FUZZ_RESULTS=DIR FUZZ_JOBS=1 Scripts/fuzz.sh 60
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-30}
shift || true
results=${FUZZ_RESULTS:-$(mktemp -d /tmp/haul-fuzz.XXXXXX)}
scratch=.build/fuzz

echo "fuzz.sh: building haul-fuzz (-sanitize=fuzzer,address) in $scratch" >&2
HAUL_FUZZ=1 swift build -c release --scratch-path "$scratch" --product haul-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -use-ld=lld </dev/null >&2
binary="$(HAUL_FUZZ=1 swift build -c release --scratch-path "$scratch" --show-bin-path </dev/null)/haul-fuzz"

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    mapfile -t targets < <(ls Fuzz/Corpus)
fi

failed=0
for target in "${targets[@]}"; do
    corpus="$results/$target/corpus"
    mkdir -p "$corpus" "$results/$target"
    cp Fuzz/Corpus/"$target"/* "$corpus"/
    log="$results/$target/fuzz.log"
    echo "fuzz.sh: $target for ${seconds}s" >&2
    if HAUL_FUZZ_TARGET="$target" ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no "$binary" "$corpus" \
        -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$results/$target/" -print_final_stats=1 >"$log" 2>&1; then
        execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
        rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
        features=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
        echo "fuzz.sh: $target ok: $execs runs, $rate/s, $features features" >&2
    else
        failed=1
        echo "fuzz.sh: $target FAILED; see $log and the crash-* file beside it" >&2
        grep -m3 -E 'ERROR|fuzz property broken|Fatal error' "$log" >&2 || true
    fi
done
echo "fuzz.sh: results in $results" >&2
exit "$failed"
