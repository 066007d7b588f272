#!/usr/bin/env python3
"""The fleet soak's driver (run it through Scripts/soak-fleet.sh, which builds the binaries and
starts the private PostgreSQL cluster it names in SOAK_FLEET_PG).

Starts haul-test-origin with its faults on (drops, stalls, 503s, resets, files that change
between requests) behind a logging relay of this script's own (the "origin's log": for every
request, which daemon process sent it, when it started and when its answer ended), and three
`haul daemon` nodes (--node=a, b, c) on one PostgreSQL queue, sharing one download folder. Adds
SOAK_FLEET_COUNT downloads through random nodes over the JSON-RPC (aria2.addUri alone or in
system.multicall batches), spread over SOAK_FLEET_ADD_SECONDS, no more than a window of them
unfinished at once. At seeded moments of that period it kills a node holding claims with SIGKILL
SOAK_FLEET_KILLS times (restarting it with the same --node name after a short seeded pause), and
restarts PostgreSQL SOAK_FLEET_PG_RESTARTS times (stopped for a seeded 1.5 to 3.5 s), one event
at a time: the next waits until every claim of the killed node was taken over, or a lease after
PostgreSQL is back. While it is down, adds go on (each must answer an error) and tellStatus of
listed downloads is asked. An add whose answer was lost to a kill, or that answered an error, is
looked up by its URL in the fleet's list once PostgreSQL is back: adopted when the fleet has it
(an add that answered an error yet was done is printed), added again when it has not.

Afterwards (the fleet's list over the RPC, the table with psql, the folder, the logs):
- every GID an add returned is listed exactly once, each URL once, one row per download;
- each download is complete with the origin's bytes (against the origin's /sha256 of every
  version the file may have had), its row naming the node that ran it, or failed with a typed
  errorCode and errorMessage (not 11, a file another process held);
- the shared folder holds only the completed files (and the partial files of failed ones), and
  the nodes' working folder stays empty;
- no download was run by two daemon processes at the same time: no two processes had a request
  of the same file open at the origin at once (the relay's log), nor a run of it between its
  `started` and its end (each node's --json log, stamped when read; a killed node's runs end at
  its kill); every fence is 1 or more, above 1 only for downloads a killed node held (each
  of which must have a higher fence than when its node died) or claimed as PostgreSQL stopped
  (fetched first within a lease of the restart, by one process), and never below the number
  of processes the origin saw fetch the file; a download completed more than once only when the
  earlier completions were on a node killed before it wrote the result;
- every claim of a killed node taken over within TAKEOVER_LIMIT seconds; adds answer an error
  only while PostgreSQL is down or just back; the nodes stop with exit 0 on SIGTERM; the secret
  appears in no log.
Prints a summary with figures (adds, kills, takeovers and the time each took, the outage and what
the RPC answered during it, the origin's requests per node, the time) and exits 1 on any problem.

Environment: SOAK_FLEET_COUNT (1000), SOAK_FLEET_SEED (2026), SOAK_FLEET_KILLS (5),
SOAK_FLEET_PG_RESTARTS (1), SOAK_FLEET_ADD_SECONDS (240: the adds are spread over this period and
the events happen at seeded moments of it, so the fleet has work through each), SOAK_FLEET_TIMEOUT
(seconds, 1500), SOAK_FLEET_JOBS (each node's -j, 4), SOAK_FLEET_MAX_SIZE (bytes of the largest
file, 32 MiB), SOAK_FLEET_RATE (the origin's per-connection cap in bytes/s, 256 KiB/s, so that
large files are still running when a node dies; 0 for none), SOAK_FLEET_KEEP (1 keeps the
scratch folder), SOAK_FLEET_PG (FOLDER:PORT of the cluster, as Scripts/postgres-cluster.sh
prints it), SOAK_FLEET_PG_BIN (PostgreSQL's programs), SOAK_FLEET_PIDS (a file this script lists
its processes in, for the shell script to end them if this one is killed), HAUL_BIN, ORIGIN_BIN.
"""

import json
import os
import random
import re
import select
import shutil
import signal
import socket
import struct
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
# Fault odds per GET of the origin (see HaulServer.Chaos), modest: a stall costs a node its 30 s
# stall timeout, so they are rare.
ODDS = {"drop": 0.03, "stall": 0.002, "unavailable": 0.03, "reset": 0.03, "change": 0.01}
NODES = ("a", "b", "c")
LEASE = 10.0              # the fleet's lease (FleetNode.Configuration.lease)
TAKEOVER_LIMIT = 60.0     # the most a killed node's claim may wait for another node
AFTER_OUTAGE = LEASE + 2  # how long after PostgreSQL is back the next event waits, and errors are excused
KILL_WAIT = 20.0          # how long past its moment a kill waits for a node that holds claims
GID_MASK = (1 << 64) - 1
LOCKED = "11"             # errorCode of a file another download (another node, on the shared folder) writes


def setting(name, default, kind=int):
    return read_setting("soak-fleet", name, default, kind)


def say(message):
    print(f"soak-fleet: {message}", flush=True)


def hex_gid(value):
    """A GID as the RPC writes it, from the table's signed bigint."""
    return format(int(value) & GID_MASK, "016x")


def signed_gid(gid):
    """The table's signed bigint of a GID the RPC wrote."""
    value = int(gid, 16)
    return value - (1 << 64) if value >> 63 else value


class Failure(Exception):
    """A problem that ends the run at once."""


class NodeGone(Exception):
    """The node did not answer: killed, restarting, or not yet listening."""


class DatabaseDown(Exception):
    """psql could not run its query."""


# MARK: - PostgreSQL


class Database:
    """The cluster: psql queries, and the restart (stop, a pause, start) of the server."""

    def __init__(self, folder, port, programs):
        self.folder, self.port, self.programs = folder, port, programs
        self.url = f"postgresql://haul@/postgres?host={folder}&port={port}"
        self.down = False         # from just before the stop until the server is back
        self.stopped = False      # from the stop's end until the start
        self.outages = []         # (stopped at, back at)
        self.stop_seconds = []    # how long each stop took

    def query(self, sql):
        """Rows of a query, as lists of text (tab-separated fields, no NULL distinction)."""
        try:
            done = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
                                   "-d", self.url, "-c", sql], capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired as error:
            raise DatabaseDown("psql took over 30 s") from error
        if done.returncode != 0:
            raise DatabaseDown(done.stderr.strip())
        return [line.split("\t") for line in done.stdout.splitlines() if line]

    def query_when_up(self, sql, limit=60):
        """The query, retried while the server is down (up to LIMIT seconds)."""
        deadline = time.time() + limit
        while True:
            try:
                return self.query(sql)
            except DatabaseDown:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)

    def pg_ctl(self, *arguments):
        command = [os.path.join(self.programs, "pg_ctl"), "-D", os.path.join(self.folder, "data")] + list(arguments)
        if os.getuid() == 0:
            command = ["runuser", "-u", "postgres", "--"] + command
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise Failure(f"pg_ctl {arguments[-1]} failed: {done.stderr.strip()}")

    def restart(self, downtime):
        """Stops the server (fast: connections cut), waits DOWNTIME seconds, starts it again on
        the same socket folder and port (as Scripts/postgres-cluster.sh does)."""
        self.down = True
        stopped = time.time()
        self.pg_ctl("-m", "fast", "-w", "stop")
        self.stop_seconds.append(time.time() - stopped)
        self.stopped = True
        time.sleep(downtime)
        self.stopped = False
        self.pg_ctl("-l", os.path.join(self.folder, "log"), "-w", "-o",
                    f"-k {self.folder} -p {self.port} -c listen_addresses=127.0.0.1 -c max_connections=300", "start")
        self.outages.append((stopped, time.time()))
        self.down = False

    def excused(self, moment):
        """Whether an error at MOMENT may come from an outage (during it or just after)."""
        return self.down or any(start - 1 <= moment <= back + AFTER_OUTAGE for start, back in self.outages)


# MARK: - The origin and its log


def socket_owner(peer_port, server_port, candidates):
    """The process (of CANDIDATES, pid -> label) that holds the loopback connection from
    PEER_PORT to SERVER_PORT: its socket's inode from /proc/net/tcp, then the process's fds."""
    pattern = f"0100007F:{peer_port:04X} 0100007F:{server_port:04X}"
    try:
        with open("/proc/net/tcp") as file:
            table = file.read()
    except OSError:
        return None
    at = table.find(pattern)
    if at < 0:
        return None
    fields = table[at:table.find("\n", at)].split()
    if len(fields) < 9 or fields[8] == "0":      # local, remote, state, queues, timer, retransmits, uid, timeout, inode
        return None
    target = f"socket:[{fields[8]}]"
    for pid, label in candidates.items():
        try:
            for descriptor in os.listdir(f"/proc/{pid}/fd"):
                try:
                    if os.readlink(f"/proc/{pid}/fd/{descriptor}") == target:
                        return pid, label
                except OSError:
                    pass
        except OSError:
            pass
    return None


class OriginLog:
    """A relay in front of the origin on its own loopback port that logs every request: the
    daemon process that sent it (found from the connection's socket), the target, when its head
    arrived and when its answer ended (complete, cut by the origin, or the client gone). Faults
    pass through: the origin's reset is a reset to the client, its close a close, its silence
    a silence."""

    def __init__(self, origin_port, candidates):
        self.origin_port = origin_port
        self.candidates = candidates        # pid -> label, kept up to date by the fleet
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(1024)
        self.port = self.server.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.lock = threading.Lock()
        self.records = []                   # [target, pid, label, method, start, end, status, bytes, outcome]
        self.connections = 0
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                client, peer = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(client, peer[1]), daemon=True).start()

    def serve(self, client, peer_port):
        owner = socket_owner(peer_port, self.port, dict(self.candidates))
        with self.lock:
            self.connections += 1
        pid, label = owner or (0, "?")
        try:
            upstream = socket.create_connection(("127.0.0.1", self.origin_port), timeout=10)
            upstream.settimeout(None)
        except OSError:
            client.close()
            return
        pending = b""
        try:
            while True:
                head, pending = self.request_head(client, pending)
                if head is None:
                    return
                first = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
                record = [first[1] if len(first) > 1 else "", pid, label, first[0], time.time(), None, 0, 0, "open"]
                with self.lock:
                    self.records.append(record)
                try:
                    upstream.sendall(head)
                    outcome, pending = self.relay(client, upstream, record, pending)
                except OSError:
                    outcome = "client gone"
                record[5], record[8] = time.time(), outcome
                if outcome != "done":
                    return
        finally:
            upstream.close()
            client.close()

    @staticmethod
    def request_head(client, pending):
        """The next request's head (no body: GET and HEAD), or None when the client closed."""
        while b"\r\n\r\n" not in pending:
            try:
                data = client.recv(65536)
            except OSError:
                return None, b""
            if not data:
                return None, b""
            pending += data
        end = pending.index(b"\r\n\r\n") + 4
        return pending[:end], pending[end:]

    def relay(self, client, upstream, record, pending):
        """Relays one answer; returns (outcome, bytes of the client's next request so far):
        `done` (the connection may serve another), `closed` (the answer was complete and the
        origin closed), `cut` (the origin closed early), `reset`, or `client gone`."""
        buffer, head_end, remaining = b"", None, None
        closes = False
        while True:
            readable, _, _ = select.select([client, upstream], [], [])
            if client in readable:
                try:
                    data = client.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    return "client gone", b""
                pending += data                # a pipelined request: kept for the next turn
            if upstream not in readable:
                continue
            try:
                data = upstream.recv(262144)
            except ConnectionResetError:
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return "reset", b""
            if not data:       # the origin closed: the end of a body without a length, else a cut
                if buffer:
                    client.sendall(buffer)
                return ("closed" if head_end is not None and remaining is None else "cut"), b""
            if head_end is None:
                buffer += data
                if b"\r\n\r\n" not in buffer:
                    continue
                head_end = buffer.index(b"\r\n\r\n") + 4
                head = buffer[:head_end].decode("latin-1").lower()
                status = head.split(" ", 2)[1] if " " in head else "0"
                record[6] = int(status) if status.isdigit() else 0
                closes = "\r\nconnection: close" in head
                length = re.search(r"\r\ncontent-length:\s*(\d+)", head)
                if record[3] == "HEAD" or record[6] in (204, 304):
                    remaining = 0
                elif length:
                    remaining = int(length.group(1))
                body = len(buffer) - head_end
                if remaining is not None:
                    remaining -= body
                record[7] += body
                client.sendall(buffer)
                buffer = b""
            else:
                record[7] += len(data)
                if remaining is not None:
                    remaining -= len(data)
                client.sendall(data)
            if remaining is not None and remaining <= 0:
                return ("closed" if closes else "done"), pending

    def snapshot(self):
        with self.lock:
            return [list(record) for record in self.records]

    def close(self):
        self.server.close()


# MARK: - The nodes


class Incarnation:
    """One process of a node: its log lines, stamped as they were read."""

    def __init__(self, node, number, process, log_path):
        self.node, self.number, self.process, self.log_path = node, number, process, log_path
        self.label = f"{node}{number}"
        self.started = time.time()
        self.ended = None          # when it was killed or stopped, or its output ended
        self.killed = False
        self.events = []           # (time, kind, gid)
        self.port = None
        self.listening = threading.Event()
        self.output_done = threading.Event()


class Node:
    """One name of the fleet: its processes, one at a time."""

    def __init__(self, name, fleet):
        self.name, self.fleet = name, fleet
        self.incarnations = []
        self.lock = threading.Lock()
        self.current = None        # the incarnation that answers, or None

    def start(self):
        fleet = self.fleet
        number = len(self.incarnations) + 1
        log_path = os.path.join(fleet.scratch, f"node-{self.name}-{number}.log")
        errors = open(os.path.join(fleet.scratch, f"node-{self.name}-{number}.err"), "w")
        process = subprocess.Popen(
            [fleet.haul, "daemon", f"--dir={fleet.root}", f"--state={fleet.database.url}", f"--node={self.name}",
             "--listen=127.0.0.1:0", f"--secret-file={fleet.secret_file}", f"-j{fleet.jobs}", "--json"],
            cwd=fleet.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors)
        errors.close()
        incarnation = Incarnation(self.name, number, process, log_path)
        self.incarnations.append(incarnation)
        fleet.remember(process.pid, incarnation.label)
        threading.Thread(target=self.read, args=(incarnation,), daemon=True).start()
        if not incarnation.listening.wait(timeout=60) or incarnation.port is None:
            raise Failure(f"node {self.name} (start {number}) did not listen:\n{self.log_text(incarnation)}")
        with self.lock:
            self.current = incarnation
        return incarnation

    def read(self, incarnation):
        """Reads the node's --json log, stamping each line with the time it was read."""
        with open(incarnation.log_path, "w") as log:
            for raw in incarnation.process.stdout:
                now = time.time()
                line = raw.decode("utf-8", "replace").rstrip("\n")
                log.write(f"{now:.3f} {line}\n")
                log.flush()
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("event") == "daemon":
                    match = re.search(r"listening on 127\.0\.0\.1:(\d+)", entry.get("message", ""))
                    if match:
                        incarnation.port = int(match.group(1))
                        incarnation.listening.set()
                elif "gid" in entry:
                    incarnation.events.append((now, entry["event"], entry["gid"]))
        if incarnation.ended is None:
            incarnation.ended = time.time()
        incarnation.listening.set()
        incarnation.output_done.set()

    def log_text(self, incarnation):
        parts = []
        for path in (incarnation.log_path, incarnation.log_path[:-4] + ".err"):
            try:
                with open(path) as file:
                    parts.append(file.read()[-4000:])
            except OSError:
                pass
        return "\n".join(parts)

    def kill(self):
        """SIGKILL; returns the killed incarnation (its runs end now)."""
        with self.lock:
            incarnation, self.current = self.current, None
        incarnation.killed = True
        incarnation.ended = time.time()
        incarnation.process.send_signal(signal.SIGKILL)
        incarnation.process.wait()
        return incarnation

    def stop(self):
        """SIGTERM; returns the exit status."""
        with self.lock:
            incarnation, self.current = self.current, None
        incarnation.process.send_signal(signal.SIGTERM)
        try:
            status = incarnation.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            incarnation.process.kill()
            status = incarnation.process.wait()
        incarnation.ended = time.time()
        incarnation.output_done.wait(timeout=10)
        return status


class Fleet:
    """The three nodes, the RPC to them, and the processes to end at the close."""

    def __init__(self, haul, scratch, database, jobs, pid_file):
        self.haul, self.scratch, self.database, self.jobs = haul, scratch, database, jobs
        self.root = os.path.join(scratch, "downloads")
        self.cwd = os.path.join(scratch, "cwd")       # the nodes' working folder: must stay empty
        os.makedirs(self.root)
        os.makedirs(self.cwd)
        self.secret = "".join(random.SystemRandom().choice("0123456789abcdef") for _ in range(32))
        self.secret_file = os.path.join(scratch, "secret")
        descriptor = os.open(self.secret_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(descriptor, (self.secret + "\n").encode())
        os.close(descriptor)
        self.pid_file = pid_file
        self.owners = {}        # pid -> incarnation label, for the origin's log
        self.nodes = {name: Node(name, self) for name in NODES}

    def remember(self, pid, label=None):
        """Lists PID for the shell script to end; a node's (LABEL) also for the origin's log."""
        if label is not None:
            self.owners[pid] = label
        if self.pid_file:
            with open(self.pid_file, "a") as file:
                file.write(f"{pid}\n")

    def ready(self):
        return [node for node in self.nodes.values() if node.current is not None]

    def incarnations(self):
        return [incarnation for node in self.nodes.values() for incarnation in node.incarnations]

    def call(self, node, method, *params, timeout=60):
        """One JSON-RPC call to NODE; returns (result, error). Raises NodeGone when no answer came."""
        incarnation = node.current
        if incarnation is None:
            raise NodeGone()
        secret = self.secret
        try:
            return rpc_call(f"http://127.0.0.1:{incarnation.port}/jsonrpc", secret, method, params, timeout)
        except (OSError, ValueError) as error:
            if isinstance(error, TimeoutError) and node.current is incarnation:
                raise Failure(f"{method} to node {node.name} not answered in {timeout} s") from error
            raise NodeGone() from error


# MARK: - The plan


# MARK: - The run


class Kill:
    """One SIGKILL: the node, when, the claims it held, and when each was taken over."""

    def __init__(self, number, node, delay, pause, during_add):
        self.number, self.node, self.delay, self.pause, self.during_add = number, node, delay, pause, during_add
        self.at = None
        self.incarnation = None
        self.claims = None          # gid (hex) -> fence when it died
        self.takeovers = {}         # gid -> (seconds after the kill, node, fence)
        self.done = threading.Event()
        self.error = None

    def run(self, database):
        """Kills the node, reads the claims it held, restarts it after the pause, and watches
        the table every quarter of a second until every claim was taken over."""
        restart = None
        try:
            time.sleep(self.delay)
            self.incarnation = self.node.kill()
            self.at = self.incarnation.ended
            rows = database.query_when_up(
                f"SELECT gid, fence FROM haul_downloads WHERE node = '{self.node.name}' AND status = 'active'")
            self.claims = {hex_gid(gid): int(fence) for gid, fence in rows}
            restart = threading.Thread(target=self.restart, daemon=True)
            restart.start()
            while len(self.takeovers) < len(self.claims) and time.time() - self.at < TAKEOVER_LIMIT:
                time.sleep(0.25)
                try:
                    self.watch(database)
                except DatabaseDown:
                    pass
        except (Failure, DatabaseDown) as error:
            self.error = str(error)
        finally:
            if restart is not None:
                restart.join()
            self.done.set()

    def restart(self):
        time.sleep(self.pause)
        try:
            self.node.start()
        except Failure as error:
            self.error = str(error)

    def watch(self, database):
        pending = [gid for gid in self.claims if gid not in self.takeovers]
        rows = database.query(
            "SELECT gid, fence, coalesce(node, ''), status FROM haul_downloads WHERE gid = ANY('{"
            + ",".join(str(signed_gid(gid)) for gid in pending) + "}'::bigint[])")
        now = time.time()
        for gid, fence, node, status in rows:
            gid = hex_gid(gid)
            if int(fence) > self.claims[gid]:
                self.takeovers[gid] = (now - self.at, node, int(fence))
            elif status != "active":
                self.takeovers[gid] = (None, node, int(fence))     # ended without a new claim

    def pending(self):
        return sorted(set(self.claims or {}) - set(self.takeovers))


class Soak:
    def __init__(self, settings, fleet, origin, relay, files):
        self.settings, self.fleet, self.origin, self.relay, self.files = settings, fleet, origin, relay, files
        self.database = fleet.database
        self.rng = random.Random(settings["seed"] + 1)          # the plan and the events
        self.picks = random.Random(settings["seed"] + 2)        # the node of each call
        self.calls = plan_adds(len(files), self.rng, 25)
        # The adds are spread over the add period (call K at K/calls of it), so that the fleet has
        # work through every event; re-adds go first, at once.
        self.period = settings["add_seconds"]
        self.planned = len(self.calls)
        self.retries = []
        self.gids = {}               # file index -> GID (acknowledged, or adopted)
        self.acknowledged = set()    # GIDs an add's answer returned
        self.uncertain = {}          # file index -> "lost" (no answer) or "error" (answered an error)
        self.adopted = {"lost": 0, "error": 0}
        self.readded = {"lost": 0, "error": 0}
        self.single_calls = self.batched_calls = 0
        self.calls_by_node = {name: 0 for name in NODES}
        self.add_errors = []         # (time, node, message)
        self.error_of = {}           # file index -> the add error it answered last
        self.added_anyway = []       # (GID, the error) of adds that answered an error yet were in the list
        self.short_listings = []     # (time, node, GIDs listed, GIDs acknowledged)
        self.problems = []
        self.window = max(20, len(files) // 5)
        # Events at seeded moments of the add period (seconds after the first add), one at a time.
        events = [("kill", self.rng.uniform(0.05, 0.85) * self.period) for _ in range(settings["kills"])]
        events += [("postgres", self.rng.uniform(0.15, 0.5) * self.period) for _ in range(settings["pg_restarts"])]
        self.events = sorted(events, key=lambda event: event[1])
        self.kills = []
        self.restarts = []           # per PostgreSQL restart: figures
        self.current = None          # the event going on: a Kill, or a PostgreSQL restart's dict
        self.settled_at = time.time()
        self.armed = None            # a Kill to start within 10 ms of the next add sent to its node
        self.late_events = 0
        self.last_kill = self.last_add = 0.0
        self.outage_reads = {}       # what tellStatus of a listed download answered while PostgreSQL was down
        self.started = time.time()

    def url(self, index):
        name, size, seed = self.files[index]
        return f"{self.relay.url}/bytes/{size}/{name}?seed={seed}"

    def pick(self):
        """A random node that answers (the seeded one when it does)."""
        while True:
            wanted = self.fleet.nodes[self.picks.choice(NODES)]
            ready = self.fleet.ready()
            if wanted in ready:
                return wanted
            if ready:
                return self.picks.choice(ready)
            time.sleep(0.05)

    # Adds

    def add(self, indexes):
        """One add call through a random node; records the GIDs answered, or the indexes as uncertain."""
        self.last_add = time.time()
        node = self.pick()
        if self.armed is not None and self.armed.node.current is not None:
            node = self.armed.node
            self.start_kill(self.armed, "sending an add to it")
            self.armed = None
        self.calls_by_node[node.name] += 1
        try:
            if len(indexes) == 1:
                self.single_calls += 1
                result, error = self.fleet.call(node, "aria2.addUri", [self.url(indexes[0])])
                results = [[result] if error is None else error]
            else:
                self.batched_calls += 1
                calls = [{"methodName": "aria2.addUri", "params": [[self.url(index)]]} for index in indexes]
                results, error = self.fleet.call(node, "system.multicall", calls)
                if error is not None:
                    results = [error] * len(indexes)
        except NodeGone:
            self.uncertain.update((index, "lost") for index in indexes)
            return
        if len(results) != len(indexes):
            raise Failure(f"add through node {node.name}: {len(results)} answers for {len(indexes)} adds")
        refused = False
        for index, item in zip(indexes, results):
            if isinstance(item, list):
                self.gids[index] = item[0]
                self.acknowledged.add(item[0])
            else:
                self.uncertain[index] = "error"
                refused = True
                self.add_errors.append((time.time(), node.name, " ".join(str(item.get("message", item)).split())[:200]))
                self.error_of[index] = self.add_errors[-1]
        if refused:
            time.sleep(0.1)

    def listing(self, node=None):
        """Every download the fleet lists through NODE (waiting, then active, then stopped, so one
        that moves on meanwhile is seen at least once), as gid -> the latest status seen. A list
        with fewer downloads than were acknowledged is recorded as short and None returned."""
        node = node or self.pick()
        keys = ["gid", "status", "errorCode", "errorMessage", "files", "totalLength", "completedLength", "node"]
        calls = [{"methodName": "aria2.tellWaiting", "params": [0, 1_000_000, keys]},
                 {"methodName": "aria2.tellActive", "params": [keys]},
                 {"methodName": "aria2.tellStopped", "params": [0, 1_000_000, keys]}]
        results, error = self.fleet.call(node, "system.multicall", calls)
        if error is not None or any(not isinstance(item, list) for item in results):
            self.short_listings.append((time.time(), node.name, -1, len(self.acknowledged)))
            return None
        listed = {}
        for item in results:
            for status in item[0]:
                listed[status["gid"]] = status
        if len(listed) < len(self.acknowledged):
            self.short_listings.append((time.time(), node.name, len(listed), len(self.acknowledged)))
            return None
        return listed

    def reconcile(self):
        """Adopts the uncertain adds the fleet has; queues the others to be added again."""
        listed = self.listing()
        if listed is None:
            return
        by_url = {}
        for status in listed.values():
            for file in status.get("files", []):
                for uri in file.get("uris", []):
                    by_url.setdefault(uri["uri"], []).append(status["gid"])
        missing = []
        for index, why in sorted(self.uncertain.items()):
            gids = [gid for gid in by_url.get(self.url(index), []) if gid not in self.gids.values()]
            if gids:
                self.gids[index] = gids[0]
                self.adopted[why] += 1
                if why == "error":
                    self.added_anyway.append((gids[0], self.error_of[index]))
            else:
                missing.append(index)
                self.readded[why] += 1
        self.uncertain = {}
        self.retries += [missing[start:start + 10] for start in range(0, len(missing), 10)]

    def probe_outage(self):
        """While PostgreSQL is down: tellStatus of an acknowledged download through a random node."""
        if not self.database.stopped or not self.acknowledged:
            return
        gid = self.picks.choice(sorted(self.acknowledged))
        result, error = self.fleet.call(self.pick(), "aria2.tellStatus", gid, ["gid", "status"])
        answer = "a status" if error is None else re.sub(r"\b[0-9a-f]{16}\b", "GID", error.get("message", "?")).split(":")[0][:60]
        if self.database.stopped:
            self.outage_reads[answer] = self.outage_reads.get(answer, 0) + 1

    def may_reconcile(self):
        """Not while PostgreSQL is down, nor within a second of its start or of a kill (a commit
        sent by a killed node may still be landing)."""
        now = time.time()
        if self.database.down or now - self.last_kill < 1.5:
            return False
        return not any(now - back < 1 for _, back in self.database.outages)

    # Events

    def next_call(self):
        """The next add call due now (a re-add, or a planned one whose moment came), or None."""
        if self.retries:
            return self.retries.pop(0)
        if self.calls and self.armed is not None:
            return self.calls.pop(0)          # the add the armed kill waits for: now
        if self.calls and self.database.down and time.time() - self.last_add >= 0.3:
            return self.calls.pop(0)          # adds while PostgreSQL is down: each must answer an error
        if self.calls and time.time() - self.started_adding >= self.period * (self.planned - len(self.calls)) / self.planned:
            return self.calls.pop(0)
        return None

    def adds_left(self):
        return bool(self.calls or self.retries or self.uncertain)

    def step_events(self, done_bytes, listed):
        """Watches the event going on; starts the next one once its moment is passed."""
        if self.current is not None:
            if not self.event_settled():
                return
            self.current = None
            self.settled_at = time.time()
        if not self.events or self.armed is not None or time.time() - self.settled_at < 1:
            return
        kind, moment = self.events[0]
        late = time.time() - self.started_adding - moment
        if late < 0:
            return
        if kind == "kill":
            holders = dict(self.database.query(
                "SELECT node, count(*) FROM haul_downloads WHERE status = 'active' GROUP BY node"))
            if not holders and late < KILL_WAIT and moment > 0:
                return        # a kill waits a little for a node that holds claims
        self.events.pop(0)
        if kind == "postgres":
            self.start_outage(listed)
        else:
            self.arm_kill(holders, listed, done_bytes)

    def event_settled(self):
        event = self.current
        if isinstance(event, Kill):
            if not event.done.is_set():
                return False
            if event.error:
                raise Failure(f"kill {event.number}: {event.error}")
            if event.pending():
                self.problems.append(f"kill {event.number} (node {event.node.name}): {len(event.pending())} claim(s) "
                                     f"not taken over in {TAKEOVER_LIMIT:.0f} s: {event.pending()[:10]}")
            return True
        if event["thread"].is_alive():
            return False
        if "error" in event:
            raise Failure(event["error"])
        return time.time() - self.database.outages[-1][1] >= AFTER_OUTAGE

    def arm_kill(self, holders, listed, done_bytes):
        """Picks a node, at random weighted by the claims each holds (HOLDERS, from the table;
        any node when none holds one), and kills it: half of the kills (seeded) within 10 ms of
        the next add sent to it, the others up to half a second from now."""
        names = [name for name in NODES if int(holders.get(name, 0)) > 0] or list(NODES)
        weights = [int(holders.get(name, 1)) for name in names]
        node = self.fleet.nodes[self.rng.choices(names, weights)[0]]
        during_add = bool(self.calls) and self.rng.random() < 0.5
        kill = Kill(len(self.kills) + 1, node, self.rng.uniform(0, 0.01) if during_add else self.rng.uniform(0, 0.5),
                    self.rng.uniform(0.5, 3.0), during_add)
        self.kills.append(kill)
        self.current = kill
        finished = sum(1 for status in listed.values() if status["status"] in ("complete", "error"))
        say(f"kill {kill.number} at {time.time() - self.started_adding:.0f} s: node {node.name} "
            f"(claims held: {', '.join(f'{name} {count}' for name, count in sorted(holders.items())) or 'none'}), "
            f"{finished} finished, {len(self.gids)} added, {done_bytes / MIB:.0f} MiB done")
        if during_add:
            self.armed = kill
        else:
            self.start_kill(kill, "now")

    def start_kill(self, kill, when):
        self.last_kill = time.time() + kill.delay
        threading.Thread(target=kill.run, args=(self.database,), daemon=True).start()
        say(f"  SIGKILL node {kill.node.name} {kill.delay * 1000:.0f} ms after {when}, restarted {kill.pause:.1f} s later")

    def start_outage(self, listed):
        downtime = self.rng.uniform(1.5, 3.5)
        event = {"downtime": downtime}
        try:
            rows = self.database.query("SELECT gid, node, fence FROM haul_downloads WHERE status = 'active'")
        except DatabaseDown:
            rows = []
        event["before"] = {hex_gid(gid): (node, int(fence)) for gid, node, fence in rows}

        def restart():
            try:
                self.database.restart(downtime)
            except Failure as error:
                event["error"] = f"PostgreSQL restart: {error}"

        event["thread"] = threading.Thread(target=restart, daemon=True)
        self.restarts.append(event)
        self.current = event
        say(f"PostgreSQL restart {len(self.restarts)} at {time.time() - self.started_adding:.0f} s: stopped for {downtime:.1f} s, "
            f"{len(event['before'])} downloads active")
        event["thread"].start()

    def armed_without_adds(self):
        """A kill armed for an add that will not come: started now."""
        if self.armed is not None and not self.calls and not self.retries:
            self.start_kill(self.armed, "now (no add left)")
            self.armed = None

    # The loop

    def run(self, deadline):
        """Adds everything, kills and restarts, and waits until every download has finished and
        every event is done."""
        finished, last_poll, done_bytes, listed = 0, 0.0, 0, {}
        self.started_adding = time.time()
        while True:
            if time.time() > deadline:
                raise Failure(f"not done after {self.settings['timeout']:.0f} s ({finished} of {len(self.files)} "
                              f"finished, {len(self.events)} event(s) left)")
            try:
                if self.uncertain and self.may_reconcile():
                    self.reconcile()
                call = self.next_call() if len(self.gids) + len(self.uncertain) - finished < self.window else None
                if call is not None:
                    self.add(call)
                    time.sleep(self.picks.uniform(0, 0.02))
                    continue
                self.armed_without_adds()
                self.probe_outage()
                if time.time() - last_poll < 0.5:
                    time.sleep(0.1)
                    continue
                last_poll = time.time()
                polled = self.listing()
            except NodeGone:
                time.sleep(0.05)
                continue
            if polled is not None:
                listed = polled
                finished = sum(1 for status in listed.values() if status["status"] in ("complete", "error"))
                done_bytes = sum(int(status.get("completedLength", "0")) for status in listed.values())
            everything = not self.adds_left() and finished == len(self.files)
            if everything and self.events and self.current is None and self.events[0][1] > 0:
                self.late_events += 1      # the downloads went faster than planned: the event now
                self.events[0] = (self.events[0][0], 0)
            try:
                self.step_events(done_bytes, listed)
            except DatabaseDown:
                pass
            if everything and not self.events and self.current is None and self.armed is None:
                return


# MARK: - The checks


def overlaps(intervals):
    """Pairs of (start, end, who) intervals of different WHO that overlap in time."""
    found = []
    ordered = sorted(intervals)
    for position, (start, end, who) in enumerate(ordered):
        for other_start, other_end, other in ordered[position + 1:]:
            if other_start >= end:
                break
            if other != who:
                found.append(((start, end, who), (other_start, other_end, other)))
    return found


def check(soak, listed, rows, finished_at):
    """The figures of the final state; problems go to soak.problems."""
    fleet, files, problems = soak.fleet, soak.files, soak.problems
    figures = {"complete": 0, "failed": {}, "lost": 0, "duplicated": 0, "corrupt": 0, "strays": 0, "versions": 0,
               "overlaps_origin": 0, "overlaps_logs": 0, "fences": {}, "reruns": 0, "claims_in_doubt": 0}
    index_of = {gid: index for index, gid in soak.gids.items()}
    name_of = {gid: files[index][0] for gid, index in index_of.items()}

    # Listed once, one row each, each URL once.
    table = {hex_gid(row[0]): row for row in rows}
    for gid in soak.acknowledged | set(soak.gids.values()):
        if gid not in listed or gid not in table:
            figures["lost"] += 1
            problems.append(f"lost: {gid} ({name_of.get(gid)}) is not {'listed' if gid not in listed else 'in the table'}")
    for gid in set(listed) | set(table):
        if gid not in index_of:
            figures["duplicated"] += 1
            problems.append(f"duplicated: {gid} is listed or in the table but was never added")
    if len(rows) != len(table):
        figures["duplicated"] += 1
        problems.append(f"the table has {len(rows)} rows for {len(table)} GIDs")
    by_url = {}
    for status in listed.values():
        uris = status["files"][0]["uris"] if status.get("files") else []
        by_url.setdefault(uris[0]["uri"] if uris else "", []).append(status["gid"])
    duplicated_urls(by_url, figures, problems)

    # Complete and byte-identical, or failed with a typed error; the row names the node.
    expected_files = set()
    for index, gid in sorted(soak.gids.items()):
        name, size, seed = files[index]
        status, row = listed.get(gid), table.get(gid)
        if status is None or row is None:
            continue
        _, row_status, row_node, fence, row_file = row[:5]
        path = status["files"][0]["path"] if status.get("files") else ""
        if status["status"] == "complete":
            if not row_node:
                problems.append(f"{gid} ({name}) is complete but its row names no node")
            if row_status != "complete" or row_file != path:
                problems.append(f"{gid} ({name}): the RPC says complete at '{path}', the table {row_status} at '{row_file}'")
        elif status["status"] == "error" and status.get("errorCode") == LOCKED:
            problems.append(f"{gid} ({name}) failed because another process held its file: {status['errorMessage']}")
        judge(gid, files[index], status, fleet.root, soak.origin, figures, problems, expected_files)

    # No stray files.
    stray_files(fleet.root, expected_files, figures, problems, "the shared folder")
    for name in os.listdir(fleet.cwd):
        figures["strays"] += 1
        problems.append(f"file in the nodes' working folder: {name}")

    # Never two processes at once: the origin's log.
    gid_of_target = {soak.url(index)[len(soak.relay.url):]: gid for index, gid in soak.gids.items()}
    fetchers = {}
    first_fetch = {}
    intervals = {}
    records = soak.relay.snapshot()
    for target, pid, label, method, start, end, status, count, outcome in records:
        gid = gid_of_target.get(target)
        if gid is None or pid == 0:
            continue
        fetchers.setdefault(gid, set()).add(label)
        first_fetch[gid] = min(start, first_fetch.get(gid, start))
        intervals.setdefault(gid, []).append((start, end if end is not None else finished_at, label))
    for gid, spans in sorted(intervals.items()):
        for first, second in overlaps(spans)[:3]:
            figures["overlaps_origin"] += 1
            problems.append(f"run by two processes at once (origin's log): {gid} ({name_of.get(gid)}): "
                            f"{first[2]} {first[0]:.3f}..{first[1]:.3f} and {second[2]} {second[0]:.3f}..{second[1]:.3f}")
    # A process found for no connection: one killed before the relay looked (its request got
    # nothing: the client was gone), or a stranger (a problem).
    unknown = sum(1 for record in records if record[1] == 0 and (record[8] != "client gone" or record[7] > 0))
    figures["from_killed"] = sum(1 for record in records if record[1] == 0) - unknown

    # Never two processes at once: the nodes' logs (a run from `started` to its end; a killed
    # process's runs end at its kill).
    runs = {}
    completions = {}
    killed_labels = {incarnation.label for incarnation in fleet.incarnations() if incarnation.killed}
    for incarnation in fleet.incarnations():
        open_runs = {}
        for moment, kind, gid in incarnation.events:
            if kind == "started":
                open_runs.setdefault(gid, moment)
            elif kind in ("completed", "failed", "removed", "paused") and gid in open_runs:
                runs.setdefault(gid, []).append((open_runs.pop(gid), moment, incarnation.label))
            if kind == "completed":
                completions.setdefault(gid, []).append(incarnation)
        for gid, start in open_runs.items():
            runs.setdefault(gid, []).append((start, incarnation.ended or finished_at, incarnation.label))
    for gid, spans in sorted(runs.items()):
        for first, second in overlaps(spans)[:3]:
            figures["overlaps_logs"] += 1
            problems.append(f"run by two processes at once (nodes' logs): {gid} ({name_of.get(gid)}): "
                            f"{first[2]} {first[0]:.3f}..{first[1]:.3f} and {second[2]} {second[0]:.3f}..{second[1]:.3f}")
    for gid, incarnations in sorted(completions.items()):
        row = table.get(gid)
        if len(incarnations) > 1:
            figures["reruns"] += 1
            if any(not incarnation.killed for incarnation in incarnations[:-1]):
                problems.append(f"{gid} ({name_of.get(gid)}) completed {len(incarnations)} times, on "
                                f"{[incarnation.label for incarnation in incarnations]}, not only after kills")
        if row is not None and row[1] == "complete" and row[2] not in {incarnation.node for incarnation in incarnations}:
            # A process killed just after it wrote the result may not have printed its line.
            if not any(label[:1] == row[2] and label in killed_labels for label in fetchers.get(gid, ())):
                problems.append(f"{gid} ({name_of.get(gid)}): the row names node '{row[2]}', which logged no completion of it")

    # Fences.
    killed_claims = {}
    for kill in soak.kills:
        for gid, fence in (kill.claims or {}).items():
            killed_claims.setdefault(gid, []).append((kill.number, fence))
    for gid, row in sorted(table.items()):
        fence = int(row[3])
        figures["fences"][fence] = figures["fences"].get(fence, 0) + 1
        if row[1] in ("complete", "error") and fence < 1:
            problems.append(f"{gid} ({name_of.get(gid)}) ended with fence {fence}")
        if fence > 1 and gid not in killed_claims:
            # A claim whose COMMIT landed as PostgreSQL stopped, its node told an error: nobody
            # runs it until its lease ends, then it is claimed again. Allowed when one process
            # fetched it, first within a lease and a bit of a restart.
            outages = [start for start, back in soak.database.outages
                       if start - 1 <= first_fetch.get(gid, 0) <= back + LEASE + 5]
            if len(fetchers.get(gid, ())) == 1 and fence - 1 <= len(outages):
                figures["claims_in_doubt"] += 1
            else:
                problems.append(f"{gid} ({name_of.get(gid)}) has fence {fence} but no killed node held it "
                                f"(fetched by {sorted(fetchers.get(gid, []))})")
        for number, old in killed_claims.get(gid, []):
            if fence <= old:
                problems.append(f"{gid} ({name_of.get(gid)}) held by the node of kill {number} at fence {old}, ends at {fence}")
        if len(fetchers.get(gid, ())) > fence:
            problems.append(f"{gid} ({name_of.get(gid)}) fetched by {len(fetchers[gid])} processes "
                            f"{sorted(fetchers[gid])} under {fence} claim(s)")

    figures["origin"] = {"requests": len(records), "connections": soak.relay.connections, "by node": {}, "outcomes": {}}
    for record in records:
        by_node = figures["origin"]["by node"].setdefault(record[2][:1] or "?", [0, 0])
        by_node[0] += 1
        by_node[1] += record[7]
        figures["origin"]["outcomes"][record[8]] = figures["origin"]["outcomes"].get(record[8], 0) + 1
    if unknown:
        problems.append(f"{unknown} request(s) at the origin answered to a process that is not a node")
    figures["multi_fetched"] = sum(1 for labels in fetchers.values() if len(labels) > 1)
    return figures


# MARK: - Main


def summary(soak, figures, ran, total, stops):
    kills = soak.kills
    say(f"adds: {len(soak.acknowledged)} acknowledged ({soak.single_calls} addUri calls, {soak.batched_calls} multicalls; "
        f"through a {soak.calls_by_node['a']}, b {soak.calls_by_node['b']}, c {soak.calls_by_node['c']}); "
        f"answer lost to a kill: {soak.adopted['lost']} adopted, {soak.readded['lost']} added again; "
        f"answered an error: {len(soak.add_errors)} ({soak.adopted['error']} found added anyway, "
        f"{soak.readded['error']} added again)")
    takeover_times = []
    for kill in kills:
        claims = kill.claims or {}
        times = [seconds for seconds, _, _ in kill.takeovers.values() if seconds is not None]
        takeover_times += times
        by = {}
        for _, node, _ in kill.takeovers.values():
            by[node] = by.get(node, 0) + 1
        span = f"{min(times):.1f} .. {max(times):.1f} s" if times else "-"
        say(f"kill {kill.number}: node {kill.node.name}{' (during an add to it)' if kill.during_add else ''}, "
            f"{len(claims)} claim(s) held, {len(times)} taken over in {span} after the kill"
            f" (by {', '.join(f'{node} {count}' for node, count in sorted(by.items())) or 'nobody'})"
            f", restarted {kill.pause:.1f} s after")
    if takeover_times:
        ordered = sorted(takeover_times)
        say(f"takeovers: {len(ordered)} after {len(kills)} kills ({soak.late_events} event(s) late), "
            f"{ordered[0]:.1f} s min, {ordered[len(ordered) // 2]:.1f} s median, {ordered[-1]:.1f} s max (lease {LEASE:.0f} s)")
    else:
        say(f"takeovers: none after {len(kills)} kills ({soak.late_events} event(s) late)")
    for number, event in enumerate(soak.restarts, 1):
        start, back = soak.database.outages[number - 1] if number <= len(soak.database.outages) else (0, 0)
        say(f"PostgreSQL restart {number}: down {back - start:.1f} s (the fast stop took "
            f"{soak.database.stop_seconds[number - 1]:.2f} s) with {len(event['before'])} downloads active; "
            f"of those, {event.get('kept', '?')} kept their claim through it, {event.get('reclaimed', '?')} claimed again")
    if figures["claims_in_doubt"]:
        say(f"  {figures['claims_in_doubt']} download(s) claimed as PostgreSQL stopped (the COMMIT landed, the node was "
            f"told an error): idle until the lease ended, then claimed again (fence 2)")
    excused = sum(1 for moment, _, _ in soak.add_errors if soak.database.excused(moment))
    short = [entry for entry in soak.short_listings if soak.database.excused(entry[0])]
    say(f"RPC while PostgreSQL was down or just back: {len(soak.add_errors)} add error(s) ({excused} in the outage), "
        f"all looked up and added again or adopted; listings: {sum(1 for entry in short if entry[2] >= 0)} answered "
        f"short without an error (as few as {min([entry[2] for entry in short if entry[2] >= 0] or [0])} of "
        f"{max([entry[3] for entry in short] or [0])} downloads), {sum(1 for entry in short if entry[2] < 0)} answered "
        f"an error; tellStatus of a listed download: {soak.outage_reads or 'not asked'}")
    for gid, (moment, node, message) in soak.added_anyway:
        outage = next(((start, back) for start, back in soak.database.outages if start - 1 <= moment <= back + AFTER_OUTAGE), None)
        when = f"{moment - outage[0]:+.2f} s from the stop's start ({outage[1] - outage[0]:.1f} s down)" if outage else "outside the outage"
        say(f"  an add through node {node} answered an error yet {gid} was in the list after: {when}: {message[:120]}")
    failed = ", ".join(f"code {code}: {n}" for code, n in sorted(figures["failed"].items())) or "none"
    say(f"complete and byte-identical: {figures['complete']} ({figures['versions']} of them a changed version), "
        f"{total / MIB:.1f} MiB")
    say(f"failed with a typed error: {sum(figures['failed'].values())} ({failed})")
    say(f"lost: {figures['lost']}, duplicated: {figures['duplicated']}, corrupt: {figures['corrupt']}, "
        f"stray files: {figures['strays']}")
    origin = figures["origin"]
    say(f"origin: {origin['requests']} requests on {origin['connections']} connections ("
        + ", ".join(f"node {node}: {count} requests, {size / MIB:.1f} MiB" for node, (count, size) in sorted(origin["by node"].items()))
        + f", from a process not found, gone before it got a byte: {figures['from_killed']}); answers {origin['outcomes']}; "
        f"{figures['multi_fetched']} downloads fetched by more than one process")
    say(f"run by two processes at once: {figures['overlaps_origin']} (origin's log), {figures['overlaps_logs']} "
        f"(nodes' logs); completed again after a kill: {figures['reruns']}; fences {dict(sorted(figures['fences'].items()))}")
    say(f"nodes: {len(soak.fleet.incarnations())} processes started, SIGTERM exit statuses {stops}")
    say(f"took {ran:.1f} s to finish, {time.time() - soak.started:.1f} s in all")


def outage_figures(soak, rows):
    """For each PostgreSQL restart: how many of the claims held before it were kept (same node
    and fence at the end or when the row ended there) or claimed again."""
    table = {hex_gid(row[0]): row for row in rows}
    killed = {gid for kill in soak.kills for gid in (kill.claims or {})}
    for event in soak.restarts:
        kept = reclaimed = 0
        for gid, (node, fence) in event["before"].items():
            row = table.get(gid)
            if row is None:
                continue
            if int(row[3]) == fence and row[2] == node:
                kept += 1
            elif gid not in killed:
                reclaimed += 1
                soak.problems.append(f"{gid}: its claim (node {node}, fence {fence}) was lost across the PostgreSQL "
                                     f"restart: it ends at node {row[2]}, fence {row[3]}")
            else:
                kept += 1        # claimed again after its node was killed later
        event["kept"], event["reclaimed"] = kept, reclaimed


def main():
    settings = {"count": setting("SOAK_FLEET_COUNT", 1000), "seed": setting("SOAK_FLEET_SEED", 2026),
                "kills": setting("SOAK_FLEET_KILLS", 5), "pg_restarts": setting("SOAK_FLEET_PG_RESTARTS", 1),
                "timeout": setting("SOAK_FLEET_TIMEOUT", 1500.0, float), "jobs": setting("SOAK_FLEET_JOBS", 4),
                "largest": setting("SOAK_FLEET_MAX_SIZE", 32 * MIB), "rate": setting("SOAK_FLEET_RATE", 256 * KIB),
                "add_seconds": setting("SOAK_FLEET_ADD_SECONDS", 240.0, float)}
    haul, origin_binary = os.environ["HAUL_BIN"], os.environ["ORIGIN_BIN"]
    folder, _, port = os.environ["SOAK_FLEET_PG"].rpartition(":")
    database = Database(folder, int(port), os.environ["SOAK_FLEET_PG_BIN"])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("soak-fleet: FAIL: terminated (the time limit?)"))
    started = time.time()
    scratch = tempfile.mkdtemp(prefix="haul-soak-fleet-")
    files = plan_files(settings["count"], settings["seed"], settings["largest"])
    fleet = Fleet(haul, scratch, database, settings["jobs"], os.environ.get("SOAK_FLEET_PIDS"))
    origin = ChaosOrigin("soak-fleet", origin_binary, settings["seed"], ODDS, settings["rate"])
    fleet.remember(origin.process.pid)
    relay = OriginLog(origin.port, fleet.owners)
    passed = False
    soak = None
    try:
        total = sum(size for _, size, _ in files)
        say(f"{len(files)} downloads, {total / MIB:.1f} MiB in all ({min(size for _, size, _ in files)} B .. "
            f"{max(size for _, size, _ in files) / MIB:.1f} MiB), 3 nodes with -j{settings['jobs']} on one folder, "
            f"{settings['kills']} kills, {settings['pg_restarts']} PostgreSQL restart(s), seed {settings['seed']}, "
            f"origin faults {ODDS}, {settings['rate'] // KIB or 'no'} KiB/s cap per connection, adds over {settings['add_seconds']:.0f} s")
        for node in fleet.nodes.values():
            node.start()
        soak = Soak(settings, fleet, origin, relay, files)
        soak.started = started
        soak.run(started + settings["timeout"])
        finished_at = time.time()
        ran = finished_at - started
        listed = soak.listing(fleet.nodes[NODES[0]])
        if listed is None or len(listed) != len(set(soak.gids.values())):
            soak.problems.append(f"the final list through node a has {len(listed or {})} downloads, "
                                 f"{len(set(soak.gids.values()))} were added")
            listed = listed or {}
        for name in NODES[1:]:
            other = soak.listing(fleet.nodes[name])
            if other is None or {gid: (s["status"], s.get("node")) for gid, s in other.items()} != \
                    {gid: (s["status"], s.get("node")) for gid, s in listed.items()}:
                soak.problems.append(f"node {name} lists the fleet otherwise than node a")
        rows = database.query_when_up(
            "SELECT gid, status, coalesce(node, ''), fence, coalesce(file, ''), coalesce(requested, '') FROM haul_downloads")
        stops = {}
        for node in fleet.nodes.values():
            stops[node.name] = node.stop()
            if stops[node.name] != 0:
                soak.problems.append(f"node {node.name} exited {stops[node.name]} on SIGTERM")
        figures = check(soak, listed, rows, finished_at)
        outage_figures(soak, rows)
        for moment, node, message in soak.add_errors:
            if not database.excused(moment):
                soak.problems.append(f"an add through node {node} answered an error with PostgreSQL up: {message}")
        for moment, node, count, expected in soak.short_listings:
            if not database.excused(moment):
                soak.problems.append(f"node {node} listed {count} downloads with PostgreSQL up ({expected} acknowledged)")
        for incarnation in fleet.incarnations():
            if fleet.secret in fleet.nodes[incarnation.node].log_text(incarnation):
                soak.problems.append(f"the secret appears in the log of {incarnation.label}")
        summary(soak, figures, ran, total, stops)
        for problem in soak.problems[:40]:
            say(f"problem: {problem}")
        passed = not soak.problems
        say("PASS" if passed else f"FAIL ({len(soak.problems)} problems)")
    except Failure as failure:
        say(f"FAIL: {failure}")
    except NodeGone:
        say("FAIL: a node did not answer after the run")
    finally:
        relay.close()
        end_processes([origin.process] + [incarnation.process for incarnation in fleet.incarnations()])
        if passed and os.environ.get("SOAK_FLEET_KEEP") != "1":
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            say(f"scratch folder kept: {scratch} (node-*.log: each node's --json log, stamped when read)")
            if soak is not None:
                with open(os.path.join(scratch, "origin-log.tsv"), "w") as file:
                    for record in relay.snapshot():
                        file.write("\t".join(str(field) for field in record) + "\n")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
