#!/usr/bin/env python3
"""The daemon soak's driver (run it through Scripts/soak-daemon.sh, which builds the binaries).

Starts haul-test-origin with its faults on (drops, stalls, 503s, resets, files that change
between requests) and `haul daemon` on a state file in a scratch folder, each a process of its
own on loopback. Adds SOAK_DAEMON_COUNT downloads over the JSON-RPC (aria2.addUri, alone or in
system.multicall batches), no more than a window of them unfinished at once, and kills the daemon
with SIGKILL SOAK_DAEMON_KILLS times at seeded moments, restarting it on the same state file and
download root. An add whose answer was lost to a kill is looked for by its URL after the restart:
adopted when the daemon has it, added again when it has not.

Afterwards: every GID the RPC returned is listed exactly once, each URL once, and each download
is complete with the origin's bytes (checked against the origin's /sha256 of every version the
file may have had) or failed with errorCode and errorMessage; the download root holds only the
completed files (and the partial files of failed ones), nothing appears outside it; after an idle
period the daemon's open descriptors and RSS are compared with a fresh daemon started on the
same state file and measured after the same idle. Then, on that fresh daemon, the failure phase:
SOAK_DAEMON_FAILURES downloads that fail at once, one after another; every one must be listed as
an error, with RSS under 128 MiB and no descriptor more than the fresh daemon's after the idle.
Prints a summary; exits 1 on any problem.

Environment: SOAK_DAEMON_COUNT (1000), SOAK_DAEMON_SEED (2026), SOAK_DAEMON_KILLS (10),
SOAK_DAEMON_TIMEOUT (seconds, 1200), SOAK_DAEMON_JOBS (daemon's -j, 8), SOAK_DAEMON_IDLE
(seconds, 8), SOAK_DAEMON_MAX_SIZE (bytes of the largest file, 64 MiB), SOAK_DAEMON_FAILURES
(20000: the failure phase, downloads from a refusing port in a row with -j1, after the check),
SOAK_DAEMON_KEEP (1 keeps the scratch folder), HAUL_BIN and ORIGIN_BIN (the binaries).
"""

import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from soak_common import Origin as ChaosOrigin, duplicated_urls, end_processes, judge, plan_adds, plan_files, rpc_call, setting as read_setting, stray_files  # noqa: E402

KIB, MIB = 1024, 1024 * 1024
# Fault odds per GET of the origin (see HaulServer.Chaos); stalls cost the daemon its 30 s stall
# timeout each, so they are rarer than the others.
ODDS = {"drop": 0.05, "stall": 0.005, "unavailable": 0.05, "reset": 0.05, "change": 0.02}
DESCRIPTOR_SLACK = 2    # beyond a fresh daemon's; idle pooled connections to the origin may linger
FAILURE_PHASE_SECONDS = 300   # the most the failure phase waits for its downloads to end


def setting(name, default, kind=int):
    return read_setting("soak-daemon", name, default, kind)


def say(message):
    print(f"soak-daemon: {message}", flush=True)


class DaemonGone(Exception):
    """The daemon did not answer: killed, restarting, or not yet listening."""


class Daemon:
    """`haul daemon` processes on one state file and download root, one at a time."""

    def __init__(self, haul, scratch, jobs):
        self.haul, self.scratch, self.jobs = haul, scratch, jobs
        self.root = os.path.join(scratch, "downloads")
        self.state = os.path.join(scratch, "state", "daemon.db")
        self.cwd = os.path.join(scratch, "cwd")      # the daemon's working folder: must stay empty
        os.makedirs(self.cwd)
        os.makedirs(os.path.dirname(self.state))
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.process = None
        self.starts = 0
        self.url = self.secret = None
        self.failure = None       # why a restart after a kill failed
        self.started_at = 0.0

    def start(self):
        self.starts += 1
        log = open(os.path.join(self.scratch, f"daemon-{self.starts}.log"), "w")
        process = subprocess.Popen(
            [self.haul, "daemon", f"--dir={self.root}", f"--state={self.state}", "--listen=127.0.0.1:0",
             f"-j{self.jobs}"], cwd=self.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.time() + 30
        while time.time() < deadline:
            match = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.log(self.starts))
            if match:
                with open(os.path.join(os.path.dirname(self.state), "daemon.secret")) as file:
                    secret = file.read().strip()
                with self.lock:
                    self.process, self.secret, self.started_at = process, secret, time.time()
                    self.url = f"http://127.0.0.1:{match.group(1)}/jsonrpc"
                self.ready.set()
                return
            if process.poll() is not None:
                break
            time.sleep(0.02)
        raise SystemExit(f"soak-daemon: FAIL: daemon start {self.starts} did not listen:\n{self.log(self.starts)}")

    def log(self, start):
        with open(os.path.join(self.scratch, f"daemon-{start}.log")) as file:
            return file.read()

    def kill(self):
        """SIGKILL, then a new daemon on the same state."""
        self.ready.clear()
        with self.lock:
            process = self.process
        process.send_signal(signal.SIGKILL)
        process.wait()
        try:
            self.start()
        except SystemExit as failure:
            self.failure = str(failure)

    def stop(self):
        """SIGTERM; the daemon must exit 0."""
        self.ready.clear()
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(timeout=60)
        if status != 0:
            raise SystemExit(f"soak-daemon: FAIL: the daemon exited {status} on SIGTERM")

    def call(self, method, *params, timeout=120):
        """One JSON-RPC call; returns (result, error). Raises DaemonGone when no answer came."""
        if self.failure:
            raise SystemExit(self.failure)
        if not self.ready.wait(timeout=60):
            raise DaemonGone()
        with self.lock:
            url, secret = self.url, self.secret
        try:
            return rpc_call(url, secret, method, params, timeout)
        except (OSError, ValueError) as error:
            if isinstance(error, TimeoutError) and self.ready.is_set():
                raise SystemExit(f"soak-daemon: FAIL: {method} not answered in {timeout} s")
            raise DaemonGone() from error

    def measure(self):
        """Open descriptors and RSS (KiB) of the running daemon."""
        pid = self.process.pid
        descriptors = len(os.listdir(f"/proc/{pid}/fd"))
        with open(f"/proc/{pid}/status") as file:
            fields = dict(line.split(":", 1) for line in file if ":" in line)
        targets = []
        for number in os.listdir(f"/proc/{pid}/fd"):
            try:
                targets.append(os.readlink(f"/proc/{pid}/fd/{number}"))
            except OSError:
                pass
        return {"fds": descriptors, "rss": int(fields["VmRSS"].split()[0]), "threads": int(fields["Threads"]),
                "targets": targets}


class Soak:
    def __init__(self, settings, daemon, origin, files):
        self.settings, self.daemon, self.origin, self.files = settings, daemon, origin, files
        self.rng = random.Random(settings["seed"] + 1)
        self.calls = plan_adds(len(files), self.rng, 40)
        self.gids = {}            # file index -> GID (acknowledged, or adopted after a kill)
        self.acknowledged = set()  # GIDs an add's answer returned
        self.adopted = 0
        self.readded = 0
        self.uncertain = []       # file indexes whose add lost its answer to a kill
        self.single_calls = self.batched_calls = 0
        self.problems = []
        # Downloads added but not finished, at most: the adds go on through most of the run.
        self.window = max(20, len(files) // 5)
        # Kills happen when the daemon lists this many bytes done, after a seeded delay of up to
        # half a second, and no sooner than a second after the previous restart.
        total, kills = sum(size for _, size, _ in files), settings["kills"]
        self.kill_points = sorted(self.rng.uniform(0.02, 0.9) * total for _ in range(kills))
        self.kills_done = self.late_kills = 0
        self.kill_armed = False   # the next add call starts the killer
        self.killer = None

    def url(self, index):
        name, size, seed = self.files[index]
        return f"{self.origin.url}/bytes/{size}/{name}?seed={seed}"

    def add(self, indexes):
        """One add call; records the GIDs answered, or the indexes as uncertain."""
        if len(indexes) == 1:
            calls = None
            self.single_calls += 1
        else:
            calls = [{"methodName": "aria2.addUri", "params": [[self.url(index)]]} for index in indexes]
            self.batched_calls += 1
        if self.kill_armed:
            self.kill_armed = False
            self.start_killer(self.rng.uniform(0, 0.01), f"sending {len(indexes)} add(s)")
        try:
            if calls is None:
                result, error = self.daemon.call("aria2.addUri", [self.url(indexes[0])])
                results = [[result] if error is None else error]
            else:
                results, error = self.daemon.call("system.multicall", calls)
        except DaemonGone:
            self.uncertain.extend(indexes)
            return
        if error is not None or len(results) != len(indexes):
            raise SystemExit(f"soak-daemon: FAIL: add refused: {error or results}")
        for index, item in zip(indexes, results):
            if not isinstance(item, list):
                raise SystemExit(f"soak-daemon: FAIL: addUri refused: {item}")
            self.gids[index] = item[0]
            self.acknowledged.add(item[0])

    def listing(self):
        """Every download the daemon lists, as tellStatus dictionaries (raises DaemonGone)."""
        keys = ["gid", "status", "errorCode", "errorMessage", "files", "totalLength", "completedLength"]
        calls = [{"methodName": "aria2.tellActive", "params": [keys]},
                 {"methodName": "aria2.tellWaiting", "params": [0, 1_000_000, keys]},
                 {"methodName": "aria2.tellStopped", "params": [0, 1_000_000, keys]}]
        results, error = self.daemon.call("system.multicall", calls)
        if error is not None or any(not isinstance(item, list) for item in results):
            raise SystemExit(f"soak-daemon: FAIL: listing refused: {error or results}")
        return [status for item in results for status in item[0]]

    def reconcile(self, listing):
        """Adopts the uncertain adds the daemon has; queues the others to be added again."""
        by_url = {}
        for status in listing:
            for file in status.get("files", []):
                for uri in file.get("uris", []):
                    by_url.setdefault(uri["uri"], []).append(status["gid"])
        missing = []
        for index in self.uncertain:
            gids = by_url.get(self.url(index), [])
            if gids:
                self.gids[index] = gids[0]
                self.adopted += 1
            else:
                missing.append(index)
        self.uncertain = []
        self.readded += len(missing)
        self.calls[0:0] = [[index] for index in missing]

    def maybe_kill(self, finished, done_bytes):
        """Arms the next kill once its point is passed: half of them (seeded) land within 10 ms of
        the next add call being sent, the others up to half a second from now."""
        if self.killer is not None and not self.killer.is_alive():
            self.killer = None
        if self.killer is not None or self.kill_armed:
            if self.kill_armed and not self.calls:
                self.kill_armed = False
                self.start_killer(self.rng.uniform(0, 0.5), "now")
            return
        if not self.kill_points or done_bytes < self.kill_points[0] or time.time() - self.daemon.started_at < 1:
            return
        self.kill_points.pop(0)
        say(f"kill {self.kills_done + 1}: {finished} finished, {len(self.gids)} added, {done_bytes / MIB:.0f} MiB done")
        if self.calls and self.rng.random() < 0.5:
            self.kill_armed = True
        else:
            self.start_killer(self.rng.uniform(0, 0.5), "now")

    def start_killer(self, delay, when):
        self.killer = threading.Timer(delay, self.daemon.kill)
        self.killer.start()
        self.kills_done += 1
        say(f"  SIGKILL {delay * 1000:.0f} ms after {when}")

    def run(self, deadline):
        """Adds everything, kills and restarts, and waits until every download has finished."""
        finished, last_poll, listing = 0, 0.0, []
        while True:
            if time.time() > deadline:
                raise SystemExit(f"soak-daemon: FAIL: not done after {self.settings['timeout']} s "
                                 f"({finished} of {len(self.files)} finished)")
            try:
                if self.uncertain and self.daemon.ready.is_set() and (self.killer is None or not self.killer.is_alive()):
                    self.reconcile(self.listing())
                if self.calls and len(self.gids) - finished < self.window and not self.uncertain:
                    self.add(self.calls.pop(0))
                    time.sleep(self.rng.uniform(0, 0.02))
                    continue
                if time.time() - last_poll < 0.5:
                    time.sleep(0.1)
                    continue
                listing, last_poll = self.listing(), time.time()
            except DaemonGone:
                time.sleep(0.05)
                continue
            finished = sum(1 for status in listing if status["status"] in ("complete", "error"))
            done_bytes = sum(int(status.get("completedLength", "0")) for status in listing)
            if finished == len(self.files) and self.kill_points and self.kill_points[0] > done_bytes:
                self.late_kills += 1     # failures left fewer bytes than planned: kill anyway
                self.kill_points[0] = done_bytes
            self.maybe_kill(finished, done_bytes)
            if (not self.calls and not self.uncertain and finished == len(self.files) and not self.kill_points
                    and not self.kill_armed and (self.killer is None or not self.killer.is_alive())):
                return


def check(soak, listing, scratch):
    """The figures of the final state; problems go to soak.problems."""
    daemon, files, problems = soak.daemon, soak.files, soak.problems
    figures = {"complete": 0, "failed": {}, "lost": 0, "duplicated": 0, "corrupt": 0, "strays": 0, "versions": 0}
    listed = {}
    by_url = {}
    for status in listing:
        listed.setdefault(status["gid"], []).append(status)
        uri = status["files"][0]["uris"][0]["uri"] if status.get("files") and status["files"][0].get("uris") else ""
        by_url.setdefault(uri, []).append(status["gid"])
    index_of = {gid: index for index, gid in soak.gids.items()}
    for gid in soak.acknowledged | set(soak.gids.values()):
        if gid not in listed:
            figures["lost"] += 1
            problems.append(f"lost: {gid} is not listed")
    for gid, entries in listed.items():
        if len(entries) > 1 or gid not in index_of:
            figures["duplicated"] += 1
            problems.append(f"duplicated: {gid} listed {len(entries)} time(s), {'' if gid in index_of else 'never added'}")
    duplicated_urls(by_url, figures, problems)
    expected_files = set()
    for index, gid in sorted(soak.gids.items()):
        name, size, seed = files[index]
        status = listed.get(gid, [None])[0]
        if status is None:
            continue
        judge(gid, files[index], status, daemon.root, soak.origin, figures, problems, expected_files)
    stray_files(daemon.root, expected_files, figures, problems, "the download root")
    outside = sorted(os.listdir(daemon.cwd)) + [name for name in os.listdir(os.path.dirname(daemon.state))
                                               if name not in ("daemon.db", "daemon.db-wal", "daemon.secret")]
    outside += [name for name in os.listdir(scratch)
                if name not in ("downloads", "state", "cwd") and not re.fullmatch(r"daemon-\d+\.log", name)]
    for name in outside:
        figures["strays"] += 1
        problems.append(f"file outside the download root: {name}")
    return figures


def failure_phase(daemon, count, idle, fresh):
    """COUNT downloads from a port nothing listens on, added in multicalls of 1,000 to the daemon
    with one slot: each fails at once and starts the next. The daemon must stay up, list every one
    as an error with its code (paging tellStopped), stay under 128 MiB of RSS, and after the idle
    keep no more descriptors than FRESH. Returns (figures, problems)."""
    problems = []
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"   # closed again: connections are refused
    result, error = daemon.call("aria2.changeGlobalOption", {"max-concurrent-downloads": "1"})
    if error is not None:
        return {}, [f"changeGlobalOption refused: {error}"]
    before, _ = daemon.call("aria2.getGlobalStat")
    started = time.time()
    for batch in range(0, count, 1000):
        calls = [{"methodName": "aria2.addUri", "params": [[f"{dead}/fail-{index}.bin"]]}
                 for index in range(batch, min(count, batch + 1000))]
        results, error = daemon.call("system.multicall", calls)
        if error is not None or any(not isinstance(item, list) for item in results):
            return {}, [f"failure phase: add refused: {error or results[:3]}"]
    target = int(before["numStopped"]) + count
    deadline = time.time() + FAILURE_PHASE_SECONDS
    while True:
        stat, _ = daemon.call("aria2.getGlobalStat")
        if int(stat["numStopped"]) >= target and int(stat["numActive"]) == 0 and int(stat["numWaiting"]) == 0:
            break
        if daemon.process.poll() is not None:
            return {}, [f"failure phase: the daemon died ({daemon.process.returncode}) with {stat['numStopped']} ended"]
        if time.time() > deadline:
            return {}, [f"failure phase: not every download ended in {FAILURE_PHASE_SECONDS} s: {stat}"]
        time.sleep(0.1)
    ended = time.time() - started
    failed, offset = 0, 0
    while True:
        page, error = daemon.call("aria2.tellStopped", offset, 1000, ["status", "errorCode", "files"])
        if error is not None or not page:
            break
        offset += len(page)
        failed += sum(1 for status in page if status["status"] == "error" and status.get("errorCode", "0") != "0"
                      and "/fail-" in status["files"][0]["uris"][0]["uri"])
    if failed != count:
        problems.append(f"failure phase: {failed} of {count} listed as errors with a code")
    after = idle_measure(daemon, idle)
    if after["rss"] > 128 * 1024:
        problems.append(f"failure phase: RSS {after['rss'] / 1024:.1f} MiB after {count} failures (limit 128)")
    if after["fds"] > fresh["fds"] + DESCRIPTOR_SLACK:
        problems.append(f"failure phase: {after['fds']} descriptors open after the idle, {fresh['fds']} in a fresh daemon")
    return {"count": count, "seconds": ended, "listed": offset, "failed": failed, **after}, problems


def idle_measure(daemon, idle):
    time.sleep(idle)
    return daemon.measure()


def main():
    settings = {"count": setting("SOAK_DAEMON_COUNT", 1000), "seed": setting("SOAK_DAEMON_SEED", 2026),
                "kills": setting("SOAK_DAEMON_KILLS", 10), "timeout": setting("SOAK_DAEMON_TIMEOUT", 1200.0, float),
                "jobs": setting("SOAK_DAEMON_JOBS", 8), "idle": setting("SOAK_DAEMON_IDLE", 8.0, float),
                "largest": setting("SOAK_DAEMON_MAX_SIZE", 64 * MIB),
                "failures": setting("SOAK_DAEMON_FAILURES", 20000)}
    haul, origin_binary = os.environ["HAUL_BIN"], os.environ["ORIGIN_BIN"]
    started = time.time()
    scratch = tempfile.mkdtemp(prefix="haul-soak-daemon-")
    files = plan_files(settings["count"], settings["seed"], settings["largest"])
    origin = ChaosOrigin("soak-daemon", origin_binary, settings["seed"], ODDS)
    daemon = Daemon(haul, scratch, settings["jobs"])
    passed = False
    try:
        say(f"{len(files)} downloads, {sum(size for _, size, _ in files) / MIB:.1f} MiB in all "
            f"({min(size for _, size, _ in files)} B .. {max(size for _, size, _ in files) / MIB:.1f} MiB), "
            f"{settings['kills']} kills, seed {settings['seed']}, -j{settings['jobs']}, origin faults {ODDS}")
        daemon.start()
        empty = idle_measure(daemon, settings["idle"])
        soak = Soak(settings, daemon, origin, files)
        soak.run(started + settings["timeout"])
        listing = soak.listing()
        ran = time.time() - started
        after = idle_measure(daemon, settings["idle"])
        figures = check(soak, listing, scratch)
        daemon.stop()
        daemon.start()
        fresh = idle_measure(daemon, settings["idle"])
        if soak.listing() != listing:
            soak.problems.append("a fresh daemon on the same state lists something else")
        if after["fds"] > fresh["fds"] + DESCRIPTOR_SLACK:
            soak.problems.append(f"descriptors: {after['fds']} open after the idle, {fresh['fds']} in a fresh daemon")
        if after["rss"] > 1.5 * fresh["rss"]:
            soak.problems.append(f"RSS: {after['rss']} KiB after the idle, over 1.5 times a fresh daemon's {fresh['rss']} KiB")
        failures, problems = failure_phase(daemon, settings["failures"], settings["idle"], fresh)
        soak.problems += problems
        daemon.stop()
        if any(daemon.secret in daemon.log(start) for start in range(1, daemon.starts + 1)):
            soak.problems.append("the secret appears in a daemon log")

        failed = ", ".join(f"code {code}: {n}" for code, n in sorted(figures["failed"].items())) or "none"
        say(f"adds: {len(soak.acknowledged)} acknowledged ({soak.single_calls} addUri calls, {soak.batched_calls} "
            f"multicalls), {soak.adopted} adopted after a kill lost the answer, {soak.readded} added again")
        say(f"kills: {soak.kills_done} SIGKILL ({soak.late_kills} after every download had finished), "
            f"{daemon.starts} daemon starts")
        say(f"complete and byte-identical: {figures['complete']} ({figures['versions']} of them a changed version)")
        say(f"failed with a typed error: {sum(figures['failed'].values())} ({failed})")
        say(f"lost: {figures['lost']}, duplicated: {figures['duplicated']}, corrupt: {figures['corrupt']}, "
            f"stray files: {figures['strays']}")
        say(f"daemon idle, empty list: fds {empty['fds']}, RSS {empty['rss'] / 1024:.1f} MiB, threads {empty['threads']}")
        say(f"daemon idle after the soak: fds {after['fds']}, RSS {after['rss'] / 1024:.1f} MiB, threads {after['threads']}")
        say(f"fresh daemon, same list, idle: fds {fresh['fds']}, RSS {fresh['rss'] / 1024:.1f} MiB, threads {fresh['threads']}")
        extra = sorted(set(after["targets"]) - set(fresh["targets"])) if after["fds"] != fresh["fds"] else []
        if extra:
            say(f"descriptors open after the soak but not in the fresh daemon: {', '.join(extra)}")
        if failures:
            say(f"failures in a row: {failures['count']} added to a refusing port with -j1, all ended in "
                f"{failures['seconds']:.1f} s, {failures['failed']} of {failures['listed']} listed as errors; "
                f"after the idle: fds {failures['fds']}, RSS {failures['rss'] / 1024:.1f} MiB, threads {failures['threads']}")
        say(f"took {ran:.1f} s to finish, {time.time() - started:.1f} s in all")
        for problem in soak.problems[:30]:
            say(f"problem: {problem}")
        passed = not soak.problems
        say("PASS" if passed else f"FAIL ({len(soak.problems)} problems)")
    finally:
        end_processes([origin.process, daemon.process])
        if passed and os.environ.get("SOAK_DAEMON_KEEP") != "1":
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            say(f"scratch folder kept: {scratch}")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
