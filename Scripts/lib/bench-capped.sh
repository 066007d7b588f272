# shellcheck shell=bash
# shellcheck disable=SC2034 # CMD and the *_BYTES and *_FILES variables are read by lib/bench-measure.sh
# Part "capped" of Scripts/bench.sh: a server that caps every connection (nginx `limit_rate`,
# NGINX_CAPPED_RATE, default 25m = 25 MiB/s) serving one CAPPED_SIZE_MIB file (default 500 MiB)
# over plain HTTP; clients that split the file across CAPPED_CONNECTIONS connections (default 8):
#   haul -x 8, aria2c -x8 -s8 -k1M, axel -n 8 (and curl, one connection, when asked for).
# Each run writes into a fresh empty folder; the file is compared byte for byte with the source
# and nothing else may be left in the folder (no .aria2, .st or .part files).
#
# Knobs: CAPPED_SIZE_MIB=500  CAPPED_CONNECTIONS=8  CAPPED_CLIENTS="haul aria2c axel"
#        CAPPED_HAUL_ARGS=""  (extra haul options)   NGINX_CAPPED_RATE=25m (see lib/nginx.sh)

CAPPED_SIZE_MIB=${CAPPED_SIZE_MIB:-500}
CAPPED_CONNECTIONS=${CAPPED_CONNECTIONS:-8}
CAPPED_CLIENTS=${CAPPED_CLIENTS:-haul aria2c axel}
CAPPED_HAUL_ARGS=${CAPPED_HAUL_ARGS:-}

# Checks the knobs and installs the clients (before the server starts).
capped_check() {
    bench_check_clients capped "$CAPPED_CLIENTS" "haul aria2c axel curl"
    ((CAPPED_CONNECTIONS >= 1 && CAPPED_CONNECTIONS <= 16)) \
        || die "capped: CAPPED_CONNECTIONS must be 1-16 (aria2c's limit), not $CAPPED_CONNECTIONS"
    if [[ " $CAPPED_CLIENTS " == *" aria2c "* ]]; then
        require_command aria2c aria2
    fi
    if [[ " $CAPPED_CLIENTS " == *" axel "* ]]; then
        require_command axel axel
    fi
    require_command curl curl
}

# Makes the file under /capped/ and works out the limit.
capped_prepare() {
    mkdir -p "$NGINX_ROOT/capped"
    CAPPED_SOURCE=$(nginx_make_file "capped/capped.bin" "$CAPPED_SIZE_MIB")
    CAPPED_BYTES=$(stat -c %s "$CAPPED_SOURCE")
    CAPPED_FILES=1
    CAPPED_DIR=$OUT_DIR/capped
    CAPPED_OUT=$CAPPED_DIR/capped.bin
    CAPPED_URL=$NGINX_HTTP_URL/capped/capped.bin
    # The best any client can do: every connection at the cap.
    CAPPED_LIMIT_BPS=$(($(nginx_size_bytes "$NGINX_CAPPED_RATE") * CAPPED_CONNECTIONS))
    export CAPPED_LIMIT_BPS
}

capped_before() {
    rm -rf "$CAPPED_DIR"
    mkdir -p "$CAPPED_DIR"
}

capped_command() {
    local client=$2 n=$CAPPED_CONNECTIONS
    case $client in
        haul)
            if [[ "${HAUL_STANDIN:-}" == curl ]]; then
                # curl has one connection: only good for checking the script.
                CMD=(curl --silent --show-error --fail -o "$CAPPED_OUT")
            else
                # shellcheck disable=SC2206 # CAPPED_HAUL_ARGS is a list of options, split on purpose
                CMD=("$HAUL_BIN" -q -x "$n" $CAPPED_HAUL_ARGS -o "$CAPPED_OUT")
            fi
            ;;
        aria2c)
            # N connections to the one server, N pieces, pieces as small as 1 MiB so the last
            # ones are split again; no renaming, no progress, space reserved with fallocate.
            CMD=(aria2c "-x$n" "-s$n" -k1M --quiet=true --allow-overwrite=true
                --auto-file-renaming=false --file-allocation=falloc
                --dir="$CAPPED_DIR" --out="$(basename "$CAPPED_OUT")")
            ;;
        axel)
            CMD=(axel --quiet -n "$n" -o "$CAPPED_OUT")
            ;;
        curl)
            CMD=(curl --silent --show-error --fail -o "$CAPPED_OUT")
            ;;
    esac
    CMD+=("$CAPPED_URL")
}

capped_verify() {
    if ! cmp -s "$CAPPED_OUT" "$CAPPED_SOURCE"; then
        echo "output differs from the source ($(stat -c %s "$CAPPED_OUT" 2>/dev/null || echo no) bytes)"
        return 1
    fi
    local left
    left=$(find "$CAPPED_DIR" -mindepth 1 ! -path "$CAPPED_OUT" -printf '%f ' | head -c 300)
    if [[ -n "$left" ]]; then
        echo "left other files beside the download: $left"
        return 1
    fi
}

capped_after() {
    rm -rf "$CAPPED_DIR"
}

# Lines for the summary's header.
capped_describe() {
    echo "capped: $CAPPED_SIZE_MIB MiB from /capped/ (nginx limit_rate $NGINX_CAPPED_RATE per connection), $CAPPED_CONNECTIONS connections: haul -x $CAPPED_CONNECTIONS${CAPPED_HAUL_ARGS:+ $CAPPED_HAUL_ARGS}, aria2c -x$CAPPED_CONNECTIONS -s$CAPPED_CONNECTIONS -k1M --file-allocation=falloc, $(axel --version 2>/dev/null | head -1 || echo axel) -n $CAPPED_CONNECTIONS"
}
