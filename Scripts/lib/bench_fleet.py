"""The fleet part of Scripts/bench.py: haul daemons sharing one queue in PostgreSQL, beside one
daemon on SQLite, through their JSON-RPC (docs/FLEET.md).

A private PostgreSQL (Scripts/postgres-cluster.sh) in the work folder, always stopped at the end;
--fleet-nodes nodes (a, b, c, ...) on one database, each with its own --listen port and --dir and
the same secret. Then, in turn:

  fill       --fleet-queued paused downloads added through the nodes in turn, each call a
             system.multicall of 1,000 addUri (timed); after each answer another connection (psql)
             counts the rows: an addition acknowledged is committed (durable)
  reads      VACUUM ANALYZE haul_downloads and CHECKPOINT (psql), then tellWaiting(0, 1000) with
             every key timed --rpc-calls times against each node (the first not counted), and the
             last page; what PostgreSQL itself spends on the node's queries (EXPLAIN ANALYZE)
  idle       each node's CPU time over --idle-seconds with the queue paused (and PostgreSQL's)
  claims     -j --fleet-jobs on every node (changeGlobalOption), unpauseAll: the downloads fetch a
             tiny file from nginx (/tiny/, any name); the rows that ended (complete or error) are
             counted with psql twice a second over --fleet-window seconds: downloads claimed, run
             and written per second across the fleet, and PostgreSQL's commits per download; then
             pauseAll
  takeover   -j 2 on every node and two slow downloads each (nginx /slow/, --slow-rate); node a is
             killed (SIGKILL) at a random moment between two of its renewals: the time until every
             download it ran is active on another node, and how long after its lease ended

The nodes' download folders (--dir) are on tmpfs (/dev/shm) when the machine has one: the part
measures the queue, and creating 100,000 tiny files is a bound of its own (on this machine's ext4,
its inode allocator took a quarter of the CPU in the claims window: perf). The state (SQLite's
file, PostgreSQL's cluster) stays on the work folder's disk.

In every phase the CPU of each node, PostgreSQL, nginx and this script is read, and the machine's
(/proc/stat): what other processes took is noted in the report when it is more than a little.

The one node on SQLite (--state=FILE) does fill, reads, idle and claims the same way; its
durability is checked by killing it (SIGKILL) right after the last answer and counting the rows in
its file (it holds the file locked while it runs), then it is started again on that file.

bench.py passes itself in (`h`): its RPC client, process CPU and RSS readers, log and die.
Standard library only.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

LEASE_S = 10.0   # the daemon's lease (FleetNode.Configuration.lease); no option changes it
SECRET = "bench-secret"
DATABASE = "haul_fleet"
NAMES = "abcdefgh"
SETTLE_S = 6     # parked threads retire after 5 s: what is left is what an idle daemon keeps
TINY_BYTES = 4096
OTHERS_NOTED_PCT = 20   # the CPU (% of a core) other processes may take in a phase before the report says so

# The targets on the fleet's figures: (key, label, comparison, limit).
FLEET_TARGETS = (
    ("multicall_max_s", "1,000 addUri in one multicall, slowest call, s", "<", 1.0),
    ("durable_missing", "acknowledged additions not found by another connection", "<=", 0),
    ("tell_waiting_worst_ms", "tellWaiting(0, 1000) median from the slowest node, ms", "<=", 30.0),
    ("ended_per_s", "downloads claimed and ended per second across the fleet", ">=", 2000.0),
    ("takeover_s", f"a killed node's downloads active elsewhere, s (lease {LEASE_S:g} s + 5)", "<=", LEASE_S + 5),
    ("idle_cpu_worst_pct", "idle CPU of the busiest node, % of a core", "<", 0.2),
)


# ---------------------------------------------------------------------------------------------
# PostgreSQL


class Cluster:
    """A private PostgreSQL started by Scripts/postgres-cluster.sh in FOLDER (a Unix socket there
    and a port on 127.0.0.1), with the fleet's database."""

    def __init__(self, h, folder: Path):
        self.h, self.folder, self.port = h, folder, 0
        self.script = h.REPO / "Scripts" / "postgres-cluster.sh"

    def start(self) -> None:
        done = subprocess.run(["bash", str(self.script), "start", str(self.folder)], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        (self.folder.parent / f"{self.folder.name}.start.log").write_text(done.stderr)
        if done.returncode != 0:
            self.h.die(f"postgres-cluster.sh start failed: {done.stderr.strip()[-400:]}")
        self.port = int(done.stdout.strip().splitlines()[-1].rsplit(":", 1)[1])
        self.psql(f"CREATE DATABASE {DATABASE}", database="postgres")
        self.h.log(f"fleet: PostgreSQL in {self.folder} (port {self.port}), database {DATABASE}")

    def stop(self) -> None:
        if self.folder.exists():
            subprocess.run(["bash", str(self.script), "stop", str(self.folder)], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    @property
    def url(self) -> str:
        """The nodes' --state."""
        return f"postgresql://haul@/{DATABASE}?host={self.folder}&port={self.port}"

    def psql(self, sql: str, database: str = DATABASE) -> str:
        """The unaligned, tuples-only output of SQL, run by psql on a connection of its own."""
        done = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", str(self.folder),
                               "-p", str(self.port), "-U", "haul", "-d", database, "-c", sql],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            self.h.die(f"psql: {sql}: {done.stderr.strip()}")
        return done.stdout.strip()

    def counts(self) -> dict[str, int]:
        """Rows by status."""
        lines = self.psql("SELECT status, count(*) FROM haul_downloads GROUP BY status").splitlines()
        return {status: int(count) for status, count in (line.split("|") for line in lines if line)}

    def explained(self, sql: str, times: int = 5) -> dict:
        """The median planning and execution times PostgreSQL reports for SQL (EXPLAIN ANALYZE
        without the per-row timing), in ms, and the plan's top scan."""
        plans = [json.loads(self.psql(f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {sql}"))[0] for _ in range(times)]
        node = plans[0]["Plan"]
        while node.get("Plans") and "Index Name" not in node:
            node = node["Plans"][0]
        return {"planning_ms": statistics.median(p["Planning Time"] for p in plans),
                "execution_ms": statistics.median(p["Execution Time"] for p in plans),
                "scan": f"{node['Node Type']}" + (f" using {node['Index Name']}" if "Index Name" in node else "")}

    def activity(self) -> dict[str, int]:
        """The database's commits so far and the server's WAL flushes (pg_stat_database, pg_stat_wal;
        a backend reports its counts within a second)."""
        commits = self.psql(f"SELECT xact_commit FROM pg_stat_database WHERE datname = '{DATABASE}'")
        syncs = self.psql("SELECT wal_sync FROM pg_stat_wal")
        return {"commits": int(commits or 0), "wal_syncs": int(syncs or 0)}

    @property
    def pid(self) -> int:
        """The postmaster's process."""
        return int((self.folder / "data" / "postmaster.pid").read_text().split()[0])


def cluster_folder(h, work: Path, owned: bool) -> Path:
    """Where the cluster goes: in the work folder when the postgres user (the script runs the
    server as postgres under root) can reach it and the socket's path fits, else a folder of its own
    in the temp folder. OWNED: the work folder is bench.py's own (it may open it for traversal)."""
    folder = work / "fleet-pg"
    if os.geteuid() == 0 and owned:
        work.chmod(work.stat().st_mode | 0o011)   # x only: the postgres user passes through, lists nothing
    reachable = os.geteuid() != 0 or all(p.stat().st_mode & 0o001 for p in folder.parents if p.exists())
    if reachable and len(str(folder)) < 80:
        return folder
    return Path(tempfile.mkdtemp(prefix="haul-fleet-pg."))


# ---------------------------------------------------------------------------------------------
# CPU


def tree_cpu_seconds(h, pid: int) -> float:
    """CPU seconds so far of PID and its children (a postmaster's backends, nginx's workers); a
    child that ended took its time with it."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[-1].split()
            if int(entry) == pid or int(fields[1]) == pid:
                total += h.process_cpu_seconds(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return total


def machine_ticks() -> tuple[int, int]:
    """The machine's busy and total CPU ticks so far, all cores (/proc/stat)."""
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:]]
    idle = ticks[3] + ticks[4]   # idle, iowait
    return sum(ticks) - idle, sum(ticks)


class Usage:
    """CPU over a span, in % of a core: each of PIDS's (name: pid, with its children), this script's
    (its psql included), the whole machine's, and what the machine's other processes took."""

    def __init__(self, h, pids: dict[str, int]):
        self.h, self.pids = h, pids
        self.start = time.monotonic()
        self.machine = machine_ticks()
        self.before = {name: tree_cpu_seconds(h, pid) for name, pid in pids.items()}
        self.own = self.own_seconds()

    def own_seconds(self) -> float:
        times = os.times()
        return self.h.process_cpu_seconds(os.getpid()) + times.children_user + times.children_system

    def result(self) -> dict:
        wall = time.monotonic() - self.start
        busy, total = (now - then for now, then in zip(machine_ticks(), self.machine))
        # A thread that ended took its time with it: a process can seem to have used less than nothing.
        cpu = {name: max(0.0, tree_cpu_seconds(self.h, pid) - self.before[name]) / wall * 100 for name, pid in self.pids.items()}
        cpu["bench.py"] = (self.own_seconds() - self.own) / wall * 100
        machine = busy / max(1, total) * (os.cpu_count() or 1) * 100
        return {"wall_s": wall, "cpu_pct": cpu, "machine_pct": machine, "others_pct": max(0.0, machine - sum(cpu.values()))}


def usage_pids(bench, nodes: list, cluster) -> dict[str, int]:
    """What the part runs: the nodes, PostgreSQL, nginx."""
    pids = {node.name: node.pid for node in nodes}
    if cluster:
        pids["postgres"] = cluster.pid
    if bench.server.process:
        pids["nginx"] = bench.server.process.pid
    return pids


# ---------------------------------------------------------------------------------------------
# The daemons


@dataclasses.dataclass
class Node:
    """A running haul daemon of the part: a fleet node, or the one node on SQLite."""

    name: str
    folder: Path
    port: int
    argv: list[str]
    process: subprocess.Popen
    rpc: object  # bench.py's RPC

    @property
    def pid(self) -> int:
        return self.process.pid


def downloads_root(out: Path) -> Path:
    """A folder for the nodes' downloads: on tmpfs (/dev/shm) when there is one, else in `out`."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        return Path(tempfile.mkdtemp(prefix="haul-fleet-downloads.", dir=shm))
    return Path(tempfile.mkdtemp(prefix="haul-fleet-downloads.", dir=out))


# Set by run_fleet_part for the part's run, removed at its end.
DOWNLOADS_ROOT = Path("/nonexistent")


def start_node(h, cfg, name: str, folder: Path, state: str, fleet: bool) -> Node:
    """Starts a haul daemon (-j 2) on STATE, as node NAME of a fleet or alone; waits until it listens."""
    folder.mkdir(parents=True, exist_ok=True)
    port = h.free_ports(1)[0]
    argv = [cfg.haul_bin, "daemon", f"--dir={DOWNLOADS_ROOT / folder.name}", f"--state={state}",
            f"--listen=127.0.0.1:{port}", f"--secret={SECRET}", "-j", "2"] + ([f"--node={name}"] if fleet else [])
    with open(folder / "daemon.log", "a") as log_file:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file,
                                   env=h.client_env(), start_new_session=True)
    deadline = time.monotonic() + 60
    while not h.port_open(port):
        if process.poll() is not None or time.monotonic() > deadline:
            stop_node(h, Node(name, folder, port, argv, process, None))
            h.die(f"haul daemon {name} did not start listening; see {folder}/daemon.log")
        time.sleep(0.05)
    return Node(name, folder, port, argv, process, h.RPC(port, SECRET))


def stop_node(h, node: Node) -> None:
    """SIGTERM (the daemon gives its claims back), then its whole group when it does not end."""
    if node.process.poll() is not None:
        return
    node.process.terminate()
    try:
        node.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        h.kill_group(node.pid)
        node.process.wait()


def set_jobs(nodes: list[Node], jobs: int) -> None:
    for node in nodes:
        node.rpc.call("aria2.changeGlobalOption", {"max-concurrent-downloads": str(jobs)})


# ---------------------------------------------------------------------------------------------
# The measures


def fill(h, cfg, nodes: list[Node], origin: str, visible) -> dict:
    """--fleet-queued paused downloads, 1,000 addUri per system.multicall, through the nodes in turn;
    VISIBLE() (or None) counts the rows from another connection after each answer."""
    times: dict[str, list[float]] = {node.name: [] for node in nodes}
    missing, added = 0, 0
    for batch in range(cfg.fleet_queued // 1000):
        node = nodes[batch % len(nodes)]
        calls = [{"methodName": "aria2.addUri", "params": [node.rpc.token, [f"{origin}/tiny/q{batch}-{index}.bin"],
                                                          {"pause": "true"}]} for index in range(1000)]
        result, elapsed = node.rpc.call("system.multicall", calls)
        if len(result) != 1000 or not all(isinstance(entry, list) for entry in result):
            h.die(f"system.multicall on {node.name}: not every addUri succeeded: {result[:3]}")
        added += 1000
        times[node.name].append(elapsed)
        if visible:
            missing += max(0, added - visible())
    every = [t for per in times.values() for t in per]
    return {"queued": added, "multicall_s": statistics.median(every), "multicall_max_s": max(every),
            "multicall_all_s": times, "durable_missing": missing if visible else None,
            "durable_checked": "after each answer" if visible else None}


def percentile(values: list[float], share: float) -> float:
    """The SHARE quantile of VALUES (inclusive: never beyond the largest)."""
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def reads(h, cfg, node: Node, queued: int, pids: dict[str, int]) -> dict:
    """tellWaiting(0, 1000), every key, --rpc-calls times (the first not counted), and the last page."""
    usage = Usage(h, pids)
    timings, page = [], []
    for _ in range(cfg.rpc_calls):
        page, elapsed = node.rpc.call("aria2.tellWaiting", 0, 1000)
        if len(page) != 1000:
            h.die(f"tellWaiting(0, 1000) on {node.name}: {len(page)} entries")
        timings.append(elapsed * 1000)
    timings = timings[1:]
    last = [node.rpc.call("aria2.tellWaiting", queued - 1000, 1000)[1] * 1000 for _ in range(4)][1:]
    return {"tell_waiting_ms": statistics.median(timings), "tell_waiting_p95_ms": percentile(timings, 0.95),
            "tell_waiting_all_ms": timings, "tell_waiting_last_ms": statistics.median(last),
            "answer_kib": len(json.dumps(page)) / 1024, "usage": usage.result(), **filter_reads(h, node, queued)}


def filter_reads(h, node: Node, queued: int) -> dict:
    """haul.tellMatching over the whole queue: one download's name, and every download (counted,
    10 returned), 7 calls each (the first not counted)."""
    def timed(filter_, expected):
        times = []
        for _ in range(7):
            answer, elapsed = node.rpc.call("haul.tellMatching", filter_, 0, 10, ["gid"])
            if answer["total"] != str(expected):
                h.die(f"haul.tellMatching({filter_}) on {node.name}: {answer['total']} matches, not {expected}")
            times.append(elapsed * 1000)
        return statistics.median(times[1:])
    one = f"/q{queued // 2000}-500.bin"   # a download in the middle of the queue
    return {"filter_one_ms": timed({"text": one}, 1), "filter_all_ms": timed({"text": ".bin", "state": "paused"}, queued)}


def idle(h, cfg, nodes: list[Node], pids: dict[str, int]) -> dict:
    """Each node's CPU over --idle-seconds (the same window), its connection closed, after the parked
    threads retired; PostgreSQL's and the machine's over the same window."""
    for node in nodes:
        node.rpc.connection.close()
    time.sleep(SETTLE_S)
    usage = Usage(h, pids)
    time.sleep(cfg.idle_seconds)
    used = usage.result()
    figures = {node.name: used["cpu_pct"][node.name] for node in nodes}
    return {"idle_cpu_pct": figures, "idle_cpu_worst_pct": max(figures.values()), "idle_usage": used,
            "rss_mib": {node.name: h.process_rss_mib(node.pid) for node in nodes}}


def claims(h, cfg, nodes: list[Node], count, cluster: Cluster | None, pids: dict[str, int]) -> dict:
    """-j --fleet-jobs on every node, unpauseAll, then the ended rows (complete or error) counted
    by COUNT() (ended, active) twice a second over --fleet-window seconds; then pauseAll and the
    wait until nothing runs. The first second (the claims ramping up) is left out of the rate."""
    set_jobs(nodes, cfg.fleet_jobs)
    activity = cluster.activity() if cluster else {}
    ended0, _ = count()
    usage = Usage(h, pids)
    _, unpause_s = nodes[0].rpc.call("aria2.unpauseAll")
    start = time.monotonic()
    series = [(0.0, ended0, 0)]
    while time.monotonic() - start < cfg.fleet_window:
        time.sleep(0.5)
        ended, active = count()
        series.append((time.monotonic() - start, ended, active))
        if ended - ended0 >= cfg.fleet_queued:
            break
    used = usage.result()
    # Each backend reports its counts within a second: the lag at both ends about cancels out.
    activity = {key: value - activity[key] for key, value in cluster.activity().items()} if cluster else {}
    _, pause_s = nodes[0].rpc.call("aria2.pauseAll")
    deadline = time.monotonic() + 60
    while count()[1] > 0:
        if time.monotonic() > deadline:
            h.die(f"downloads still active 60 s after pauseAll: {count()}")
        time.sleep(0.2)
    set_jobs(nodes, 2)
    first = next((s for s in series if s[0] >= 1.0), series[-1])
    last = series[-1]
    rate = (last[1] - first[1]) / (last[0] - first[0]) if last[0] > first[0] else 0.0
    return {"ended_per_s": rate, "ended_in_window": last[1] - ended0, "window_s": last[0],
            "series": [[round(t, 2), e - ended0, a] for t, e, a in series], "unpause_all_s": unpause_s,
            "pause_all_s": pause_s, "usage": used, "jobs": cfg.fleet_jobs,
            "commits_per_ended": activity["commits"] / max(1, last[1] - ended0) if activity else None,
            "wal_syncs_per_ended": activity["wal_syncs"] / max(1, last[1] - ended0) if activity else None}


def takeover(h, cfg, cluster: Cluster, nodes: list[Node], origin: str) -> dict:
    """Two slow downloads on each node (-j 2 everywhere), free slots on the others, then node a
    killed with SIGKILL at a random moment between two of its renewals: seconds until every
    download it ran is active on another node, and how long after its lease ended that was."""
    victim, others = nodes[0], nodes[1:]
    set_jobs(nodes, 2)
    slow = 2 * len(nodes)
    calls = [{"methodName": "aria2.addUri", "params": [victim.rpc.token, [f"{origin}/slow/slow.bin"],
                                                      {"out": f"slow-{index}.bin"}]} for index in range(slow)]
    gids = [entry[0] for entry in victim.rpc.call("system.multicall", calls)[0]]
    deadline = time.monotonic() + 30
    while True:
        active = others[0].rpc.call("aria2.tellActive")[0]
        where = {entry["gid"]: entry.get("node") for entry in active if entry["gid"] in gids}
        if len(where) == slow:
            break
        if time.monotonic() > deadline:
            h.die(f"the slow downloads did not all start within 30 s: {where}")
        time.sleep(0.1)
    held = [gid for gid, node in where.items() if node == victim.name]
    if not held:
        h.die(f"node {victim.name} runs none of the slow downloads: {where}")
    set_jobs(others, 2 + slow)
    time.sleep(random.uniform(0, LEASE_S / 3))   # a moment anywhere between two renewals of the victim's
    lease_left = float(cluster.psql("SELECT extract(epoch FROM max(lease_until) - clock_timestamp()) FROM haul_downloads "
                                    f"WHERE node = '{victim.name}' AND status = 'active'") or "nan")
    os.kill(victim.pid, signal.SIGKILL)
    killed = time.monotonic()
    victim.process.wait()
    taken: dict[str, float] = {}
    deadline = killed + LEASE_S + 60
    while len(taken) < len(held):
        for gid in held:
            if gid in taken:
                continue
            status = others[0].rpc.call("aria2.tellStatus", gid)[0]
            if status["status"] == "active" and status.get("node") not in (None, victim.name):
                taken[gid] = time.monotonic() - killed
        if time.monotonic() > deadline:
            h.die(f"node {victim.name}'s downloads not taken over within {deadline - killed:.0f} s: {taken}")
        time.sleep(0.05)
    worst = max(taken.values())
    return {"takeover_s": worst, "takeover_each_s": taken, "lease_left_s": lease_left,
            "after_lease_s": worst - lease_left, "moved": len(held), "killed": victim.name}


def explain(cluster: Cluster, queued: int) -> dict:
    """What PostgreSQL spends on a node's tellWaiting: the count of the queue, then the page (the
    first and the last), as FleetQueue asks them."""
    columns = ("gid, status, position, urls, options, file, total_length, completed_length, completed_ranges, "
               "failure, node, bytes_per_second")
    where = "WHERE status IN ('waiting', 'paused')"
    page = f"SELECT {columns} FROM haul_downloads {where} ORDER BY position, gid OFFSET {{}} LIMIT 1000"
    return {"count": cluster.explained(f"SELECT count(*) FROM haul_downloads {where}"),
            "first_page": cluster.explained(page.format(0)), "last_page": cluster.explained(page.format(queued - 1000)),
            "statuses": cluster.explained("SELECT status, count(*) FROM haul_downloads GROUP BY status")}


# ---------------------------------------------------------------------------------------------
# The part


def run_fleet(h, bench, origin: str) -> dict:
    """The fleet's figures: the cluster, the nodes, fill, reads, idle, claims, takeover."""
    cfg = bench.cfg
    base = bench.out / "fleet"
    cluster = Cluster(h, cluster_folder(h, bench.work, owned=not cfg.work_dir))
    nodes: list[Node] = []
    try:
        cluster.start()
        nodes = [start_node(h, cfg, name, base / f"node-{name}", cluster.url, fleet=True) for name in NAMES[:cfg.fleet_nodes]]
        pids = usage_pids(bench, nodes, cluster)
        h.log(f"fleet: {len(nodes)} nodes on {DATABASE}; adding {cfg.fleet_queued:,} paused")
        figures = fill(h, cfg, nodes, origin, lambda: int(cluster.psql("SELECT count(*) FROM haul_downloads")))
        h.log(f"fleet: multicalls median {figures['multicall_s']:.3f} s, max {figures['multicall_max_s']:.3f} s; "
              "VACUUM ANALYZE haul_downloads, CHECKPOINT, then reads")
        cluster.psql("VACUUM ANALYZE haul_downloads")
        cluster.psql("CHECKPOINT")   # the fill's pages written back now, not while the reads are timed
        figures["reads"] = {node.name: reads(h, cfg, node, figures["queued"], pids) for node in nodes}
        figures["tell_waiting_worst_ms"] = max(r["tell_waiting_ms"] for r in figures["reads"].values())
        figures["postgres"] = explain(cluster, figures["queued"])
        h.log("fleet: tellWaiting medians " + ", ".join(f"{n} {r['tell_waiting_ms']:.1f} ms" for n, r in figures["reads"].items())
              + f"; idle {cfg.idle_seconds} s")
        figures.update(idle(h, cfg, nodes, pids))
        h.log(f"fleet: idle CPU, % of a core: {per_node(figures['idle_cpu_pct'], '.3f')}; claims for {cfg.fleet_window} s "
              f"at -j {cfg.fleet_jobs} per node")

        def count() -> tuple[int, int]:
            rows = cluster.counts()
            return rows.get("complete", 0) + rows.get("error", 0), rows.get("active", 0)

        figures["claims"] = claims(h, cfg, nodes, count, cluster, pids)
        figures["ended_per_s"] = figures["claims"]["ended_per_s"]
        by_node = cluster.psql("SELECT node, status, count(*) FROM haul_downloads "
                               "WHERE status IN ('complete', 'error') GROUP BY node, status ORDER BY 1, 2")
        figures["claims"]["ended_by_node"] = [line.split("|") for line in by_node.splitlines() if line]
        h.log(f"fleet: {figures['ended_per_s']:.0f} ended/s; takeover")
        h.make_file(bench.server.root / "slow" / "slow.bin", 64)
        figures.update(takeover(h, cfg, cluster, nodes, origin))
        h.log(f"fleet: taken over {figures['takeover_s']:.2f} s after the kill, {figures['after_lease_s']:.2f} s after the lease")
        figures["nodes"] = len(nodes)
        figures["command"] = (f"haul daemon --dir=DIR '--state=postgresql://haul@/{DATABASE}?host=FOLDER&port=PORT' "
                              f"--listen=127.0.0.1:PORT --secret=S -j 2 --node={nodes[0].name}")
        return figures
    finally:
        for node in nodes:
            stop_node(h, node)
        cluster.stop()


def run_sqlite(h, bench, origin: str) -> dict:
    """The same figures for one daemon on SQLite: fill (checked by killing it and counting the rows
    in its file), then, started again on that file, reads, idle and claims."""
    cfg = bench.cfg
    folder = bench.out / "fleet-sqlite"
    state = folder / "state.db"
    node = start_node(h, cfg, "sqlite", folder, str(state), fleet=False)
    try:
        h.log(f"fleet: one node on SQLite; adding {cfg.fleet_queued:,} paused")
        figures = fill(h, cfg, [node], origin, None)
        os.kill(node.pid, signal.SIGKILL)
        node.process.wait()
        database = sqlite3.connect(state)
        try:
            rows = database.execute("SELECT count(*) FROM downloads").fetchone()[0]
        finally:
            database.close()
        figures["durable_missing"] = max(0, figures["queued"] - rows)
        figures["durable_checked"] = "in the file after SIGKILL"
        started = time.monotonic()
        node = start_node(h, cfg, "sqlite", folder, str(state), fleet=False)
        figures["restart_s"] = time.monotonic() - started
        pids = usage_pids(bench, [node], None)
        figures["reads"] = {"sqlite": reads(h, cfg, node, figures["queued"], pids)}
        figures["tell_waiting_worst_ms"] = figures["reads"]["sqlite"]["tell_waiting_ms"]
        figures.update(idle(h, cfg, [node], pids))

        def count() -> tuple[int, int]:
            stat = node.rpc.call("aria2.getGlobalStat")[0]
            return int(stat["numStoppedTotal"]), int(stat["numActive"])

        figures["claims"] = claims(h, cfg, [node], count, None, pids)
        figures["ended_per_s"] = figures["claims"]["ended_per_s"]
        figures["command"] = "haul daemon --dir=DIR --state=FILE --listen=127.0.0.1:PORT --secret=S -j 2"
        h.log(f"fleet: SQLite: multicall max {figures['multicall_max_s']:.3f} s, tellWaiting "
              f"{figures['tell_waiting_worst_ms']:.1f} ms, idle {figures['idle_cpu_worst_pct']:.3f} %, "
              f"{figures['ended_per_s']:.0f} ended/s")
        return figures
    finally:
        stop_node(h, node)


def run_fleet_part(h, bench) -> None:
    """The fleet on PostgreSQL, then one node on SQLite; the figures go to bench.fleet."""
    root = bench.server.root
    (root / "tiny.bin").write_bytes(os.urandom(TINY_BYTES))   # nginx serves it for any /tiny/NAME
    origin = bench.server.url("http")
    global DOWNLOADS_ROOT
    DOWNLOADS_ROOT = downloads_root(bench.out)
    try:
        bench.fleet["postgresql"] = run_fleet(h, bench, origin)
        bench.fleet["sqlite"] = run_sqlite(h, bench, origin)
        bench.fleet["downloads_on"] = str(DOWNLOADS_ROOT.parent)
    finally:
        shutil.rmtree(DOWNLOADS_ROOT, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# The report


def per_node(values: dict, digits: str = ".1f") -> str:
    """'a 1.0, b 2.0, ...' (or the one value of a single node)."""
    if len(values) == 1:
        return format(next(iter(values.values())), digits)
    return ", ".join(f"{name} {value:{digits}}" for name, value in values.items())


def fleet_rows(fleet: dict, single: dict) -> list[tuple[str, str, str, str]]:
    """The table's rows: (measure, fleet, SQLite, target)."""
    def both(render):
        return tuple(render(f) if f else "-" for f in (fleet, single))

    def reads(f, key, p95=False):
        if p95:
            return per_node({n: f"{r[key]:.1f} ({r['tell_waiting_p95_ms']:.1f})" for n, r in f["reads"].items()}, "")
        return per_node({n: r[key] for n, r in f["reads"].items()})

    return [
        ("1,000 paused addUri in one system.multicall, median (max), s",
         *both(lambda f: f"{f['multicall_s']:.3f} ({f['multicall_max_s']:.3f})"), "max < 1"),
        ("acknowledged additions missing from another connection's count",
         *both(lambda f: f"{f['durable_missing']} of {f['queued']:,} ({f['durable_checked']})"), "0"),
        ("tellWaiting(0, 1000), every key, median (p95), ms", *both(lambda f: reads(f, "tell_waiting_ms", p95=True)),
         "<= 30 from any node"),
        ("tellWaiting of the last 1,000, median, ms", *both(lambda f: reads(f, "tell_waiting_last_ms")), ""),
        ("haul.tellMatching over the queue: one name, median, ms", *both(lambda f: reads(f, "filter_one_ms")), "<= 50"),
        ("haul.tellMatching over the queue: all of it counted, median, ms", *both(lambda f: reads(f, "filter_all_ms")), "<= 50"),
        ("downloads claimed and ended per second, -j {jobs} per node".format(jobs=(fleet or single)["claims"]["jobs"]),
         *both(lambda f: f"{f['ended_per_s']:.0f} ({f['claims']['ended_in_window']:,} in {f['claims']['window_s']:.1f} s)"),
         ">= 2,000 across the fleet"),
        ("unpauseAll / pauseAll of the queue, s",
         *both(lambda f: f"{f['claims']['unpause_all_s']:.3f} / {f['claims']['pause_all_s']:.3f}"), ""),
        ("a SIGKILLed node's downloads active elsewhere, s after the kill",
         f"{fleet['takeover_s']:.2f} ({fleet['moved']} downloads; the lease had {fleet['lease_left_s']:.1f} s left: "
         f"{fleet['after_lease_s']:.2f} s after it ended)"
         if fleet else "-", "-", f"<= {LEASE_S + 5:g}"),
        ("idle CPU with the queue paused, % of a core", *both(lambda f: per_node(f["idle_cpu_pct"], ".3f")), "< 0.2 each"),
        ("RSS with the queue, MiB", *both(lambda f: per_node(f["rss_mib"])), ""),
    ]


def usage_text(usage: dict, digits: str = ".0f") -> str:
    """'a 27, b 27, postgres 74, ...; the machine 182 (others 10)'."""
    cpu = ", ".join(f"{name} {value:{digits}}" for name, value in usage["cpu_pct"].items())
    return f"{cpu}, the machine {usage['machine_pct']:{digits}} (others {usage['others_pct']:{digits}})"


def compare(value: float, comparison: str, limit: float) -> bool:
    return {"<=": value <= limit, "<": value < limit, ">=": value >= limit}[comparison]


def target_lines(fleet: dict) -> list[str]:
    """The issue's targets on the fleet's figures, met or missed."""
    lines = []
    for key, label, comparison, limit in FLEET_TARGETS:
        value = fleet.get(key)
        if value is None:
            continue
        shown = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
        lines.append(f"- target: {label}: {shown} ({comparison} {limit:,g}): "
                     f"{'met' if compare(value, comparison, limit) else 'MISSED'}")
    return lines


def fleet_notes(fleet: dict) -> list[str]:
    """Where the fleet's time goes: PostgreSQL's share of the reads, the commits of the claims."""
    pg, claims = fleet["postgres"], fleet["claims"]
    timing = lambda e: f"{e['planning_ms']:.1f} + {e['execution_ms']:.1f} ms ({e['scan']})"
    answer = statistics.median(r["answer_kib"] for r in fleet["reads"].values())
    return ["- reads: `VACUUM ANALYZE haul_downloads` and `CHECKPOINT` ran (psql) before the reads were timed. "
            "PostgreSQL's own time (planning + execution, EXPLAIN ANALYZE without per-row timing, median of 5) "
            f"for a node's tellWaiting: the count of the queue {timing(pg['count'])}, the first page "
            f"{timing(pg['first_page'])}, the last page {timing(pg['last_page'])}; getGlobalStat's count by "
            f"status {timing(pg['statuses'])}. The rest is the node's (the rows into downloads, then about "
            f"{answer:.0f} KiB of JSON) and the HTTP",
            "- claims: ended by node: " + ", ".join(f"{n} {s} {c}" for n, s, c in claims["ended_by_node"])
            + f"; PostgreSQL commits per ended download {claims['commits_per_ended']:.2f}, WAL flushes "
            f"{claims['wal_syncs_per_ended']:.2f} (pg_stat_database, pg_stat_wal); the ended rows counted by psql "
            "twice a second, the first second left out",
            f"- takeover: node {fleet['killed']} killed {fleet['lease_left_s']:.1f} s before its lease ended; the others "
            f"claimed its downloads {fleet['after_lease_s']:.2f} s after. A node claims expired rows when its loop wakes "
            f"(on any fleet event, else a third of a lease after it last woke), so up to {LEASE_S / 3:.1f} s more may pass"]


def usage_lines(fleet: dict | None, single: dict | None) -> list[str]:
    """The CPU of each phase, and a warning when others took much of the machine."""
    lines = [f"- CPU, % of a core (the machine has {os.cpu_count()} cores; others: the machine's busy time less "
             "what the part's processes took, the kernel's threads for loopback and writeback included):"]
    busy = []
    for name, figures in (("fleet", fleet), ("SQLite", single)):
        if not figures:
            continue
        reads = figures["reads"]
        text = "; ".join((f"[{n}] " if len(reads) > 1 else "") + usage_text(r["usage"]) for n, r in reads.items())
        lines.append(f"  - {name}: reads {text}; idle {usage_text(figures['idle_usage'], '.3f')}; "
                     f"claims {usage_text(figures['claims']['usage'])}")
        phases = [*((f"reads ({n})", r["usage"]) for n, r in reads.items()), ("idle", figures["idle_usage"]),
                  ("claims", figures["claims"]["usage"])]
        busy += [f"{name} {phase}" for phase, usage in phases if usage["others_pct"] > OTHERS_NOTED_PCT]
    if busy:
        lines.append(f"- warning: others (other processes, the kernel's threads) took over {OTHERS_NOTED_PCT:g} % of a "
                     "core during: " + ", ".join(busy) + "; those figures are worse than a quiet machine's")
    return lines


def fleet_report(h, bench) -> list[str]:
    """The fleet part's section: the table (fleet beside SQLite), the targets, notes, commands."""
    cfg = bench.cfg
    fleet, single = bench.fleet.get("postgresql"), bench.fleet.get("sqlite")
    if not fleet and not single:
        return []
    nodes = fleet["nodes"] if fleet else cfg.fleet_nodes
    lines = ["", f"### fleet: {cfg.fleet_queued:,} queued, {nodes} nodes on one PostgreSQL queue beside one node on SQLite, "
             "through JSON-RPC", "",
             f"| measure | fleet: {nodes} nodes, PostgreSQL | one node, SQLite | target (fleet) |", "|---|---|---|---|"]
    lines += [f"| {' | '.join(row)} |" for row in fleet_rows(fleet, single)]
    lines.append("")
    if fleet:
        lines += target_lines(fleet) + fleet_notes(fleet)
    lines += usage_lines(fleet, single)
    if single:
        lines.append(f"- SQLite: durability checked by SIGKILL right after the last answer, then the rows counted in the "
                     f"file; started again on it in {single['restart_s']:.2f} s; its ended downloads counted by getGlobalStat "
                     "(numStoppedTotal)")
    commands = "; ".join(f"{name}: `{f['command']}`" for name, f in (("fleet node", fleet), ("SQLite", single)) if f)
    lines.append(f"- commands: {commands}; then -j {cfg.fleet_jobs} for the claims through changeGlobalOption "
                 "max-concurrent-downloads; the nodes' --dir in "
                 + ("tmpfs (/dev/shm)" if bench.fleet.get("downloads_on") == "/dev/shm" else "the work folder") + ", their state on disk")
    lines.append(f"- reproduce: `{h.reproduce(cfg, ['fleet'])}`")
    return lines
