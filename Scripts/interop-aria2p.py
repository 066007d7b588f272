#!/usr/bin/env python3
"""Drives `haul daemon` with a client nobody here wrote: aria2p (its API and its CLI) and
websocket-client, both from PyPI, against files served on loopback by haul-test-origin.

    python3 Scripts/interop-aria2p.py        # HAUL_BIN=path/to/haul to pick the binary

Installs aria2p and websocket-client into a private virtual environment, starts the origin and
two daemons on free loopback ports (one with a generated secret, one with --secret=), and checks:
add, list, pause, resume, remove, global stats and notifications through the API (aria2p's
notification listener, which opens its socket without a call, against both); add, show, pause, resume,
remove (with --all and --force), purge and call through the CLI; the downloaded bytes against
the origin's. Exits non-zero on the first
failure, printing the daemon's log.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def log(message):
    print(f"interop-aria2p: {message}", flush=True)


def binaries():
    """The haul binary and haul-test-origin beside it (built when missing)."""
    haul = os.environ.get("HAUL_BIN")
    if not haul:
        subprocess.run(["swift", "build", "--product", "haul"], cwd=ROOT, check=True, stdin=subprocess.DEVNULL)
        folder = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, check=True, capture_output=True,
                                text=True).stdout.strip()
        haul = os.path.join(folder, "haul")
    origin = os.path.join(os.path.dirname(haul), "haul-test-origin")
    if not os.path.exists(origin):
        subprocess.run(["swift", "build", "--product", "haul-test-origin"], cwd=ROOT, check=True, stdin=subprocess.DEVNULL)
    return haul, origin


def install_clients(folder):
    """A virtual environment with aria2p and websocket-client; its python."""
    venv = os.path.join(folder, "venv")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    python = os.path.join(venv, "bin", "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "aria2p", "websocket-client"], check=True)
    return python


class Daemon:
    """A `haul daemon` on a free loopback port."""

    def __init__(self, haul, folder, extra):
        os.makedirs(folder, exist_ok=True)
        self.folder = folder
        self.stderr = open(os.path.join(folder, "daemon.log"), "w+")
        self.process = subprocess.Popen(
            [haul, "daemon", f"--dir={folder}/downloads", f"--state={folder}/state.db", "--listen=127.0.0.1:0"] + extra,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr)
        deadline = time.time() + 20
        while time.time() < deadline:
            match = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.log())
            if match:
                self.port = int(match.group(1))
                secret_file = os.path.join(folder, "state.secret")
                self.secret = open(secret_file).read().strip() if os.path.exists(secret_file) else ""
                return
            time.sleep(0.05)
        raise RuntimeError("the daemon did not start:\n" + self.log())

    def log(self):
        self.stderr.flush()
        with open(self.stderr.name) as text:
            return text.read()

    def stop(self):
        self.process.terminate()
        status = self.process.wait(timeout=20)
        if status != 0:
            raise RuntimeError(f"the daemon exited {status} on SIGTERM")


def run_checks(python, origin_url, daemon, open_daemon, scratch):
    """The checks, in a child python that has aria2p; raises on failure."""
    script = os.path.join(scratch, "checks.py")
    with open(script, "w") as out:
        out.write(CHECKS)
    environment = dict(os.environ, ORIGIN=origin_url, PORT=str(daemon.port), SECRET=daemon.secret,
                       OPEN_PORT=str(open_daemon.port), ARIA2P=os.path.join(os.path.dirname(python), "aria2p"),
                       DOWNLOADS=os.path.join(daemon.folder, "downloads"))
    subprocess.run([python, script], check=True, env=environment)


CHECKS = r'''
import json, os, subprocess, threading, time, urllib.request
import aria2p, websocket

ORIGIN, SECRET, ARIA2P = os.environ["ORIGIN"], os.environ["SECRET"], os.environ["ARIA2P"]
PORT, OPEN_PORT, DOWNLOADS = int(os.environ["PORT"]), int(os.environ["OPEN_PORT"]), os.environ["DOWNLOADS"]

def check(condition, what):
    if not condition:
        raise SystemExit(f"interop-aria2p: FAILED: {what}")
    print(f"interop-aria2p: ok: {what}", flush=True)

def wait(condition, what, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return check(True, what)
        time.sleep(0.05)
    check(False, what)

def origin_bytes(path):
    return urllib.request.urlopen(ORIGIN + path).read()

api = aria2p.API(aria2p.Client(host="http://localhost", port=PORT, secret=SECRET))

# Notifications go to every WebSocket, as aria2 sends them: one that made a call with the token,
# one that made none, and aria2p's own listener with the secret in force.
heard, strangers = [], []
listener = websocket.create_connection(f"ws://localhost:{PORT}/jsonrpc", timeout=30)
listener.send(json.dumps({"jsonrpc": "2.0", "id": "auth", "method": "aria2.getVersion", "params": ["token:" + SECRET]}))
check("version" in json.loads(listener.recv())["result"], "a WebSocket call with the token is answered")
listener.settimeout(None)
stranger = websocket.create_connection(f"ws://localhost:{PORT}/jsonrpc", timeout=2)
def listen(socket, into):
    try:
        while True:
            into.append(json.loads(socket.recv()))
    except Exception:
        pass
threading.Thread(target=listen, args=(listener, heard), daemon=True).start()
threading.Thread(target=listen, args=(stranger, strangers), daemon=True).start()
def aria2p_listener(port, secret):
    """aria2p's listen_to_notifications on its own thread: its API and the events it heard."""
    listening, events = aria2p.API(aria2p.Client(host="http://localhost", port=port, secret=secret)), []
    threading.Thread(target=listening.listen_to_notifications, kwargs=dict(
        on_download_start=lambda api, gid: events.append(("start", gid)),
        on_download_complete=lambda api, gid: events.append(("complete", gid)),
        timeout=1, handle_signals=False), daemon=True).start()
    time.sleep(0.5)
    return listening, events
listening_api, secret_events = aria2p_listener(PORT, SECRET)

# The API: add, list, pause, resume, global stats, remove.
slow = api.add_uris([ORIGIN + "/bytes/4000000/slow.bin?rate=1000000"], options={"split": "2", "max-connection-per-server": "2"})
small = api.add_uris([ORIGIN + "/bytes/300000/small.bin"], options={"dir": "sub", "out": "renamed.bin"})
wait(lambda: api.get_download(small.gid).is_complete, "a small download completes")
check(open(os.path.join(DOWNLOADS, "sub", "renamed.bin"), "rb").read() == origin_bytes("/bytes/300000/small.bin"),
      "its bytes are the origin's, under the dir and out asked for")
gids = {download.gid for download in api.get_downloads()}
check({slow.gid, small.gid} <= gids, "get_downloads lists both")
wait(lambda: api.get_download(slow.gid).completed_length > 0, "the large one is active and moving")
check(api.get_stats().num_active == 1, "get_stats counts one active")
check(all(api.pause([slow])), "pause")
check(api.get_download(slow.gid).status == "paused", "paused before the call returned")
check(all(api.resume([slow])), "resume")
wait(lambda: api.get_download(slow.gid).is_complete, "the resumed download completes")
check(open(os.path.join(DOWNLOADS, "slow.bin"), "rb").read() == origin_bytes("/bytes/4000000/slow.bin"),
      "the resumed file is the origin's, byte for byte")
stats = api.get_stats()
check(stats.num_active == 0 and stats.num_stopped >= 2, "get_stats after both finished")
# aria2p picks remove or removeDownloadResult from the status it holds: a fresh one.
check(all(api.remove([api.get_download(small.gid)])), "remove a result")
check(small.gid not in {download.gid for download in api.get_downloads()}, "it is gone from the list")
failed = api.add_uris([ORIGIN + "/status/404"])
wait(lambda: api.get_download(failed.gid).has_failed, "a 404 fails")
check(api.get_download(failed.gid).error_code == "3", "with aria2's error code 3")

time.sleep(0.5)
methods = [note["method"] for note in heard if "method" in note]
for name in ["aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadComplete", "aria2.onDownloadError"]:
    check(name in methods, f"the authenticated WebSocket heard {name}")
stranger_methods = [note["method"] for note in strangers if "method" in note]
check("aria2.onDownloadComplete" in stranger_methods, "the WebSocket that made no call heard them too")
check(("start", small.gid) in secret_events and ("complete", small.gid) in secret_events,
      "aria2p's listener hears onDownloadStart and onDownloadComplete with the secret in force")
listening_api.stop_listening()

# aria2p's own listener against a daemon without a secret.
open_api, events = aria2p_listener(OPEN_PORT, "")
added = open_api.add_uris([ORIGIN + "/bytes/1000/open.bin"])
wait(lambda: ("complete", added.gid) in events, "aria2p's listener hears onDownloadStart and onDownloadComplete")
open_api.stop_listening()

# The CLI: add (with options and a position), show (aria2p's listing: it has no `ls`), pause,
# resume, remove, each also with --all or --force, purge and call.
def cli(*arguments):
    result = subprocess.run([ARIA2P, "-p", str(PORT), "-s", SECRET] + list(arguments), capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise SystemExit(f"interop-aria2p: FAILED: aria2p {' '.join(arguments)}: {result.returncode} {result.stderr}")
    return result.stdout

def added_by(*arguments):
    before = {download.gid for download in api.get_downloads()}
    cli("add", *arguments)
    return [download.gid for download in api.get_downloads() if download.gid not in before]

def shown(gid):
    rows = [line.split() for line in cli("show").splitlines()[1:]]
    return next((row for row in rows if row[0] == gid), None)

new = added_by(ORIGIN + "/bytes/8000000/cli.bin?rate=250000")   # still active when removed
check(len(new) == 1, "aria2p add created one download")
gid = new[0]
wait(lambda: (shown(gid) or [""])[1:2] == ["active"], "aria2p show lists it as active")
held = added_by("-o", "dir=cli;out=held.bin;pause=true", "-p", "0", ORIGIN + "/bytes/1000/held.bin")
check(len(held) == 1 and api.get_download(held[0]).status == "paused", "aria2p add -o 'dir=..;out=..;pause=true' adds it paused")
check(str(api.get_download(held[0]).files[0].path) == os.path.join(DOWNLOADS, "cli", "held.bin"),
      "under the dir and out its options gave")
check(shown(held[0])[-1] == "held.bin", "aria2p show names it by its out")
cli("pause", gid)
check(api.get_download(gid).status == "paused", "aria2p pause")
cli("resume", gid)
check(api.get_download(gid).status in ("active", "waiting"), "aria2p resume")
cli("pause", "--all", "--force")
check({shown(g)[1] for g in (gid, held[0])} == {"paused"}, "aria2p pause --all --force")
cli("resume", "--all")
wait(lambda: (shown(held[0]) or ["", ""])[1] == "complete", "aria2p resume --all: the held one completes")
check(open(os.path.join(DOWNLOADS, "cli", "held.bin"), "rb").read() == origin_bytes("/bytes/1000/held.bin"), "with the origin's bytes")
stat = json.loads(cli("call", "getGlobalStat"))
check(stat["numActive"] == "1" and int(stat["numStopped"]) >= 1, "aria2p call getGlobalStat")
waiting = json.loads(cli("call", "tellWaiting", "-J", "[0, 10]"))
check(isinstance(waiting, list), "aria2p call tellWaiting -J '[0, 10]'")
cli("purge")
check(shown(held[0]) is None, "aria2p purge drops the finished results")
cli("remove", "--force", gid)
check(gid not in {download.gid for download in api.get_downloads()}, "aria2p remove --force")
wait(lambda: "aria2.onDownloadStop" in [note.get("method") for note in heard], "the WebSocket heard aria2.onDownloadStop")
extra = added_by(ORIGIN + "/bytes/1000/a.bin", ORIGIN + "/bytes/1000/b.bin")
cli("remove", "--all")
check(not set(extra) & {download.gid for download in api.get_downloads()}, "aria2p remove --all")
check(api.client.call("aria2.saveSession") == "OK", "saveSession says OK")
'''


def main():
    haul, origin_binary = binaries()
    scratch = tempfile.mkdtemp(prefix="haul-interop-aria2p-")
    processes = []
    try:
        python = install_clients(scratch)
        origin = subprocess.Popen([origin_binary], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        processes.append(origin)
        origin_url = origin.stdout.readline().strip()
        log(f"origin at {origin_url}")
        daemon = Daemon(haul, os.path.join(scratch, "daemon"), ["-j", "2"])
        processes.append(daemon.process)
        open_daemon = Daemon(haul, os.path.join(scratch, "open"), ["--secret="])
        processes.append(open_daemon.process)
        log(f"daemons on ports {daemon.port} (secret) and {open_daemon.port} (no secret)")
        try:
            run_checks(python, origin_url, daemon, open_daemon, scratch)
        except subprocess.CalledProcessError:
            print(daemon.log(), file=sys.stderr)
            raise
        if daemon.secret in daemon.log():
            raise SystemExit("interop-aria2p: FAILED: the secret appears in the daemon's log")
        daemon.stop()
        open_daemon.stop()
        log("aria2p's API and CLI work against haul daemon")
    finally:
        for process in processes:
            process.terminate()
            process.wait()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
