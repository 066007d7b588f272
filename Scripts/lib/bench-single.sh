# shellcheck shell=bash
# shellcheck disable=SC2034 # CMD and the *_BYTES and *_FILES variables are read by lib/bench-measure.sh
# Part "single" of Scripts/bench.sh: one big file (SIZE_MIB, default 2 GiB) over plain HTTP and
# HTTPS, haul with its defaults (plus HAUL_ARGS) against curl and aria2c on one connection;
# over plain HTTP also haul's URLSession transport (`haul-urlsession`: --engine=urlsession; not
# over HTTPS: FoundationNetworking on Linux cannot trust the bench's private CA).
# `curl+sync` is curl followed by `sync FILE` (an fsync of what it wrote): the time until curl's
# bytes are on the disk, as haul's are when it exits. The targets compare haul with plain curl.
# `disk` is no client: DISK_WRITERS dd processes write the same number of bytes (zeros) into a
# file reserved first, in O_DIRECT blocks, then it is fdatasynced, with no network at all: about
# the most this disk takes, the floor of any client that makes its bytes durable before it says
# it is done, as haul does (the report puts it beside curl round by round). Every download is
# compared byte for byte with the source (the disk's file: by its size), then deleted.
#
# Knobs: SIZE_MIB=2048  PROTOCOLS="http https"  CLIENTS="haul curl aria2c curl+sync"  HAUL_ARGS=""
#        HTTP_EXTRA_CLIENTS="haul-urlsession disk"  (run over plain HTTP only)  DISK_WRITERS=16

SIZE_MIB=${SIZE_MIB:-2048}
PROTOCOLS=${PROTOCOLS:-http https}
CLIENTS=${CLIENTS:-haul curl aria2c curl+sync}
HAUL_ARGS=${HAUL_ARGS:-}
HTTP_EXTRA_CLIENTS=${HTTP_EXTRA_CLIENTS-haul-urlsession disk}
DISK_WRITERS=${DISK_WRITERS:-16}

# Checks the knobs and installs the clients (before the server starts).
single_check() {
    bench_check_clients single "$CLIENTS" "haul curl aria2c curl+sync"
    [[ -z "${HTTP_EXTRA_CLIENTS// /}" ]] || bench_check_clients single "$HTTP_EXTRA_CLIENTS" "haul-urlsession disk"
    local protocol
    for protocol in $PROTOCOLS; do
        [[ $protocol == http || $protocol == https ]] || die "single: unknown protocol '$protocol' (known: http https)"
    done
    [[ "$DISK_WRITERS" =~ ^[1-9][0-9]{0,2}$ ]] || die "single: DISK_WRITERS must be 1-999, not '$DISK_WRITERS'"
    if [[ " $HTTP_EXTRA_CLIENTS " == *" disk "* ]]; then
        # It proves the disk client wrote every block; Debian keeps it in /usr/sbin.
        FILEFRAG=$(command -v filefrag || echo /usr/sbin/filefrag)
        [[ -x "$FILEFRAG" ]] || die "single: the disk client needs filefrag (Debian package e2fsprogs), or set HTTP_EXTRA_CLIENTS without disk"
        require_command fallocate util-linux
    fi
    require_command curl curl
    require_command aria2c aria2
}

# Makes the file and the output folder.
single_prepare() {
    SINGLE_SOURCE=$(nginx_make_file "bench.bin" "$SIZE_MIB")
    SINGLE_BYTES=$(stat -c %s "$SINGLE_SOURCE")
    SINGLE_FILES=1
    SINGLE_OUT=$OUT_DIR/bench.bin
}

single_before() {
    rm -f "$SINGLE_OUT"
}

single_command() {
    local protocol=$1 client=$2 url tls=0 out=$SINGLE_OUT
    if [[ $protocol == https ]]; then
        url=$NGINX_HTTPS_URL/bench.bin
        tls=1
    else
        url=$NGINX_HTTP_URL/bench.bin
    fi
    case $client in
        haul)
            if [[ "${HAUL_STANDIN:-}" == curl ]]; then
                CMD=(curl --silent --show-error --fail -o "$out")
            else
                # shellcheck disable=SC2206 # HAUL_ARGS is a list of options, split on purpose
                CMD=("$HAUL_BIN" -q $HAUL_ARGS -o "$out")
            fi
            bench_haul_tls "$tls"
            ;;
        haul-urlsession)
            # shellcheck disable=SC2206 # HAUL_ARGS is a list of options, split on purpose
            CMD=("$HAUL_BIN" -q --engine=urlsession $HAUL_ARGS -o "$out")
            ;;
        curl)
            CMD=(curl --silent --show-error --fail -o "$out")
            [[ $tls == 1 ]] && CMD+=(--cacert "$NGINX_CA")
            ;;
        curl+sync)
            # shellcheck disable=SC2016 # expanded by the inner shell
            CMD=(sh -c 'out=$1; shift; curl "$@" -o "$out" && sync "$out"' curl+sync "$out" --silent --show-error --fail)
            [[ $tls == 1 ]] && CMD+=(--cacert "$NGINX_CA")
            ;;
        disk)
            # The file reserved first (as haul reserves a file it writes past the page cache),
            # then DISK_WRITERS dd processes write one slice each in 4 MiB O_DIRECT blocks (1 MiB
            # when SIZE_MIB is not a multiple of 4), and `sync -d` fdatasyncs it. Several writers
            # at once: this virtual disk takes more than one writer gives it (2 GiB: one dd
            # 1.87-2.09 s, four 1.72-1.87 s, sixteen 1.52-1.55 s, in the same three rounds).
            local block=4
            ((SIZE_MIB % 4 == 0)) || block=1
            # shellcheck disable=SC2016 # expanded by the inner shell
            CMD=(sh -c '
                file=$1 bytes=$2 block=$3 writers=$4
                blocks=$((bytes / 1048576 / block)) per=$(((blocks + writers - 1) / writers)) i=0 pids=
                fallocate -l "$bytes" "$file" || exit 1
                while [ $i -lt "$writers" ]; do
                    first=$((i * per)) count=$per
                    [ $((first + count)) -le "$blocks" ] || count=$((blocks - first))
                    if [ "$count" -gt 0 ]; then
                        dd if=/dev/zero of="$file" bs="$block"M count=$count seek=$first oflag=direct \
                            conv=notrunc status=none &
                        pids="$pids $!"
                    fi
                    i=$((i + 1))
                done
                failed=0
                for pid in $pids; do wait "$pid" || failed=1; done
                [ $failed = 0 ] && sync -d "$file"' disk "$out" "$SINGLE_BYTES" "$block" "$DISK_WRITERS")
            return
            ;;
        aria2c)
            # One connection, no renaming, no progress; space is reserved with fallocate (what
            # aria2's docs recommend on ext4/xfs/btrfs) rather than by writing zeros first.
            CMD=(aria2c -x1 -s1 --quiet=true --allow-overwrite=true --auto-file-renaming=false
                --file-allocation=falloc --dir="$(dirname "$out")" --out="$(basename "$out")")
            [[ $tls == 1 ]] && CMD+=("--ca-certificate=$NGINX_CA")
            ;;
    esac
    CMD+=("$url")
}

single_verify() {
    local client=$2 size
    if [[ $client == disk ]]; then
        # The file was reserved at its full size first, so its size proves nothing: every extent
        # must have been written (none left "unwritten", as reserved blocks are until then).
        size=$(stat -c %s "$SINGLE_OUT" 2>/dev/null || echo 0)
        [[ $size == "$SINGLE_BYTES" ]] || { echo "dd wrote $size bytes, not $SINGLE_BYTES"; return 1; }
        if "$FILEFRAG" -v "$SINGLE_OUT" 2>/dev/null | grep -q unwritten; then
            echo "blocks of the file were never written"
            return 1
        fi
        return 0
    fi
    if ! cmp -s "$SINGLE_OUT" "$SINGLE_SOURCE"; then
        echo "output differs from the source ($(stat -c %s "$SINGLE_OUT" 2>/dev/null || echo no) bytes)"
        return 1
    fi
}

single_after() {
    rm -f "$SINGLE_OUT" "$SINGLE_OUT.aria2"
}

# Lines for the summary's header.
single_describe() {
    local disk=""
    if [[ " $PROTOCOLS " == *" http "* && " $HTTP_EXTRA_CLIENTS " == *" disk "* ]]; then
        disk="; over http also disk ($DISK_WRITERS dd writers: the same bytes O_DIRECT into a reserved file, then fdatasync; no network)"
    fi
    echo "single: $SIZE_MIB MiB over ${PROTOCOLS// /, }; haul ${HAUL_ARGS:-(defaults)}, curl, aria2c -x1 -s1 --file-allocation=falloc, curl+sync (curl, then sync FILE)$disk"
}
