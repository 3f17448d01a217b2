#!/usr/bin/env python3
"""The web front's figures in a real browser, for roombridge-bench (section "Web front").

roombridge-bench starts roombridged (NFC on) and pn532-sim; this script starts roombridge-web
next to them, drives Debian's chromium through chromium-driver and selenium, and prints ONE
JSON line of samples (milliseconds):

- pageLoadMs / staticLoadMs: /kiosk loaded from roombridge-web, and the same bytes (the page,
  its CSS and its script, fetched once) served by `python3 -m http.server`; navigation start →
  load event from Navigation Timing, with the browser cache disabled, loads interleaved.
- warmPageLoadMs / warmStaticLoadMs: the same with the browser's cache on (filled by one load each),
  as a kiosk that reloads has it.
- screenMs / watchMs: the same device taps (after a badge tap), from a wall-clock timestamp
  taken right before `place` is sent to pn532-sim until the kiosk DOM shows the "lent" outcome
  (a MutationObserver in the page records performance.timeOrigin + performance.now()), and
  until a plain Varlink Watch subscriber receives the lending event. Both clocks are this
  machine's wall clock.

Usage: bench-web.py --bin DIR --socket PATH --sim-control PATH --device-tag SPEC [--loads N] [--taps N]
Exit status 3 when chromium, chromium-driver or selenium is missing (the bench reports it skipped).
"""
import argparse
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

BADGE = "isoa:0A0B0C0D"          # pn532-sim's shorthand for an ISO 14443-A badge
BADGE_ID = "0A:0B:0C:0D"
DEVICE_ID = "D-0001"


def varlink_call(path, method, **parameters):
    """One Varlink call on its own connection; returns the reply's parameters."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\0")
        data = b""
        while not data.endswith(b"\0"):
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError(f"{method}: connection closed")
            data += chunk
    reply = json.loads(data[:-1])
    if "error" in reply:
        raise RuntimeError(f"{method}: {reply['error']} {reply.get('parameters')}")
    return reply.get("parameters", {})


class Watch:
    """A Watch subscriber on a reader thread: each event with the wall-clock time it arrived."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.sock.sendall(b'{"method":"io.roombridge.State.Watch","more":true}\0')
        self.events = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        buffer = b""
        while True:
            chunk = self.sock.recv(65536)
            now = time.time()
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                message, buffer = buffer.split(b"\0", 1)
                event = json.loads(message).get("parameters", {}).get("event")
                if event:
                    self.events.put((now, event))

    def wait(self, match, what, timeout=15):
        """The arrival time of the next event for which `match(event)` holds."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"no {what} at the Watch subscriber within {timeout} s")
            try:
                at, event = self.events.get(timeout=left)
            except queue.Empty:
                continue
            if match(event):
                return at


def lending(kind):
    return lambda e: e.get("kind") == "lending" and e.get("lending", {}).get("kind") == kind


def removed(e):
    return e.get("kind") == "tagRemoved"


def sim_ctl(control, command):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(control)
        s.sendall(command.encode() + b"\n")
        answer = b""
        while b"\n" not in answer:
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
    text = answer.decode().strip()
    if not text.startswith("ok"):
        raise RuntimeError(f"pn532-sim {command.split()[0]}: {text}")


def poll(condition, what, timeout=15, step=0.002):
    """Polls `condition` until it returns a truthy value (a measurement loop, not a test)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    raise RuntimeError(f"timed out waiting for {what}")


def start_web(bin_dir, socket_path, work, *extra, name="roombridge-web.log"):
    log_path = os.path.join(work, name)
    log = open(log_path, "wb")
    proc = subprocess.Popen([os.path.join(bin_dir, "roombridge-web"), "--port", "0", "--socket", socket_path,
                             "--idle-seconds", "30", *extra],
                            stdout=log, stderr=log)

    def port():
        if proc.poll() is not None:
            raise RuntimeError("roombridge-web exited: " + open(log_path, errors="replace").read())
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/kiosk", open(log_path, errors="replace").read())
        return m and int(m.group(1))
    return proc, f"http://127.0.0.1:{poll(port, 'roombridge-web to print its URL')}"


def start_static(base, work):
    """The page's bytes from roombridge-web, saved once and served by python3 -m http.server."""
    root = os.path.join(work, "static-copy")
    os.makedirs(os.path.join(root, "static"), exist_ok=True)
    sizes = {}
    request = urllib.request.Request(base + "/kiosk", headers={"Accept-Language": "en"})
    with urllib.request.urlopen(request, timeout=10) as r:
        page = r.read().decode()
    # The page and the assets it names (versioned names: /static/kiosk.<hash>.js), at the same paths.
    assets = re.findall(r'(?:href|src)="(/static/[^"]+)"', page)
    for path, name in [("/kiosk", "kiosk.html")] + [(a, a.lstrip("/")) for a in assets]:
        request = urllib.request.Request(base + path, headers={"Accept-Language": "en"})
        with urllib.request.urlopen(request, timeout=10) as r:
            body = r.read()
        with open(os.path.join(root, name), "wb") as f:
            f.write(body)
        sizes[path] = len(body)
    proc = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", root, "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    m = re.search(r"port (\d+)", proc.stdout.readline())
    if not m:
        proc.terminate()
        raise RuntimeError("python3 -m http.server did not start")
    return proc, f"http://127.0.0.1:{m.group(1)}/kiosk.html", sizes


def api_lookups(bin_dir, socket_path, work, n):
    """GET /api/v1/devices/D-0001 with a read token on one kept-alive HTTP connection, and the same lookup
    (io.roombridge.Inventory.GetDevice) on one Varlink connection: the milliseconds of each."""
    import http.client
    tokens = os.path.join(work, "web-tokens")
    token = subprocess.run([os.path.join(bin_dir, "roombridge-web"), "token", "add", "bench", "--scope", "read",
                            "--file", tokens], capture_output=True, text=True, check=True).stdout.strip()
    web, base = start_web(bin_dir, socket_path, work, "--api-tokens", tokens, "--api-burst", "1000000",
                          name="roombridge-web-api.log")
    try:
        conn = http.client.HTTPConnection(base.removeprefix("http://"), timeout=10)
        headers = {"Authorization": f"Bearer {token}"}

        def get():
            conn.request("GET", f"/api/v1/devices/{DEVICE_ID}", headers=headers)
            r = conn.getresponse()
            body = r.read()
            assert r.status == 200 and DEVICE_ID.encode() in body, (r.status, body[:200])
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(socket_path)
            message = json.dumps({"method": "io.roombridge.Inventory.GetDevice", "parameters": {"id": DEVICE_ID}}).encode() + b"\0"

            def call():
                s.sendall(message)
                data = b""
                while not data.endswith(b"\0"):
                    data += s.recv(65536)
                assert b'"error"' not in data[:12] and DEVICE_ID.encode() in data, data[:200]
            for _ in range(20):  # warm-up, both
                get()
                call()
            api, varlink = [], []
            for _ in range(n):
                t0 = time.perf_counter()
                get()
                api.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                call()
                varlink.append((time.perf_counter() - t0) * 1000)
        conn.close()
        return api, varlink
    finally:
        web.terminate()
        web.wait()


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,720", "--lang=en"]:
        options.add_argument(arg)
    options.add_experimental_option("prefs", {"intl.accept_languages": "en"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    # Every load fetches the page, its CSS and its script (roombridge-web lets assets be cached
    # for 5 minutes, http.server sends Last-Modified): cold loads on both sides.
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    return driver


def load_ms(driver, url):
    driver.get("about:blank")
    driver.get(url)
    script = ("const e = performance.getEntriesByType('navigation')[0];"
              "return e && e.loadEventEnd > 0 ? e.loadEventEnd - e.startTime : null;")
    return poll(lambda: driver.execute_script(script), f"the load event of {url}")


# Records each change of the outcome's kind with the wall-clock time the DOM shows it.
OBSERVER = """
window.__marks = [];
const box = document.getElementById("outcome");
let last = box.dataset.kind;
new MutationObserver(function () {
  if (box.dataset.kind !== last) {
    last = box.dataset.kind;
    window.__marks.push({kind: last, text: document.getElementById("headline").textContent,
                         at: performance.timeOrigin + performance.now()});
  }
}).observe(box, {attributes: true, childList: true, characterData: true, subtree: true});
"""


def screen_time(driver, kind, since):
    """The first mark of `kind` after `since` (seconds since the epoch), in seconds."""
    def found():
        for mark in driver.execute_script("return window.__marks"):
            if mark["kind"] == kind and mark["at"] / 1000 >= since:
                return mark
        return None
    mark = poll(found, f"the kiosk to show {kind}", step=0.005)
    return mark["at"] / 1000, mark["text"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--sim-control", required=True)
    parser.add_argument("--device-tag", required=True)
    parser.add_argument("--tag-uid", default="04A1B2C3D4E5F6")
    parser.add_argument("--loads", type=int, default=20)
    parser.add_argument("--taps", type=int, default=10)
    parser.add_argument("--lookups", type=int, default=2000)
    args = parser.parse_args()
    try:
        import selenium  # noqa: F401
    except ImportError:
        print("selenium not installed", file=sys.stderr)
        return 3
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        print("chromium-driver not installed", file=sys.stderr)
        return 3

    varlink_call(args.socket, "io.roombridge.Inventory.AddUser", id="U-0001", name="Ada Lovelace")
    varlink_call(args.socket, "io.roombridge.Inventory.AddBadge", identifier=BADGE_ID, kind="iso14443a", userId="U-0001")
    varlink_call(args.socket, "io.roombridge.Inventory.AddDevice", id=DEVICE_ID,
                 fields={"groupId": "android-phone", "model": "Pixel 7"})
    varlink_call(args.socket, "io.roombridge.Inventory.BindTag", uid=args.tag_uid, deviceId=DEVICE_ID)

    work = tempfile.mkdtemp(prefix="rb-bench-web-")
    web, base = start_web(args.bin, args.socket, work)
    static, static_url, sizes = start_static(base, work)
    driver = None
    try:
        driver = browser()
        page, peer = [], []
        load_ms(driver, base + "/kiosk")  # one warm-up load each: the browser's first navigation
        load_ms(driver, static_url)
        for _ in range(args.loads):
            page.append(load_ms(driver, base + "/kiosk"))
            peer.append(load_ms(driver, static_url))
        # Warm: the browser's cache on, as a kiosk has it; each side loaded once to fill it.
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})
        warm, warm_peer = [], []
        load_ms(driver, base + "/kiosk")
        load_ms(driver, static_url)
        for _ in range(args.loads):
            warm.append(load_ms(driver, base + "/kiosk"))
            warm_peer.append(load_ms(driver, static_url))

        driver.get(base + "/kiosk")
        poll(lambda: driver.execute_script("return document.body.dataset.live") == "1", "the kiosk to be live")
        driver.execute_script(OBSERVER)
        watch = Watch(args.socket)
        screen, at_watch, texts = [], [], []
        for _ in range(args.taps):
            sim_ctl(args.sim_control, f"place {BADGE}")
            watch.wait(lending("armed"), "armed")
            sim_ctl(args.sim_control, "remove")
            watch.wait(removed, "tagRemoved")
            t0 = time.time()
            sim_ctl(args.sim_control, f"place {args.device_tag}")
            watched = watch.wait(lending("lent"), "lent")
            shown, text = screen_time(driver, "lent", t0)
            screen.append((shown - t0) * 1000)
            at_watch.append((watched - t0) * 1000)
            texts.append(text)
            sim_ctl(args.sim_control, "remove")
            watch.wait(removed, "tagRemoved")
            # Returned, so that the next round lends again.
            sim_ctl(args.sim_control, f"place {args.device_tag}")
            watch.wait(lending("returned"), "returned")
            sim_ctl(args.sim_control, "remove")
            watch.wait(removed, "tagRemoved")
        api, varlink = api_lookups(args.bin, args.socket, work, args.lookups)
        print(json.dumps({"pageLoadMs": page, "staticLoadMs": peer, "warmPageLoadMs": warm, "warmStaticLoadMs": warm_peer,
                          "screenMs": screen, "watchMs": at_watch, "apiLookupMs": api, "varlinkLookupMs": varlink,
                          "bytes": sizes, "lentText": texts[0] if texts else None}))
        return 0
    finally:
        if driver is not None:
            driver.quit()
        static.terminate()
        static.wait()
        web.terminate()
        web.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
