"""What the soaks share (Scripts/soak-daemon.py, Scripts/soak-fleet.py): settings read from the
environment, haul-test-origin with its faults on, the plan of files and of calls, file digests."""

import hashlib
import json
import os
import random
import subprocess
import sys
import urllib.error
import urllib.request

KIB, MIB = 1024, 1024 * 1024


def setting(tool, name, default, kind=int):
    """The environment's `name` as `kind`, or `default`; a value that does not parse ends the run."""
    text = os.environ.get(name, "")
    try:
        return kind(text) if text else default
    except ValueError:
        sys.exit(f"{tool}: {name}={text} is not a valid value")


class Origin:
    """haul-test-origin with faults on (`odds`: the share of GETs each fault hits), paced at `rate`
    bytes per second per connection when given."""

    def __init__(self, tool, binary, seed, odds, rate=0):
        switches = [f"--chaos={seed}"] + [f"--{name}={share}" for name, share in odds.items()]
        if rate:
            switches.append(f"--rate={rate}")
        self.process = subprocess.Popen([binary] + switches, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http://127.0.0.1:"):
            raise SystemExit(f"{tool}: FAIL: the origin did not start")
        self.port = int(self.url.rsplit(":", 1)[1])
        self.digests = {}

    def sha256(self, size, seed):
        key = (size, seed)
        if key not in self.digests:
            with urllib.request.urlopen(f"{self.url}/sha256/{size}?seed={seed}", timeout=60) as answer:
                self.digests[key] = answer.read().decode().strip()
        return self.digests[key]


def plan_files(count, seed, largest):
    """(name, size, content seed) per download: most small, some medium, a few large."""
    rng = random.Random(seed)
    files = []
    for index in range(count):
        roll = rng.random()
        low, high = (KIB, 256 * KIB) if roll < 0.85 else (256 * KIB, 8 * MIB) if roll < 0.97 else (8 * MIB, largest)
        high = max(high, low)
        size = int(round(low * (high / low) ** rng.random()))
        files.append((f"f{index}.bin", size, seed * 10_000 + index * 10))
    biggest = max(range(count), key=lambda index: files[index][1])
    name, _, content = files[biggest]
    files[biggest] = (name, largest, content)   # the top of the range is always soaked
    return files


def plan_adds(count, rng, largest_batch):
    """Lists of file indexes, one per call: alone (addUri) or a batch (system.multicall)."""
    calls, index = [], 0
    while index < count:
        size = 1 if rng.random() < 0.3 else rng.randint(2, largest_batch)
        calls.append(list(range(index, min(count, index + size))))
        index += size
    return calls


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(4 * MIB):
            digest.update(chunk)
    return digest.hexdigest()


MAXIMUM_VERSION = 3   # HaulServer.Chaos.maximumVersion: a file may change this many times


def judge(gid, file, status, root, origin, figures, problems, expected_files):
    """One download's verdict from its `tellStatus`: complete under `root` with the bytes of one of
    the origin's versions of `file` (name, size, seed), or failed with a typed error (its partial
    files then expected), else a problem. Counts into `figures`, notes into `problems`."""
    name, size, seed = file
    path = status["files"][0]["path"] if status.get("files") else ""
    if status["status"] == "complete":
        expected_files.add(name)
        if path != os.path.join(root, name):
            figures["corrupt"] += 1
            problems.append(f"{gid} ({name}) completed as '{path}'")
            return
        actual = sha256_of(path) if os.path.exists(path) else "missing"
        versions = [v for v in range(MAXIMUM_VERSION + 1) if origin.sha256(size, seed + v) == actual]
        if versions:
            figures["complete"] += 1
            figures["versions"] += versions[0] > 0
        else:
            figures["corrupt"] += 1
            problems.append(f"corrupt: {gid} {name} ({size} bytes): {actual[:16]} matches no version")
    elif status["status"] == "error":
        code = status.get("errorCode", "")
        figures["failed"][code] = figures["failed"].get(code, 0) + 1
        if not code or code == "0" or not status.get("errorMessage"):
            problems.append(f"{gid} ({name}) failed without a typed error: {status}")
        expected_files.update({name + ".part", name + ".resume"})
    else:
        problems.append(f"{gid} ({name}) is still {status['status']}")


def duplicated_urls(by_url, figures, problems):
    """Notes every URL listed under more than one GID."""
    for uri, gids in by_url.items():
        if len(gids) > 1:
            figures["duplicated"] += 1
            problems.append(f"duplicated: {uri} has {len(gids)} downloads {gids}")


def stray_files(root, expected_files, figures, problems, where):
    """Notes every file below `root` that is not expected (`where` names the folder in the note)."""
    for folder, _, names in os.walk(root):
        for name in names:
            relative = os.path.relpath(os.path.join(folder, name), root)
            if relative not in expected_files:
                figures["strays"] += 1
                problems.append(f"stray file in {where}: {relative}")


def rpc_call(url, secret, method, params, timeout):
    """One JSON-RPC call to `url`, each call carrying the token (inside a `system.multicall` too);
    the answer's (result, error). Raises OSError or ValueError when it is not answered."""
    if method == "system.multicall":
        params = ([dict(call, params=[f"token:{secret}"] + call["params"]) for call in params[0]],)
    else:
        params = (f"token:{secret}",) + tuple(params)
    body = json.dumps({"jsonrpc": "2.0", "id": "soak", "method": method, "params": list(params)}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            reply = json.load(answer)
    except urllib.error.HTTPError as error:
        reply = json.load(error)
    return reply.get("result"), reply.get("error")


def end_processes(processes):
    """Kills and reaps the processes still running (`None` entries are skipped)."""
    for process in processes:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
