"""Headless Chromium for Scripts/test-dashboard.py: Selenium with the network and console logs,
lookups by role and accessible name (the page's contract for tests), viewport and colour scheme
emulation, and the renderers' memory.
"""
import contextlib
import json
import pathlib
import shutil
import sys
import time

ROLE_SELECTORS = {
    "button": "button, [role=button]",
    "textbox": "input:not([type]), input[type=text], input[type=password], textarea, [role=textbox]",
    "searchbox": "input[type=search], [role=searchbox]",
    "spinbutton": "input[type=number]",
    "row": "[role=row]",
    "progressbar": "[role=progressbar], progress",
    "img": "[role=img], img",
    "alert": "[role=alert]",
}


class Browser:
    """Headless Chromium with its network and console logs, and lookups by role and accessible name."""

    def __init__(self, profile):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium")
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1440,900", "--enable-precise-memory-info", f"--user-data-dir={profile}",
                         "--no-first-run", "--no-default-browser-check", "--no-proxy-server",
                         "--disable-background-networking", "--disable-component-update", "--disable-sync",
                         "--disable-domain-reliability", "--disable-extensions", "--password-store=basic",
                         "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication"]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
        self.driver.set_script_timeout(20)
        self.viewport(1440, 900)
        self.events = []

    def viewport(self, width, height, mobile=False):
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})

    def color_scheme(self, scheme):
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": scheme}]})

    def find(self, role, name=None, within=None, prefix=False):
        """Displayed elements of `role` whose accessible name is `name` (or starts with it)."""
        from selenium.webdriver.common.by import By
        scope = within or self.driver
        found = []
        for element in scope.find_elements(By.CSS_SELECTOR, ROLE_SELECTORS[role]):
            if not element.is_displayed():
                continue
            label = element.accessible_name
            if name is None or label == name or (prefix and label.startswith(name)):
                found.append(element)
        return found

    def one(self, role, name=None, within=None, prefix=False):
        found = self.find(role, name, within, prefix)
        if len(found) != 1:
            raise AssertionError(f"{len(found)} {role} elements named {name!r}")
        return found[0]

    def wait(self, condition, what, timeout=20):
        """Waits until condition() is truthy (errors count as not yet); returns its value."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                value = condition()
                if value:
                    return value
            except Exception as error:  # stale elements while the list redraws, ...
                last = error
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}" + (f" (last error: {last})" if last else ""))

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def drain_network(self):
        """The Network events logged since the last call, as (method, params)."""
        entries = [json.loads(e["message"])["message"] for e in self.driver.get_log("performance")]
        events = [(e["method"], e.get("params", {})) for e in entries if e["method"].startswith("Network.")]
        self.events.extend(events)
        return events

    def screenshot(self, path):
        self.driver.save_screenshot(str(path))
        print(f"test-dashboard: screenshot {path}", file=sys.stderr, flush=True)

    def quit(self):
        self.driver.quit()


def descendants(root):
    """The ids of the processes below `root` (its children, theirs, ...)."""
    children = {}
    for proc in pathlib.Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(proc.name))
    found, queue = [], [root]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def memory_of(pid):
    """RSS, its anonymous part (what the process allocated, not the mapped binary), and PSS, in MiB."""
    status = dict(line.split(":", 1) for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines()
                  if ":" in line)
    rollup = dict(line.split(":", 1) for line in pathlib.Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
                  if ":" in line and not line.startswith(" "))
    mib = lambda text: int(text.split()[0]) / 1024  # noqa: E731
    return {"rss": mib(status["VmRSS"]), "anon": mib(status["RssAnon"]), "pss": mib(rollup["Pss"])}


def renderers(browser):
    """Memory of each renderer process of this browser (not another Chromium on the machine)."""
    found = []
    for pid in descendants(browser.driver.service.process.pid):
        with contextlib.suppress(OSError):
            if b"--type=renderer" in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(memory_of(pid))
    return found
