# shellcheck shell=bash
# The tables of Scripts/bench.sh: medians over the verified measured runs of each part, haul's
# ratios to the other clients, and issue 3's targets (met or missed) for the capped and small
# parts.
#
#   bench_report TSV     prints the tables (needs CAPPED_LIMIT_BPS exported for "capped")

bench_report() {
    python3 - "$1" <<'PY'
import csv, os, statistics, sys

rows = [r for r in csv.DictReader(open(sys.argv[1]), delimiter="\t") if r["phase"] == "run"]
MIB = 1024 * 1024
RSS_TARGET_MIB = 48


def summarise(selected):
    """Medians of the verified runs per client, in the order clients first appear."""
    stats = {}
    for client in dict.fromkeys(r["client"] for r in selected):
        mine = [r for r in selected if r["client"] == client]
        ok = [r for r in mine if r["verified"] == "1"]
        if not ok:
            stats[client] = {"n": 0, "total": len(mine)}
            continue
        stats[client] = {
            "n": len(ok),
            "total": len(mine),
            "wall": statistics.median(float(r["wall_s"]) for r in ok),
            "mbps": statistics.median(int(r["bytes"]) / float(r["wall_s"]) / 1e6 for r in ok),
            "bps": statistics.median(int(r["bytes"]) / float(r["wall_s"]) for r in ok),
            "files_per_s": statistics.median(int(r["files"]) / float(r["wall_s"]) for r in ok),
            "cpu": statistics.median(float(r["user_s"]) + float(r["sys_s"]) for r in ok),
            "rss": statistics.median(int(r["maxrss_kib"]) / 1024 for r in ok),
            "rss_max": max(int(r["maxrss_kib"]) / 1024 for r in ok),
        }
    return stats


def ratio(a, b):
    return f"{a / b:.2f}" if b > 0 else "-"


def target(label, value, limit, below=True):
    met = value <= limit if below else value >= limit
    sign = "<=" if below else ">="
    return f"  {label}: {value:.2f} (target {sign} {limit}) {'met' if met else 'MISSED'}"


def print_rows(stats, header, cells):
    """Prints the header, then one row per client: runs, wall s, then `cells(s, haul)`.
    Returns haul's stats (None when every haul run failed)."""
    print(f"{'client':<15} {'runs':>5} {'wall s':>8} {header}")
    haul = stats.get("haul") if stats.get("haul", {}).get("n") else None
    for client, s in stats.items():
        runs = f"{s['n']}/{s['total']}"
        if not s["n"]:
            print(f"{client:<15} {runs:>5}   every run failed")
            continue
        print(f"{client:<15} {runs:>5} {s['wall']:>8.3f} {cells(s, haul)}")
    return haul


def print_single(protocol, stats):
    """The table of the big single file (the format this script always printed)."""
    print()
    print(f"{protocol.upper()}  (medians over verified runs; ratios are haul/other: MB/s above 1 and CPU below 1 favour haul)")
    print_rows(stats, f"{'MB/s':>8} {'CPU s':>7} {'RSS MiB':>8} {'MB/s ratio':>11} {'CPU ratio':>10}",
               lambda s, haul: f"{s['mbps']:>8.1f} {s['cpu']:>7.3f} {s['rss']:>8.1f} "
                               f"{ratio(haul['mbps'], s['mbps']) if haul else '-':>11} "
                               f"{ratio(haul['cpu'], s['cpu']) if haul else '-':>10}")


def print_single_pairs(protocol, selected, stats):
    """haul against curl round by round (each round runs the clients back to back, so a slow
    phase of the machine slows both), and the engine issue's targets on those paired ratios."""
    def by_round(client):
        return {r["round"]: r for r in selected if r["client"] == client and r["verified"] == "1"}
    haul, curl = by_round("haul"), by_round("curl")
    rounds = sorted(set(haul) & set(curl), key=int)
    if not rounds:
        return
    speed = [float(curl[k]["wall_s"]) / float(haul[k]["wall_s"]) for k in rounds]
    cpu = [(float(haul[k]["user_s"]) + float(haul[k]["sys_s"])) / (float(curl[k]["user_s"]) + float(curl[k]["sys_s"]))
           for k in rounds]
    print(f"  paired by round, haul/curl: MB/s {statistics.median(speed):.2f} (rounds: {', '.join(f'{x:.2f}' for x in speed)}), "
          f"CPU {statistics.median(cpu):.2f} (rounds: {', '.join(f'{x:.2f}' for x in cpu)})")
    disk = by_round("disk")
    floor_rounds = [k for k in rounds if k in disk]
    floor = [float(curl[k]["wall_s"]) / float(disk[k]["wall_s"]) for k in floor_rounds]
    if floor:
        of_floor = [float(disk[k]["wall_s"]) / float(haul[k]["wall_s"]) for k in floor_rounds]
        print(f"  paired by round, disk/curl (dd writers alone, no network: about what this disk takes): MB/s {statistics.median(floor):.2f} "
              f"(rounds: {', '.join(f'{x:.2f}' for x in floor)}); haul/disk MB/s {statistics.median(of_floor):.2f} "
              f"(rounds: {', '.join(f'{x:.2f}' for x in of_floor)})")
    print("  targets (engine issue, on the paired medians):")
    if protocol == "http":
        print(target("haul MB/s / curl MB/s", statistics.median(speed), 1.5, below=False))
        if floor and statistics.median(speed) < 1.5 and statistics.median(floor) < 1.5:
            print(f"    (the disk alone, written by dd with no network, reached only {statistics.median(floor):.2f}x curl's MB/s "
                  "in these rounds: a client that makes its bytes durable before it exits is held near that)")
        print(target("haul CPU / curl CPU", statistics.median(cpu), 0.7))
    else:
        print(target("haul MB/s / curl MB/s", statistics.median(speed), 1.1, below=False))
    if stats.get("haul", {}).get("n"):
        print(target("haul peak RSS MiB", stats["haul"]["rss_max"], 32))


def print_ratios_table(title, stats, rate_column):
    """A table whose ratios are haul's wall time and CPU over each other client's."""
    name, key, fmt = rate_column
    print()
    print(title)
    print("(medians over verified runs; ratios are haul/other: below 1 favours haul)")
    return print_rows(stats, f"{name:>8} {'CPU s':>7} {'RSS MiB':>8} {'peak RSS':>9} {'wall ratio':>11} {'CPU ratio':>10}",
                      lambda s, haul: f"{format(s[key], fmt):>8} {s['cpu']:>7.3f} {s['rss']:>8.1f} {s['rss_max']:>9.1f} "
                                      f"{ratio(haul['wall'], s['wall']) if haul else '-':>11} "
                                      f"{ratio(haul['cpu'], s['cpu']) if haul else '-':>10}")


def print_capped(stats):
    limit = int(os.environ.get("CAPPED_LIMIT_BPS", "0"))
    title = "CAPPED  (one file split across connections, each capped by the server"
    if limit:
        title += f"; at best {limit / MIB:.0f} MiB/s = {limit / 1e6:.1f} MB/s"
    haul = print_ratios_table(title + ")", stats, ("MB/s", "mbps", ".1f"))
    if limit:
        for client, s in stats.items():
            if s["n"]:
                print(f"  {client} reached {s['bps'] / limit:.3f} of the limit")
    if not haul:
        return
    print("targets (issue 3):")
    if stats.get("aria2c", {}).get("n"):
        print(target("haul wall / aria2c wall", haul["wall"] / stats["aria2c"]["wall"], 0.95))
        print(target("haul CPU / aria2c CPU", haul["cpu"] / stats["aria2c"]["cpu"], 0.6))
    if stats.get("axel", {}).get("n"):
        print(target("haul wall / axel wall", haul["wall"] / stats["axel"]["wall"], 1.02))
    if limit:
        print(target("haul speed / limit", haul["bps"] / limit, 0.95, below=False))
    print(target("haul peak RSS MiB", haul["rss_max"], RSS_TARGET_MIB))


def paired_wall_ratios(selected, client, other):
    """client's wall time over other's, round by round (each round runs the clients back to back,
    so a slow phase of the machine slows both); empty when they share no verified round."""
    def by_round(name):
        return {r["round"]: r for r in selected if r["client"] == name and r["verified"] == "1"}
    mine, theirs = by_round(client), by_round(other)
    return [float(mine[k]["wall_s"]) / float(theirs[k]["wall_s"]) for k in sorted(set(mine) & set(theirs), key=int)]


def print_small(stats, selected):
    title = "SMALL  (many small files, several at once, into a fresh folder each run)"
    haul = print_ratios_table(title, stats, ("files/s", "files_per_s", ".0f"))
    if not haul:
        return
    paired = paired_wall_ratios(selected, "haul", "curl")
    if paired:
        print(f"  paired by round, haul/curl wall: {statistics.median(paired):.2f} "
              f"(rounds: {', '.join(f'{x:.2f}' for x in paired)})")
    print("targets (issue 3):")
    if stats.get("curl", {}).get("n"):
        print(target("haul wall / curl wall", haul["wall"] / stats["curl"]["wall"], 1.0))
        if paired:
            print(target("haul wall / curl wall, paired by round", statistics.median(paired), 1.0))
    print(target("haul peak RSS MiB", haul["rss_max"], RSS_TARGET_MIB))


def print_ratelimit(stats):
    asked = int(os.environ.get("RATELIMIT_BPS", "0"))
    title = "RATELIMIT  (each client limits itself"
    if asked:
        title += f" to {asked / MIB:.0f} MiB/s"
    haul = print_ratios_table(title + "; achieved = size / wall time)", stats, ("MB/s", "mbps", ".1f"))
    if not asked:
        return
    for client, s in stats.items():
        if s["n"]:
            print(f"  {client} achieved {s['bps'] / asked:.3f} of the rate asked for")
    if not haul:
        return
    print("targets (issue 3):")
    print(target("haul |achieved / asked - 1| (%)", abs(haul["bps"] / asked - 1) * 100, 5.0))


def print_checksum(stats):
    print()
    print("CHECKSUM  (what --checksum=sha256 adds; openssl dgst -sha256 hashes the same file alone)")
    print(f"{'client':<12} {'runs':>5} {'wall s':>8} {'CPU s':>7} {'RSS MiB':>8}")
    for client, s in stats.items():
        runs = f"{s['n']}/{s['total']}"
        if not s["n"]:
            print(f"{client:<12} {runs:>5}   every run failed")
            continue
        print(f"{client:<12} {runs:>5} {s['wall']:>8.3f} {s['cpu']:>7.3f} {s['rss']:>8.1f}")
    ok = lambda name: stats.get(name, {}).get("n")
    if not ok("openssl"):
        return
    print("targets (issue 5):")
    if ok("haul") and ok("haul+sum"):
        added = stats["haul+sum"]["wall"] - stats["haul"]["wall"]
        print(f"  segmented: the checksum adds {added:.3f} s to {stats['haul']['wall']:.3f} s")
        print(target("added / openssl's time", added / stats["openssl"]["wall"], 1.1))
    for plain, label in (("haul-x1", "one connection, as fast as loopback goes"),
                         ("haul-x1-link", f"one connection, --limit-rate {os.environ.get('CHECKSUM_LINK_RATE', '400M')} (a link slower than the CPU)")):
        if ok(plain) and ok(plain + "+sum"):
            added = stats[plain + "+sum"]["wall"] - stats[plain]["wall"]
            print(f"  {label}: the checksum adds {added:.3f} s to {stats[plain]['wall']:.3f} s "
                  f"({added / stats[plain]['wall'] * 100:.1f}%; close to zero expected)")


for part in dict.fromkeys(r["part"] for r in rows):
    for variant in dict.fromkeys(r["protocol"] for r in rows if r["part"] == part):
        stats = summarise([r for r in rows if r["part"] == part and r["protocol"] == variant])
        if part == "single":
            print_single(variant, stats)
            print_single_pairs(variant, [r for r in rows if r["part"] == part and r["protocol"] == variant], stats)
        elif part == "capped":
            print_capped(stats)
        elif part == "small":
            print_small(stats, [r for r in rows if r["part"] == part and r["protocol"] == variant])
        elif part == "ratelimit":
            print_ratelimit(stats)
        elif part == "checksum":
            print_checksum(stats)
PY
}
