# shellcheck shell=bash
# shellcheck disable=SC2034 # CMD and the *_BYTES and *_FILES variables are read by lib/bench-measure.sh
# Part "checksum" of Scripts/bench.sh: what --checksum=sha256 costs. The single part's 2 GiB file
# (SIZE_MIB) over plain HTTP, downloaded by
#   haul            haul's defaults (4 connections), no checksum
#   haul+sum        the same with --checksum=sha256=<the file's digest>
#   haul-x1         one connection, no checksum
#   haul-x1+sum     one connection with --checksum
#   haul-x1-link, haul-x1-link+sum   the same two limited to CHECKSUM_LINK_RATE (haul --limit-rate):
#                   a link slower than the CPU, as most real downloads have, where the hashing
#                   thread finds idle CPU (on loopback the download itself keeps both cores busy)
# and, on the same file on the same disk, `openssl dgst -sha256` (what hashing it alone costs).
# Issue 5 asks that the time the checksum adds to the segmented download (haul+sum - haul) be at
# most 1.1x openssl's time, and close to zero with one connection (hashed as the bytes arrive).
#
# Knobs: CHECKSUM_CLIENTS="haul haul+sum haul-x1 haul-x1+sum haul-x1-link haul-x1-link+sum openssl"
#        CHECKSUM_LINK_RATE=400M  (SIZE_MIB is the single part's)

CHECKSUM_CLIENTS=${CHECKSUM_CLIENTS:-haul haul+sum haul-x1 haul-x1+sum haul-x1-link haul-x1-link+sum openssl}
CHECKSUM_LINK_RATE=${CHECKSUM_LINK_RATE:-400M}
export CHECKSUM_LINK_RATE

checksum_check() {
    bench_check_clients checksum "$CHECKSUM_CLIENTS" "haul haul+sum haul-x1 haul-x1+sum haul-x1-link haul-x1-link+sum openssl"
    require_command openssl openssl
}

checksum_prepare() {
    CHECKSUM_SOURCE=$(nginx_make_file "bench.bin" "$SIZE_MIB")
    CHECKSUM_BYTES=$(stat -c %s "$CHECKSUM_SOURCE")
    CHECKSUM_FILES=1
    CHECKSUM_OUT=$OUT_DIR/checksum.bin
    CHECKSUM_URL=$NGINX_HTTP_URL/bench.bin
    log "checksum: hashing the source once for --checksum"
    CHECKSUM_SHA256=$(openssl dgst -sha256 -r "$CHECKSUM_SOURCE" | cut -d' ' -f1)
}

checksum_before() {
    local client=$2
    rm -f "$CHECKSUM_OUT"
    if [[ $client == openssl ]]; then
        # openssl hashes a downloaded copy on the same disk, as haul's check would read it.
        cp "$CHECKSUM_SOURCE" "$CHECKSUM_OUT"
        sync
    fi
}

checksum_command() {
    local client=$2
    case $client in
        openssl) CMD=(openssl dgst -sha256 "$CHECKSUM_OUT"); return ;;
        haul) CMD=("$HAUL_BIN" -q) ;;
        haul+sum) CMD=("$HAUL_BIN" -q "--checksum=sha256=$CHECKSUM_SHA256") ;;
        haul-x1) CMD=("$HAUL_BIN" -q -x 1) ;;
        haul-x1+sum) CMD=("$HAUL_BIN" -q -x 1 "--checksum=sha256=$CHECKSUM_SHA256") ;;
        haul-x1-link) CMD=("$HAUL_BIN" -q -x 1 --limit-rate "$CHECKSUM_LINK_RATE") ;;
        haul-x1-link+sum) CMD=("$HAUL_BIN" -q -x 1 --limit-rate "$CHECKSUM_LINK_RATE" "--checksum=sha256=$CHECKSUM_SHA256") ;;
    esac
    CMD+=(-o "$CHECKSUM_OUT" "$CHECKSUM_URL")
}

checksum_verify() {
    if ! cmp -s "$CHECKSUM_OUT" "$CHECKSUM_SOURCE"; then
        echo "output differs from the source ($(stat -c %s "$CHECKSUM_OUT" 2>/dev/null || echo no) bytes)"
        return 1
    fi
}

checksum_after() {
    rm -f "$CHECKSUM_OUT"
}

checksum_describe() {
    echo "checksum: $SIZE_MIB MiB over HTTP: haul with and without --checksum=sha256 (4 connections, -x 1, -x 1 --limit-rate $CHECKSUM_LINK_RATE), and openssl dgst -sha256 of the same file"
}
