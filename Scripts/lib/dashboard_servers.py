"""Loopback servers for Scripts/test-dashboard.py: the origin downloads come from, a same-origin
front for aria2c (the dashboard's files at `/`, `/jsonrpc` relayed), and the daemons themselves.

Everything binds 127.0.0.1 only. Standard library only.
"""
import hashlib
import http.client
import http.server
import json
import os
import pathlib
import select
import socket
import subprocess
import threading
import time
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
ASSETS = ROOT / "Sources/HaulDashboard/Assets"
LOOPBACK = "127.0.0.1"

# The headers the Dashboard page provider sends (Sources/HaulDashboard/Dashboard.swift); the aria2c front
# sends the same, so the page runs under the policy it ships with.
SECURITY_HEADERS = {
    "Content-Security-Policy":
        "default-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
CONTENT_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}


def free_port():
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # a client that hung up mid-body is normal here


def serve(handler):
    server = QuietServer((LOOPBACK, 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# ---------------------------------------------------------------------------------------------
# The origin: /bytes/SIZE/NAME[?rate=BYTES_PER_SECOND_PER_CONNECTION&cd=FILENAME], /status/CODE/NAME

PATTERN = bytes(range(251)) * 300  # byte i of every file is i % 251


class OriginStats:
    """Connections the origin serves at once, per file name (to see a 4-connection download)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.current = {}
        self.peak = {}

    def enter(self, name):
        with self.lock:
            self.current[name] = self.current.get(name, 0) + 1
            self.peak[name] = max(self.peak.get(name, 0), self.current[name])

    def leave(self, name):
        with self.lock:
            self.current[name] -= 1


class OriginHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    stats = OriginStats()

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.respond(body=False)

    def do_GET(self):
        self.respond(body=True)

    def respond(self, body):
        url = urllib.parse.urlsplit(self.path)
        parts = url.path.split("/")
        query = dict(urllib.parse.parse_qsl(url.query))
        if len(parts) == 4 and parts[1] == "status":
            self.send_response(int(parts[2]))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if len(parts) != 4 or parts[1] != "bytes" or not parts[2].isdigit():
            self.send_error(404)
            return
        size, name = int(parts[2]), urllib.parse.unquote(parts[3])
        start, end = 0, size
        ranged = self.headers.get("Range", "")
        if ranged.startswith("bytes="):
            first, _, last = ranged[6:].partition("-")
            start = int(first or 0)
            end = min(size, int(last) + 1) if last else size
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        self.send_response(206 if ranged else 200)
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", f'"{size}-{hashlib.sha256(name.encode()).hexdigest()[:12]}"')
        self.send_header("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")
        if ranged:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        if "cd" in query:
            self.send_header("Content-Disposition", f'attachment; filename="{query["cd"]}"')
        self.end_headers()
        if body:
            self.send_range(name, start, end, float(query.get("rate", 0)))

    def send_range(self, name, start, end, rate):
        self.stats.enter(name)
        began, offset = time.monotonic(), start
        try:
            while offset < end:
                length = min(end - offset, 16384 if not rate else max(1024, min(16384, int(rate / 10))))
                begin = offset % 251
                self.wfile.write(PATTERN[begin:begin + length])
                offset += length
                if rate:
                    ahead = (offset - start) / rate - (time.monotonic() - began)
                    if ahead > 0:
                        time.sleep(ahead)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            self.stats.leave(name)


def served_bytes(size):
    """The bytes of every /bytes/SIZE/... file."""
    return (bytes(range(251)) * (size // 251 + 1))[:size]


# ---------------------------------------------------------------------------------------------
# The same-origin front for aria2c: what `haul daemon` does for the page, in front of aria2c.


def asset_table():
    """Request path → (bytes, content type, entity tag): the Assets folder, read once."""
    table = {}
    for path in sorted(ASSETS.iterdir()):
        if path.is_file() and path.suffix in CONTENT_TYPES:
            data = path.read_bytes()
            table["/" + path.name] = (data, CONTENT_TYPES[path.suffix] + "; charset=utf-8",
                                      '"' + hashlib.sha256(data).hexdigest()[:32] + '"')
    table["/"] = table["/index.html"]
    return table


def front_handler(rpc_port):
    assets = asset_table()

    class Front(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def own_authorities(self):
            port = self.server.server_address[1]
            return {f"127.0.0.1:{port}", f"localhost:{port}"}

        def refuse(self, status, text):
            body = (text + "\n").encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def checked(self):
            """haul daemon's rules: Host is loopback or the listen address; Origin, when sent, is its own."""
            if self.headers.get("Host") not in self.own_authorities():
                self.refuse(403, "bad Host")
                return False
            origin = self.headers.get("Origin")
            if origin is not None and origin not in {"http://" + a for a in self.own_authorities()}:
                self.refuse(403, "bad Origin")
                return False
            return True

        def do_HEAD(self):
            self.do_GET(head=True)

        def do_GET(self, head=False):
            if not self.checked():
                return
            path = self.path.split("?", 1)[0]
            if path == "/jsonrpc":
                if self.headers.get("Upgrade", "").lower() == "websocket":
                    self.relay_websocket()
                else:
                    self.refuse(405, "JSON-RPC over GET is not served")
                return
            if path not in assets:
                self.refuse(404, "not found")
                return
            data, content_type, tag = assets[path]
            matched = tag in self.headers.get("If-None-Match", "")
            self.send_response(304 if matched else 200)
            for name, value in SECURITY_HEADERS.items():
                self.send_header(name, value)
            self.send_header("ETag", tag)
            self.send_header("Cache-Control", "no-cache")
            if not matched:
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if not matched and not head:
                self.wfile.write(data)

        def do_POST(self):
            if not self.checked():
                return
            if self.path.split("?", 1)[0] != "/jsonrpc":
                self.refuse(405, "method not allowed")
                return
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            upstream = http.client.HTTPConnection(LOOPBACK, rpc_port, timeout=30)
            upstream.request("POST", "/jsonrpc", body, {"Content-Type": "application/json"})
            answer = upstream.getresponse()
            payload = answer.read()
            upstream.close()
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.getheader("Content-Type", "application/json"))
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(payload)

        def relay_websocket(self):
            upstream = socket.create_connection((LOOPBACK, rpc_port))
            head = ["GET /jsonrpc HTTP/1.1", f"Host: {LOOPBACK}:{rpc_port}"]
            head += [f"{k}: {v}" for k, v in self.headers.items() if k.lower() not in ("host", "origin")]
            upstream.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            self.close_connection = True
            browser = self.connection
            sockets = [browser, upstream]
            try:
                while True:
                    readable, _, _ = select.select(sockets, [], [], 60)
                    for source in readable:
                        data = source.recv(65536)
                        if not data:
                            return
                        (upstream if source is browser else browser).sendall(data)
            except OSError:
                return
            finally:
                upstream.close()

    return Front


# ---------------------------------------------------------------------------------------------
# The daemons


def rpc(port, method, params=(), secret=None, timeout=10):
    """One JSON-RPC call over HTTP; returns the result or raises RuntimeError with the message."""
    full = ([f"token:{secret}"] if secret is not None else []) + list(params)
    body = json.dumps({"jsonrpc": "2.0", "id": "t", "method": method, "params": full}).encode()
    connection = http.client.HTTPConnection(LOOPBACK, port, timeout=timeout)
    try:
        connection.request("POST", "/jsonrpc", body, {"Content-Type": "application/json"})
        reply = json.loads(connection.getresponse().read())
    finally:
        connection.close()
    if "error" in reply:
        raise RuntimeError(reply["error"].get("message", "error"))
    return reply["result"]


def wait_for_rpc(port, secret, process, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the daemon exited with status {process.returncode}")
        try:
            return rpc(port, "aria2.getVersion", secret=secret, timeout=2)
        except (OSError, RuntimeError, ValueError):
            time.sleep(0.2)
    raise RuntimeError("the daemon did not answer in time")


class Daemon:
    """A running daemon: `page` is the dashboard's address, `rpc_port` where its JSON-RPC is."""

    def __init__(self, kind, directory, secret, log, extra=()):
        self.kind, self.secret = kind, secret
        self.rpc_port = free_port()
        listen = f"--rpc-listen-port={self.rpc_port}"
        if kind == "aria2c":
            command = ["aria2c", "--no-conf", "--enable-rpc", "--rpc-listen-all=false", listen,
                       f"--rpc-secret={secret}", f"--dir={directory}", "--max-concurrent-downloads=5",
                       "--split=4", "--max-connection-per-server=4", "--min-split-size=1M",
                       "--file-allocation=none", "--console-log-level=warn", "--summary-interval=0",
                       "--auto-file-renaming=true", "--allow-overwrite=false", "--max-tries=1",
                       "--retry-wait=0", "--disable-ipv6=true", "--async-dns=false"]
        else:
            binary = os.environ.get("HAUL_BIN") or str(pathlib.Path(subprocess.check_output(
                ["swift", "build", "--show-bin-path"], cwd=ROOT, text=True).strip()) / "haul")
            command = [binary, "daemon", f"--dir={directory}", f"--listen={LOOPBACK}:{self.rpc_port}",
                       f"--secret={secret}", f"--state={directory}/.state.sqlite", *extra]
        self.process = subprocess.Popen(command, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        wait_for_rpc(self.rpc_port, secret, self.process)
        self.front = None
        if kind == "aria2c":
            self.front = serve(front_handler(self.rpc_port))
            self.page_port = self.front.server_address[1]
        else:
            self.page_port = self.rpc_port
        self.page = f"http://{LOOPBACK}:{self.page_port}/"

    def call(self, method, *params):
        return rpc(self.rpc_port, method, params, secret=self.secret)

    def cpu_seconds(self):
        """User plus system CPU time the daemon process has used."""
        fields = pathlib.Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        if self.front:
            self.front.shutdown()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
