#!/usr/bin/env python3
"""The dashboard over 100,000 downloads: headless Chromium, driven by Selenium, against
`haul daemon` on loopback with 100,000 paused downloads (file-000000.bin to file-099999.bin).

    python3 Scripts/test-dashboard-large.py [--count=100000] [--results=DIR]

Checks, each with its figure in the output and in DIR/large.txt:
- the first rows show at most 1 s after the page opens; never more than 300 row elements in the
  page; the tab's JS heap under 32 MiB; every answer the page receives under 64 KiB;
- scrolling to the middle and to the end shows those rows (every download is reachable), with
  "Showing A–B of N";
- typing the name of download 54,321 into Filter shows its row within 1 s;
- "file-05" matches 10,000: Select all matching, Resume selected, then Pause selected: all 10,000
  paused within 5 s of the click, counted right, while the daemon answers other calls;
- the keyboard: / goes to the filter, arrows move through rows, Space selects, Enter opens the
  details; removing more than 100 asks first;
- the daemon's `tellWaiting(0,1000)` and `haul.tellMatching` over 100,000, timed from here;
- screenshots at 1440x900 and 375x812 in DIR.

The downloads point at a loopback port that accepts and never answers, so the ones the daemon
starts stay active until paused. Installs what is missing as Scripts/test-dashboard.py does.
Ends with "N passed, N failed"; exits 1 when a check failed.
"""
import argparse
import contextlib
import json
import pathlib
import socket
import statistics
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "lib"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import dashboard_servers as servers  # noqa: E402
from dashboard_browser import Browser  # noqa: E402

SECRET = "dashboard-large-secret"
MiB = 1 << 20
KiB = 1 << 10


def log(message):
    print(f"test-dashboard-large: {message}", file=sys.stderr, flush=True)


def name(index):
    return f"file-{index:06d}.bin"


class Silent:
    """A loopback port that accepts connections and never answers: downloads started stay active."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind((servers.LOOPBACK, 0))
        self.socket.listen(1024)
        self.port = self.socket.getsockname()[1]
        self.held = []
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.held.append(connection)


class Run:
    def __init__(self, args, workdir):
        self.args = args
        self.results = pathlib.Path(args.results)
        self.results.mkdir(parents=True, exist_ok=True)
        self.downloads = workdir / "downloads"
        self.downloads.mkdir()
        self.log_file = open(self.results / "daemon-large.log", "wb")
        self.silent = Silent()
        self.daemon = servers.Daemon("haul", self.downloads, SECRET, self.log_file, extra=["--max-downloads=4"])
        self.browser = Browser(workdir / "profile")
        self.passed, self.failed, self.figures = [], [], []

    def figure(self, text):
        self.figures.append(text)
        log(f"  {text}")

    def check(self, title, function):
        started = time.monotonic()
        try:
            function(self)
        except Exception as error:
            self.failed.append(title)
            log(f"FAIL {title}: {error}")
            traceback.print_exc(limit=3, file=sys.stderr)
            with contextlib.suppress(Exception):
                self.browser.screenshot(self.results / f"large-failed-{title}.png")
        else:
            self.passed.append(title)
            log(f"ok   {title} ({time.monotonic() - started:.1f}s)")

    def close(self):
        with contextlib.suppress(Exception):
            self.browser.quit()
        self.daemon.stop()
        self.log_file.close()
        (self.results / "large.txt").write_text("\n".join(self.figures) + "\n")

    # The page ------------------------------------------------------------------------------

    def rows(self):
        return self.browser.js("return document.querySelectorAll('[role=row]').length")

    def status(self):
        return self.browser.js("return document.getElementById('list-status').textContent")

    def visible_row(self, title):
        return self.browser.js(
            "const list = document.getElementById('downloads').getBoundingClientRect();"
            "const row = [...document.querySelectorAll('#rows [role=row]')].find((r) => r.getAttribute('aria-label') === arguments[0]);"
            "if (!row) return false; const box = row.getBoundingClientRect();"
            "return box.bottom > list.top && box.top < list.bottom;", title)

    def click(self, label):
        """Clicks the page's button named `label` (the rows redraw meanwhile: looked up by id or text)."""
        clicked = self.browser.wait(lambda: self.browser.js(
            "const button = [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === arguments[0]"
            " && !b.closest('#rows') && b.offsetParent !== null && !b.disabled);"
            "if (!button) return false; button.click(); return true;", label), f"the button {label}")
        assert clicked

    def scroll_to(self, index):
        self.browser.wait(lambda: self.browser.js("return document.querySelector('#rows [role=row]') !== null"), "a row")
        self.browser.js("const list = document.getElementById('downloads');"
                        "const row = document.querySelector('#rows [role=row]');"
                        "list.scrollTop = arguments[0] * row.getBoundingClientRect().height;", index)

    def poll_until(self, condition, what, timeout):
        """Polls every 10 ms; returns the seconds it took, or raises after `timeout`."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            with contextlib.suppress(Exception):
                if condition():
                    return time.monotonic() - started
            time.sleep(0.01)
        raise AssertionError(f"{what}: not within {timeout} s")

    def received(self):
        """Sizes of the WebSocket messages and HTTP bodies the page received since the last call."""
        sizes = []
        for method, params in self.browser.drain_network():
            if method == "Network.webSocketFrameReceived":
                sizes.append(len(params["response"]["payloadData"].encode()))
            elif method == "Network.dataReceived":
                sizes.append(params.get("dataLength", 0))
        return sizes


def fill(run):
    """100,000 paused downloads, added 1,000 to a multicall."""
    started = time.monotonic()
    base = f"http://{servers.LOOPBACK}:{run.silent.port}"
    for start in range(0, run.args.count, 1000):
        calls = [{"methodName": "aria2.addUri",
                  "params": [f"token:{SECRET}", [f"{base}/{name(i)}"], {"pause": "true", "out": name(i)}]}
                 for i in range(start, min(start + 1000, run.args.count))]
        answers = servers.rpc(run.daemon.rpc_port, "system.multicall", [calls], timeout=60)
        assert all(isinstance(answer, list) for answer in answers), answers[:3]
    stat = run.daemon.call("aria2.getGlobalStat")
    assert int(stat["numWaiting"]) == run.args.count, stat
    run.figure(f"{run.args.count:,} paused downloads added in {time.monotonic() - started:.1f} s")


def check_daemon_figures(run):
    def timed(method, *params):
        times = []
        for _ in range(7):
            started = time.monotonic()
            answer = run.daemon.call(method, *params)
            times.append(time.monotonic() - started)
        return statistics.median(times), answer

    waiting, page = timed("aria2.tellWaiting", 0, 1000, ["gid", "status"])
    assert len(page) == 1000
    matching, found = timed("haul.tellMatching", {"text": "file-054321"}, 0, 10, ["gid"])
    assert found["total"] == "1", found
    every, found = timed("haul.tellMatching", {"text": ".bin", "state": "paused"}, 0, 10, ["gid"])
    assert found["total"] == str(run.args.count), found
    run.figure(f"daemon, from Python over HTTP, median of 7: tellWaiting(0,1000) {waiting * 1000:.1f} ms; "
               f"haul.tellMatching one of {run.args.count:,} {matching * 1000:.1f} ms, all {run.args.count:,} "
               f"(counted, 10 returned) {every * 1000:.1f} ms")
    # The target is 50 ms; the check leaves room for a loaded machine and a debug build.
    assert matching < 0.25 and every < 0.25, "the filter call over 100,000 takes more than 250 ms"


def check_first_rows(run):
    run.browser.driver.get("about:blank")
    run.browser.drain_network()
    run.browser.driver.get(run.daemon.page + "#token=" + SECRET)
    run.browser.wait(lambda: run.visible_row(name(0)), "the first row")
    shown = run.browser.js("const m = performance.getEntriesByName('haul-first-rows')[0]; return m ? m.startTime : null")
    assert shown is not None, "no first-rows mark"
    run.figure(f"first rows visible {shown:.0f} ms after the page began to load")
    assert shown <= 1000, f"first rows after {shown:.0f} ms"
    assert run.browser.wait(lambda: run.status().startswith("Showing 1–"), "the status line")
    run.figure(f"status line: {run.status()}")


def check_every_row_reachable(run):
    counts = [run.rows()]
    for index in (run.args.count // 2, run.args.count - 1, 12_345):
        run.scroll_to(index)
        took = run.poll_until(lambda: run.visible_row(name(index)), f"row {index}", 5)
        counts.append(run.rows())
        run.figure(f"scrolled to {name(index)}: its row in {took * 1000:.0f} ms; {counts[-1]} row elements; {run.status()}")
        assert f"of {run.args.count:,} waiting or paused" in run.status(), run.status()
    assert max(counts) <= 300, counts
    time.sleep(3)   # three polls
    sizes = run.received()
    heap = run.browser.js("return performance.memory.usedJSHeapSize") / MiB
    run.figure(f"largest answer received {max(sizes) / KiB:.1f} KiB of {len(sizes)}; JS heap {heap:.1f} MiB")
    assert max(sizes) < 64 * KiB, max(sizes)
    assert heap < 32, heap


def type_filter(run, text):
    from selenium.webdriver.common.keys import Keys
    box = run.browser.wait(lambda: run.browser.one("searchbox", "Filter"), "the filter")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE)
    box.send_keys(text)


def check_filter(run):
    started = time.monotonic()
    type_filter(run, "file-054321")
    run.poll_until(lambda: run.visible_row(name(54321)), "the row of download 54,321", 5)
    took = time.monotonic() - started
    run.figure(f"typing file-054321 into Filter: its row in {took * 1000:.0f} ms ({run.status()})")
    assert took <= 1, took
    assert run.rows() == 2, run.rows()   # the header and the match


def check_bulk_pause(run):
    type_filter(run, "file-05")
    run.browser.wait(lambda: run.status().endswith("of 10,000 matching"), "10,000 matching")
    run.click("Select all matching")
    run.browser.wait(lambda: "10,000 selected" in run.browser.js("return document.getElementById('selection-count').textContent"),
                     "10,000 selected")
    run.click("Resume selected")
    message = lambda: run.browser.js("return document.getElementById('action-message').textContent")
    run.browser.wait(lambda: message().startswith("Resumed 10,000"), f"resumed: {message()}", 30)
    run.browser.wait(lambda: int(run.daemon.call("aria2.getGlobalStat")["numActive"]) == 4, "4 active", 20)
    answers, stop = [], threading.Event()

    def others():
        while not stop.is_set():
            started = time.monotonic()
            run.daemon.call("aria2.getVersion")
            answers.append(time.monotonic() - started)
            time.sleep(0.05)

    thread = threading.Thread(target=others)
    thread.start()
    started = time.monotonic()
    run.click("Pause selected")
    paused = lambda: run.daemon.call("haul.tellMatching", {"text": "file-05", "state": "paused"}, 0, 0)["total"]
    took = run.poll_until(lambda: paused() == "10000", "10,000 paused", 10)
    stop.set()
    thread.join()
    run.browser.wait(lambda: message().startswith("Paused 10,000"), f"the count: {message()}")
    run.figure(f"Pause selected on 10,000: all paused {took:.2f} s after the click; '{message()}'; "
               f"{len(answers)} other calls meanwhile, slowest {max(answers) * 1000:.0f} ms")
    assert took <= 5, took
    assert max(answers) < 1, max(answers)
    stat = run.daemon.call("aria2.getGlobalStat")
    assert stat["numActive"] == "0" and int(stat["numWaiting"]) == run.args.count, stat


def check_keyboard(run):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    type_filter(run, "")   # a new filter: the selection of the old one's matches is let go
    run.browser.wait(lambda: run.status().startswith(f"Showing 1–") and "waiting or paused" in run.status(), "the whole list again")
    third = lambda: run.browser.js("const row = document.querySelector('#rows [aria-rowindex=\"4\"]'); return row && row.getAttribute('aria-label')")
    expected = run.browser.wait(third, "the third row")
    run.browser.js("document.activeElement.blur()")
    ActionChains(run.browser.driver).send_keys("/").perform()
    assert run.browser.js("return document.activeElement.id") == "filter", "/ does not reach the filter"
    run.browser.js("document.getElementById('downloads').focus()")
    keys = ActionChains(run.browser.driver)
    for _ in range(3):
        keys.send_keys(Keys.ARROW_DOWN)
    keys.send_keys(Keys.SPACE).perform()
    current = lambda: run.browser.js("const row = document.querySelector('#rows .current'); return row && row.getAttribute('aria-label')")
    assert current() == expected, (current(), expected)
    checked = run.browser.js("return document.querySelector('#rows .current input[type=checkbox]').checked")
    assert checked, "Space did not select the row"
    assert "1 selected" in run.browser.js("return document.getElementById('selection-count').textContent")
    ActionChains(run.browser.driver).send_keys(Keys.ENTER).perform()
    run.browser.wait(lambda: run.browser.js("return document.getElementById('details').open"), "the details")
    assert run.browser.js("return document.getElementById('details-title').textContent") == expected
    ActionChains(run.browser.driver).send_keys(Keys.ESCAPE).perform()
    run.browser.wait(lambda: not run.browser.js("return document.getElementById('details').open"), "the details to close")
    run.click("Clear selection")
    run.figure(f"keyboard: / to Filter; 3 × ↓ to {expected}, Space selected it, Enter opened its details")


def check_remove_asks(run):
    type_filter(run, "file-09999")
    run.browser.wait(lambda: run.status().endswith("of 10 matching"), "10 matching")
    type_filter(run, "file-0999")
    run.browser.wait(lambda: run.status().endswith("of 100 matching"), "100 matching")
    type_filter(run, "file-099")
    run.browser.wait(lambda: run.status().endswith("of 1,000 matching"), "1,000 matching")
    run.click("Select all matching")
    run.click("Remove selected")
    run.browser.wait(lambda: run.browser.js("return document.getElementById('confirm-remove').open"), "the question")
    text = run.browser.js("return document.getElementById('confirm-text').textContent")
    assert "1,000" in text, text
    run.click("Cancel")
    time.sleep(1)
    assert int(run.daemon.call("aria2.getGlobalStat")["numWaiting"]) == run.args.count, "Cancel removed something"
    run.click("Remove selected")
    run.browser.wait(lambda: run.browser.js("return document.getElementById('confirm-remove').open"), "the question again")
    run.click("Remove 1,000")
    run.browser.wait(lambda: int(run.daemon.call("aria2.getGlobalStat")["numWaiting"]) == run.args.count - 1000, "1,000 removed", 20)
    run.browser.wait(lambda: "No download matches" in run.browser.js("return document.getElementById('empty').textContent")
                     and run.browser.js("return !document.getElementById('empty').hidden"), "no match left")
    run.figure(f"Remove selected on 1,000 asked first ('{text}'), then removed them")
    type_filter(run, "")


def check_screenshots(run):
    run.scroll_to(run.args.count // 2)
    run.browser.wait(lambda: run.status().startswith(f"Showing {run.args.count // 2 + 1:,}–"), "the middle")
    for width, height in ((1440, 900), (375, 812)):
        run.browser.viewport(width, height, mobile=width < 500)
        time.sleep(1.5)
        run.browser.screenshot(run.results / f"large-{width}x{height}.png")
        chart = run.browser.js("return document.querySelector('.speed-chart').getBoundingClientRect().width")
        page = run.browser.js("return document.documentElement.clientWidth")
        run.figure(f"{width}x{height}: chart {chart:.0f} px wide of {page} px; {run.rows()} row elements")
        if width < 500:
            assert chart >= page * 0.8, f"the chart is {chart} px of {page}"
    run.browser.viewport(1440, 900)


CHECKS = [check_daemon_figures, check_first_rows, check_every_row_reachable, check_filter, check_bulk_pause,
          check_keyboard, check_remove_asks, check_screenshots]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--results", default=str(servers.ROOT / ".build/dashboard-results"))
    args = parser.parse_args()
    import importlib
    importlib.import_module("test-dashboard").ensure_tools("haul")
    with tempfile.TemporaryDirectory(prefix="haul-dashboard-large-") as workdir:
        run = Run(args, pathlib.Path(workdir))
        try:
            fill(run)
            for check in CHECKS:
                run.check(check.__name__.removeprefix("check_"), check)
        finally:
            run.close()
    print(f"{len(run.passed)} passed, {len(run.failed)} failed")
    sys.exit(1 if run.failed else 0)


if __name__ == "__main__":
    main()
