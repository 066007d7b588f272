#!/usr/bin/env python3
"""Benchmark: haul against other download clients, all fed by a private nginx on loopback.

Parts (--parts picks some; they run in this order):
  single     one big file (--size-mib, 2 GiB) over plain HTTP and HTTPS: haul (its defaults)
             and haul -x1 vs curl and aria2c on one connection; curl+sync (curl, then a sync of
             the file); the bounds: network (curl into /dev/null: the network alone) and disk
             (dd writers alone, no network: about the most this disk takes), and each haul's
             speed over the slower of the two; over HTTP also haul-urlsession (when built beside
             haul)
  capped     a server capping each connection at 25 MiB/s, one 500 MiB file split across 8
             connections: haul -x 8 vs aria2c -x8 -s8 -k1M vs axel -n 8
  mirrors    one file (--mirrors-mib, 512 MiB) from three servers on their own ports, each capping
             every connection (--mirror-rate, 20 MiB/s; the third a quarter of it), --mirror-connections
             (4) per server: haul --mirror vs aria2c with the three URIs, and both given the same
             .meta4; the limit is the servers' sum
  small      1,000 files of 64 KiB, 16 at once from a URL list: haul -j 16 -i vs aria2c -j16 -i
             vs curl --parallel --parallel-max 16 (and curl+sync: then sync -f DIR)
  ratelimit  each client's own rate limit (20 MiB/s for 10 s)
  checksum   the single part's file with and without --checksum=sha256 (4 connections, -x 1,
             -x 1 --limit-rate 400M) vs openssl dgst -sha256 of the same file on the same disk
  proxy      the single part's file over plain HTTP through a private tinyproxy on loopback:
             haul --proxy (its defaults) vs curl -x and aria2c --all-proxy on one connection
  daemon     haul daemon vs aria2c --enable-rpc, each with -j 1 and one download from a slow
             origin (nginx /slow/, --slow-rate) holding the slot: --queued downloads added in
             system.multicall calls of 1,000 addUri (each call timed), tellWaiting(0, 1000)
             timed --rpc-calls times, then the CPU time and RSS of the idle daemon over
             --idle-seconds; measured on each daemon in turn (DAEMONS and DAEMON_TARGETS below)
  fleet      haul daemons as a fleet (--fleet-nodes, 3) on one queue in a private PostgreSQL
             (Scripts/postgres-cluster.sh, in the work folder) beside one daemon on SQLite:
             --fleet-queued (100,000) paused downloads added in system.multicall calls of 1,000
             addUri (each timed, the rows counted by another connection after each answer);
             VACUUM ANALYZE (psql), then tellWaiting(0, 1000) timed --rpc-calls times on each
             node; each node's idle CPU over --idle-seconds; downloads claimed and ended per
             second across the fleet (-j --fleet-jobs per node, tiny files from nginx, over
             --fleet-window seconds); the time until a SIGKILLed node's downloads run on another
             (the lease is 10 s); the SQLite node: the same but the takeover
             (Scripts/lib/bench_fleet.py, FLEET_TARGETS)

Each part lists its clients as data (PARTS below): a name, a command line template and how the
output is verified (bytes: compared byte for byte with the source; sha256: its digest; files:
exactly the source's names, each byte for byte; digest: the digest printed; written: every block
of a reserved file written). Every run writes into a fresh folder in which nothing else may be
left, and must leave no process behind; a run that fails any check counts as failed, not fast.

Within a part the clients run interleaved, round robin (haul, curl, aria2c, haul, ...), so a slow
spell of the machine hits all of them alike; warm-up rounds are not counted. For each run: wall
time, CPU time (user + sys of the client and everything it waited for, from wait4) and peak RSS
(GNU time wraps the client: a child forked from python would inherit python's RSS as a floor).
Then one untimed run per client under a counter (perf stat: instructions:u/k where the machine
has the counters, syscalls from the raw_syscalls tracepoint; else strace -f -c for syscalls;
--callgrind adds valgrind's user-space instruction count to the small part, for a haul built
with the Swift runtime linked in, as Scripts/build-release.sh makes it).

The report is one markdown table per part (and protocol), with medians, haul's ratios to the
others (each taken round by round, then the median) and the command that reproduces it; the raw
rows (TSV, JSON) and the report (markdown) go to --results-dir.

  python3 Scripts/bench.py                            # everything: 1 warm-up + 5 runs each
  python3 Scripts/bench.py --quick                    # smoke test: small sizes, 1 run
  python3 Scripts/bench.py --parts single,checksum --runs 3
  python3 Scripts/bench.py --parts small --haul-b-bin OTHER/haul --runs 9   # two builds
  python3 Scripts/bench.py --parts single --slow-disk 100    # downloads onto a disk of 100 MiB/s

The downloads go beside the sources in the work folder, or into --out-dir (another disk), or onto
--slow-disk: a disk made for the run (root; ext4 on a loop device whose writes the cgroup v1 blkio
throttle caps, so writeback and fdatasync wait for it too), taken down again on any exit.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MIB = 1 << 20
SCRIPT = Path(__file__).resolve()
REPO = SCRIPT.parent.parent
PART_NAMES = ("single", "capped", "mirrors", "small", "ratelimit", "checksum", "proxy", "daemon", "fleet")
RPC_PARTS = ("daemon", "fleet")   # parts measured through JSON-RPC, reported by their own code
GNU_TIME = "/usr/bin/time"
# The Debian package that provides each tool the benchmark may run.
PACKAGES = {
    "nginx": "nginx", "curl": "curl", "aria2c": "aria2", "axel": "axel", "openssl": "openssl",
    "perf": "linux-perf", "strace": "strace", "valgrind": "valgrind", GNU_TIME: "time",
    "strip": "binutils", "filefrag": "e2fsprogs", "dd": "coreutils", "sh": "dash", "tinyproxy": "tinyproxy",
    "losetup": "mount", "mount": "mount", "umount": "mount", "mkfs.ext4": "e2fsprogs", "psql": "postgresql-client",
}


@dataclasses.dataclass(frozen=True)
class Client:
    """One client of a part: its command line and how what it wrote is checked.

    argv is a template: "{key}" is replaced by the run's value (an element that is exactly
    "{key}" whose value is a list is replaced by that list's elements)."""

    name: str
    argv: tuple[str, ...]
    verify: str  # bytes | sha256 | files | digest | written | received
    variants: tuple[str, ...] = ()  # the variants (protocols) it runs in; empty: all
    copy_source: bool = False  # the source is copied to {out} before the run (not timed)
    beside_haul: str = ""  # a program it needs beside the haul binary (else it is left out)
    needs: tuple[str, ...] = ()  # commands it runs besides argv[0] (installed when missing)

    def tools(self) -> list[str]:
        """The commands this client runs, for installing the missing ones."""
        first = self.argv[0]
        return ([] if first.startswith("{") else [first]) + list(self.needs)


@dataclasses.dataclass(frozen=True)
class Part:
    """A part of the benchmark: what is served, which clients fetch it, how it is reported."""

    name: str
    title: str  # formatted with the config and {variant}
    clients: tuple[Client, ...]
    per_file: bool = False  # counters per file (else per MiB) and a files/s column
    of: str = ""  # an extra column: "limit" (the capped server's) or "rate" (the one asked for)
    aside: bool = False  # each run's folder is moved aside until the part ends
    rounds: int = 1  # --runs times this: a part whose runs take under a second needs more to settle its median


QUIET_ARIA2C = ("--quiet=true", "--allow-overwrite=true", "--auto-file-renaming=false")
CURL = ("curl", "--silent", "--show-error", "--fail")
CURL_SYNC_FILE = ("sh", "-c", 'out=$1; shift; curl "$@" -o "$out" && sync "$out"', "curl+sync",
                  "{out}", "--silent", "--show-error", "--fail")
CURL_SMALL = ("--parallel", "--parallel-max", "{jobs}", "--remote-name-all", "--output-dir", "{dir}",
              "--config", "{curl_config}")
CURL_SYNC_DIR = ("sh", "-c", 'dir=$1; shift; curl "$@" && sync -f "$dir"', "curl+sync", "{dir}",
                 "--silent", "--show-error", "--fail")
HAUL_FILE = ("-o", "{out}", "{url}")
SUM = "--checksum=sha256={sha256}"

PARTS = {
    "single": Part("single", "One {size_mib} MiB file over {VARIANT}", (
        Client("haul", ("{haul}", "-q", "{haul_args}", "{haul_tls}") + HAUL_FILE, "bytes"),
        Client("curl", CURL + ("{curl_tls}", "-o", "{out}", "{url}"), "bytes"),
        Client("aria2c", ("aria2c", "-x1", "-s1") + QUIET_ARIA2C + (
            "--file-allocation=falloc", "{aria2c_tls}", "--dir={dir}", "--out={name}", "{url}"), "bytes"),
        Client("curl+sync", CURL_SYNC_FILE + ("{curl_tls}", "{url}"), "bytes", needs=("curl",)),
        Client("haul-x1", ("{haul}", "-q", "-x", "1", "{haul_args}", "{haul_tls}") + HAUL_FILE, "bytes"),
        Client("network", CURL + ("{curl_tls}", "-o", "/dev/null", "-w", "%{{size_download}}", "{url}"), "received"),
        Client("haul-urlsession", ("{haul}", "-q", "--engine=urlsession", "{haul_args}") + HAUL_FILE,
               "bytes", variants=("http",), beside_haul="haul-urlsession"),
        Client("disk", ("{python}", "{self}", "--disk-writer", "{out}", "{bytes}", "{writers}"),
               "written", needs=("dd", "filefrag")),
    )),
    "capped": Part("capped", "{capped_mib} MiB from a server capping each connection at {cap}, "
                   "{connections} connections", (
        Client("haul", ("{haul}", "-q", "-x", "{connections}", "{haul_args}") + HAUL_FILE, "bytes"),
        Client("aria2c", ("aria2c", "-x{connections}", "-s{connections}", "-k1M") + QUIET_ARIA2C + (
            "--file-allocation=falloc", "--dir={dir}", "--out={name}", "{url}"), "bytes"),
        Client("axel", ("axel", "--quiet", "-n", "{connections}") + HAUL_FILE, "bytes"),
    ), of="limit"),
    "mirrors": Part("mirrors", "{mirrors_mib} MiB from three servers capping each connection at {mirror_cap} "
                    "(the third at a quarter), {mirror_connections} connections each", (
        Client("haul", ("{haul}", "-q", "-x", "{mirror_connections}", "--mirror", "{mirror_2}", "--mirror", "{mirror_3}",
                        "{haul_args}", "-o", "{out}", "{mirror_1}"), "bytes"),
        Client("aria2c", ("aria2c", "-x{mirror_connections}", "-s{mirror_split}", "-k1M") + QUIET_ARIA2C + (
            "--file-allocation=falloc", "--dir={dir}", "--out={name}", "{mirror_1}", "{mirror_2}", "{mirror_3}"), "bytes"),
        Client("haul-meta4", ("{haul}", "-q", "-x", "{mirror_connections}", "{haul_args}", "-d", "{dir}", "{meta4}"), "bytes"),
        Client("aria2c-meta4", ("aria2c", "-x{mirror_connections}", "-s{mirror_split}", "-k1M") + QUIET_ARIA2C + (
            "--file-allocation=falloc", "--dir={dir}", "-M", "{meta4}"), "bytes"),
    ), of="limit"),
    "small": Part("small", "{small_count} files of {small_kib} KiB, {jobs} at once", (
        Client("haul", ("{haul}", "-q", "-j", "{jobs}", "{haul_args}", "-i", "{list}", "-d", "{dir}"), "files"),
        Client("aria2c", ("aria2c", "-j{jobs}") + QUIET_ARIA2C + ("-i", "{list}", "-d", "{dir}"), "files"),
        Client("curl", CURL + CURL_SMALL, "files"),
        Client("curl+sync", CURL_SYNC_DIR + CURL_SMALL, "files", needs=("curl",)),
    ), per_file=True, aside=True, rounds=4),
    "ratelimit": Part("ratelimit", "{rate_mib} MiB, each client limiting itself to {rate_mib_s} MiB/s", (
        Client("haul", ("{haul}", "-q", "--limit-rate", "{rate}", "{haul_args}") + HAUL_FILE, "bytes"),
        Client("curl", CURL + ("--limit-rate", "{rate}", "-o", "{out}", "{url}"), "bytes"),
        Client("aria2c", ("aria2c",) + QUIET_ARIA2C + (
            "--max-overall-download-limit={rate}", "--dir={dir}", "--out={name}", "{url}"), "bytes"),
    ), of="rate"),
    "checksum": Part("checksum", "{size_mib} MiB with and without --checksum=sha256, and openssl dgst "
                     "-sha256 of the same file", (
        Client("haul", ("{haul}", "-q", "{haul_args}") + HAUL_FILE, "sha256"),
        Client("haul+sum", ("{haul}", "-q", SUM, "{haul_args}") + HAUL_FILE, "sha256"),
        Client("haul-x1", ("{haul}", "-q", "-x", "1", "{haul_args}") + HAUL_FILE, "sha256"),
        Client("haul-x1+sum", ("{haul}", "-q", "-x", "1", SUM, "{haul_args}") + HAUL_FILE, "sha256"),
        Client("haul-x1-link", ("{haul}", "-q", "-x", "1", "--limit-rate", "{link_rate}", "{haul_args}")
               + HAUL_FILE, "sha256"),
        Client("haul-x1-link+sum", ("{haul}", "-q", "-x", "1", "--limit-rate", "{link_rate}", SUM,
                                    "{haul_args}") + HAUL_FILE, "sha256"),
        Client("openssl", ("openssl", "dgst", "-sha256", "{out}"), "digest", copy_source=True),
    )),
    "proxy": Part("proxy", "One {size_mib} MiB file over HTTP through tinyproxy", (
        Client("haul", ("{haul}", "-q", "--proxy={proxy}", "{haul_args}") + HAUL_FILE, "bytes", needs=("tinyproxy",)),
        Client("curl", CURL + ("-x", "{proxy}", "-o", "{out}", "{url}"), "bytes"),
        Client("aria2c", ("aria2c", "-x1", "-s1") + QUIET_ARIA2C + (
            "--file-allocation=falloc", "--all-proxy={proxy}", "--dir={dir}", "--out={name}", "{url}"), "bytes"),
    )),
}

# Targets from the issues, checked on haul's figures: (parts and variants, label, metric, limit).
# A metric is "speed:X" (X's wall over haul's, paired by round), "wall:X" (haul's over X's),
# "wall-meta4:X" (haul-meta4's over X's), "cpu:X" (haul's CPU over X's), "rss" (haul's highest peak RSS), "of" (haul's share of the
# limit or the rate), "rate-error" (|achieved / asked - 1| in %), "sum-cost" (the time
# --checksum adds to the segmented download over openssl's time).
TARGETS = (
    ("single/http", "haul speed / curl's", "speed:curl", ">=", 1.5),
    ("single/http", "haul CPU / curl's", "cpu:curl", "<=", 0.7),
    ("single/https", "haul speed / curl's", "speed:curl", ">=", 1.3),
    ("single", "haul -x1 speed / curl's", "x1-speed:curl", ">=", 1.0),
    ("single", "haul -x1 speed / the bound's", "bound:haul-x1", ">=", 0.95),
    ("single", "haul peak RSS MiB", "rss", "<=", 32),
    ("capped", "haul wall / aria2c's", "wall:aria2c", "<=", 0.95),
    ("capped", "haul CPU / aria2c's", "cpu:aria2c", "<=", 0.6),
    ("capped", "haul wall / axel's", "wall:axel", "<=", 1.02),
    ("capped", "haul speed / the limit", "of", ">=", 0.95),
    ("capped", "haul peak RSS MiB", "rss", "<=", 48),
    ("mirrors", "haul speed / the servers' sum", "of", ">=", 0.95),
    ("mirrors", "haul wall / aria2c's", "wall:aria2c", "<=", 1 / 1.2),
    ("mirrors", "haul .meta4 wall / aria2c's", "wall-meta4:aria2c-meta4", "<=", 1 / 1.2),
    ("small", "haul wall / curl's", "wall:curl", "<=", 1.0),
    ("small", "haul peak RSS MiB", "rss", "<=", 48),
    ("ratelimit", "haul |achieved / asked - 1| %", "rate-error", "<=", 5.0),
    ("checksum", "time --checksum adds (4 connections) / openssl's", "sum-cost", "<=", 1.1),
    ("proxy", "haul speed / curl's", "speed:curl", ">=", 1.3),
)


# ---------------------------------------------------------------------------------------------
# Tools


def log(message: str) -> None:
    """Prints a progress message to stderr."""
    print(f"bench.py: {message}", file=sys.stderr, flush=True)


def die(message: str) -> None:
    """Stops the benchmark with an error (the cleanup still runs)."""
    raise SystemExit(f"bench.py: error: {message}")


def which(command: str) -> str | None:
    """The path of COMMAND, also looking in the sbin folders a non-login PATH may lack."""
    if command.startswith("/"):
        return command if os.access(command, os.X_OK) else None
    return shutil.which(command) or shutil.which(command, path="/usr/sbin:/sbin")


_apt_updated = False


def require(command: str) -> str:
    """Returns COMMAND's path, installing its Debian package first when it is missing."""
    global _apt_updated
    found = which(command)
    if found:
        return found
    package = PACKAGES.get(command, command)
    if os.geteuid() != 0:
        die(f"'{command}' is missing; install the Debian package '{package}' (needs root)")
    log(f"installing Debian package '{package}' (for '{command}')")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    apt = {"stdin": subprocess.DEVNULL, "stdout": sys.stderr, "env": env, "check": False}
    if not _apt_updated:
        subprocess.run(["apt-get", "update", "-qq"], **apt)
        _apt_updated = True
    subprocess.run(["apt-get", "install", "-y", "-qq", "-o", "Dpkg::Use-Pty=0",
                    "--no-install-recommends", package], **apt)
    found = which(command)
    if not found:
        die(f"installing '{package}' did not provide '{command}'")
    return found


def output_of(argv: list[str], **kwargs) -> str:
    """The stripped stdout (and stderr) of a short command, or "" when it cannot run."""
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=60, check=False, **kwargs)
    except (OSError, subprocess.SubprocessError):
        return ""
    return (done.stdout + done.stderr).strip()


def nonempty(path: Path) -> bool:
    """True when PATH is a file with at least one byte."""
    return path.is_file() and path.stat().st_size > 0


def client_env() -> dict[str, str]:
    """The environment of every client: no proxy (everything stays on loopback), C locale."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["LC_ALL"] = "C"
    return env


# ---------------------------------------------------------------------------------------------
# The server: a private nginx on loopback


class Server:
    """nginx with its own config, logs and temp folders in WORK, listening on 127.0.0.1 only.

    Everything under /capped/ is sent at most CAP_RATE per connection (nginx limit_rate), like a
    server that caps each connection, and under /slow/ at most SLOW_RATE (the daemon part's origin);
    any name under /tiny/ is the file tiny.bin (the fleet part's many small downloads). TLS uses a
    throwaway CA and a certificate for localhost and 127.0.0.1 made with the openssl tool. nginx
    runs in the foreground as this script's child."""

    def __init__(self, work: Path, cap_rate: str, slow_rate: str = "2k", mirror_rate: str = "20m"):
        self.work, self.cap_rate, self.slow_rate, self.mirror_rate = work, cap_rate, slow_rate, mirror_rate
        self.mirror_ports: list[int] = []
        self.root, self.ca = work / "www", work / "tls" / "ca.pem"
        self.process: subprocess.Popen | None = None
        self.http_port = self.https_port = 0
        self.proxy: TinyProxy | None = None  # started by the proxy part

    def url(self, variant: str) -> str:
        """The base URL of the http or https listener."""
        port = self.https_port if variant == "https" else self.http_port
        return f"{variant}://127.0.0.1:{port}"

    def setup(self) -> None:
        """Writes the certificates (unless kept from an earlier run) and the config."""
        require("nginx")
        require("openssl")
        for folder in (self.root, self.work / "tls", self.work / "logs", self.work / "temp"):
            folder.mkdir(parents=True, exist_ok=True)
        if not all(nonempty(p) for p in (self.ca, self.work / "tls/server.pem", self.work / "tls/server.key")):
            make_certificates(self.work / "tls")
        self.http_port, self.https_port, *self.mirror_ports = free_ports(5)
        (self.work / "nginx.conf").write_text(nginx_config(self))
        done = subprocess.run(["nginx", "-t", "-q", *self.nginx_args()], capture_output=True, text=True)
        if done.returncode != 0:
            die(f"nginx rejected {self.work}/nginx.conf: {done.stderr.strip()}")

    def mirror_url(self, index: int) -> str:
        """The base URL of mirror INDEX (0, 1, 2: the third is the slow one)."""
        return f"http://127.0.0.1:{self.mirror_ports[index]}"

    def nginx_args(self) -> list[str]:
        """nginx's options for this work folder and config."""
        w = str(self.work)
        return ["-p", w, "-e", f"{w}/logs/error.log", "-c", f"{w}/nginx.conf"]

    def start(self) -> None:
        """Starts nginx and waits until both listeners accept connections."""
        self.process = subprocess.Popen(["nginx", *self.nginx_args()], stdin=subprocess.DEVNULL,
                                        start_new_session=True)
        deadline = time.monotonic() + 10
        while not (port_open(self.http_port) and port_open(self.https_port)):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                die(f"nginx did not start listening; see {self.work}/logs/error.log")
            time.sleep(0.05)
        log(f"nginx serving {self.root} on {self.url('http')} and {self.url('https')}")

    def stop(self) -> None:
        """Stops the nginx this script started (graceful first) and waits for it, and the proxy."""
        if self.proxy:
            self.proxy.stop()
        stop_child(self.process)


class TinyProxy:
    """tinyproxy on 127.0.0.1 with its own config and log in WORK, as this script's child."""

    def __init__(self, work: Path):
        self.work = work
        self.process: subprocess.Popen | None = None
        self.port = 0

    @property
    def url(self) -> str:
        """The proxy's URL."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Writes the config and starts tinyproxy in the foreground; waits until it listens."""
        require("tinyproxy")
        self.work.mkdir(parents=True, exist_ok=True)
        self.port = free_ports(1)[0]
        config = self.work / "tinyproxy.conf"
        config.write_text(f"Port {self.port}\nListen 127.0.0.1\nTimeout 600\nMaxClients 64\n"
                          f"Allow 127.0.0.1\nLogLevel Warning\nLogFile \"{self.work}/tinyproxy.log\"\n")
        self.process = subprocess.Popen([which("tinyproxy"), "-d", "-c", str(config)], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 10
        while not port_open(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                die(f"tinyproxy did not start listening; see {self.work}/tinyproxy.log")
            time.sleep(0.05)
        log(f"tinyproxy on {self.url}")

    def stop(self) -> None:
        """Stops the tinyproxy this script started and waits for it."""
        stop_child(self.process)


def stop_child(process: subprocess.Popen | None) -> None:
    """Stops a server this script started, gracefully first, then its whole process group (a
    master and its workers), and waits for it."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        kill_group(process.pid)
        process.wait()


def free_ports(count: int) -> list[int]:
    """COUNT distinct free TCP ports on 127.0.0.1 (nginx cannot listen on port 0 and say which)."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def port_open(port: int) -> bool:
    """True when something accepts TCP connections on 127.0.0.1:PORT."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def make_certificates(folder: Path) -> None:
    """Writes a throwaway CA (ca.pem) and a server certificate for localhost / 127.0.0.1."""
    f = {name: str(folder / name) for name in ("ca.key", "ca.pem", "server.key", "server.csr",
                                                 "server.ext", "server.pem")}
    Path(f["server.ext"]).write_text(
        "basicConstraints = CA:FALSE\nkeyUsage = critical, digitalSignature, keyEncipherment\n"
        "extendedKeyUsage = serverAuth\nsubjectAltName = DNS:localhost, IP:127.0.0.1\n")
    commands = [
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-sha256",
         "-subj", "/CN=Haul Bench CA", "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-keyout", f["ca.key"], "-out", f["ca.pem"]],
        ["req", "-newkey", "rsa:2048", "-nodes", "-sha256", "-subj", "/CN=localhost",
         "-keyout", f["server.key"], "-out", f["server.csr"]],
        ["x509", "-req", "-in", f["server.csr"], "-CA", f["ca.pem"], "-CAkey", f["ca.key"],
         "-set_serial", "0x" + os.urandom(8).hex(), "-days", "2", "-sha256",
         "-extfile", f["server.ext"], "-out", f["server.pem"]],
    ]
    for command in commands:
        subprocess.run(["openssl", *command], check=True, capture_output=True)


def nginx_config(server: Server) -> str:
    """The nginx config: plain and TLS listeners on loopback, sendfile, /capped/ rate-limited."""
    w = server.work
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers read the work folder as it is
    capped = (f"location /capped/ {{ limit_rate {server.cap_rate}; }}\n"
              f"        location /slow/ {{ limit_rate {server.slow_rate}; }}\n"
              "        location /tiny/ { try_files /tiny.bin =404; }")
    return f"""# Written by Scripts/bench.py for a throwaway loopback server.
{user}worker_processes 2;
daemon off;
pid {w}/nginx.pid;
error_log {w}/logs/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {w}/temp/body;
    proxy_temp_path {w}/temp/proxy;
    fastcgi_temp_path {w}/temp/fastcgi;
    uwsgi_temp_path {w}/temp/uwsgi;
    scgi_temp_path {w}/temp/scgi;
    types {{ application/octet-stream bin; text/plain txt; }}
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 30s;
    server {{
        listen 127.0.0.1:{server.http_port};
        server_name localhost;
        root {server.root};
        {capped}
    }}
    server {{
        listen 127.0.0.1:{server.https_port} ssl;
        server_name localhost;
        root {server.root};
        ssl_certificate {w}/tls/server.pem;
        ssl_certificate_key {w}/tls/server.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        {capped}
    }}
{mirror_servers(server)}}}
"""


def mirror_servers(server: Server) -> str:
    """The mirrors part's three servers, each on its own port and capping every connection: the
    first two at MIRROR_RATE, the third at a quarter of it (a slow mirror)."""
    fast = nginx_bytes(server.mirror_rate)
    rates = (fast, fast, fast // 4)
    return "".join(f"""    server {{
        listen 127.0.0.1:{port};
        server_name localhost;
        root {server.root};
        limit_rate {rate};
    }}
""" for port, rate in zip(server.mirror_ports, rates))


# ---------------------------------------------------------------------------------------------
# Where the downloads go: beside the sources, into --out-dir, or onto a --slow-disk


class SlowDisk:
    """A disk that takes writes at MIB_S MiB/s at most, for the downloads of a run: an ext4 file
    system on a loop device over a sparse file in WORK (the loop in direct I/O, so the file's own
    page cache does not stand between), whose writes the cgroup v1 blkio throttle caps
    (blkio.throttle.write_bps_device). The throttle delays the device's write requests
    themselves, so O_DIRECT writes, page-cache writeback and the fdatasync that waits for it all
    go at the disk's speed, as on a slow disk. The rule is set in the root blkio cgroup, where the
    writeback threads are, and checked with dd before the runs. stop() takes everything down
    again (the rule first, so the unmount does not wait for the throttle) and runs on any exit."""

    THROTTLE = Path("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device")

    def __init__(self, work: Path, mib_s: int, size_mib: int):
        self.mib_s, self.size_mib = mib_s, size_mib
        self.image, self.mount = work / "slow-disk.img", work / "slow-disk"
        self.device, self.rule, self.mounted, self.measured = "", "", False, ""

    def describe(self) -> str:
        """What the downloads are written to, for the report's header."""
        return (f"on a slow disk: {self.device} (a {self.size_mib // 1024} GiB file in the work folder, in "
                f"direct I/O), its writes capped at {self.mib_s} MiB/s by the blkio throttle (dd: {self.measured})")

    def start(self) -> Path:
        """Makes the disk; returns where it is mounted. Stops the benchmark with one line when a
        step fails or the throttle does not hold (parse_options has checked the machine)."""
        for tool in ("losetup", "mkfs.ext4", "mount", "umount"):
            require(tool)
        if self.mount.is_mount():
            die(f"--slow-disk: {self.mount} is still mounted from an earlier run: umount it and losetup -d its device")
        free = shutil.disk_usage(self.image.parent).free // MIB
        if free < self.size_mib + 1024:
            die(f"--slow-disk: the disk of {self.image.parent} has {free} MiB free; "
                f"its image needs {self.size_mib} MiB")
        self.image.unlink(missing_ok=True)
        with open(self.image, "wb") as f:
            f.truncate(self.size_mib * MIB)
        self.device = self.run("losetup", "--find", "--show", "--direct-io=on", str(self.image))
        # Inode tables and journal written now: lazy init would write them through the throttle.
        self.run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", self.device)
        self.mount.mkdir(exist_ok=True)
        self.run("mount", self.device, str(self.mount))
        self.mounted = True
        rdev = os.stat(self.device).st_rdev
        self.rule = f"{os.major(rdev)}:{os.minor(rdev)}"
        self.THROTTLE.write_text(f"{self.rule} {self.mib_s * MIB}\n")
        self.check()
        log(f"slow disk: {self.device} on {self.mount}, writes capped at {self.mib_s} MiB/s; dd: {self.measured}")
        log(f"slow disk: should this run be killed (-9), undo it with: echo '{self.rule} 0' > {self.THROTTLE}; "
            f"umount {self.mount}; losetup -d {self.device}; rm {self.image}")
        return self.mount

    @classmethod
    def missing(cls) -> str:
        """Why this machine cannot make the disk ("" when it can)."""
        if os.geteuid() != 0:
            return "it needs root (a loop device, a mount, a blkio rule)"
        if not cls.THROTTLE.exists():
            return (f"no cgroup v1 blkio throttle ({cls.THROTTLE} is missing; "
                    "mount -t cgroup -o blkio cgroup /sys/fs/cgroup/blkio where the kernel has it)")
        if not os.access(cls.THROTTLE, os.W_OK):
            return f"{cls.THROTTLE} is not writable here"
        if not Path("/dev/loop-control").exists():
            return "no loop devices (/dev/loop-control is missing)"
        return ""

    def check(self) -> None:
        """Writes two seconds' worth of O_DIRECT blocks (fdatasync'd) and stops the benchmark when
        they went much faster than the cap: then the throttle does not hold here."""
        mib = min(512, max(16, 2 * self.mib_s))
        target = self.mount / ".bench-throttle-check"
        start = time.perf_counter()
        done = subprocess.run(["dd", "if=/dev/zero", f"of={target}", "bs=1M", f"count={mib}", "oflag=direct",
                               "conv=fdatasync", "status=none"], capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        target.unlink(missing_ok=True)
        if done.returncode != 0:
            die(f"--slow-disk: dd could not write {self.mount}: {done.stderr.strip()}")
        rate = mib / seconds
        self.measured = f"{mib} MiB direct + fdatasync at {rate:.1f} MiB/s"
        if rate > 1.5 * self.mib_s:
            die(f"--slow-disk: the blkio throttle does not hold on {self.device} here: dd wrote {rate:.0f} MiB/s, "
                f"not at most {self.mib_s}")

    def run(self, *argv: str) -> str:
        """Runs a setup command; stops the benchmark with its message when it fails."""
        done = subprocess.run([which(argv[0]) or argv[0], *argv[1:]], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            die(f"--slow-disk: {shlex.join(argv)} failed: {(done.stderr or done.stdout).strip()}")
        return done.stdout.strip()

    def stop(self) -> None:
        """Takes the disk down, whatever part of it was made: the rule, the mount, the loop device,
        the image. Says what it could not undo. A second Ctrl-C (or TERM) waits until it is done."""
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            self.undo()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)

    def undo(self) -> None:
        """stop()'s steps, each tried whatever the one before did."""
        steps = []
        if self.rule:
            steps.append((f"echo '{self.rule} 0' > {self.THROTTLE}",
                          lambda: self.THROTTLE.write_text(f"{self.rule} 0\n")))
        if self.mounted:
            steps.append((f"umount {self.mount}", self.unmount))
        if self.device:
            steps.append((f"losetup -d {self.device}", lambda: subprocess.run(
                [which("losetup") or "losetup", "-d", self.device], capture_output=True, check=True)))
        steps.append((f"rm {self.image}", lambda: self.image.unlink(missing_ok=True)))
        for command, step in steps:
            try:
                step()
            except (OSError, subprocess.SubprocessError) as error:
                log(f"slow disk: could not undo ({error}); run: {command}")
        self.rule, self.mounted, self.device = "", False, ""
        if self.mount.is_dir() and not self.mount.is_mount():
            shutil.rmtree(self.mount, ignore_errors=True)

    def unmount(self) -> None:
        """Unmounts the disk, retrying while a killed client still holds it, lazily at last."""
        umount = which("umount") or "umount"
        for _ in range(10):
            if subprocess.run([umount, str(self.mount)], capture_output=True, check=False).returncode == 0:
                return
            time.sleep(0.5)
        subprocess.run([umount, "--lazy", str(self.mount)], capture_output=True, check=True)


def out_need_mib(cfg: argparse.Namespace) -> int:
    """MiB the output folder may hold at once: the largest part's output (the small part keeps each
    run's folder until it ends), the disk probe's file, the daemon part's state; for the size of
    the --slow-disk image, with room for ext4's own blocks."""
    rounds = cfg.warmup + cfg.runs * PARTS["small"].rounds + 1
    wanted = {"single": cfg.size_mib, "checksum": cfg.size_mib, "proxy": cfg.size_mib, "capped": cfg.capped_mib,
              "mirrors": cfg.mirrors_mib,
              "ratelimit": cfg.rate_mib_s * cfg.rate_seconds, "daemon": 1024, "fleet": 1024,
              "small": -(-cfg.small_count * max(cfg.small_kib, 4) * rounds * (len(PARTS["small"].clients) + 1) // 1024)}
    need = max([cfg.probe_mib] + [wanted[p] for p in cfg.parts])
    return -(-(need * 5 // 4 + 1024) // 1024) * 1024


# ---------------------------------------------------------------------------------------------
# What is served


@dataclasses.dataclass
class Setup:
    """What one part serves and where its clients write."""

    source: Path  # the file (or, for many files, the folder) served
    name: str  # the output file's name ("" when the output is a folder of files)
    path: str  # the URL path on the server
    bytes: int  # bytes one run downloads
    files: int  # files one run downloads
    values: dict  # the part's own template values (URL list, digest, ...)
    best_bps: float = 0  # for the extra column: the capped server's limit, or the rate asked for


def keystream(password: str) -> subprocess.Popen:
    """An openssl process printing AES-128-CTR keystream (zeros encrypted with a key derived from
    PASSWORD): the same bytes on every run and machine, and as Scripts/lib/nginx.sh makes them."""
    with open("/dev/zero", "rb") as zero:
        return subprocess.Popen(["openssl", "enc", "-aes-128-ctr", "-pass", f"pass:{password}",
                                 "-nosalt", "-pbkdf2"], stdin=zero, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)


def read_exact(stream: subprocess.Popen, size: int) -> bytes:
    """Exactly SIZE bytes from STREAM's stdout."""
    data = stream.stdout.read(size)
    if len(data) != size:
        die(f"openssl enc gave {len(data)} bytes, not {size}")
    return data


def make_file(path: Path, mib: int) -> Path:
    """Writes MIB MiB of keystream to PATH, unless a file of that size is there already."""
    size = mib * MIB
    if path.is_file() and path.stat().st_size == size:
        return path
    log(f"creating {path.name} ({mib} MiB)")
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    stream = keystream("haul")
    try:
        with open(temporary, "wb") as out:
            for offset in range(0, size, 4 * MIB):
                out.write(read_exact(stream, min(4 * MIB, size - offset)))
            out.flush()
            os.fsync(out.fileno())  # written back now, not during the first downloads
    finally:
        stream.kill()
        stream.wait()
    temporary.replace(path)
    return path


def make_files(folder: Path, count: int, kib: int) -> Path:
    """Writes COUNT files of KIB KiB (file-0000.bin, ...: one keystream cut into pieces) into
    FOLDER, unless its marker says it holds exactly that set already."""
    marker = f"{count} files of {kib} KiB"
    if (folder / ".complete").is_file() and (folder / ".complete").read_text().strip() == marker:
        return folder
    log(f"creating {folder.name}/ ({marker})")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    stream = keystream("haul-files")
    try:
        for index in range(count):
            (folder / f"file-{index:04d}.bin").write_bytes(read_exact(stream, kib * 1024))
    finally:
        stream.kill()
        stream.wait()
    os.sync()
    (folder / ".complete").write_text(marker + "\n")
    return folder


def nginx_bytes(size: str) -> int:
    """An nginx size (a number with an optional k, m or g suffix, 1024-based) in bytes."""
    match = re.fullmatch(r"(\d+)([kKmMgG]?)", size)
    if not match:
        die(f"not an nginx size: '{size}' (a number with an optional k, m or g suffix)")
    return int(match.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[match.group(2).lower()]


def file_sha256(path: Path) -> str:
    """The SHA-256 of PATH's content, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(4 * MIB):
            digest.update(chunk)
    return digest.hexdigest()


def prepare(part: str, cfg: argparse.Namespace, server: Server) -> Setup:
    """Makes (or reuses) what PART serves, and the lists its clients read."""
    root = server.root
    if part == "proxy":
        source = make_file(root / "bench.bin", cfg.size_mib)
        if server.proxy is None:
            server.proxy = TinyProxy(server.work / "tinyproxy")
            server.proxy.start()
        return Setup(source, "proxy.bin", "/bench.bin", source.stat().st_size, 1, {"proxy": server.proxy.url})
    if part in ("single", "checksum"):
        source = make_file(root / "bench.bin", cfg.size_mib)
        setup = Setup(source, "bench.bin" if part == "single" else "checksum.bin", "/bench.bin",
                      source.stat().st_size, 1, {})
        if part == "checksum":
            log("checksum: hashing the source once for --checksum")
            setup.values["sha256"] = file_sha256(source)
        return setup
    if part == "capped":
        source = make_file(root / "capped" / "capped.bin", cfg.capped_mib)
        return Setup(source, "capped.bin", "/capped/capped.bin", source.stat().st_size, 1, {},
                     nginx_bytes(cfg.cap_rate) * cfg.connections)
    if part == "mirrors":
        return prepare_mirrors(cfg, server)
    if part == "ratelimit":
        source = make_file(root / "rate" / "rate.bin", cfg.rate_mib_s * cfg.rate_seconds)
        return Setup(source, "rate.bin", "/rate/rate.bin", source.stat().st_size, 1, {},
                     cfg.rate_mib_s * MIB)
    source = make_files(root / "small", cfg.small_count, cfg.small_kib)
    names = sorted(n for n in os.listdir(source) if n.startswith("file-"))
    urls = [f"{server.url('http')}/small/{name}" for name in names]
    url_list, curl_config = server.work / "small-urls.txt", server.work / "small-urls.curl"
    url_list.write_text("".join(f"{url}\n" for url in urls))
    curl_config.write_text("".join(f'url = "{url}"\n' for url in urls))
    return Setup(source, "", "/small/", len(names) * cfg.small_kib * 1024, len(names),
                 {"list": str(url_list), "curl_config": str(curl_config)})


def prepare_mirrors(cfg: argparse.Namespace, server: Server) -> Setup:
    """The mirrors part's file, its three URLs and a .meta4 listing them (with its size, no hash:
    neither client then spends time hashing), and the limit: the servers' sum at the connections
    each client opens to each."""
    source = make_file(server.root / "mirrors" / "mirrors.bin", cfg.mirrors_mib)
    size = source.stat().st_size
    urls = [server.mirror_url(index) + "/mirrors/mirrors.bin" for index in range(3)]
    meta4 = server.work / "mirrors.meta4"
    meta4.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<metalink xmlns="urn:ietf:params:xml:ns:metalink">\n'
                     f'  <file name="mirrors.bin">\n    <size>{size}</size>\n'
                     + "".join(f'    <url priority="{index + 1}">{url}</url>\n' for index, url in enumerate(urls))
                     + "  </file>\n</metalink>\n")
    fast = nginx_bytes(cfg.mirror_rate)
    values = {"mirror_1": urls[0], "mirror_2": urls[1], "mirror_3": urls[2], "meta4": str(meta4),
              "mirror_split": 3 * cfg.mirror_connections}
    return Setup(source, "mirrors.bin", "/mirrors/mirrors.bin", size, 1, values,
                 cfg.mirror_connections * (fast + fast + fast // 4))


# ---------------------------------------------------------------------------------------------
# One run: measured, checked


@dataclasses.dataclass
class Outcome:
    """How one run of a client went."""

    exit: int
    wall: float
    user: float
    sys: float
    rss_kib: int
    left: int  # processes of its group still running after it exited (killed then)


def execute(argv: list[str], log_path: Path, timeout: float, rss_file: Path | None) -> Outcome:
    """Runs ARGV in a process group of its own, output to LOG_PATH. Wall time is a monotonic clock
    around it, CPU time comes from wait4 (the child and what it waited for, nothing else), and
    peak RSS from GNU time wrapped around it when RSS_FILE is given. A run longer than TIMEOUT
    seconds is killed (its group) and gets exit 124."""
    if rss_file:
        argv = [GNU_TIME, "-q", "-f", "%M", "-o", str(rss_file), *argv]
    expired = threading.Event()
    with open(log_path, "wb") as out:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                 env=client_env(), start_new_session=True)
        timer = threading.Timer(timeout, lambda: (expired.set(), kill_group(child.pid)))
        timer.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)
            wall = time.perf_counter() - start
        except BaseException:  # interrupted: the client, in a session of its own, goes too
            kill_group(child.pid)
            child.wait()
            raise
        finally:
            timer.cancel()
    child.returncode = code = os.waitstatus_to_exitcode(status)
    left = kill_group(child.pid)
    if expired.is_set():
        code = 124
    elif code < 0:
        code = 128 - code
    return Outcome(code, wall, usage.ru_utime, usage.ru_stime, read_rss(rss_file), left)


def kill_group(pgid: int) -> int:
    """Kills what is left of the process group PGID (one this script started for a client);
    returns how many processes were still in it."""
    members = []
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text() if entry.isdigit() else ""
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry))
    for pid in members:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return len(members)


def read_rss(rss_file: Path | None) -> int:
    """The peak RSS in KiB that GNU time wrote (0 when there is none)."""
    try:
        return int(rss_file.read_text().split()[-1]) if rss_file else 0
    except (OSError, ValueError, IndexError):
        return 0


def same_bytes(a: Path, b: Path) -> bool:
    """True when files A and B hold the same bytes."""
    if a.stat().st_size != b.stat().st_size:
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(4 * MIB), fb.read(4 * MIB)
            if x != y:
                return False
            if not x:
                return True


def listing_problem(folder: Path, expected: set[str]) -> str:
    """Why FOLDER does not hold exactly the names EXPECTED ("" when it does)."""
    found = set(os.listdir(folder)) if folder.is_dir() else set()
    problems = []
    if missing := sorted(expected - found):
        problems.append(f"{len(missing)} of {len(expected)} missing ({' '.join(missing[:3])})")
    if extra := sorted(found - expected):
        problems.append(f"left other files beside the download ({' '.join(extra[:3])})")
    return "; ".join(problems)


def verify(client: Client, setup: Setup, folder: Path, log_path: Path) -> str:
    """Why what CLIENT wrote into FOLDER is wrong, or "" when it is right (see the module doc)."""
    if client.verify == "digest":
        printed = log_path.read_text(errors="replace")
        return "" if setup.values["sha256"] in printed else f"printed no or another digest: {printed[-200:]}"
    if client.verify == "received":
        printed = log_path.read_text(errors="replace").split()
        if problem := listing_problem(folder, set()):
            return problem
        return "" if printed and printed[-1] == str(setup.bytes) else f"received {printed[-1:]} bytes, not {setup.bytes}"
    expected = sorted(n for n in os.listdir(setup.source) if n.startswith("file-")) \
        if client.verify == "files" else [setup.name]
    if problem := listing_problem(folder, set(expected)):
        return problem
    if client.verify == "files":
        differ = [n for n in expected if not same_bytes(folder / n, setup.source / n)]
        return f"{len(differ)} files differ from their source ({' '.join(differ[:3])})" if differ else ""
    out = folder / setup.name
    if client.verify == "bytes":
        return "" if same_bytes(out, setup.source) else f"differs from the source ({out.stat().st_size} bytes)"
    if client.verify == "sha256":
        return "" if file_sha256(out) == setup.values["sha256"] else "its SHA-256 is not the source's"
    if out.stat().st_size != setup.bytes:  # written
        return f"{out.stat().st_size} bytes, not {setup.bytes}"
    extents = output_of([which("filefrag") or "filefrag", "-v", str(out)])
    return "blocks of the file were never written" if "unwritten" in extents or not extents else ""


# ---------------------------------------------------------------------------------------------
# Counters: deterministic figures from one untimed run per client

PERF_EVENTS = {"instructions:u": "instr_u", "instructions:k": "instr_k",
               "raw_syscalls:sys_enter": "syscalls", "context-switches": "ctx_switches",
               "page-faults": "page_faults"}


class Counter:
    """Counts what one run does: "perf" (perf stat, the EVENTS it supports here), "strace"
    (strace -f -c: syscalls only, and slow) or "callgrind" (valgrind: user-space instructions,
    very slow; haul runs as a copy without debug information, which valgrind cannot read)."""

    def __init__(self, tool: str, work: Path, events: tuple[str, ...] = ()):
        self.tool, self.events, self.folder = tool, events, work / f"counter-{tool}"
        self.haul_copies: dict[str, str] = {}

    def describe(self) -> str:
        """The command that counts, for the report."""
        if self.tool == "perf":
            return f"perf stat -e {','.join(self.events)}"
        return "strace -f -c" if self.tool == "strace" else "valgrind --tool=callgrind --trace-children=yes"

    def wrap(self, argv: list[str]) -> list[str]:
        """ARGV run under the counter (its report goes to a fresh folder)."""
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)
        out = str(self.folder / "out")
        if self.tool == "perf":
            return ["perf", "stat", "-x,", "-o", out, "-e", ",".join(self.events), "--", *argv]
        if self.tool == "strace":
            return ["strace", "-f", "-c", "-o", out, "--", *argv]
        return ["valgrind", "-q", "--tool=callgrind", "--trace-children=yes",
                f"--callgrind-out-file={out}.%p", *argv]

    def haul(self, binary: str) -> str:
        """The haul binary to count: for callgrind a copy stripped of debug information."""
        if self.tool != "callgrind":
            return binary
        if binary not in self.haul_copies:
            copy = self.folder.parent / f"haul-stripped-{len(self.haul_copies)}"
            shutil.copyfile(binary, copy)
            subprocess.run([require("strip"), "-g", str(copy)], check=True)
            copy.chmod(0o755)
            self.haul_copies[binary] = str(copy)
        return self.haul_copies[binary]

    def read(self) -> dict[str, float]:
        """The counts of the last run, by name (instr_u, instr_k, syscalls, ir, ...)."""
        texts = [p.read_text(errors="replace") for p in sorted(self.folder.glob("out*"))]
        counts: dict[str, float] = {}
        for text in texts:
            for line in text.splitlines():
                fields = line.strip().split(",") if self.tool == "perf" else line.split()
                if self.tool == "perf" and len(fields) > 2 and fields[2] in PERF_EVENTS:
                    if fields[0].replace(".", "").isdigit():
                        value = float(fields[0])
                        counts[PERF_EVENTS[fields[2]]] = int(value) if value.is_integer() else value
                elif self.tool == "strace" and fields[-1:] == ["total"] and len(fields) >= 5:
                    counts["syscalls"] = int(fields[3])
                elif self.tool == "callgrind" and fields[:1] == ["summary:"]:   # "totals:" repeats it
                    counts["ir"] = counts.get("ir", 0) + int(fields[1])
        return counts


def perf_supports(event: str) -> bool:
    """True when `perf stat -e EVENT` counts here (VMs often lack the hardware counters)."""
    with tempfile.NamedTemporaryFile("r") as out:
        done = subprocess.run(["perf", "stat", "-x,", "-o", out.name, "-e", event, "--", "true"],
                              capture_output=True, text=True, check=False)
        report = out.read()
    return done.returncode == 0 and any(
        line.split(",")[0].replace(".", "").isdigit() and f",{event}," in line for line in report.splitlines())


def pick_counter(choice: str, work: Path) -> tuple[Counter | None, str]:
    """The counter for the untimed runs (perf where it counts syscalls, else strace), and a note
    on what this machine counts."""
    if choice == "none":
        return None, "none (--counters none)"
    if choice in ("auto", "perf") and (which("perf") or try_require("perf")):
        supported = tuple(e for e in PERF_EVENTS if perf_supports(e))
        missing = [e for e in PERF_EVENTS if e not in supported]
        note = f"{', '.join(missing)}: not supported by perf on this machine" if missing else ""
        if "raw_syscalls:sys_enter" in supported:
            return Counter("perf", work, supported), note
        if choice == "perf":
            die(f"perf cannot count syscalls here; {note}")
    require("strace")
    return Counter("strace", work), "perf cannot count syscalls here, so strace -f -c does (no instructions)"


def try_require(command: str) -> str | None:
    """Like require, but None instead of stopping when the package cannot be installed."""
    try:
        return require(command)
    except SystemExit as error:
        log(str(error))
        return None


# ---------------------------------------------------------------------------------------------
# The rounds


@dataclasses.dataclass
class Bench:
    """Everything one benchmark run shares: options, server, binaries, results so far."""

    cfg: argparse.Namespace
    server: Server
    work: Path
    out: Path  # the output folders' parent: beside the sources, or --out-dir's, or --slow-disk's
    counters: list[Counter]
    counter_note: str
    runs: list[dict] = dataclasses.field(default_factory=list)
    counts: list[dict] = dataclasses.field(default_factory=list)
    setups: dict[str, Setup] = dataclasses.field(default_factory=dict)
    failures: int = 0
    aside: int = 0
    daemon: dict = dataclasses.field(default_factory=dict)  # the daemon part's figures, per daemon
    daemon_scale: dict = dataclasses.field(default_factory=dict)  # ... with --paused paused, per daemon
    daemon_failures: dict = dataclasses.field(default_factory=dict)  # ... through --failures failures
    fleet: dict = dataclasses.field(default_factory=dict)  # the fleet part's figures: postgresql, sqlite
    out_note: str = "beside the sources"  # where the outputs go, for the report's header


def expand(template: tuple[str, ...], values: dict) -> list[str]:
    """The command line of TEMPLATE with VALUES put in (list values spliced as elements)."""
    argv: list[str] = []
    for item in template:
        whole = re.fullmatch(r"\{(\w+)\}", item)
        if whole and isinstance(values.get(whole.group(1)), list):
            argv += values[whole.group(1)]
        else:
            argv.append(item.format(**values))
    return argv


def template_values(bench: Bench, setup: Setup, variant: str, folder: Path, display: bool = False) -> dict:
    """The values a client's template may use. With DISPLAY, short stand-ins for the paths (for
    the commands printed under a table)."""
    cfg, tls = bench.cfg, variant == "https"
    ca = "CA.pem" if display else str(bench.server.ca)
    values = {
        "haul": "haul" if display else cfg.haul_bin, "haul_args": shlex.split(cfg.haul_args),
        "out": "OUT" if display else str(folder / setup.name), "dir": "DIR" if display else str(folder),
        "name": "OUT" if display else setup.name, "url": "URL" if display else bench.server.url(variant) + setup.path,
        "python": "python3" if display else sys.executable, "self": "Scripts/bench.py" if display else str(SCRIPT),
        "haul_tls": [f"--cacert={ca}"] if tls else [], "curl_tls": ["--cacert", ca] if tls else [],
        "aria2c_tls": [f"--ca-certificate={ca}"] if tls else [],
        "connections": cfg.connections, "mirror_connections": cfg.mirror_connections, "jobs": cfg.jobs,
        "rate": f"{cfg.rate_mib_s}M",
        "link_rate": cfg.link_rate, "bytes": setup.bytes, "writers": cfg.disk_writers,
    }
    values.update(setup.values)
    if display:
        values.update(list="LIST", curl_config="CONFIG", sha256="HEX", haul_b="haul-b")
    return values


def run_once(bench: Bench, part: Part, variant: str, client: Client, setup: Setup,
             counter: Counter | None = None) -> tuple[Outcome, str, dict]:
    """Runs CLIENT once into a fresh folder (under COUNTER if given, else timed with GNU time),
    checks what it wrote, and clears the folder. Returns the outcome, why it failed ("" when it
    did not) and the counts."""
    folder = bench.out / part.name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    values = template_values(bench, setup, variant, folder)
    if client.copy_source:
        shutil.copyfile(setup.source, folder / setup.name)
        os.sync()
    for key in ("haul", "haul_b"):
        if counter and key in values:
            values[key] = counter.haul(values[key])
    argv = expand(client.argv, values)
    log_path = bench.work / "client.log"
    outcome = execute(counter.wrap(argv) if counter else argv, log_path, bench.cfg.timeout,
                      None if counter else bench.work / "rss")
    reason = failure(outcome, bench.cfg.timeout) or verify(client, setup, folder, log_path)
    counts = counter.read() if counter and not reason else {}
    if part.aside:
        # On ext4 without a journal the inodes of deleted files are not reused for minutes and
        # each new file's allocation steps over them, so removing 1,000 files before every run
        # slows every later run's file creations alike: the folder waits until the part is over.
        bench.aside += 1
        folder.rename(bench.out / "aside" / f"{part.name}-{bench.aside}")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    os.sync()
    if reason:
        bench.failures += 1
        said = log_path.read_text(errors="replace")[-300:].strip()
        log(f"FAIL: {part.name} {variant} {client.name}: {reason}; client said: {said}")
    return outcome, reason, counts


def failure(outcome: Outcome, timeout: float) -> str:
    """Why the run failed by its exit or its leftovers ("" when it did not)."""
    if outcome.exit == 124:
        return f"killed after {timeout:g} s"
    if outcome.exit != 0:
        return f"exit {outcome.exit}"
    if outcome.left:
        return f"left {outcome.left} process(es) running after it exited"
    return ""


def run_rounds(bench: Bench, part: Part, variant: str, clients: list[Client], setup: Setup) -> None:
    """WARMUP + RUNS rounds, every client once per round in the same order, then one untimed
    run per client under each counter."""
    cfg = bench.cfg
    for index in range(cfg.warmup + cfg.runs * part.rounds):
        phase, number = ("warmup", index + 1) if index < cfg.warmup else ("run", index - cfg.warmup + 1)
        for client in clients:
            o, reason, _ = run_once(bench, part, variant, client, setup)
            bench.runs.append({"part": part.name, "variant": variant, "client": client.name,
                               "phase": phase, "round": number, "exit": o.exit, "verified": int(not reason),
                               "reason": reason, "bytes": setup.bytes, "files": setup.files,
                               "wall_s": round(o.wall, 4), "user_s": round(o.user, 4),
                               "sys_s": round(o.sys, 4), "maxrss_kib": o.rss_kib})
            log(f"{part.name} {variant} {phase} {number} {client.name}: {o.wall:.3f} s wall, "
                f"{o.user + o.sys:.2f} s CPU, {o.rss_kib / 1024:.1f} MiB RSS{', FAILED' if reason else ''}")
    for counter in bench.counters:
        if counter.tool == "callgrind" and part.name not in cfg.callgrind:
            continue
        for client in clients:
            _, reason, counts = run_once(bench, part, variant, client, setup, counter)
            bench.counts.append({"part": part.name, "variant": variant, "client": client.name,
                                 "tool": counter.tool, "verified": int(not reason), "bytes": setup.bytes,
                                 "files": setup.files, **counts})
            log(f"{part.name} {variant} {client.name} under {counter.tool}: "
                + (", ".join(f"{k} {v:,.0f}" for k, v in counts.items()) or "FAILED"))


def part_clients(part: Part, variant: str, cfg: argparse.Namespace) -> list[Client]:
    """The clients of PART that run in VARIANT: --clients' filter, haul-b beside haul with
    --haul-b-bin, and only those whose program is built."""
    chosen = []
    for client in part.clients:
        if client.variants and variant not in client.variants:
            continue
        if cfg.clients and client.name not in cfg.clients:
            continue
        if client.beside_haul and not (Path(cfg.haul_bin).parent / client.beside_haul).exists():
            if cfg.clients:
                die(f"{client.name} needs {Path(cfg.haul_bin).parent / client.beside_haul}")
            continue
        chosen.append(client)
        if client.name == "haul" and cfg.haul_b_bin:
            chosen.append(dataclasses.replace(client, name="haul-b", argv=tuple(
                "{haul_b}" if a == "{haul}" else a for a in client.argv)))
    return chosen


def run_part(bench: Bench, name: str) -> None:
    """Prepares PART's files, then runs its rounds for each variant."""
    part, cfg = PARTS[name], bench.cfg
    setup = bench.setups[name] = prepare(name, cfg, bench.server)
    if cfg.haul_b_bin:
        setup.values["haul_b"] = cfg.haul_b_bin
    (bench.out / "aside").mkdir(parents=True, exist_ok=True)
    for variant in (cfg.protocols if name == "single" else ["http"]):
        clients = part_clients(part, variant, cfg)
        if not clients:
            log(f"{name} {variant}: no client left to run")
            continue
        log(f"{name} {variant}: {', '.join(c.name for c in clients)}; {cfg.warmup} warm-up + {cfg.runs * part.rounds} runs")
        run_rounds(bench, part, variant, clients, setup)
    shutil.rmtree(bench.out / "aside", ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# The daemon part: haul daemon against aria2c --enable-rpc, through their JSON-RPC


@dataclasses.dataclass(frozen=True)
class DaemonServer:
    """A JSON-RPC download daemon of the daemon part: its command line (a template: {haul},
    {dir}, {state}, {port}, {secret}) with one download at a time."""

    name: str
    argv: tuple[str, ...]


DAEMONS = (
    DaemonServer("haul", ("{haul}", "daemon", "--dir={dir}", "--state={state}", "--listen=127.0.0.1:{port}",
                          "--secret={secret}", "-j", "1")),
    DaemonServer("aria2c", ("aria2c", "--enable-rpc", "--rpc-listen-port={port}", "--rpc-secret={secret}", "-j", "1",
                            "--dir={dir}", "--quiet=true", "--rpc-max-request-size=16M", "--max-download-result=100000")),
)

# What the daemon part measures, per daemon: (key, label, unit).
DAEMON_MEASURES = (
    ("tell_waiting_ms", "tellWaiting(0, 1000) median", "ms"),
    ("multicall_s", "1,000 addUri in one system.multicall, median (max)", "s"),
    ("idle_cpu_pct", "idle CPU with the queue, % of a core", "%"),
    ("rss_mib", "RSS with the queue", "MiB"),
)

# The issue's targets on haul's figures: (key, label, comparison, limit); "vs:aria2c" compares
# haul's figure with aria2c's (haul's must be at most aria2c's).
DAEMON_TARGETS = (
    ("tell_waiting_ms", "tellWaiting(0, 1000) median ms", "<=", 20),
    ("tell_waiting_ms", "tellWaiting(0, 1000) median vs aria2c's", "vs:aria2c", 1.0),
    ("multicall_s", "1,000 addUri in one multicall, s (slowest call)", "<=", 1.0),
    ("idle_cpu_pct", "idle CPU, % of a core", "<", 0.1),
    ("rss_mib", "RSS MiB with the queue", "<", 64),
)


class RPC:
    """A JSON-RPC client over one kept-alive HTTP connection to 127.0.0.1:PORT/jsonrpc."""

    def __init__(self, port: int, secret: str):
        import http.client
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.token = f"token:{secret}"

    def call(self, method: str, *params) -> tuple[object, float]:
        """The result of METHOD and the seconds from sending the call to reading the whole answer."""
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                           "params": ([] if method.startswith("system.") else [self.token]) + list(params)})
        start = time.perf_counter()
        self.connection.request("POST", "/jsonrpc", body, {"Content-Type": "application/json"})
        answer = self.connection.getresponse().read()
        elapsed = time.perf_counter() - start
        reply = json.loads(answer)
        if "error" in reply:
            die(f"{method}: {reply['error']}")
        return reply["result"], elapsed


def process_cpu_seconds(pid: int) -> float:
    """CPU seconds PID's threads have run so far, to the nanosecond (the first field of each
    /proc/PID/task/*/schedstat; /proc/PID/stat counts 10 ms ticks, too coarse for 0.1% of 10 s).
    A thread that ends takes its time with it: measure after the parked threads retired."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total / 1e9


def process_rss_mib(pid: int) -> float:
    """The resident set of PID in MiB (/proc/PID/status VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure_daemon(bench: Bench, daemon: DaemonServer, origin: str, figures=None, phase: str = "") -> dict:
    """Starts DAEMON on an empty state, measures it with FIGURES (daemon_figures: fills its
    queue, times the calls, measures it idle), stops it."""
    cfg = bench.cfg
    figures = figures or daemon_figures
    folder = bench.out / f"daemon-{daemon.name}{phase}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    port = free_ports(1)[0]
    values = {"haul": cfg.haul_bin, "dir": str(folder / "downloads"), "state": str(folder / "state.db"),
              "port": port, "secret": "bench-secret"}
    argv = expand(daemon.argv, values)
    log_file = open(folder / "daemon.log", "w")
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file,
                               env=client_env(), start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not port_open(port):
            if process.poll() is not None or time.monotonic() > deadline:
                die(f"{daemon.name} did not start listening; see {folder}/daemon.log")
            time.sleep(0.05)
        return figures(RPC(port, "bench-secret"), process.pid, origin, cfg)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            kill_group(process.pid)
            process.wait()
        log_file.close()


def daemon_figures(rpc: RPC, pid: int, origin: str, cfg: argparse.Namespace) -> dict:
    """The measures of one running daemon (see DAEMON_MEASURES)."""
    rpc.call("aria2.addUri", [f"{origin}/slow/slow.bin"])   # holds the one slot, slowly
    time.sleep(1)
    multicalls = []
    for batch in range(cfg.queued // 1000):
        calls = [{"methodName": "aria2.addUri", "params": [rpc.token, [f"{origin}/slow/q-{batch}-{index}.bin"]]}
                 for index in range(1000)]
        result, elapsed = rpc.call("system.multicall", calls)
        if len(result) != 1000 or not all(isinstance(entry, list) for entry in result):
            die("system.multicall: not every addUri succeeded")
        multicalls.append(elapsed)
    stat, _ = rpc.call("aria2.getGlobalStat")
    if int(stat["numWaiting"]) < cfg.queued or int(stat["numActive"]) != 1:
        die(f"the queue is not as expected: {stat}")
    timings = [rpc.call("aria2.tellWaiting", 0, 1000)[1] for _ in range(cfg.rpc_calls)][1:]
    rpc.connection.close()
    time.sleep(6)   # parked threads retire after 5 s; what is left is what an idle daemon keeps
    before = process_cpu_seconds(pid)
    time.sleep(cfg.idle_seconds)
    idle = process_cpu_seconds(pid) - before
    return {"tell_waiting_ms": statistics.median(timings) * 1000, "tell_waiting_all_ms": [t * 1000 for t in timings],
            "multicall_s": statistics.median(multicalls), "multicall_max_s": max(multicalls),
            "idle_cpu_pct": idle / cfg.idle_seconds * 100, "rss_mib": process_rss_mib(pid)}


def timed_adds(rpc: RPC, urls: list[str], paused: bool) -> float:
    """Seconds one system.multicall of an addUri for each of URLS takes (each paused or not)."""
    options = {"pause": "true"} if paused else {}
    calls = [{"methodName": "aria2.addUri", "params": [rpc.token, [url], options]} for url in urls]
    result, elapsed = rpc.call("system.multicall", calls)
    if len(result) != len(urls) or not all(isinstance(entry, list) for entry in result):
        die("system.multicall: not every addUri succeeded")
    return elapsed


def daemon_scale_figures(rpc: RPC, pid: int, origin: str, cfg: argparse.Namespace) -> dict:
    """1,000 adds (paused and not) on an empty daemon, then with --paused paused downloads:
    the adds again, tellWaiting(0, 1000), changePosition, unpauseAll and pauseAll, each timed;
    one slow download holds the slot throughout."""
    rpc.call("aria2.addUri", [f"{origin}/slow/slow.bin"])
    batch = lambda tag: [f"{origin}/slow/{tag}-{index}.bin" for index in range(1000)]
    empty_paused = timed_adds(rpc, batch("e-paused"), paused=True)
    empty_plain = timed_adds(rpc, batch("e-plain"), paused=False)
    for number in range(max(0, cfg.paused // 1000 - 1)):
        timed_adds(rpc, batch(f"p{number}"), paused=True)
    paused = timed_adds(rpc, batch("l-paused"), paused=True)
    plain = timed_adds(rpc, batch("l-plain"), paused=False)
    stat, _ = rpc.call("aria2.getGlobalStat")
    waiting = int(stat["numWaiting"])
    if waiting < cfg.paused + 1000:
        die(f"the queue is not as expected: {stat}")
    tell = statistics.median(rpc.call("aria2.tellWaiting", 0, 1000)[1] for _ in range(5))
    last, _ = rpc.call("aria2.tellWaiting", waiting - 1, 1)
    move = rpc.call("aria2.changePosition", last[0]["gid"], 0, "POS_SET")[1]
    unpause_all = rpc.call("aria2.unpauseAll")[1]
    pause_all = rpc.call("aria2.pauseAll")[1]
    return {"queued": waiting, "add_empty_paused_s": empty_paused, "add_empty_s": empty_plain,
            "add_paused_s": paused, "add_s": plain, "tell_waiting_ms": tell * 1000, "move_ms": move * 1000,
            "unpause_all_s": unpause_all, "pause_all_s": pause_all, "rss_mib": process_rss_mib(pid)}


def daemon_failure_figures(rpc: RPC, pid: int, origin: str, cfg: argparse.Namespace) -> dict:
    """--failures downloads from a port nothing listens on, added in multicalls of 1,000 to a
    daemon with one slot: each fails at once and the next starts. Then every result is paged
    with tellStopped, and the daemon's RSS and descriptors are read."""
    dead = f"http://127.0.0.1:{free_ports(1)[0]}"
    start = time.perf_counter()
    for number in range(cfg.failures // 1000):
        timed_adds(rpc, [f"{dead}/f{number}-{index}.bin" for index in range(1000)], paused=False)
    deadline = time.monotonic() + 600
    while True:
        stat, _ = rpc.call("aria2.getGlobalStat")
        if int(stat["numStopped"]) >= cfg.failures and int(stat["numActive"]) == 0 and int(stat["numWaiting"]) == 0:
            break
        if time.monotonic() > deadline:
            die(f"the failures did not all end: {stat}")
        time.sleep(0.05)
    ended = time.perf_counter() - start
    listed, failed, paging = 0, 0, []
    while True:
        page, elapsed = rpc.call("aria2.tellStopped", listed, 1000, ["gid", "status", "errorCode"])
        paging.append(elapsed)
        if not page:
            break
        listed += len(page)
        failed += sum(1 for entry in page if entry["status"] == "error" and entry.get("errorCode", "0") != "0")
    return {"failures": cfg.failures, "failures_s": ended, "listed": listed, "failed": failed,
            "tell_stopped_ms": statistics.median(paging) * 1000, "rss_mib": process_rss_mib(pid),
            "fds": len(list(Path(f"/proc/{pid}/fd").iterdir()))}


def run_daemon_part(bench: Bench) -> None:
    """Measures every daemon of DAEMONS in turn against the slow origin."""
    (bench.server.root / "slow").mkdir(parents=True, exist_ok=True)
    make_file(bench.server.root / "slow" / "slow.bin", 64)   # the queued URLs need no file: they never start
    origin = bench.server.url("http")
    wanted = bench.cfg.clients
    for daemon in DAEMONS:
        if wanted and daemon.name not in wanted:
            continue
        log(f"daemon: {daemon.name}: {bench.cfg.queued} queued, {bench.cfg.rpc_calls} tellWaiting calls, "
            f"{bench.cfg.idle_seconds} s idle")
        bench.daemon[daemon.name] = measure_daemon(bench, daemon, origin)
        log(f"daemon: {daemon.name}: " + ", ".join(f"{k} {v:.3g}" for k, v in bench.daemon[daemon.name].items()
                                                    if not isinstance(v, list)))
        log(f"daemon: {daemon.name}: {bench.cfg.paused} paused, then adds, lists, unpauseAll and pauseAll")
        bench.daemon_scale[daemon.name] = measure_daemon(bench, daemon, origin, daemon_scale_figures, "-scale")
        log(f"daemon: {daemon.name}: {bench.cfg.failures} downloads that fail at once")
        bench.daemon_failures[daemon.name] = measure_daemon(bench, daemon, origin, daemon_failure_figures, "-failures")
        for figures in (bench.daemon_scale[daemon.name], bench.daemon_failures[daemon.name]):
            log(f"daemon: {daemon.name}: " + ", ".join(f"{k} {v:.3g}" for k, v in figures.items()))


# The scale measures (key, label, unit) and the issue's targets on haul's: (label, value, comparison, limit).
DAEMON_SCALE_MEASURES = (
    ("add_empty_paused_s", "1,000 paused addUri, empty daemon", "s"),
    ("add_empty_s", "1,000 addUri, empty daemon", "s"),
    ("add_paused_s", "1,000 paused addUri, with the paused ones", "s"),
    ("add_s", "1,000 addUri, with the paused ones", "s"),
    ("tell_waiting_ms", "tellWaiting(0, 1000) median", "ms"),
    ("move_ms", "changePosition of the last to the front", "ms"),
    ("unpause_all_s", "unpauseAll", "s"),
    ("pause_all_s", "pauseAll", "s"),
    ("rss_mib", "RSS after", "MiB"),
)
DAEMON_FAILURE_MEASURES = (
    ("failures_s", "added and ended, all of them", "s"),
    ("listed", "results listed by tellStopped paging", ""),
    ("failed", "of them error with an error code", ""),
    ("tell_stopped_ms", "tellStopped(offset, 1000) median", "ms"),
    ("rss_mib", "RSS after", "MiB"),
    ("fds", "open descriptors after", ""),
)


def scale_targets(scale: dict, failures: dict) -> list[tuple[str, float, str, float]]:
    """The issue's targets on haul's scale and failure figures."""
    targets = []
    if scale:
        for key, empty in (("add_paused_s", "add_empty_paused_s"), ("add_s", "add_empty_s")):
            targets.append((f"{key} vs the empty daemon's, x", scale[key] / scale[empty], "<=", 2.0))
            targets.append((f"{key}, s", scale[key], "<=", 0.1))
        targets += [("unpauseAll, s", scale["unpause_all_s"], "<=", 1.0), ("pauseAll, s", scale["pause_all_s"], "<=", 1.0)]
    if failures:
        targets += [("failures listed", failures["listed"], ">=", failures["failures"]),
                    ("failures ended as error", failures["failed"], ">=", failures["failures"]),
                    ("RSS after the failures, MiB", failures["rss_mib"], "<", 128)]
    return targets


def measure_table(title: str, measures: tuple, figures: dict) -> list[str]:
    """One markdown table of MEASURES, a column per daemon of FIGURES."""
    names = list(figures)
    lines = ["", title, "", "| measure | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for key, label, unit in measures:
        cells = [f"{figures[name][key]:.3f}" if unit == "s" else f"{figures[name][key]:.4g}" for name in names]
        lines.append(f"| {label}" + (f" ({unit})" if unit else "") + " | " + " | ".join(cells) + " |")
    return lines


def daemon_scale_report(bench: Bench) -> list[str]:
    """The tables of the daemon part at scale: the paused queue and the failures."""
    cfg, lines = bench.cfg, []
    if bench.daemon_scale:
        lines += measure_table(f"### daemon: {cfg.paused:,} paused behind one slow download (-j 1)", DAEMON_SCALE_MEASURES,
                               bench.daemon_scale)
    if bench.daemon_failures:
        lines += measure_table(f"### daemon: {cfg.failures:,} downloads that fail at once (-j 1)", DAEMON_FAILURE_MEASURES,
                               bench.daemon_failures)
    if lines:
        lines.append("")
        for label, value, comparison, limit in scale_targets(bench.daemon_scale.get("haul"), bench.daemon_failures.get("haul")):
            met = {"<=": value <= limit, "<": value < limit, ">=": value >= limit}[comparison]
            lines.append(f"- target: {label}: {value:.3g} ({comparison} {limit:g}): {'met' if met else 'MISSED'}")
    return lines


def daemon_report(bench: Bench) -> list[str]:
    """The daemon part's table, targets and reproduce line."""
    cfg, figures = bench.cfg, bench.daemon
    if not figures:
        return []
    names = list(figures)
    lines = ["", f"### daemon: {cfg.queued} queued behind one slow download (-j 1), through JSON-RPC", "",
             "| measure | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for key, label, unit in DAEMON_MEASURES:
        cells = []
        for name in names:
            value = figures[name][key]
            cell = f"{value:.3f}" if unit == "s" else f"{value:.2f}"
            if key == "multicall_s":
                cell += f" ({figures[name]['multicall_max_s']:.3f})"
            cells.append(cell)
        lines.append(f"| {label} ({unit}) | " + " | ".join(cells) + " |")
    lines.append("")
    if "haul" in figures:
        haul = figures["haul"]
        for key, label, comparison, limit in DAEMON_TARGETS:
            value = haul["multicall_max_s"] if key == "multicall_s" else haul[key]
            if comparison == "vs:aria2c":
                if "aria2c" not in figures:
                    continue
                ratio = value / figures["aria2c"][key]
                met = ratio <= limit
                lines.append(f"- target: {label}: {ratio:.2f}x (at most {limit:g}x): {'met' if met else 'MISSED'}")
            else:
                met = value <= limit if comparison == "<=" else value < limit
                lines.append(f"- target: {label}: {value:.3g} ({comparison} {limit:g}): {'met' if met else 'MISSED'}")
    lines.append("- commands: " + "; ".join(f"{d.name}: `{shlex.join(expand(d.argv, {'haul': 'haul', 'dir': 'DIR', 'state': 'STATE', 'port': 'PORT', 'secret': 'S'}))}`"
                                             for d in DAEMONS if d.name in figures))
    lines.append(f"- reproduce: `{reproduce(cfg, ['daemon'])}`")
    return lines


# ---------------------------------------------------------------------------------------------
# The report


def cpu(row: dict) -> float:
    """A run's CPU seconds (user + sys)."""
    return row["user_s"] + row["sys_s"]


def client_stats(rows: list[dict]) -> dict[str, dict]:
    """Medians over each client's verified measured runs, in the order the clients ran."""
    stats = {}
    for name in dict.fromkeys(r["client"] for r in rows):
        mine = [r for r in rows if r["client"] == name]
        ok = [r for r in mine if r["verified"]]
        s = {"n": len(ok), "total": len(mine)}
        if ok:
            s.update(wall=statistics.median(r["wall_s"] for r in ok),
                     bps=statistics.median(r["bytes"] / r["wall_s"] for r in ok),
                     fps=statistics.median(r["files"] / r["wall_s"] for r in ok),
                     cpu=statistics.median(cpu(r) for r in ok),
                     rss=statistics.median(r["maxrss_kib"] / 1024 for r in ok),
                     rss_max=max(r["maxrss_kib"] / 1024 for r in ok))
        stats[name] = s
    return stats


def paired(rows: list[dict], a: str, b: str, ratio) -> list[float]:
    """RATIO(a's run, b's run) for each round in which both were verified (the clients of a
    round run back to back, so a slow spell of the machine slows both)."""
    def by_round(name):
        return {r["round"]: r for r in rows if r["client"] == name and r["verified"]}
    mine, theirs = by_round(a), by_round(b)
    return [ratio(mine[k], theirs[k]) for k in sorted(set(mine) & set(theirs))]


def paired3(rows: list[dict], a: str, b: str, c: str, ratio) -> list[float]:
    """RATIO(a's run, b's run, c's run) for each round in which all three were verified."""
    def by_round(name):
        return {r["round"]: r for r in rows if r["client"] == name and r["verified"]}
    first, second, third = by_round(a), by_round(b), by_round(c)
    return [ratio(first[k], second[k], third[k]) for k in sorted(set(first) & set(second) & set(third))]


def speed(h: dict, o: dict) -> float:
    """The other's wall time over haul's: haul's speed relative to it."""
    return o["wall_s"] / h["wall_s"]


def cpu_ratio(h: dict, o: dict) -> float:
    """haul's CPU time over the other's."""
    return cpu(h) / cpu(o) if cpu(o) > 0 else float("nan")


def spread(values: list[float], digits: int = 2) -> str:
    """The median of VALUES, with their range when there are several."""
    if not values:
        return "–"
    middle = f"{statistics.median(values):.{digits}f}"
    return middle if len(values) == 1 else f"{middle} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def count_cell(value: float | None) -> str:
    """A counter per MiB or per file: three significant figures, thousands grouped."""
    if value is None:
        return "–"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


COUNT_COLUMNS = (("syscalls", "syscalls"), ("instr_u", "instr:u"), ("instr_k", "instr:k"),
                 ("ir", "Ir (callgrind)"))


def counter_cells(bench: Bench, part: Part, variant: str) -> tuple[list[str], dict[str, list[str]]]:
    """The counter columns' headers and, per client, their cells (per file or per MiB)."""
    counts = [c for c in bench.counts if c["part"] == part.name and c["variant"] == variant]
    unit = "file" if part.per_file else "MiB"
    present = [(key, label) for key, label in COUNT_COLUMNS if any(key in c for c in counts)]
    cells: dict[str, list[str]] = {}
    for c in counts:
        per = c["files"] if part.per_file else c["bytes"] / MIB
        row = cells.setdefault(c["client"], ["–"] * len(present))
        for i, (key, _) in enumerate(present):
            if key in c:
                row[i] = count_cell(c[key] / per)
            elif not c["verified"] and row[i] == "–":
                row[i] = "failed"
    return [f"{label}/{unit}" for _, label in present], cells


def part_table(bench: Bench, part: Part, variant: str, rows: list[dict]) -> list[str]:
    """The markdown table of one part and variant."""
    stats = client_stats(rows)
    has_haul = stats.get("haul", {}).get("n", 0) > 0
    best = bench.setups[part.name].best_bps
    headers = ["client", "runs", "wall s", "files/s" if part.per_file else "MB/s", "CPU s", "peak RSS MiB"]
    headers += [f"of the {part.of}"] if part.of and best else []
    headers += ["haul speed ×", "haul CPU ×"] if has_haul else []
    count_headers, counts = counter_cells(bench, part, variant)
    lines = ["| " + " | ".join(headers + count_headers) + " |", "|" + "---|" * (len(headers) + len(count_headers))]
    for name, s in stats.items():
        cells = [name, f"{s['n']}/{s['total']}"]
        if not s["n"]:
            cells += ["failed"] * (len(headers) - 2)
        else:
            rate = f"{s['fps']:.0f}" if part.per_file else f"{s['bps'] / 1e6:.1f}"
            cells += [f"{s['wall']:.3f}", rate, f"{s['cpu']:.3f}", f"{s['rss']:.1f}"]
            cells += [f"{s['bps'] / best:.3f}"] if part.of and best else []
            if has_haul and name == "haul":
                cells += ["–", "–"]
            elif has_haul:
                cells += [spread(paired(rows, "haul", name, speed)), spread(paired(rows, "haul", name, cpu_ratio))]
        cells += counts.get(name, ["–"] * len(count_headers))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def added_time(rows: list[dict], plain: str, summed: str) -> list[float]:
    """Seconds SUMMED took beyond PLAIN, round by round."""
    return paired(rows, summed, plain, lambda s, p: s["wall_s"] - p["wall_s"])


def part_notes(part: Part, rows: list[dict]) -> list[str]:
    """Lines under a table: the disk's floor (single), what --checksum costs (checksum)."""
    stats, notes = client_stats(rows), []
    ok = {name for name, s in stats.items() if s["n"]}
    if {"disk", "curl"} <= ok:
        notes.append(f"- disk (dd writers alone, no network: about what this disk takes) reached "
                     f"{spread(paired(rows, 'curl', 'disk', lambda c, d: c['wall_s'] / d['wall_s']))}x "
                     f"curl's speed paired by round" + (f"; haul {spread(paired(rows, 'haul', 'disk', speed))}x "
                                                         "the disk's" if "haul" in ok else ""))
    if {"network", "disk"} <= ok:
        bound = lambda h, n, d: max(n["wall_s"], d["wall_s"]) / h["wall_s"]
        for name in ("haul", "haul-x1"):
            if name in ok:
                ratios = paired3(rows, name, "network", "disk", bound)
                notes.append(f"- {name}: {spread(ratios)}x the bound's speed (the slower of the network alone, "
                             f"a receive loop that discards the bytes, and the disk alone), paired by round")
    for plain, label in (("haul", "4 connections"), ("haul-x1", "one connection"),
                         ("haul-x1-link", "one connection, --limit-rate")):
        if {plain, plain + "+sum"} <= ok:
            added = added_time(rows, plain, plain + "+sum")
            share = [a / stats[plain]["wall"] * 100 for a in added]
            notes.append(f"- {label}: --checksum adds {spread(added, 3)} s to {stats[plain]['wall']:.3f} s "
                         f"({spread(share, 1)}%)" + (f"; openssl dgst -sha256 alone takes {stats['openssl']['wall']:.3f} s"
                                                      if "openssl" in ok else ""))
    return notes


def metric(name: str, rows: list[dict], best: float) -> float | None:
    """One target's figure for haul (see TARGETS), or None when it cannot be had."""
    stats = client_stats(rows)
    haul = stats.get("haul", {})
    if not haul.get("n"):
        return None
    kind, _, other = name.partition(":")
    values: list[float] = []
    if kind == "speed":
        values = paired(rows, "haul", other, speed)
    elif kind == "x1-speed":
        values = paired(rows, "haul-x1", other, speed)
    elif kind == "bound":
        values = paired3(rows, other, "network", "disk", lambda h, n, d: max(n["wall_s"], d["wall_s"]) / h["wall_s"])
    elif kind == "wall":
        values = paired(rows, "haul", other, lambda h, o: h["wall_s"] / o["wall_s"])
    elif kind == "wall-meta4":
        values = paired(rows, "haul-meta4", other, lambda h, o: h["wall_s"] / o["wall_s"])
    elif kind == "cpu":
        values = paired(rows, "haul", other, cpu_ratio)
    elif kind == "sum-cost" and stats.get("openssl", {}).get("n"):
        values = [a / stats["openssl"]["wall"] for a in added_time(rows, "haul", "haul+sum")]
    elif kind == "rss":
        return haul["rss_max"]
    elif kind in ("of", "rate-error") and best:
        return haul["bps"] / best if kind == "of" else abs(haul["bps"] / best - 1) * 100
    return statistics.median(values) if values else None


def part_targets(part: Part, variant: str, rows: list[dict], best: float) -> list[str]:
    """The issues' targets for this part, each met or missed."""
    lines = []
    for where, label, name, sign, limit in TARGETS:
        if where not in (part.name, f"{part.name}/{variant}"):
            continue
        value = metric(name, rows, best)
        if value is not None:
            met = value >= limit if sign == ">=" else value <= limit
            lines.append(f"{label}: {value:.2f} (target {sign} {limit:g}) {'met' if met else 'MISSED'}")
    return ["- targets: " + "; ".join(lines)] if lines else []


# The options that shape each part, for the command that reproduces its table.
PART_OPTIONS = {
    "single": ("size_mib", "protocols", "disk_writers"), "capped": ("capped_mib", "connections", "cap_rate"),
    "mirrors": ("mirrors_mib", "mirror_connections", "mirror_rate"),
    "small": ("small_count", "small_kib", "jobs"), "ratelimit": ("rate_mib_s", "rate_seconds"),
    "checksum": ("size_mib", "link_rate"), "proxy": ("size_mib",),
    "daemon": ("queued", "rpc_calls", "idle_seconds", "slow_rate", "paused", "failures"),
    "fleet": ("fleet_queued", "fleet_nodes", "fleet_jobs", "fleet_window", "rpc_calls", "idle_seconds", "slow_rate"),
}


def reproduce(cfg: argparse.Namespace, parts: list[str]) -> str:
    """The command line that runs PARTS again with the same options."""
    argv = ["python3", "Scripts/bench.py", "--parts", ",".join(parts), "--runs", str(cfg.runs),
            "--warmup", str(cfg.warmup)]
    names = dict.fromkeys(n for p in parts for n in PART_OPTIONS[p])
    for name in names:
        value = getattr(cfg, name)
        argv += [f"--{name.replace('_', '-')}", ",".join(value) if isinstance(value, list) else str(value)]
    for name in ("clients", "haul_args", "haul_b_bin", "work_dir", "out_dir", "slow_disk", "callgrind"):
        value = getattr(cfg, name)
        if value:
            argv += [f"--{name.replace('_', '-')}", ",".join(value) if isinstance(value, list) else str(value)]
    if cfg.haul_bin_given:
        argv += ["--haul-bin", cfg.haul_bin]
    if cfg.counters != "auto":
        argv += ["--counters", cfg.counters]
    if cfg.timeout != 600:
        argv += ["--timeout", f"{cfg.timeout:g}"]
    return shlex.join(argv)


def part_report(bench: Bench, name: str, variant: str) -> list[str]:
    """The section of one part and variant: title, table, notes, commands, reproduce line."""
    part, cfg, setup = PARTS[name], bench.cfg, bench.setups[name]
    rows = [r for r in bench.runs if r["part"] == name and r["variant"] == variant and r["phase"] == "run"]
    if not rows:
        return []
    title = part.title.format(VARIANT=variant.upper(), rate_mib=cfg.rate_mib_s * cfg.rate_seconds,
                              cap=f"{nginx_bytes(cfg.cap_rate) / MIB:g} MiB/s",
                              mirror_cap=f"{nginx_bytes(cfg.mirror_rate) / MIB:g} MiB/s", **vars(cfg))
    lines = ["", f"### {name}{f' ({variant})' if name == 'single' else ''}: {title}", ""]
    lines += part_table(bench, part, variant, rows)
    lines += [""] + part_notes(part, rows) + part_targets(part, variant, rows, setup.best_bps)
    display = template_values(bench, setup, variant, Path("DIR"), display=True)
    lines.append("- commands: " + "; ".join(
        f"{c.name}: `{shlex.join(expand(c.argv, display))}`" for c in part_clients(part, variant, cfg)))
    lines.append(f"- reproduce: `{reproduce(cfg, [name])}`")
    return lines


def environment(bench: Bench, before: dict, after: dict) -> list[str]:
    """The report's header: when, what, on which machine and in which phase of it."""
    cfg = bench.cfg
    commit = output_of(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"]) or "unknown"
    if output_of(["git", "-C", str(REPO), "status", "--porcelain"]):
        commit += " (with uncommitted changes)"
    versions = [f"{version([cfg.haul_bin, '--version'])} ({cfg.haul_bin})"]
    if cfg.haul_b_bin:
        versions.append(f"haul-b: {version([cfg.haul_b_bin, '--version'])} ({cfg.haul_b_bin})")
    for tool, flag in (("curl", "--version"), ("aria2c", "--version"), ("axel", "--version"), ("openssl", "version")):
        if which(tool):
            versions.append(version([tool, flag]))
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    counted = "; ".join(filter(None, [f"`{c.describe()}`" for c in bench.counters] + [bench.counter_note]))
    nginx = output_of(["nginx", "-v"]).split("/")[-1]
    return [
        f"haul bench: {now}, commit {commit}, {os.cpu_count()} cores, {' '.join(os.uname()[0:3:2])}",
        f"- server: nginx {nginx} on 127.0.0.1 (sendfile on); downloads written to {before['fs']} {bench.out_note}",
        f"- load average (1, 5, 15 min): {before['load']} before the runs, {after['load']} after",
        f"- writes of {cfg.probe_mib} MiB into the output folder: {before['probe']} before the runs, {after['probe']} after",
        f"- clients: {'; '.join(versions)}",
        f"- each part: {cfg.warmup} warm-up round(s), then {cfg.runs} measured"
        + "".join(f" ({cfg.runs * PARTS[n].rounds} for {n})" for n in cfg.parts if n in PARTS and PARTS[n].rounds > 1)
        + "; clients interleaved round robin; "
        "medians over the verified measured runs; haul speed ×: the other's wall time over haul's, "
        "haul CPU ×: haul's CPU time over the other's, each round by round, then the median (range)",
        f"- counters: one more run per client after the timed rounds, not timed (the counter slows it), "
        f"verified like the others: {counted}" if bench.counters else f"- counters: {counted}",
    ]


def version(argv: list[str]) -> str:
    """The first words of a tool's version line, up to the version number."""
    words = (output_of(argv).splitlines() or ["unknown"])[0].split()
    for index, word in enumerate(words):
        if re.search(r"\d\.\d", word):
            return " ".join(words[:index + 1])
    return " ".join(words[:2])


def disk_probe(folder: Path, mib: int) -> str:
    """How fast dd writes MIB MiB into FOLDER right now, into the page cache and past it
    (O_DIRECT into a reserved file, then fdatasync): the machine's phase, which moves every
    client's time with it."""
    if not mib:
        return "not measured"
    target = folder / ".bench-probe"

    def rate(argv: list[str]) -> str:
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, check=False)
        seconds = time.perf_counter() - start
        return f"{mib * MIB / 1e6 / seconds:.0f} MB/s" if done.returncode == 0 else "n/a"

    cached = rate(["dd", "if=/dev/zero", f"of={target}", "bs=64k", f"count={mib * 16}"])
    target.unlink(missing_ok=True)
    with open(target, "wb") as f:
        os.posix_fallocate(f.fileno(), 0, mib * MIB)
    direct = rate(["dd", "if=/dev/zero", f"of={target}", "bs=4M", f"count={mib // 4}",
                   "oflag=direct", "conv=notrunc,fdatasync"])
    target.unlink(missing_ok=True)
    return f"page cache {cached}, direct {direct}"


def machine_phase(bench: Bench) -> dict:
    """The load average, the output folder's file system and the disk probe, now."""
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    fs = output_of(["stat", "-f", "-c", "%T", str(bench.out)])
    return {"load": load, "fs": fs, "probe": disk_probe(bench.out, bench.cfg.probe_mib)}


def write_results(bench: Bench, folder: Path, header: list[str], report: str) -> list[Path]:
    """Writes the raw runs (TSV), the counters (TSV), everything (JSON) and the report
    (markdown) into FOLDER; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    paths = [folder / f"bench-{stamp}{suffix}" for suffix in (".tsv", "-counters.tsv", ".json", ".md")]
    for path, rows in ((paths[0], bench.runs), (paths[1], bench.counts)):
        columns = list(dict.fromkeys(k for r in rows for k in r))
        path.write_text("\t".join(columns) + "\n" + "".join(
            "\t".join(str(r.get(c, "")) for c in columns) + "\n" for r in rows))
    options = {k: v for k, v in vars(bench.cfg).items()}
    paths[2].write_text(json.dumps({"environment": header, "options": options, "runs": bench.runs,
                                    "counters": bench.counts, "fleet": bench.fleet}, indent=1) + "\n")
    paths[3].write_text(report)
    return paths


# ---------------------------------------------------------------------------------------------
# The disk client: no network, only this disk


def disk_writer(path: str, size: int, writers: int) -> int:
    """Reserves PATH at SIZE bytes, has WRITERS dd processes write it in O_DIRECT blocks (4 MiB,
    or 1 MiB when SIZE is not a multiple of 4 MiB), then fdatasyncs it: about the most this disk
    takes, the floor of a client that makes its bytes durable before it says it is done. Several
    writers: this virtual disk takes more than one writer gives it."""
    block = 4 if size % (4 * MIB) == 0 else 1
    blocks = size // (block * MIB)
    per = -(-blocks // writers)
    with open(path, "wb") as f:
        os.posix_fallocate(f.fileno(), 0, size)
    children = []
    for first in range(0, blocks, per):
        children.append(subprocess.Popen(["dd", "if=/dev/zero", f"of={path}", f"bs={block}M",
                                          f"count={min(per, blocks - first)}", f"seek={first}",
                                          "oflag=direct", "conv=notrunc", "status=none"]))
    failed = [c for c in children if c.wait() != 0]
    fd = os.open(path, os.O_WRONLY)
    try:
        os.fdatasync(fd)
    finally:
        os.close(fd)
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------------
# Options and the whole run

# Defaults that --quick changes (unless given): small sizes, one round, no warm-up.
FULL = {"runs": 5, "warmup": 1, "size_mib": 2048, "capped_mib": 500, "mirrors_mib": 512, "small_count": 1000,
        "rate_seconds": 10, "probe_mib": 256, "queued": 10000, "rpc_calls": 21, "idle_seconds": 10,
        "paused": 100000, "failures": 10000, "fleet_queued": 100000, "fleet_window": 20}
QUICK = {"runs": 1, "warmup": 0, "size_mib": 64, "capped_mib": 50, "mirrors_mib": 50, "small_count": 100,
         "rate_seconds": 2, "probe_mib": 16, "queued": 2000, "rpc_calls": 5, "idle_seconds": 3,
         "paused": 10000, "failures": 2000, "fleet_queued": 5000, "fleet_window": 5}


def names(known: tuple[str, ...]):
    """An argparse type: a comma- or space-separated list of names out of KNOWN."""
    def parse(text: str) -> list[str]:
        chosen = [n for n in re.split(r"[,\s]+", text) if n]
        unknown = [n for n in chosen if n not in known]
        if unknown or not chosen:
            raise argparse.ArgumentTypeError(f"unknown {' '.join(unknown) or 'empty list'} (known: {' '.join(known)})")
        return chosen
    return parse


def ranged(low: int, high: int):
    """An argparse type: an integer from LOW to HIGH."""
    def parse(text: str) -> int:
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not within {low}-{high}")
        return value
    return parse


def option_parser() -> argparse.ArgumentParser:
    """The command line's options."""
    all_clients = tuple(dict.fromkeys(c.name for p in PARTS.values() for c in p.clients)) + ("haul-b",)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add = p.add_argument
    add("--parts", type=names(PART_NAMES), default=list(PART_NAMES), help="parts to run, in this order (default: all)")
    add("--runs", type=ranged(1, 1000), help="measured rounds per part (default 5; --quick 1); small runs 4x as many")
    add("--warmup", type=ranged(0, 100), help="warm-up rounds, not counted (default 1; --quick 0)")
    add("--quick", action="store_true", help="a smoke test: small sizes, one round, no warm-up")
    add("--clients", type=names(all_clients), default=[], help="run only these clients (e.g. haul,curl)")
    add("--size-mib", type=ranged(1, 1 << 20), help="the single and checksum parts' file (default 2048)")
    add("--protocols", type=names(("http", "https")), default=["http", "https"], help="single: http,https")
    add("--disk-writers", type=ranged(1, 256), default=16, help="single: dd writers of the disk client")
    add("--capped-mib", type=ranged(1, 1 << 20), help="capped: the file (default 500)")
    add("--connections", type=ranged(1, 16), default=8, help="capped: connections of each client")
    add("--cap-rate", default="25m", help="capped: the server's cap per connection, nginx units")
    add("--mirrors-mib", type=ranged(1, 1 << 20), help="mirrors: the file (default 512)")
    add("--mirror-connections", type=ranged(1, 16), default=4, help="mirrors: connections of each client to each server")
    add("--mirror-rate", default="20m", help="mirrors: the fast servers' cap per connection, nginx units (the third: a quarter)")
    add("--small-count", type=ranged(1, 10000), help="small: files (default 1000)")
    add("--small-kib", type=ranged(1, 1 << 20), default=64, help="small: KiB per file")
    add("--jobs", type=ranged(1, 256), default=16, help="small: downloads at once")
    add("--rate-mib-s", type=ranged(1, 10000), default=20, help="ratelimit: the rate asked for")
    add("--rate-seconds", type=ranged(1, 3600), help="ratelimit: seconds the file takes at it (default 10)")
    add("--link-rate", default="400M", help="checksum: haul --limit-rate of the -link clients")
    add("--queued", type=ranged(1000, 100000), help="daemon: downloads queued (default 10000; a multiple of 1000)")
    add("--rpc-calls", type=ranged(2, 1000), help="daemon: timed tellWaiting calls, the first not counted (default 21)")
    add("--idle-seconds", type=ranged(1, 600), help="daemon: seconds the idle CPU time is measured over (default 10)")
    add("--slow-rate", default="2k", help="daemon: the slow origin's rate per connection, nginx units")
    add("--paused", type=ranged(1000, 1000000), help="daemon: paused downloads behind the timed adds (default 100000)")
    add("--failures", type=ranged(1000, 1000000), help="daemon: downloads that fail at once (default 10000)")
    add("--fleet-queued", type=ranged(1000, 1000000), help="fleet: downloads queued (default 100000; --quick 5000; "
        "a multiple of 1000)")
    add("--fleet-nodes", type=ranged(2, 8), default=3, help="fleet: daemons on the one PostgreSQL queue")
    add("--fleet-jobs", type=ranged(1, 1024), default=32, help="fleet: -j of each node while the claims are counted")
    add("--fleet-window", type=ranged(1, 3600), help="fleet: seconds the ended downloads are counted over (default 20)")
    add("--haul-bin", default=os.environ.get("HAUL_BIN", ""), help="haul binary (default: $HAUL_BIN, else built)")
    add("--build", choices=("release", "installed", "none"), default="release",
        help="without --haul-bin: swift build -c release --product haul, or Scripts/build-release.sh "
             "(installed: the Swift runtime linked in, haul-urlsession beside it), or the existing release build")
    add("--haul-b-bin", default="", help="another haul build, run as client haul-b beside haul (an A/B)")
    add("--haul-args", default="", help="extra options for every haul client")
    add("--work-dir", default="", help="server folder, kept: the files made there are reused")
    add("--out-dir", default="", help="write the downloads (and the disk bound, the probe) into a new folder "
        "in this one, on another disk, instead of beside the sources in the work folder")
    add("--slow-disk", type=ranged(0, 100000), default=0, metavar="MIB_S",
        help="write the downloads (and the disk bound, the probe) to a disk made for the run that takes "
             "at most MIB_S MiB/s: ext4 on a loop device whose writes the cgroup v1 blkio throttle caps, "
             "fdatasync included (root; removed again on any exit)")
    add("--results-dir", default="", help="where the TSV, JSON and markdown go (default: a new temp folder)")
    add("--counters", choices=("auto", "perf", "strace", "none"), default="auto",
        help="what counts the untimed run (auto: perf where it counts syscalls, else strace)")
    add("--callgrind", type=names(PART_NAMES), nargs="?", const=["small"], default=[],
        help="also count user-space instructions with valgrind (slow) in these parts (default: small); "
             "haul must be the installed build (--build installed): valgrind 3.19 stops on a haul "
             "linked to the shared Swift runtime")
    add("--timeout", type=float, default=600, help="seconds a run may take before it is killed and fails")
    add("--probe-mib", type=ranged(0, 1 << 20), help="MiB dd writes to probe the disk, 0 skips (default 256)")
    return p


def parse_options(argv: list[str] | None) -> argparse.Namespace:
    """The options, with --quick's or the full defaults filled in, and checked."""
    cfg = option_parser().parse_args(argv)
    for key, value in (QUICK if cfg.quick else FULL).items():
        if getattr(cfg, key) is None:
            setattr(cfg, key, value)
    nginx_bytes(cfg.cap_rate)
    if not re.fullmatch(r"\d+[KMG]?", cfg.link_rate):
        die(f"--link-rate: a number with an optional K, M or G suffix, not '{cfg.link_rate}'")
    if cfg.probe_mib % 4:
        die("--probe-mib must be a multiple of 4")
    if cfg.fleet_queued % 1000:
        die("--fleet-queued must be a multiple of 1000")
    if cfg.out_dir and cfg.slow_disk:
        die("--out-dir and --slow-disk: give one of them")
    if cfg.slow_disk and (why := SlowDisk.missing()):
        die(f"--slow-disk: this machine cannot make a slow disk: {why}")
    if cfg.out_dir and not Path(cfg.out_dir).is_dir():
        die(f"--out-dir: {cfg.out_dir} is not a folder")
    cfg.haul_bin_given = bool(cfg.haul_bin)
    return cfg


def resolve_haul(cfg: argparse.Namespace) -> None:
    """Sets cfg.haul_bin: the one given, else the release build (built now unless --build none)."""
    if not cfg.haul_bin:
        if cfg.build == "installed":
            log("building haul: Scripts/build-release.sh")
            built = subprocess.run([str(REPO / "Scripts/build-release.sh")], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, text=True, check=True)
            cfg.haul_bin = built.stdout.strip().splitlines()[-1]
        else:
            swift = ["swift", "build", "-c", "release", "--package-path", str(REPO)]
            if cfg.build == "release":
                log("building haul: swift build -c release --product haul")
                subprocess.run(swift + ["--product", "haul"], stdin=subprocess.DEVNULL, stdout=sys.stderr, check=True)
            cfg.haul_bin = str(REPO / ".build" / "release" / "haul")
    for binary in filter(None, (cfg.haul_bin, cfg.haul_b_bin)):
        if not os.access(binary, os.X_OK):
            die(f"haul binary not found or not executable: {binary}")
    cfg.haul_bin = str(Path(cfg.haul_bin).resolve())
    cfg.haul_b_bin = str(Path(cfg.haul_b_bin).resolve()) if cfg.haul_b_bin else ""


def install_tools(cfg: argparse.Namespace) -> None:
    """Installs what the chosen clients and the measuring need and is missing."""
    tools = {GNU_TIME, "openssl", "nginx", "dd"}
    for name in cfg.parts:
        if name == "daemon":
            tools.update(d.argv[0] for d in DAEMONS if not d.argv[0].startswith("{"))
            continue
        if name == "fleet":
            tools.add("psql")
            continue
        for variant in (cfg.protocols if name == "single" else ["http"]):
            tools.update(t for c in part_clients(PARTS[name], variant, cfg) for t in c.tools())
    if cfg.callgrind:
        tools.update(("valgrind", "strip"))
    for tool in sorted(tools):
        require(tool)


def fleet_module():
    """Scripts/lib/bench_fleet.py, the fleet part (given this module for its helpers)."""
    if str(SCRIPT.parent / "lib") not in sys.path:
        sys.path.insert(0, str(SCRIPT.parent / "lib"))
    import bench_fleet
    return bench_fleet


def run_all(bench: Bench) -> tuple[dict, dict]:
    """Runs every chosen part; returns the machine's phase before and after."""
    before = machine_phase(bench)
    if before["fs"] == "tmpfs":
        log(f"warning: {bench.out} is on tmpfs; give --work-dir a folder on disk for realistic numbers")
    log(f"client under test: {bench.cfg.haul_bin}; parts: {', '.join(bench.cfg.parts)}")
    for name in bench.cfg.parts:
        if name == "daemon":
            run_daemon_part(bench)
        elif name == "fleet":
            fleet_module().run_fleet_part(sys.modules[__name__], bench)
        else:
            run_part(bench, name)
    return before, machine_phase(bench)


def main(argv: list[str] | None = None) -> int:
    """Runs the benchmark and prints the report; exit 1 when any run failed."""
    cfg = parse_options(argv)
    resolve_haul(cfg)
    install_tools(cfg)
    work = Path(cfg.work_dir or tempfile.mkdtemp(prefix="haul-bench-work.")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    server = Server(work, cfg.cap_rate, cfg.slow_rate, cfg.mirror_rate)
    slow = SlowDisk(work, cfg.slow_disk, out_need_mib(cfg)) if cfg.slow_disk else None
    out_dir = None
    try:
        server.setup()
        counter, note = pick_counter(cfg.counters, work)
        counters = [counter] if counter else []
        if cfg.callgrind:
            counters.append(Counter("callgrind", work))
        if slow:
            out = slow.start() / "out"
            out_note = slow.describe()
        elif cfg.out_dir:
            out = out_dir = Path(tempfile.mkdtemp(prefix="haul-bench-out.", dir=cfg.out_dir)).resolve()
            out_note = f"in {out} (--out-dir), the sources in {work}"
        else:
            out, out_note = work / "out", "beside the sources"
        bench = Bench(cfg, server, work, out, counters, note, out_note=out_note)
        bench.out.mkdir(exist_ok=True)
        server.start()
        before, after = run_all(bench)
    finally:
        server.stop()
        if slow:
            slow.stop()
        if out_dir:
            shutil.rmtree(out_dir, ignore_errors=True)
        if not cfg.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    header = environment(bench, before, after)
    sections = [line for name in cfg.parts if name not in RPC_PARTS
                for variant in (cfg.protocols if name == "single" else ["http"])
                for line in part_report(bench, name, variant)]
    if "daemon" in cfg.parts:
        sections += daemon_report(bench)
        sections += daemon_scale_report(bench)
    if "fleet" in cfg.parts:
        sections += fleet_module().fleet_report(sys.modules[__name__], bench)
    report = "\n".join(header + sections + ["", f"- all parts: `{reproduce(cfg, cfg.parts)}`"]) + "\n"
    print(report)
    results = Path(cfg.results_dir or tempfile.mkdtemp(prefix="haul-bench."))
    log("results: " + ", ".join(str(p) for p in write_results(bench, results, header, report)))
    if bench.failures:
        log(f"{bench.failures} run(s) failed verification or exited non-zero")
    return 1 if bench.failures else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if sys.argv[1:2] == ["--disk-writer"]:
        sys.exit(disk_writer(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("interrupted")
        sys.exit(130)
