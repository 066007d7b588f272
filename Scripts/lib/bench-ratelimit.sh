# shellcheck shell=bash
# shellcheck disable=SC2034 # CMD and the *_BYTES and *_FILES variables are read by lib/bench-measure.sh
# Part "ratelimit" of Scripts/bench.sh: how close each client's own rate limit holds to the rate
# asked for. One RATELIMIT_MIB_S x RATELIMIT_SECONDS MiB file (default 20 MiB/s for 10 s = 200 MiB)
# from an uncapped nginx over plain HTTP:
#   haul --limit-rate 20M (its default connections), curl --limit-rate 20M,
#   aria2c --max-overall-download-limit=20M (its default single connection).
# The achieved rate is the file's size over the client's wall time (start-up included). Issue 3
# asks haul to stay within 5% of the rate over 10 s.
#
# Knobs: RATELIMIT_MIB_S=20  RATELIMIT_SECONDS=10  RATELIMIT_CLIENTS="haul curl aria2c"
#        RATELIMIT_HAUL_ARGS=""  (extra haul options)

RATELIMIT_MIB_S=${RATELIMIT_MIB_S:-20}
RATELIMIT_SECONDS=${RATELIMIT_SECONDS:-10}
RATELIMIT_CLIENTS=${RATELIMIT_CLIENTS:-haul curl aria2c}
RATELIMIT_HAUL_ARGS=${RATELIMIT_HAUL_ARGS:-}

ratelimit_check() {
    bench_check_clients ratelimit "$RATELIMIT_CLIENTS" "haul curl aria2c"
    ((RATELIMIT_MIB_S >= 1)) || die "ratelimit: RATELIMIT_MIB_S must be at least 1, not $RATELIMIT_MIB_S"
    ((RATELIMIT_SECONDS >= 1)) || die "ratelimit: RATELIMIT_SECONDS must be at least 1, not $RATELIMIT_SECONDS"
    if [[ " $RATELIMIT_CLIENTS " == *" aria2c "* ]]; then
        require_command aria2c aria2
    fi
    require_command curl curl
}

ratelimit_prepare() {
    mkdir -p "$NGINX_ROOT/rate"
    RATELIMIT_SOURCE=$(nginx_make_file "rate/rate.bin" $((RATELIMIT_MIB_S * RATELIMIT_SECONDS)))
    RATELIMIT_BYTES=$(stat -c %s "$RATELIMIT_SOURCE")
    RATELIMIT_FILES=1
    RATELIMIT_DIR=$OUT_DIR/rate
    RATELIMIT_OUT=$RATELIMIT_DIR/rate.bin
    RATELIMIT_URL=$NGINX_HTTP_URL/rate/rate.bin
    RATELIMIT_BPS=$((RATELIMIT_MIB_S * 1024 * 1024))
    export RATELIMIT_BPS
}

ratelimit_before() {
    rm -rf "$RATELIMIT_DIR"
    mkdir -p "$RATELIMIT_DIR"
}

ratelimit_command() {
    local client=$2 rate="${RATELIMIT_MIB_S}M"
    case $client in
        haul)
            if [[ "${HAUL_STANDIN:-}" == curl ]]; then
                CMD=(curl --silent --show-error --fail --limit-rate "$rate" -o "$RATELIMIT_OUT")
            else
                # shellcheck disable=SC2206 # RATELIMIT_HAUL_ARGS is a list of options, split on purpose
                CMD=("$HAUL_BIN" -q --limit-rate "$rate" $RATELIMIT_HAUL_ARGS -o "$RATELIMIT_OUT")
            fi
            ;;
        curl)
            CMD=(curl --silent --show-error --fail --limit-rate "$rate" -o "$RATELIMIT_OUT")
            ;;
        aria2c)
            CMD=(aria2c --quiet=true --allow-overwrite=true --auto-file-renaming=false
                --max-overall-download-limit="$rate" --dir="$RATELIMIT_DIR" --out="$(basename "$RATELIMIT_OUT")")
            ;;
    esac
    CMD+=("$RATELIMIT_URL")
}

ratelimit_verify() {
    if ! cmp -s "$RATELIMIT_OUT" "$RATELIMIT_SOURCE"; then
        echo "output differs from the source ($(stat -c %s "$RATELIMIT_OUT" 2>/dev/null || echo no) bytes)"
        return 1
    fi
}

ratelimit_after() {
    rm -rf "$RATELIMIT_DIR"
}

ratelimit_describe() {
    echo "ratelimit: $((RATELIMIT_MIB_S * RATELIMIT_SECONDS)) MiB from an uncapped server, each client limiting itself to $RATELIMIT_MIB_S MiB/s: haul --limit-rate ${RATELIMIT_MIB_S}M${RATELIMIT_HAUL_ARGS:+ $RATELIMIT_HAUL_ARGS}, curl --limit-rate ${RATELIMIT_MIB_S}M, aria2c --max-overall-download-limit=${RATELIMIT_MIB_S}M"
}
