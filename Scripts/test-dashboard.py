#!/usr/bin/env python3
"""The dashboard in a real browser: headless Chromium, driven by Selenium, against a daemon on
loopback and a loopback origin for the downloads.

    python3 Scripts/test-dashboard.py --daemon=aria2c    # aria2c --enable-rpc behind a same-origin front
    python3 Scripts/test-dashboard.py --daemon=haul      # haul daemon, which serves the page itself
    python3 Scripts/test-dashboard.py --daemon=aria2c --soak [--soak-minutes=10]

The scenario: a wrong secret (in the fragment and in the form), sign-in by form and by
`#token=`, add a rate-limited URL with the keyboard and watch its progress bar move, pause,
resume, see it finish, remove it; a hostile file name shown as text; the segment map of a
4-connection download; move a waiting download up and down; global limits and haul's schedule of
them; a failure in words; remove all finished; keyboard focus; at most one WebSocket and one
request a second while idle; no console errors (so nothing the Content-Security-Policy blocked).
Screenshots at 1440x900 and 375x812, light and dark, go into --results (default
.build/dashboard-results).

--soak keeps the page open with 20 downloads running and reports the tab's memory and the
daemon's CPU with and without the page, over the same time each.

Installs what is missing: Debian's chromium, chromium-driver (and aria2 for --daemon=aria2c),
and selenium from PyPI. Ends with the line "N passed, N failed"; exits 1 when a check failed.
"""
import argparse
import contextlib
import datetime
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "lib"))
import dashboard_servers as servers  # noqa: E402
from dashboard_browser import Browser, renderers  # noqa: E402

HOSTILE = "<img src=x onerror=alert(1)>.bin"
SECRET = "dashboard-test-secret"
MiB = 1 << 20


def log(message):
    print(f"test-dashboard: {message}", file=sys.stderr, flush=True)


def ensure_tools(kind):
    wanted = [("chromium", "chromium"), ("chromedriver", "chromium-driver")]
    if kind == "aria2c":
        wanted.append(("aria2c", "aria2"))
    missing = [package for command, package in wanted if not shutil.which(command)]
    if missing:
        log(f"installing Debian packages: {' '.join(missing)}")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, stdin=subprocess.DEVNULL)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
                       check=True, env=env, stdin=subprocess.DEVNULL)
    try:
        import selenium  # noqa: F401
    except ImportError:
        log("installing selenium from PyPI")
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               "--root-user-action=ignore", "selenium"]
        if subprocess.run(pip, stdin=subprocess.DEVNULL).returncode != 0:
            # Debian marks its Python as externally managed (PEP 668); the CI machine is ours.
            subprocess.run(pip + ["--break-system-packages"], check=True, stdin=subprocess.DEVNULL)


# ---------------------------------------------------------------------------------------------
# The run


class Run:
    """What every check needs: the daemon, the origin, the browser, where results go."""

    def __init__(self, args, workdir):
        self.args = args
        self.downloads = workdir / "downloads"
        self.downloads.mkdir()
        self.results = pathlib.Path(args.results)
        self.results.mkdir(parents=True, exist_ok=True)
        self.log_file = open(self.results / "daemon.log", "wb")
        self.daemon = servers.Daemon(args.daemon, self.downloads, SECRET, self.log_file)
        self.origin = servers.serve(servers.OriginHandler)
        self.origin_url = f"http://{servers.LOOPBACK}:{self.origin.server_address[1]}"
        self.browser = Browser(workdir / "profile")
        self.passed, self.failed = [], []
        log(f"{args.daemon}: dashboard at {self.daemon.page}, origin at {self.origin_url}")

    def url(self, size, name, rate=0, **query):
        if rate:
            query["rate"] = rate
        text = f"?{urllib.parse.urlencode(query)}" if query else ""
        return f"{self.origin_url}/bytes/{size}/{urllib.parse.quote(name)}{text}"

    def check(self, name, function):
        started = time.monotonic()
        try:
            function(self)
        except Exception as error:
            self.failed.append(name)
            log(f"FAIL {name}: {error}")
            traceback.print_exc(limit=3, file=sys.stderr)
            with contextlib.suppress(Exception):
                self.browser.screenshot(self.results / f"failed-{name}.png")
        else:
            self.passed.append(name)
            log(f"ok   {name} ({time.monotonic() - started:.1f}s)")

    def close(self):
        with contextlib.suppress(Exception):
            self.browser.quit()
        self.origin.shutdown()
        self.daemon.stop()
        self.log_file.close()

    # Shorthands for the page ---------------------------------------------------------------

    def open_page(self, fragment=""):
        self.browser.driver.get("about:blank")
        self.browser.driver.get(self.daemon.page + fragment)

    def signed_in(self):
        return self.browser.wait(lambda: self.browser.find("textbox", "URL"), "the signed-in page")

    def row(self, name, timeout=20):
        return self.browser.wait(lambda: self.browser.find("row", name), f"the row of {name}", timeout)[0]

    def row_gone(self, name, timeout=20):
        self.browser.wait(lambda: not self.browser.find("row", name), f"the row of {name} to go", timeout)

    def state(self, name):
        row = self.browser.find("row", name)[0]
        return row.find_element("css selector", ".state").text

    def progress(self, name):
        bar = self.browser.one("progressbar", f"Progress of {name}", within=self.browser.find("row", name)[0])
        value = bar.get_attribute("aria-valuenow")
        return float(value) if value is not None else None

    def press(self, row_name, button):
        row = self.row(row_name)
        target = self.browser.one("button", button, within=row)
        self.browser.wait(target.is_enabled, f"{button} of {row_name} enabled")
        target.click()

    def add(self, url, **fields):
        """Types into the form and presses Enter (the keyboard path)."""
        from selenium.webdriver.common.keys import Keys
        labels = {"out": "File name", "checksum": "Checksum", "connections": "Connections"}
        for key, value in fields.items():
            role = "spinbutton" if key == "connections" else "textbox"
            box = self.browser.one(role, labels[key])
            box.clear()
            box.send_keys(str(value))
        box = self.browser.one("textbox", "URL")
        box.clear()
        box.send_keys(url, Keys.ENTER)
        self.browser.wait(lambda: self.browser.js("return document.getElementById('url').value === ''"),
                          "the form to clear after adding")


# ---------------------------------------------------------------------------------------------
# The checks, in order


def check_headers(run):
    import http.client
    connection = http.client.HTTPConnection(servers.LOOPBACK, run.daemon.page_port, timeout=10)
    connection.request("GET", "/")
    answer = connection.getresponse()
    body = answer.read()
    assert answer.status == 200 and body.startswith(b"<!doctype html>"), answer.status
    for name, value in servers.SECURITY_HEADERS.items():
        assert answer.getheader(name) == value, f"{name}: {answer.getheader(name)}"
    assert answer.getheader("Content-Type").startswith("text/html")
    tag = answer.getheader("ETag")
    connection.request("GET", "/", headers={"If-None-Match": tag or ""})
    answer = connection.getresponse()
    answer.read()
    assert answer.status == 304, f"the same tag again: {answer.status}"
    connection.request("GET", "/app.js", headers={"If-None-Match": tag or ""})
    answer = connection.getresponse()
    answer.read()
    assert answer.status == 200, "another file, another tag"
    for path in ["/../Package.swift", "/%2e%2e/Package.swift", "/Assets/app.js", "/app.js/"]:
        connection.request("GET", path)
        answer = connection.getresponse()
        answer.read()
        assert answer.status in (400, 403, 404), f"{path}: {answer.status}"
    connection.close()


def check_wrong_secret_in_fragment(run):
    run.open_page("#token=wrong")
    alert = run.browser.wait(lambda: [a for a in run.browser.find("alert") if "Wrong secret" in a.text],
                             "the wrong-secret message")[0]
    assert run.browser.js("return location.hash") == "", "the fragment stays in the address bar"
    assert run.browser.js("return sessionStorage.getItem('haul.secret')") is None
    assert run.browser.find("textbox", "Secret"), alert.text


def check_wrong_secret_in_form(run):
    from selenium.webdriver.common.keys import Keys
    run.open_page()
    box = run.browser.wait(lambda: run.browser.find("textbox", "Secret"), "the sign-in form")[0]
    box.send_keys("not-it", Keys.ENTER)
    run.browser.wait(lambda: any("Wrong secret" in a.text for a in run.browser.find("alert")), "the message")
    assert not run.browser.find("textbox", "URL")


def check_sign_in_with_form(run):
    from selenium.webdriver.common.keys import Keys
    box = run.browser.one("textbox", "Secret")
    box.clear()
    box.send_keys(SECRET, Keys.ENTER)
    run.signed_in()
    assert run.browser.js("return sessionStorage.getItem('haul.secret')") == SECRET
    assert not any(a.text for a in run.browser.find("alert"))


def check_sign_in_with_fragment(run):
    run.browser.one("button", "Sign out").click()
    run.browser.wait(lambda: run.browser.find("textbox", "Secret"), "the sign-in form after signing out")
    run.open_page("#token=" + urllib.parse.quote(SECRET))
    run.signed_in()
    assert run.browser.js("return location.href") == run.daemon.page, "the secret left in the address"
    run.browser.driver.refresh()
    run.signed_in()


def check_add_pause_resume_finish_remove(run):
    size = 8 * MiB
    run.add(run.url(size, "slow.bin", rate=320 * 1024))
    run.row("slow.bin")
    first = run.browser.wait(lambda: run.progress("slow.bin"), "a first progress value")
    run.browser.wait(lambda: run.progress("slow.bin") > first + 1, "the progress bar to move")
    run.press("slow.bin", "Pause")
    run.browser.wait(lambda: run.state("slow.bin") == "Paused", "Paused")
    run.browser.wait(lambda: run.browser.one("button", "Resume", within=run.row("slow.bin")).is_enabled(),
                     "Resume enabled")
    held = run.progress("slow.bin")
    time.sleep(2)
    assert run.progress("slow.bin") == held, "a paused download goes on"
    assert held < 100, "finished before it could be paused"
    run.press("slow.bin", "Resume")
    run.browser.wait(lambda: run.state("slow.bin") == "Complete", "Complete", timeout=90)
    assert run.progress("slow.bin") == 100
    data = (run.downloads / "slow.bin").read_bytes()
    assert data == servers.served_bytes(size), "the file differs from what was served"
    run.press("slow.bin", "Remove")
    run.row_gone("slow.bin")


def check_hostile_name_is_text(run):
    run.add(run.url(1 * MiB, "plain.bin", rate=512 * 1024, cd=HOSTILE))
    row = run.row(HOSTILE, timeout=30)
    assert row.find_element("css selector", ".file-name").text == HOSTILE
    assert run.browser.js("return document.querySelector('img[src=\"x\"]')") is None
    assert run.browser.js("return document.querySelectorAll('img').length") == 1, "only the logo"
    run.browser.wait(lambda: run.state(HOSTILE) == "Complete", "the hostile download to finish", timeout=30)


def check_segment_map(run):
    run.add(run.url(64 * MiB, "ubuntu-24.04-live-server-amd64.iso", rate=160 * 1024))
    run.add(run.url(40 * MiB, "four.bin", rate=256 * 1024), connections=4)
    run.row("four.bin")
    run.browser.wait(lambda: run.state("four.bin") == "Downloading", "four.bin downloading")
    run.press("four.bin", "Details")
    name = "Segments of four.bin"
    segment_map = run.browser.wait(lambda: run.browser.find("img", name, prefix=True), "the segment map")[0]
    assert segment_map.aria_role in ("img", "image"), segment_map.aria_role
    # Completed pieces (bitfield), or the ranges in flight where the daemon reports them (segments).
    run.browser.wait(lambda: segment_map.find_elements("css selector", "rect.done, rect.flight-done"),
                     "completed ranges in the map", 30)
    run.browser.wait(lambda: servers.OriginHandler.stats.peak.get("four.bin", 0) >= 4, "4 connections at the origin")
    if run.args.daemon == "haul":  # haul's `segments` key: each connection's range, live
        run.browser.wait(lambda: len(segment_map.find_elements("css selector", "rect.flight")) == 4,
                         "4 ranges in flight in the map")
        run.browser.wait(lambda: "4 connections in flight" in run.browser.js(
            "return document.getElementById('segment-text').textContent"), "the map's words")
    run.browser.wait(lambda: "Connections4" in run.browser.js(
        "return document.getElementById('details-facts').textContent"), "4 connections in the detail view")


def check_screenshots(run):
    """Light and dark at 1440x900 and 375x812: the detail view open, then the list."""
    browser, results = run.browser, run.results
    for scheme in ("light", "dark"):
        browser.color_scheme(scheme)
        for width, height in ((1440, 900), (375, 812)):
            browser.viewport(width, height, mobile=width < 500)
            time.sleep(1.2)
            browser.screenshot(results / f"details-{width}x{height}-{scheme}.png")
    from selenium.webdriver.common.keys import Keys
    browser.driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    browser.wait(lambda: not browser.js("return document.getElementById('details').open"), "the dialog to close")
    assert browser.driver.switch_to.active_element.accessible_name == "Details", "focus back on Details"
    for scheme in ("light", "dark"):
        browser.color_scheme(scheme)
        for width, height in ((1440, 900), (375, 812)):
            browser.viewport(width, height, mobile=width < 500)
            time.sleep(1.2)
            browser.screenshot(results / f"list-{width}x{height}-{scheme}.png")
    browser.color_scheme("light")
    browser.viewport(1440, 900)
    overflow = browser.js("return document.documentElement.scrollWidth > document.documentElement.clientWidth")
    assert not overflow, "the page scrolls sideways at 1440"


def check_narrow_fits(run):
    run.browser.viewport(375, 812, mobile=True)
    time.sleep(0.5)
    try:
        width = run.browser.js("return document.documentElement.scrollWidth")
        assert width <= 375, f"the page is {width} px wide at 375"
    finally:
        run.browser.viewport(1440, 900)


def check_error_in_words(run):
    run.add(f"{run.origin_url}/status/404/missing.bin")
    run.browser.wait(lambda: run.state("missing.bin") == "Failed", "missing.bin failed")
    row = run.row("missing.bin")
    problem = row.find_element("css selector", ".problem").text
    assert "exit code 3" in problem and "no such file" in problem, problem


def check_servers_listed(run):
    """A download from several servers (haul): the detail view lists each with its speed and
    connections, and the one set aside with why."""
    if run.args.daemon != "haul":
        return
    name = "mirrored.bin"
    uris = [run.url(24 * MiB, name, rate=200 * 1024, m=1), run.url(24 * MiB, name, rate=200 * 1024, m=2),
            f"{run.origin_url}/status/404/{name}"]
    run.daemon.call("aria2.addUri", uris, {"split": "4"})
    run.row(name)
    run.browser.wait(lambda: run.state(name) == "Downloading", f"{name} downloading")
    run.press(name, "Details")

    def facts():
        return run.browser.js("return document.getElementById('details-facts').textContent")
    run.browser.wait(lambda: "Servers" in facts() and "set aside (" in facts(), "the servers in the detail view", 30)
    run.browser.wait(lambda: all(f"{uri}: " in facts() and " over " in facts() for uri in uris[:2]),
                     "each server with its speed and connections", 30)
    assert f"{uris[2]}: set aside (" in facts() and "404" in facts(), facts()
    from selenium.webdriver.common.keys import Keys
    run.browser.driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    run.browser.wait(lambda: not run.browser.js("return document.getElementById('details').open"), "the dialog to close")
    run.press(name, "Remove")
    run.row_gone(name)


def check_fleet_nodes(run):
    """With PostgreSQL (HAUL_TEST_POSTGRES=FOLDER:PORT, as .ci/run sets it), two daemons are the
    nodes of a fleet: the page of one shows a line per node, and each download with the node that
    runs it, the other node's included."""
    given = os.environ.get("HAUL_TEST_POSTGRES", "")
    if run.args.daemon != "haul" or ":" not in given:
        log("     fleet_nodes: no HAUL_TEST_POSTGRES, not tried")
        return
    folder, port = given.rsplit(":", 1)
    database = f"haul_dashboard_{os.getpid()}"
    subprocess.run(["psql", "-q", "-h", folder, "-p", port, "-U", "haul", "-d", "postgres", "-c", f"CREATE DATABASE {database}"],
                   check=True, stdin=subprocess.DEVNULL)
    state = f"--state=postgresql://haul@/{database}?host={folder}&port={port}"
    nodes = {}
    try:
        for name in ("a", "b"):
            nodes[name] = servers.Daemon("haul", run.downloads / f"fleet-{name}", SECRET, run.log_file,
                                         extra=[state, f"--node={name}", "-j", "1"])
        for index in (1, 2):
            nodes["a"].call("aria2.addUri", [run.url(8 * MiB, f"fleet-{index}.bin", rate=256 * 1024)], {})
        run.browser.driver.get("about:blank")
        run.browser.driver.get(nodes["a"].page + "#token=" + SECRET)
        run.signed_in()
        states = lambda: sorted(run.state(f"fleet-{index}.bin") for index in (1, 2))
        run.browser.wait(lambda: states() == ["Downloading · a", "Downloading · b"], "each download with its node", 30)
        lines = lambda: run.browser.js("return [...document.querySelectorAll('#nodes li')].map((li) => li.textContent)")
        run.browser.wait(lambda: [line.split(":")[0] for line in lines()] == ["a", "b"]
                         and all(" 1 active · " in line for line in lines()), "a line per node", 30)
        run.browser.screenshot(run.results / "fleet.png")
    finally:
        for node in nodes.values():
            node.stop()
        run.open_page("#token=" + SECRET)


def check_queue_and_limits(run):
    from selenium.webdriver.common.keys import Keys
    limit = run.browser.one("spinbutton", "Downloads at once")
    limit.clear()
    limit.send_keys("1", Keys.ENTER)
    run.browser.wait(lambda: run.daemon.call("aria2.getGlobalOption")["max-concurrent-downloads"] == "1", "limit 1")
    names = ["q1.bin", "q2.bin", "q3.bin"]
    run.add(" ".join(run.url(4 * MiB, n, rate=64 * 1024) for n in names))

    def order():
        rows = [r.accessible_name for r in run.browser.find("row")]
        return [r for r in rows if r in names]

    run.browser.wait(lambda: order() == names and run.state("q2.bin") == "Queued", "three queued rows")
    run.press("q3.bin", "Move up")
    run.browser.wait(lambda: order() == ["q1.bin", "q3.bin", "q2.bin"], "q3 above q2")
    run.press("q1.bin", "Move down")
    run.browser.wait(lambda: order() == ["q3.bin", "q1.bin", "q2.bin"], "q1 below q3")
    waiting = [urllib.parse.urlsplit(d["files"][0]["uris"][0]["uri"]).path.rsplit("/", 1)[-1]
               for d in run.daemon.call("aria2.tellWaiting", 0, 10, ["files"])]
    assert [n for n in waiting if n in names] == ["q3.bin", "q1.bin", "q2.bin"], waiting
    for name in names:
        run.press(name, "Remove")
        run.row_gone(name)
    rate = run.browser.one("textbox", "Rate limit")
    rate.clear()
    rate.send_keys("4M")
    limit = run.browser.one("spinbutton", "Downloads at once")
    limit.clear()
    limit.send_keys("5")
    run.browser.one("button", "Apply").click()
    run.browser.wait(lambda: run.daemon.call("aria2.getGlobalOption")["max-overall-download-limit"] == "4194304",
                     "the rate limit")
    rate.clear()
    rate.send_keys("0", Keys.ENTER)
    run.browser.wait(lambda: run.daemon.call("aria2.getGlobalOption")["max-overall-download-limit"] == "0",
                     "no rate limit")
    assert run.daemon.call("aria2.getGlobalOption")["max-concurrent-downloads"] == "5"


def check_limit_schedule(run):
    """Haul's schedule in the limits panel: set, shown with the next change, refused in words, cleared."""
    if run.args.daemon != "haul":
        # aria2c has no schedule: the field and its line stay hidden.
        assert not run.browser.find("textbox", "Schedule"), "a schedule field with aria2c"
        return
    from selenium.webdriver.common.keys import Keys
    option = lambda key: run.daemon.call("aria2.getGlobalOption")[key]
    line = lambda: run.browser.js("return document.getElementById('limit-now').textContent")
    box = run.browser.one("textbox", "Schedule")
    box.clear()
    box.send_keys("mon-fri 9:00-18:00=2M, 23:00-07:00=0", Keys.ENTER)
    run.browser.wait(lambda: option("haul-limit-schedule") == "Mon-Fri 09:00-18:00=2M, 23:00-07:00=0", "the schedule set")
    run.browser.wait(lambda: box.get_attribute("value") == "Mon-Fri 09:00-18:00=2M, 23:00-07:00=0", "the schedule written back")
    # The next change as the daemon's clock shows it ("Mon 18:00"), the rate then, and the rate outside.
    upcoming = datetime.datetime.fromisoformat(option("haul-limit-next-change"))
    run.browser.wait(lambda: f"{upcoming:%a %H:%M} → " in line() and "outside the schedule: no limit" in line(),
                     f"the next change in the line: {line()}")
    panel = run.browser.driver.find_element("css selector", "section[aria-labelledby=limits-title]")
    for width, height in ((1440, 900), (375, 812)):
        run.browser.viewport(width, height, mobile=width < 500)
        run.browser.js("arguments[0].scrollIntoView()", panel)
        time.sleep(0.5)
        panel.screenshot(str(run.results / f"limits-schedule-{width}.png"))
    run.browser.viewport(1440, 900)

    box.clear()
    box.send_keys("Mon-Fri 09:00-18:00=2M, Sun 25:00-26:00=1M", Keys.ENTER)
    message = lambda: run.browser.js("return document.getElementById('limits-message').textContent")
    run.browser.wait(lambda: "entry 2" in message(), "the error in words")
    assert message() == ("Not changed: schedule: entry 2 (\"Sun 25:00-26:00=1M\"): '25:00' is not a time: "
                         "the hour is 00 to 23 (24:00 ends a day)."), message()
    assert option("haul-limit-schedule") == "Mon-Fri 09:00-18:00=2M, 23:00-07:00=0"

    box.clear()
    box.send_keys("00:00-24:00=3M", Keys.ENTER)
    run.browser.wait(lambda: option("max-overall-download-limit") == str(3 * MiB), "the schedule's rate at once")
    run.browser.wait(lambda: line().startswith("Now: 3.00 MiB/s · outside the schedule"), f"the rate now in the line: {line()}")
    box.clear()
    box.send_keys(Keys.ENTER)
    run.browser.wait(lambda: option("haul-limit-schedule") == "" and option("max-overall-download-limit") == "0", "no schedule")
    run.browser.wait(lambda: line() == "Now: no limit · no schedule", f"the line without a schedule: {line()}")


def check_keyboard(run):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    run.browser.js("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    reached, outlines = [], set()
    for _ in range(40):
        ActionChains(run.browser.driver).send_keys(Keys.TAB).perform()
        name = run.browser.js("const e = document.activeElement; "
                              "return e === document.body ? 'body' : e.id || e.textContent.trim().slice(0, 40)")
        reached.append(name)
        if name != "body":  # past the last control, the focus visits the document itself
            outlines.add(run.browser.js("return getComputedStyle(document.activeElement).outlineStyle"))
    for expected in ["url", "out", "checksum", "connections", "Add", "purge", "Pause", "Details", "Apply"]:
        assert expected in reached, f"Tab never reaches {expected}: {reached}"
    assert outlines == {"solid"}, f"focus outlines: {outlines}"


def check_remove_finished(run):
    assert run.browser.find("row", HOSTILE) and run.browser.find("row", "missing.bin")
    run.browser.one("button", "Remove finished").click()
    run.row_gone(HOSTILE)
    run.row_gone("missing.bin")
    assert run.browser.find("row", "four.bin"), "a running download went too"
    for name in ("four.bin", "ubuntu-24.04-live-server-amd64.iso"):
        run.press(name, "Remove")
        run.row_gone(name)


def check_idle_traffic(run, seconds=20):
    run.browser.drain_network()
    run.browser.driver.refresh()
    run.signed_in()
    time.sleep(3)
    opening = run.browser.drain_network()
    time.sleep(seconds)
    idle = run.browser.drain_network()
    sockets = sum(1 for method, _ in opening + idle if method == "Network.webSocketCreated")
    requests = sum(1 for method, _ in idle if method == "Network.requestWillBeSent")
    frames = sum(1 for method, _ in idle if method == "Network.webSocketFrameSent")
    run.idle = f"{sockets} WebSocket, {requests} HTTP requests and {frames} frames sent in {seconds} s idle"
    log(run.idle)
    assert sockets <= 1, run.idle
    assert (requests + frames) / seconds <= 1.0, run.idle


def check_http_fallback(run, seconds=10):
    """Without WebSocket, the page polls over HTTP POST, at most once a second, and still updates."""
    driver = run.browser.driver
    script = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {
        "source": "window.WebSocket = function () { throw new Error('no WebSocket here'); };"})
    try:
        driver.refresh()
        run.signed_in()
        run.browser.wait(lambda: "polling" in run.browser.js(
            "return document.getElementById('connection').textContent"), "the polling state")
        run.add(run.url(2 * MiB, "polled.bin", rate=512 * 1024))
        run.row("polled.bin")
        run.browser.wait(lambda: run.state("polled.bin") == "Complete", "polled.bin to finish over HTTP")
        run.press("polled.bin", "Remove")
        run.row_gone("polled.bin")
        run.browser.drain_network()
        time.sleep(seconds)
        events = run.browser.drain_network()
        posts = sum(1 for method, params in events if method == "Network.requestWillBeSent"
                    and params["request"]["url"].endswith("/jsonrpc") and params["request"]["method"] == "POST")
        sockets = sum(1 for method, _ in events if method == "Network.webSocketCreated")
        log(f"HTTP fallback: {posts} POSTs in {seconds} s")
        assert 0 < posts <= seconds and sockets == 0, (posts, sockets)
    finally:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})
        driver.refresh()


def check_units_in_the_browser(run):
    results = run.browser.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        Promise.all([import('./format.js'), import('./segments.js')]).then(([f, s]) => done([
          f.bytes(512), f.bytes(1536), f.bytes(12.5 * 1048576), f.speed(1572864), f.speed(1048575), f.duration(62),
          f.duration(3723), f.duration(NaN), f.parseRate('2M'), f.parseRate('500k'), f.parseRate('x'),
          JSON.stringify(s.completedRanges('c1', 8, 10, 75)),
          f.wallClock('2025-06-02T18:00:00+02:00'), f.wallClock('2024-12-31T23:59:59-05:30'), f.wallClock('18:00'),
          f.until(45e3), f.until(12 * 60e3), f.until((7 * 60 + 12) * 60e3), f.until(51 * 3600e3),
        ]), (e) => done(String(e)));""")
    expected = ["512 B", "1.50 KiB", "12.5 MiB", "1.50 MiB/s", "1.00 MiB/s", "1:02", "1:02:03", "—", 2097152, 512000, None,
                "[[0,20],[70,75]]", "Mon 18:00", "Tue 23:59", None, "in 45 s", "in 12 min", "in 7 h 12 min", "in 2 d 3 h"]
    assert results == expected, results


def check_segments_extension_drawn(run):
    """The map draws haul's `segments` key: ranges in flight over the completed pieces."""
    done = set(range(0, 10)) | set(range(16, 20)) | set(range(32, 36)) | set(range(48, 52))
    bitfield = "".join(f"{sum(8 >> b for b in range(4) if n * 4 + b in done):x}" for n in range(16))
    flights = [(10, 16, 13.5), (20, 32, 22), (36, 48, 40), (52, 64, 60)]
    download = {"gid": "0", "name": "example.iso", "status": "active", "total": 64 * MiB,
                "completed": 30 * MiB, "numPieces": 64, "pieceLength": MiB, "bitfield": bitfield,
                "segments": [{"start": str(a * MiB), "end": str(b * MiB), "position": str(int(p * MiB))}
                             for a, b, p in flights]}
    text = run.browser.driver.execute_async_script("""
        const [download, done] = arguments;
        import('./segments.js').then((s) => {
          const box = document.createElement('div');
          box.id = 'segments-probe';
          box.className = 'panel';
          const map = s.createMap();
          box.append(map);
          document.querySelector('main').prepend(box);
          done(s.render(map, download));
        }, (e) => done(String(e)));""", download)
    probe = run.browser.driver.find_element("id", "segments-probe")
    try:
        segment_map = run.browser.one("img", "Segments of example.iso", within=probe)
        kinds = [r.get_attribute("class") for r in segment_map.find_elements("css selector", "rect")]
        assert kinds.count("done") == 4 and kinds.count("flight") == 4 and kinds.count("head") == 4, kinds
        assert "4 connections in flight" in text and "22 of 64 pieces" in text, text
        probe.screenshot(str(run.results / "segments-extension.png"))
    finally:
        run.browser.js("document.getElementById('segments-probe').remove()")


def check_console_is_clean(run):
    problems = [e["message"] for e in run.browser.driver.get_log("browser") if e["level"] == "SEVERE"]
    # A wrong secret and removed rows make no errors; only the checks' own 404 probes may.
    problems = [p for p in problems if "Package.swift" not in p]
    assert not problems, problems


CHECKS = [
    check_headers,
    check_wrong_secret_in_fragment,
    check_wrong_secret_in_form,
    check_sign_in_with_form,
    check_sign_in_with_fragment,
    check_units_in_the_browser,
    check_segments_extension_drawn,
    check_add_pause_resume_finish_remove,
    check_hostile_name_is_text,
    check_error_in_words,
    check_servers_listed,
    check_segment_map,
    check_screenshots,
    check_narrow_fits,
    check_keyboard,
    check_queue_and_limits,
    check_limit_schedule,
    check_remove_finished,
    check_idle_traffic,
    check_http_fallback,
    check_console_is_clean,
    check_fleet_nodes,
]


# ---------------------------------------------------------------------------------------------
# The soak


def soak_phase(run, minutes, with_page):
    """The daemon's CPU (percent of one core) over `minutes`; with the page, its memory every 30 s."""
    samples = []
    began_cpu, began = run.daemon.cpu_seconds(), time.monotonic()
    end = began + minutes * 60
    while time.monotonic() < end:
        time.sleep(min(30, max(0, end - time.monotonic())))
        if with_page:
            run.browser.drain_network()
            heap = run.browser.js("return performance.memory.usedJSHeapSize") / MiB
            # The tab's renderer is the largest; a spare one and the back-forward cache's are small.
            tab = max(renderers(run.browser), key=lambda r: r["anon"])
            rows = len(run.browser.find("row")) - 1
            samples.append({"t": time.monotonic() - began, "heap": heap, **tab, "rows": rows})
            log("  {t:5.0f}s JS heap {heap:.1f} MiB; renderer RSS {rss:.0f} MiB, anonymous {anon:.0f} MiB, "
                "PSS {pss:.0f} MiB; {rows} rows".format(**samples[-1]))
    cpu = (run.daemon.cpu_seconds() - began_cpu) / (time.monotonic() - began) * 100
    return cpu, samples


def soak(run, minutes, count=20):
    """20 downloads running all along; the daemon's CPU without the page, then with it."""
    run.daemon.call("aria2.changeGlobalOption", {"max-concurrent-downloads": str(count)})
    # Each lasts beyond both phases: 4 connections x 8 KiB/s = 32 KiB/s.
    size = int((2 * minutes + 3) * 60 * 32 * 1024)
    for i in range(count):
        run.daemon.call("aria2.addUri", [run.url(size, f"soak-{i:02}.bin", rate=8 * 1024)], {})
    time.sleep(10)
    active = len(run.daemon.call("aria2.tellActive", ["gid"]))
    log(f"soak: {active} downloads active; {minutes} min without the page")
    run.browser.driver.get("about:blank")
    cpu_without, _ = soak_phase(run, minutes, with_page=False)
    log(f"soak: daemon CPU without the page {cpu_without:.2f}%; now {minutes} min with it")
    run.open_page("#token=" + SECRET)
    run.signed_in()
    cpu_with, samples = soak_phase(run, minutes, with_page=True)
    active = len(run.daemon.call("aria2.tellActive", ["gid"]))

    def span(key):
        values = [sample[key] for sample in samples]
        return f"{values[0]:.1f} → {values[-1]:.1f} MiB (max {max(values):.1f})"

    report = (f"soak ({run.args.daemon}, {count} downloads, {active} still active at the end, {minutes:g} min each): "
              f"daemon CPU {cpu_without:.2f}% without the page, {cpu_with:.2f}% with it "
              f"({cpu_with - cpu_without:+.2f} points); JS heap {span('heap')}; tab renderer "
              f"RSS {span('rss')}, anonymous {span('anon')}, PSS {span('pss')}")
    log(report)
    (run.results / "soak.txt").write_text(report + "\n" + "".join(
        "{t:.0f}s heap={heap:.2f} rss={rss:.1f} anon={anon:.1f} pss={pss:.1f} MiB rows={rows}\n".format(**sample)
        for sample in samples))
    # RSS counts the Chromium binary's mapped pages (~120 MiB, shared by every renderer); what the
    # tab itself holds is its JS heap and its anonymous memory.
    assert max(sample["heap"] for sample in samples) < 100, report
    assert max(sample["anon"] for sample in samples) < 100, report
    assert cpu_with - cpu_without <= 2, report


# ---------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--daemon", choices=["aria2c", "haul"], default="haul")
    parser.add_argument("--results", default=str(servers.ROOT / ".build/dashboard-results"))
    parser.add_argument("--soak", action="store_true", help="the 10-minute memory and CPU check")
    parser.add_argument("--soak-minutes", type=float, default=10)
    args = parser.parse_args()
    ensure_tools(args.daemon)
    with tempfile.TemporaryDirectory(prefix="haul-dashboard-") as workdir:
        run = Run(args, pathlib.Path(workdir))
        try:
            if args.soak:
                run.check("soak", lambda r: soak(r, args.soak_minutes))
            else:
                for check in CHECKS:
                    run.check(check.__name__.removeprefix("check_"), check)
        finally:
            run.close()
    if run.failed:
        log(f"failed: {', '.join(run.failed)}; daemon log and screenshots in {args.results}")
    print(f"{len(run.passed)} passed, {len(run.failed)} failed")
    sys.exit(1 if run.failed else 0)


if __name__ == "__main__":
    main()
