# shellcheck shell=bash
# The machine's phase, for Scripts/bench.sh: how fast the folder the downloads go to takes writes
# right now, into the page cache and past it. On the VMs this is measured on, both move within the
# hour (0.1-3.5 GB/s into the page cache, 0.9-1.6 GB/s past it; docs/ARCHITECTURE.md, "Writing
# past the page cache" and "Many small files"), and every client's time moves with them, so a
# summary that says which phase it ran in can be read against other runs.
#
# bench_probe DIR prints one line: "page cache N MB/s, direct N MB/s", each for PROBE_MIB
# (default 256) MiB of zeros written by dd with 64 KiB blocks into the page cache (then removed,
# not synced), and with 4 MiB O_DIRECT blocks and an fdatasync into a file reserved first. A
# write that fails (a file system without O_DIRECT, a full disk) prints "n/a" for its half.
# PROBE_MIB=0 skips the probe ("not measured").

PROBE_MIB=${PROBE_MIB:-256}

# Dies unless PROBE_MIB is 0 or a positive multiple of 4 (the direct half writes 4 MiB blocks).
probe_check() {
    [[ "$PROBE_MIB" =~ ^[0-9]{1,6}$ ]] && ((10#$PROBE_MIB % 4 == 0)) ||
        die "PROBE_MIB must be 0 or a multiple of 4 up to 999996, not '$PROBE_MIB'"
    PROBE_MIB=$((10#$PROBE_MIB))   # 016 is 16, not octal 14
}

# Prints the MB/s of COMMAND..., which writes PROBE_MIB MiB, or "n/a" when it fails.
_probe_rate() {
    local start end
    start=$(date +%s%N)
    if ! "$@" >/dev/null 2>&1; then
        echo "n/a"
        return
    fi
    end=$(date +%s%N)
    awk -v bytes=$((PROBE_MIB * 1024 * 1024)) -v ns=$((end - start)) \
        'BEGIN { printf "%.0f MB/s", bytes / 1e6 / (ns / 1e9) }'
}

bench_probe() {
    local dir=$1 file cached direct
    if ((PROBE_MIB == 0)); then
        echo "not measured"
        return
    fi
    file=$dir/.bench-probe
    rm -f "$file"
    cached=$(_probe_rate dd if=/dev/zero of="$file" bs=64k count=$((PROBE_MIB * 16)))
    rm -f "$file"
    direct=n/a
    if fallocate -l "${PROBE_MIB}M" "$file" 2>/dev/null; then
        direct=$(_probe_rate dd if=/dev/zero of="$file" bs=4M count=$((PROBE_MIB / 4)) \
            oflag=direct conv=notrunc,fdatasync)
    fi
    rm -f "$file"
    echo "page cache $cached, direct $direct"
}
