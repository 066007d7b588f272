#!/usr/bin/env bash
# Runs tests under a sanitizer, each in a build folder of its own (.build/tsan, .build/asan), and
# fails on any report (halt_on_error: the first report ends the test process). A test that fails
# without a report is run once more, by name: it waits for real time, which the sanitizer slows.
#
#   Scripts/sanitize.sh thread     # the concurrent suites under ThreadSanitizer
#   Scripts/sanitize.sh address    # the whole suite under AddressSanitizer
#   Scripts/sanitize.sh thread 'HaulCoreTests'   # a filter of your own
#
# ThreadSanitizer runs the suites whose code is concurrent: the primitives (HaulCoreTests), the
# transfers, segments, the write ring, pause and resume, host slots, the queue and sharing (HaulTests), the
# service and the daemon with its RPC. It slows code 5-15x, so the suites that time real work
# are left to the plain run. AddressSanitizer (about 2x) runs everything.
#
# Before trusting a clean run, `Scripts/sanitize.sh probe` shows that each sanitizer reports a
# planted defect (a data race, a heap overflow) in a small program built the same way.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mode=${1:?usage: Scripts/sanitize.sh thread|address|probe [FILTER]}
concurrent='HaulCoreTests|HaulServiceTests|HaulModelTests|HaulDaemonTests|HaulTests\.(WriteBehind|DirectWrite|Segment|Resume|HostSlot|Queue|Cancellation|Sharing|KeepAlive|Download|Callback|Failure|WholeBody|ReceiveBuffers|RateLimiter|TokenBucket)'

# Builds and runs Scripts/sanitizer-probes/NAME.swift with SANITIZER; passes when the report
# names WHAT.
probe() {
    local name=$1 sanitizer=$2 what=$3 dir
    dir=$(mktemp -d /tmp/haul-probe.XXXXXX)
    swiftc -sanitize="$sanitizer" -use-ld=lld -Onone -o "$dir/$name" "Scripts/sanitizer-probes/$name.swift" </dev/null
    if "$dir/$name" >"$dir/out" 2>&1; then
        echo "sanitize.sh: probe $name ran clean: the $sanitizer sanitizer caught nothing" >&2
        rm -rf "$dir"
        return 1
    fi
    if ! grep -q "$what" "$dir/out"; then
        echo "sanitize.sh: probe $name failed without a '$what' report:" >&2
        head -20 "$dir/out" >&2
        rm -rf "$dir"
        return 1
    fi
    echo "sanitize.sh: probe $name: $(grep -m1 "$what" "$dir/out" | sed 's/^[= 0-9]*//')" >&2
    rm -rf "$dir"
}

case "$mode" in
    probe)
        probe race thread "ThreadSanitizer: .*race"
        probe overflow address "AddressSanitizer: heap-buffer-overflow"
        ;;
    thread|address)
        short=${mode:0:1}san
        filter=${2:-}
        if [[ -z "$filter" && "$mode" == thread ]]; then filter=$concurrent; fi
        # The 100,000 quick failures in a row prove a constant stack in the plain run; 5,000
        # are enough for ThreadSanitizer to see the same code race, at its 5-15x cost.
        if [[ "$mode" == thread ]]; then export HAUL_QUICK_FAILURES=5000; fi
        scratch=.build/$short
        # lld: gold warns about every AddressSanitizer helper symbol it cannot export.
        link=(-Xswiftc -use-ld=lld)
        echo "sanitize.sh: building the tests with -sanitize=$mode in $scratch" >&2
        swift build --build-tests --sanitize="$mode" --scratch-path "$scratch" "${link[@]}" </dev/null >&2
        args=(--skip-build --sanitize="$mode" --scratch-path "$scratch" "${link[@]}")
        if [[ -n "$filter" ]]; then args+=(--filter "$filter"); fi
        # This test builds four 12 MB answers, which ThreadSanitizer makes take minutes; the
        # server code it runs is the same as the other daemon tests'.
        if [[ "$mode" == thread ]]; then args+=(--skip aClientThatDoesNotReadItsAnswerIsDropped); fi
        # halt_on_error: the first report fails the run, with its stack, instead of a summary
        # at exit that a passing test process could hide.
        export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
        export ASAN_OPTIONS="halt_on_error=1 detect_leaks=0 suppressions=$PWD/Scripts/asan-suppressions.txt ${ASAN_OPTIONS:-}"
        start=$SECONDS
        log=$(mktemp /tmp/haul-sanitize.XXXXXX)
        if ! swift test "${args[@]}" </dev/null 2>&1 | tee "$log"; then
            # A sanitizer report fails at once. A test that failed without one is run once more:
            # the sanitizer slows everything 2-15x, and a test that waits for real time on a
            # loaded machine may miss its mark. The names of the rerun tests are printed.
            if grep -qE 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|SUMMARY: [A-Za-z]+Sanitizer' "$log"; then
                echo "sanitize.sh: $mode: a sanitizer report, above" >&2
                exit 1
            fi
            failed=$(grep -oE '✘ Test [A-Za-z0-9_]+\(' "$log" | awk '{print $3}' | tr -d '(' | sort -u | paste -sd'|')
            if [[ -z "$failed" ]]; then
                echo "sanitize.sh: $mode: the tests failed, above" >&2
                exit 1
            fi
            echo "sanitize.sh: $mode: no sanitizer report; running the failed tests once more: $failed" >&2
            swift test --skip-build --sanitize="$mode" --scratch-path "$scratch" "${link[@]}" --filter "$failed" </dev/null
        fi
        rm -f "$log"
        echo "sanitize.sh: $mode clean in $(( SECONDS - start )) s of tests" >&2
        ;;
    *)
        echo "sanitize.sh: the mode is thread, address or probe, not '$mode'" >&2
        exit 2
        ;;
esac
