"""roombridge-web end to end: the real roombridged (with pn532-sim for taps) behind the real
roombridge-web. HTTP checks with urllib, then a real browser (Debian's chromium and
chromium-driver through selenium) for the kiosk."""
import csv
import datetime
import html
import http.client
import io
import json
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request

import pytest

from conftest import binary, eventually, stop
from test_curtain import connected, sim  # noqa: F401 (fixtures)


@pytest.fixture
def notify_method():
    """The web page does not care how the daemon subscribes: the default only."""
    return "start-notify"
from test_lending import BADGE, ctl, ctl_json, nfc_lending_daemon
from test_nfc import device_message, lift, spec

TZ = "Asia/Tokyo"


class Web:
    """A running roombridge-web on a free port, talking to `daemon`."""

    def __init__(self, tmp, daemon, *extra, time_zone=TZ):
        self.log_path = tmp / "roombridge-web.log"
        self.log = open(self.log_path, "wb")
        zone = ["--time-zone", time_zone] if time_zone else []
        self.proc = subprocess.Popen(
            [binary("roombridge-web"), "--port", "0", "--socket", daemon.socket_path, *zone,
             "--idle-seconds", "30", *extra],
            stdout=subprocess.DEVNULL, stderr=self.log)
        port = eventually(self._port, timeout=15, what="roombridge-web to print its URL")
        self.base = f"http://127.0.0.1:{port}"

    def _port(self):
        assert self.proc.poll() is None, f"roombridge-web exited: {self.log_path.read_text()}"
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/kiosk", self.log_path.read_text(errors="replace"))
        return m and int(m.group(1))

    def get(self, path, language="en", expect=200):
        """GETs `path`; returns (status, headers, body text)."""
        req = urllib.request.Request(self.base + path, headers={"Accept-Language": language})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                status, headers, body = r.status, r.headers, r.read().decode()
        except urllib.error.HTTPError as e:
            status, headers, body = e.code, e.headers, e.read().decode()
        assert status == expect, f"GET {path}: {status}\n{body}"
        return status, headers, body

    def close(self):
        if not stop(self.proc):
            raise AssertionError("roombridge-web did not stop within 10 s of SIGTERM (does not hang bound)")
        self.log.close()


@pytest.fixture
def web_factory(tmpdir_path):
    made = []

    def make(daemon, *extra, time_zone=TZ):
        w = Web(tmpdir_path, daemon, *extra, time_zone=time_zone)
        made.append(w)
        return w

    yield make
    for w in made:
        w.close()


def text_of(page):
    """The visible text of an HTML page (tags, script and style removed)."""
    page = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", page)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def seed(d):
    ctl(d, "users", "add", "U-0001", "--name", "Ada Lovelace")
    ctl(d, "users", "add", "U-0002", "--name", "Grace Hopper")
    ctl(d, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7", "--serial", "SN-1")
    ctl(d, "devices", "add", "D-0002", "--group", "iphone", "--model", "iPhone 15", "--serial", "SN-2")
    ctl(d, "devices", "edit", "D-0002", "--status", "broken", "--note", "cracked screen")
    # Due a moment from now, so that it is overdue once the test looks (a due date in the past is refused).
    due = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ctl(d, "lend", "--device", "D-0001", "--user", "U-0001", "--due", due)


# --- HTTP -------------------------------------------------------------------------------------------

def test_pages_show_what_the_daemon_has(daemon, web_factory):
    seed(daemon)
    web = web_factory(daemon)

    def overdue_page():
        page = web.get("/devices")[2]
        return page if 'class="overdue"' in page else None
    page = eventually(overdue_page, what="D-0001 to become overdue")
    _, headers, _ = web.get("/devices")
    assert headers["Content-Type"].startswith("text/html")
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    text = text_of(page)
    assert "Pixel 7" in text and "iPhone 15" in text and "Lent to Ada Lovelace" in text

    # Filters go to the daemon: only the broken device, only the lent one, text search.
    assert "D-0002" in (t := text_of(web.get("/devices?status=broken")[2])) and "D-0001" not in t
    assert "D-0001" in (t := text_of(web.get("/devices?lent=true")[2])) and "D-0002" not in t
    assert "D-0002" in (t := text_of(web.get("/devices?text=iphone")[2])) and "D-0001" not in t
    assert "No devices match." in text_of(web.get("/devices?text=nothing+like+this")[2])

    detail = text_of(web.get("/devices/D-0002")[2])
    assert "cracked screen" in detail
    assert re.search(r"changed\s+Status\s+Normal → Broken", detail), detail
    assert re.search(r"added\s+Model\s+— → iPhone 15", detail), detail
    detail = text_of(web.get("/devices/D-0001")[2])
    assert "Lent to Ada Lovelace (U-0001)" in detail and "overdue" in detail
    web.get("/devices/D-9999", expect=404)

    rentals = web.get("/rentals")[2]
    assert re.search(r'<table id="overdue">.*D-0001', rentals, re.S)
    assert re.search(r'<tr class="overdue">.*?D-0001', rentals, re.S)

    users = text_of(web.get("/users?name=grace")[2])
    assert "Grace Hopper" in users and "Ada Lovelace" not in users


def test_history_is_a_range_query_and_its_csv_is_the_clis(daemon, web_factory):
    seed(daemon)
    ctl(daemon, "return", "D-0001")
    ctl(daemon, "lend", "--device", "D-0001", "--user", "U-0002")
    web = web_factory(daemon)

    text = text_of(web.get("/history?device=D-0001")[2])
    assert "Ada Lovelace" in text and "Grace Hopper" in text
    text = text_of(web.get("/history?user=U-0002")[2])
    assert "Grace Hopper" in text and "Ada Lovelace" not in text
    assert "No rentals in this range." in text_of(web.get("/history?since=2001-01-01&until=2001-01-02")[2])
    assert "Dates are YYYY-MM-DD" in text_of(web.get("/history?since=yesterday", expect=400)[2])

    _, headers, body = web.get("/history.csv?device=D-0001")
    assert headers["Content-Type"].startswith("text/csv")
    assert "attachment" in headers["Content-Disposition"]
    cli = ctl(daemon, "history", "--device", "D-0001", "--format", "csv", "--time-zone", TZ).stdout
    assert body.replace("\r\n", "\n") == cli.replace("\r\n", "\n")
    rows = list(csv.reader(io.StringIO(body)))
    assert len(rows) == 3  # header and two rentals


def test_without_a_time_zone_flag_the_pages_use_the_daemons(daemon_factory, web_factory):
    """roombridge-web started without --time-zone shows dates in the daemon's lending.time_zone:
    its history CSV is the CLI's default one, whatever the zone of the web's own host."""
    d = daemon_factory("--lending-time-zone", "Pacific/Auckland")
    seed(d)
    web = web_factory(d, time_zone=None)
    cli = ctl(d, "history", "--device", "D-0001", "--format", "csv").stdout.replace("\r\n", "\n")
    # Until its Watch has the daemon's first state, the web uses its own host's zone.
    body = eventually(lambda: (b := web.get("/history.csv?device=D-0001")[2].replace("\r\n", "\n")) == cli and b,
                      timeout=15, what="the web's CSV in the daemon's zone")
    assert "Times in Pacific/Auckland" in text_of(web.get("/devices")[2])
    assert "時刻はPacific/Auckland" in text_of(web.get("/devices", language="ja")[2])
    utc = ctl(d, "history", "--device", "D-0001", "--format", "csv", "--time-zone", "UTC").stdout
    assert body != utc.replace("\r\n", "\n"), "the dates must be Auckland's, not UTC"


# "English": the header's language switch names each language in itself.
ENGLISH_ALLOWED = {"ID", "OS", "NFC", "UID", "CSV", "roombridged", "English"}


def english_words(text, data):
    """Latin words in `text` that are not data (IDs, models, names) nor allowed abbreviations."""
    for value in data:
        text = text.replace(value, " ")
    return sorted({w for w in re.findall(r"[A-Za-z]{2,}", text) if w not in ENGLISH_ALLOWED})


def test_japanese_pages_by_accept_language_have_no_english_left(daemon, web_factory):
    seed(daemon)
    web = web_factory(daemon)
    data = ["Ada Lovelace", "Grace Hopper", "Pixel 7", "iPhone 15", "cracked screen", "android-phone", "iphone",
            "Android phone", "Android", "iPhone", "SN-1", "SN-2", "D-0001", "D-0002", "U-0001", "U-0002", TZ]
    # Group names are data too (the inventory's, as stored).
    data += [g["name"] for g in ctl_json(daemon, "groups", "list")]
    data.sort(key=len, reverse=True)
    for path in ["/devices", "/devices/D-0002", "/devices/D-0001", "/rentals", "/history", "/users", "/kiosk"]:
        _, _, page = web.get(path, language="ja-JP,ja;q=0.9,en;q=0.8")
        assert '<html lang="ja">' in page
        left = english_words(text_of(page), data)
        assert left == [], f"{path} has English left: {left}"
    assert "端末一覧" in web.get("/devices", language="ja")[2]
    assert "Devices" in web.get("/devices", language="en-GB,en;q=0.9")[2]


class SSE:
    """A raw Server-Sent Events connection to /events."""

    def __init__(self, web, last_event_id=None, language="en"):
        host, port = web.base.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=10)
        headers = {"Accept-Language": language}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self.conn.request("GET", "/events", headers=headers)
        self.resp = self.conn.getresponse()
        assert self.resp.status == 200 and self.resp.headers["Content-Type"].startswith("text/event-stream")

    def next(self):
        """The next event with data, as (id, event, data dict); a bare `id:` frame as (id, None, None)."""
        fields = {}
        while True:
            line = self.resp.fp.readline().decode()
            assert line, "event stream closed"
            line = line.rstrip("\n")
            if line == "":
                if "id" in fields or "event" in fields:
                    data = json.loads(fields["data"]) if "data" in fields else None
                    return (int(fields["id"]) if "id" in fields else None), fields.get("event"), data
                continue
            key, _, value = line.partition(": ")
            fields[key] = value

    def until(self, event, what):
        seen = []
        for _ in range(50):
            e = self.next()
            seen.append(e)
            if e[1] == event and (what is None or what(e[2])):
                return e
        raise AssertionError(f"no {event} among {seen}")

    def close(self):
        self.conn.close()


def test_events_resume_after_last_event_id(daemon, web_factory):
    seed(daemon)
    web = web_factory(daemon)
    first = SSE(web)
    seq, kind, snapshot = first.next()
    assert kind == "snapshot" and snapshot.get("curtain") is None  # no curtain configured
    ctl(daemon, "return", "D-0001")
    returned = first.until("outcome", lambda d: d["kind"] == "returned")
    assert returned[2]["headline"] == "Returned — thank you" and returned[2]["tone"] == "success"
    ctl(daemon, "lend", "--device", "D-0001", "--user", "U-0002", "--due", "2030-12-03T12:00:00+09:00")
    lent = first.until("outcome", lambda d: d["kind"] == "lent")
    assert lent[2]["headline"] == "Lent Pixel 7 (D-0001) to Grace Hopper — due Tue 3 Dec"
    assert lent[0] > returned[0]
    first.close()

    # A browser that saw `returned` and reconnects gets what came after it, not a snapshot.
    again = SSE(web, last_event_id=returned[0])
    replay = [again.next()]
    while replay[-1][0] != lent[0]:
        replay.append(again.next())
    assert "snapshot" not in [e[1] for e in replay], replay
    assert [e[0] for e in replay] == list(range(returned[0] + 1, lent[0] + 1)), replay
    assert replay[-1][2]["kind"] == "lent"
    again.close()

    # Japanese, by Accept-Language, on the same stream format.
    ja = SSE(web, last_event_id=returned[0], language="ja")
    assert "Grace Hopper さんに貸し出しました" in ja.until("outcome", lambda d: d["kind"] == "lent")[2]["headline"]
    ja.close()


def test_events_resume_across_a_restart_of_roombridge_web(daemon, web_factory):
    """The events a browser missed while roombridge-web itself was down come from the daemon's
    replay ring (Watch since), not from roombridge-web's memory."""
    seed(daemon)
    web = web_factory(daemon)
    first = SSE(web)
    seen, kind, _ = first.next()
    assert kind == "snapshot"
    first.close()
    web.close()

    ctl(daemon, "return", "D-0001")
    ctl(daemon, "lend", "--device", "D-0001", "--user", "U-0002", "--due", "2030-12-03T12:00:00+09:00")
    latest = ctl_json(daemon, "status")[0]["seq"]
    assert latest > seen

    again = SSE(web_factory(daemon), last_event_id=seen)
    replay = [again.next()]
    while replay[-1][0] != latest:
        replay.append(again.next())
    assert "snapshot" not in [e[1] for e in replay], replay
    assert [e[0] for e in replay] == list(range(seen + 1, latest + 1)), replay
    outcomes = [e[2]["kind"] for e in replay if e[1] == "outcome"]
    assert outcomes == ["returned", "lent"], replay
    again.close()


def test_kiosk_shows_offline_while_the_daemon_is_away(daemon, web_factory):
    web = web_factory(daemon)
    stream = SSE(web)
    assert stream.next()[1] == "snapshot"
    daemon.terminate()
    assert stream.until("offline", None)[2]["headline"] == "Offline — nothing recorded"
    assert "roombridged cannot be reached" in text_of(web.get("/devices", expect=503)[2])
    stream.close()


def test_sigterm_ends_open_event_streams_and_exits(daemon, web_factory):
    web = web_factory(daemon)
    stream = SSE(web)
    assert stream.next()[1] == "snapshot"
    web.close()  # fails if it does not exit within 10 s of SIGTERM
    assert web.proc.returncode == 0, web.log_path.read_text()
    stream.close()


# --- A real browser ---------------------------------------------------------------------------------

def chromium_driver(language):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,720",
                f"--lang={language}", "--autoplay-policy=no-user-gesture-required"]:
        options.add_argument(arg)
    options.add_experimental_option("prefs", {"intl.accept_languages": language})
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(service=Service(driver_path), options=options)


@pytest.fixture
def browser_factory():
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.fail("chromium and chromium-driver are missing: run scripts/install-deps.sh")
    made = []

    def make(language="en"):
        d = chromium_driver(language)
        made.append(d)
        return d

    yield make
    for d in made:
        d.quit()


def kiosk_shows(driver, kind, timeout=10):
    """Waits until the kiosk shows an outcome of `kind`; returns its headline."""
    def shown():
        box = driver.find_element("id", "outcome")
        return box.get_attribute("data-kind") == kind and driver.find_element("id", "headline").text
    return eventually(shown, timeout=timeout, what=f"the kiosk to show {kind}")


def open_kiosk(driver, web):
    driver.get(web.base + "/kiosk")
    # The page is live once the daemon's state arrived over /events (the curtain corner is decided then).
    eventually(lambda: driver.find_element("tag name", "body").get_attribute("data-live") == "1", what="the kiosk to be live")


def place(pn532, tag):
    pn532.ctl("place", tag)


def test_kiosk_in_a_browser_badge_then_device_shows_lent_then_returned(daemon_factory, pn532, web_factory,
                                                                      browser_factory, tmpdir_path):
    # Lent then returned by taps in quick succession: no repeat window here.
    d = nfc_lending_daemon(daemon_factory, pn532, "--lending-loan-days", "7", "--lending-repeat-window", "0")
    ctl(d, "devices", "add", "D-0042", "--group", "android-phone", "--model", "Pixel 7")
    ctl(d, "tags", "bind", "04A1B2C3D4E5F6", "--device", "D-0042")  # the simulator's default tag UID
    web = web_factory(d)
    driver = browser_factory("en")
    open_kiosk(driver, web)
    assert driver.find_element("id", "headline").text == "Tap your badge, then a device"

    place(pn532, BADGE)
    armed = kiosk_shows(driver, "armed")
    assert re.fullmatch(r"Badge accepted: Ada Lovelace, now tap a device \(\d+ s\)", armed), armed
    assert "tone-info" in driver.find_element("id", "outcome").get_attribute("class")
    lift(d, pn532)

    place(pn532, spec(ndef=device_message("D-0042")))
    # The bound: on screen within 1 s of the daemon's outcome (the tap itself includes the
    # simulated reader's polling, so the bound is measured from the device tag's placement generously).
    lent = kiosk_shows(driver, "lent", timeout=5)
    assert re.fullmatch(r"Lent Pixel 7 \(D-0042\) to Ada Lovelace — due \w{3} \d{1,2} \w{3}", lent), lent
    assert "tone-success" in driver.find_element("id", "outcome").get_attribute("class")
    driver.save_screenshot(str(tmpdir_path / "kiosk-lent-en.png"))
    shutil.copy(tmpdir_path / "kiosk-lent-en.png", artefact_dir() / "kiosk-lent-en.png")
    lift(d, pn532)

    place(pn532, spec(ndef=device_message("D-0042")))
    assert kiosk_shows(driver, "returned") == "Returned — thank you"
    lift(d, pn532)


def test_kiosk_in_a_browser_unknown_tag_and_japanese(daemon_factory, pn532, web_factory, browser_factory, tmpdir_path):
    import ndef
    d = nfc_lending_daemon(daemon_factory, pn532)
    ctl(d, "devices", "add", "D-0042", "--group", "android-phone", "--model", "Pixel 7")
    ctl(d, "tags", "bind", "04A1B2C3D4E5F6", "--device", "D-0042")  # the simulator's default tag UID
    web = web_factory(d)
    en = browser_factory("en")
    open_kiosk(en, web)
    ja = browser_factory("ja")
    open_kiosk(ja, web)
    assert ja.find_element("id", "headline").text == "社員証をタッチしてから端末をタッチしてください"

    text = b"".join(ndef.message_encoder([ndef.TextRecord("hello", "en")])).hex()
    place(pn532, spec(uid="04112233445566", kind="ntag213", ndef=text))
    assert kiosk_shows(en, "unknownTag") == "Unknown tag — ask an admin"
    assert "tone-refusal" in en.find_element("id", "outcome").get_attribute("class")
    assert kiosk_shows(ja, "unknownTag") == "不明なタグです — 管理者に連絡してください"
    lift(d, pn532)

    place(pn532, BADGE)
    kiosk_shows(ja, "armed")
    lift(d, pn532)
    place(pn532, spec(ndef=device_message("D-0042")))
    lent = kiosk_shows(ja, "lent")
    assert lent == "Pixel 7（D-0042）を Ada Lovelace さんに貸し出しました", lent
    assert english_words(ja.find_element("tag name", "body").text, ["Pixel 7", "D-0042", "Ada Lovelace"]) == []
    ja.save_screenshot(str(tmpdir_path / "kiosk-lent-ja.png"))
    shutil.copy(tmpdir_path / "kiosk-lent-ja.png", artefact_dir() / "kiosk-lent-ja.png")
    lift(d, pn532)


def artefact_dir():
    """Where screenshots are kept after the test's temporary directory is gone
    ($ROOMBRIDGE_ARTEFACTS or $ROOMBRIDGE_ARTIFACTS, default .build/test-artefacts)."""
    from conftest import ROOT
    path = ROOT / (os.environ.get("ROOMBRIDGE_ARTEFACTS") or os.environ.get("ROOMBRIDGE_ARTIFACTS") or ".build/test-artefacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


# --- The systemd unit -------------------------------------------------------------------------------

def render_web_service(directory):
    from conftest import BIN, ROOT
    text = (ROOT / "systemd" / "roombridge-web.service.in").read_text().replace("@BINDIR@", str(BIN))
    path = directory / "roombridge-web.service"
    path.write_text(text)
    return path


def test_web_unit_verifies_and_is_hardened(tmpdir_path):
    from test_service_files import EXPOSURE_TARGET
    service = render_web_service(tmpdir_path)
    out = subprocess.run(["systemd-analyze", "verify", str(service)], capture_output=True, text=True)
    assert out.returncode == 0 and "roombridge-web." not in out.stdout + out.stderr, out.stdout + out.stderr
    out = subprocess.run(["systemd-analyze", "security", "--offline=yes", str(service)], capture_output=True, text=True)
    m = re.search(r"Overall exposure level for roombridge-web.service: ([0-9.]+)", out.stdout)
    assert m, out.stdout + out.stderr
    assert float(m.group(1)) <= EXPOSURE_TARGET, f"exposure {m.group(1)} > {EXPOSURE_TARGET}\n{out.stdout}"


# --- Admin ------------------------------------------------------------------------------------------

PASSWORD = "correct horse battery staple"


def accounts_file(tmp):
    """An accounts file with the admin `root-admin`, written by roombridge-web hash-password."""
    out = subprocess.run([binary("roombridge-web"), "hash-password", "root-admin"], input=PASSWORD + "\n",
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert re.fullmatch(r"root-admin:scrypt:14:8:1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+", line), line
    assert PASSWORD not in line
    path = tmp / "web-accounts"
    path.write_text("# admins of roombridge-web\n" + line + "\n")
    return path


class Client:
    """urllib with cookies and without following redirects."""

    def __init__(self, web):
        import http.cookiejar
        self.web = web
        self.jar = http.cookiejar.CookieJar()

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect)

    def request(self, method, path, form=None, headers=None):
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        req = urllib.request.Request(self.web.base + path, data=data, method=method, headers=headers or {})
        try:
            with self.opener.open(req, timeout=30) as r:
                return r.status, r.headers, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    def upload(self, path, fields, files, language="en"):
        """POSTs `fields` and `files` ({field: (file name, bytes)}) as multipart/form-data, as a browser does."""
        boundary = "----RoomBridgeTestBoundary7a3f"
        parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
                 for k, v in fields.items()]
        parts += [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"; filename="{name}"\r\n'
                  f'Content-Type: text/csv\r\n\r\n'.encode() + data + b"\r\n" for k, (name, data) in files.items()]
        req = urllib.request.Request(self.web.base + path, data=b"".join(parts) + f"--{boundary}--\r\n".encode(), method="POST",
                                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}",
                                              "Accept-Language": language})
        try:
            with self.opener.open(req, timeout=30) as r:
                return r.status, r.headers, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    def token(self, page):
        return re.search(r'name="csrf" value="([^"]*)"', page).group(1)

    def sign_in(self, password=PASSWORD, name="root-admin"):
        _, _, page = self.request("GET", "/login")
        return self.request("POST", "/login", {"csrf": self.token(page), "name": name, "password": password, "next": "/devices"})


def test_admin_signs_in_adds_and_edits_a_device_and_sees_the_change_log(daemon, web_factory, tmpdir_path):
    web = web_factory(daemon, "--accounts", str(accounts_file(tmpdir_path)))
    c = Client(web)
    status, headers, _ = c.request("GET", "/devices/new")
    assert status == 303 and headers["Location"].startswith("/login")

    status, headers, _ = c.sign_in()
    assert status == 303 and headers["Location"] == "/devices", status
    cookie = [h for h in headers.get_all("Set-Cookie") if h.startswith("rb_session=")][0]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie

    _, _, page = c.request("GET", "/devices/new")
    status, headers, _ = c.request("POST", "/devices/new", {
        "csrf": c.token(page), "id": "D-0100", "groupId": "iphone", "model": "iPhone 15", "serialNumber": "F2LX", "osVersion": "17.1"})
    assert status == 303 and headers["Location"] == "/devices/D-0100", status
    shown = ctl_json(daemon, "devices", "show", "D-0100")[0]["device"]
    assert shown["model"] == "iPhone 15" and shown["osVersion"] == "17.1"

    _, _, page = c.request("GET", "/devices/D-0100/edit")
    assert 'value="iPhone 15"' in page
    status, _, _ = c.request("POST", "/devices/D-0100/edit", {
        "csrf": c.token(page), "groupId": "iphone", "model": "iPhone 15", "serialNumber": "F2LX", "osVersion": "17.2",
        "connectorType": "USB-C", "status": "broken", "note": "cracked"})
    assert status == 303
    detail = text_of(c.request("GET", "/devices/D-0100")[2])
    assert re.search(r"changed\s+OS version\s+17\.1 → 17\.2", detail), detail
    assert re.search(r"changed\s+Status\s+Normal → Broken", detail), detail
    assert "Signed in as root-admin" in detail
    # The change log names the signed-in admin, through roombridge-web.
    actors = {e.get("actor") for e in ctl_json(daemon, "devices", "log", "D-0100")}
    assert actors and all(a and a.startswith("web:root-admin") for a in actors), actors

    # An error from the daemon is shown on the form, and nothing changes.
    _, _, page = c.request("GET", "/devices/new")
    status, _, page = c.request("POST", "/devices/new", {"csrf": c.token(page), "id": "D-0100", "groupId": "iphone", "model": "X"})
    # In the page's words: no wire name, no advice for the command line.
    assert status == 400 and "There is already a device D-0100." in text_of(page), text_of(page)
    assert "AlreadyExists" not in page and "roombridgectl" not in text_of(page)

    # Deleting: refused while lent (the daemon's reason on the page), then done; signed out, refused.
    ctl(daemon, "devices", "add", "D-0101", "--group", "iphone", "--model", "iPhone 14", "--serial", "F2LY",
        "--os", "17.0", "--connector", "USB-C")
    ctl(daemon, "users", "add", "U-0100", "--name", "Dana")
    ctl(daemon, "lend", "--device", "D-0101", "--user", "U-0100")
    _, _, page = c.request("GET", "/devices/D-0101")
    # Deleting asks once: the first POST shows the question and deletes nothing.
    status, _, question = c.request("POST", "/devices/D-0101/delete", {"csrf": c.token(page)})
    assert status == 200 and "Delete D-0101 from the inventory?" in text_of(question), text_of(question)
    assert ctl_json(daemon, "devices", "show", "D-0101")[0]["device"]["id"] == "D-0101"
    status, _, refused = c.request("POST", "/devices/D-0101/delete", {"csrf": c.token(page), "confirmed": "yes"})
    assert status == 400 and "D-0101" in text_of(refused), (status, text_of(refused))
    assert ctl_json(daemon, "devices", "show", "D-0101")[0]["device"]["id"] == "D-0101"
    ctl(daemon, "return", "D-0101")
    status, _, _ = Client(web).request("POST", "/devices/D-0101/delete", {"csrf": "x"})
    assert status == 401
    status, headers, _ = c.request("POST", "/devices/D-0101/delete", {"csrf": c.token(page), "confirmed": "yes"})
    assert status == 303 and headers["Location"] == "/devices", status
    assert "D-0101" not in json.dumps(ctl_json(daemon, "devices", "list"))


def test_changes_need_a_csrf_token_and_a_signed_in_admin(daemon, web_factory, tmpdir_path):
    seed(daemon)
    web = web_factory(daemon, "--accounts", str(accounts_file(tmpdir_path)))
    form = {"groupId": "iphone", "model": "Hacked", "status": "normal"}

    # Logged out: refused, with or without a token.
    anonymous = Client(web)
    assert anonymous.request("POST", "/devices/D-0001/edit", {**form, "csrf": "x"})[0] == 401
    assert anonymous.request("POST", "/devices/new", {**form, "id": "D-0666"})[0] == 401

    c = Client(web)
    assert c.sign_in()[0] == 303
    # Signed in, but no token or a wrong one: refused.
    status, _, page = c.request("POST", "/devices/D-0001/edit", form)
    assert status == 403 and "reload the page" in text_of(page)
    assert c.request("POST", "/devices/D-0001/edit", {**form, "csrf": "forged"})[0] == 403
    # The sign-in form needs its own token too.
    assert Client(web).request("POST", "/login", {"name": "root-admin", "password": PASSWORD})[0] == 403
    assert ctl_json(daemon, "devices", "show", "D-0001")[0]["device"]["model"] == "Pixel 7"
    assert "D-0666" not in ctl(daemon, "devices", "list").stdout


def test_failed_sign_ins_are_rate_limited(daemon, web_factory, tmpdir_path):
    web = web_factory(daemon, "--accounts", str(accounts_file(tmpdir_path)))
    c = Client(web)
    for _ in range(5):
        status, _, page = c.sign_in(password="wrong")
        assert status == 401 and "Wrong name or password." in text_of(page)
    # Even the right password is refused now, until the window has passed.
    status, _, page = c.sign_in()
    assert status == 429 and "Too many failed sign-ins" in text_of(page)
    # Another account name is not locked out by these failures.
    assert c.sign_in(name="someone-else", password="x")[0] == 401


def test_admin_in_a_browser_adds_and_edits_a_device(daemon, web_factory, browser_factory, tmpdir_path):
    web = web_factory(daemon, "--accounts", str(accounts_file(tmpdir_path)))
    driver = browser_factory("en")
    driver.get(web.base + "/devices/new")
    assert "/login" in driver.current_url  # not signed in: sent to sign in first
    driver.find_element("id", "name").send_keys("root-admin")
    driver.find_element("id", "password").send_keys(PASSWORD)
    driver.find_element("id", "sign-in").click()
    eventually(lambda: driver.find_elements("id", "signed-in"), what="signed in")

    driver.get(web.base + "/devices/new")
    driver.find_element("id", "id").send_keys("D-0200")
    driver.find_element("id", "model").send_keys("Galaxy S24")
    driver.find_element("id", "osVersion").send_keys("14")
    driver.find_element("id", "save").click()
    eventually(lambda: driver.current_url.endswith("/devices/D-0200"), what="the new device's page")

    driver.find_element("id", "edit-device").click()
    os_field = eventually(lambda: driver.find_elements("id", "osVersion"), what="the edit form")[0]
    os_field.clear()
    os_field.send_keys("15")
    driver.find_element("id", "save").click()
    eventually(lambda: driver.current_url.endswith("/devices/D-0200"), what="back on the device's page")
    log = driver.find_element("id", "log").text
    assert re.search(r"changed OS version 14 → 15", log), log
    driver.save_screenshot(str(artefact_dir() / "device-detail-en.png"))

    ja = browser_factory("ja")
    ja.get(web.base + "/devices/D-0200")
    assert re.search(r"変更 OS バージョン 14 → 15", ja.find_element("id", "log").text)
    ja.save_screenshot(str(artefact_dir() / "device-detail-ja.png"))


def test_kiosk_shows_the_curtain_in_a_corner_when_one_is_configured(connected, web_factory, browser_factory):
    from test_curtain import curtain, ok
    web = web_factory(connected)
    driver = browser_factory("en")
    open_kiosk(driver, web)
    corner = driver.find_element("id", "curtain")
    eventually(lambda: corner.is_displayed() and corner.text.startswith("Curtain: "), what="the curtain corner")
    ok(curtain(connected, "Open"))
    eventually(lambda: corner.text == "Curtain: opening", what="the corner to say opening")
    eventually(lambda: corner.text == "Curtain: open", timeout=20, what="the corner to say open")


def test_the_pages_assets_are_kept_by_the_browser_and_revalidated_for_nothing(daemon, web_factory):
    """The kiosk's stylesheet and script come under names that carry their bytes, cacheable for a year; asked
    again with their ETag they cost a 304 and no body. The plain names still answer, briefly cacheable."""
    web = web_factory(daemon)
    page = web.get("/kiosk")[2]
    paths = re.findall(r'(?:href|src)="(/static/[^"]+)"', page)
    assert len(paths) == 2 and all(re.fullmatch(r"/static/(site|kiosk)\.[0-9a-f]{16}\.(css|js)", p) for p in paths), paths
    for path in paths:
        with urllib.request.urlopen(web.base + path, timeout=10) as r:
            assert r.status == 200 and r.headers["Cache-Control"] == "public, max-age=31536000, immutable"
            etag, body = r.headers["ETag"], r.read()
        assert re.fullmatch(r'"[0-9a-f]{16}"', etag) and etag.strip('"') in path and body
        again = http.client.HTTPConnection("127.0.0.1", int(web.base.rsplit(":", 1)[1]), timeout=10)
        again.request("GET", path, headers={"If-None-Match": etag})
        answer = again.getresponse()
        assert answer.status == 304 and answer.read() == b""
        again.close()
        plain = re.sub(r"\.[0-9a-f]{16}\.", ".", path)
        with urllib.request.urlopen(web.base + plain, timeout=10) as r:
            assert r.headers["Cache-Control"] == "max-age=300" and r.headers["ETag"] == etag and r.read() == body


def test_a_kiosk_that_reloads_takes_its_assets_from_its_cache(daemon, web_factory, browser_factory):
    web = web_factory(daemon)
    driver = browser_factory("en")
    open_kiosk(driver, web)
    driver.get("about:blank")
    open_kiosk(driver, web)
    sizes = driver.execute_script("return performance.getEntriesByType('resource')"
                                  ".filter(e => e.name.includes('/static/')).map(e => [e.name, e.transferSize]);")
    assert len(sizes) == 2 and all(size == 0 for _, size in sizes), sizes  # 0 bytes over the network: the cache


def test_kiosk_has_no_curtain_corner_without_a_curtain(daemon, web_factory, browser_factory):
    web = web_factory(daemon)
    driver = browser_factory("en")
    open_kiosk(driver, web)
    assert not driver.find_element("id", "curtain").is_displayed()


# --- The curtain page -------------------------------------------------------------------------------

MISSING = object()


def read_page(read):
    """read() against the page in the browser, or MISSING while the browser is replacing that page: an element of the
    old page is stale, and chromedriver may instead answer "unknown error: unhandled inspector error: Node with given
    id does not belong to the document" when the read lands in the middle of the navigation (CI run H on 52f5f97)."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    try:
        return read()
    except StaleElementReferenceException:
        return MISSING
    except WebDriverException as error:
        if "does not belong to the document" in (error.msg or ""):
            return MISSING
        raise


def is_stale(element):
    return read_page(lambda: element.tag_name) is MISSING


def sign_in_browser(driver, web, next_path):
    driver.get(web.base + "/login?next=" + urllib.parse.quote(next_path))
    driver.find_element("id", "name").send_keys("root-admin")
    driver.find_element("id", "password").send_keys(PASSWORD)
    driver.find_element("id", "sign-in").click()
    eventually(lambda: driver.find_elements("id", "signed-in"), what="signed in")
    eventually(lambda: driver.find_element("tag name", "body").get_attribute("data-live") == "1", what="the page to be live")


def test_curtain_page_opens_the_curtain_with_an_animated_position(connected, sim, web_factory, browser_factory,
                                                                  tmpdir_path):
    web = web_factory(connected, "--accounts", str(accounts_file(tmpdir_path)))
    driver = browser_factory("en")
    driver.get(web.base + "/curtain")  # not signed in: the buttons are there, disabled
    assert not driver.find_element("id", "curtain-open").is_enabled()
    sign_in_browser(driver, web, "/curtain")
    assert driver.find_element("id", "curtain-status").text == "Connected"
    panel = driver.find_element("id", "curtain")
    assert panel.get_attribute("data-position") == "0"

    driver.find_element("id", "curtain-open").click()  # a form: the page loads again after the POST
    eventually(lambda: is_stale(panel), what="the page to load again after the POST")
    positions = set()

    def opened():
        def attributes():
            panel = driver.find_element("id", "curtain")
            return panel.get_attribute("data-position"), panel.get_attribute("data-motion")
        read = read_page(attributes)
        if read is MISSING:
            return False
        position, motion = read
        positions.add(position)
        return position == "100" and motion == "idle"
    eventually(opened, timeout=20, what="the page to show the curtain open")
    sim.wait_status(r"status=idle at 100%")  # the simulated curtain itself moved
    # The position moved through the values between, and the bar followed them.
    between = sorted(int(p) for p in positions if p not in ("", "0", "100"))
    assert between, f"no position between 0 and 100 was shown: {positions}"
    fill = driver.find_element("css selector", "#curtain .curtain-fill")
    eventually(lambda: fill.size["width"] >= driver.find_element("css selector", "#curtain .curtain-track").size["width"] - 1,
               what="the bar to be full")
    assert driver.find_element("id", "curtain-position").text == "open"
    driver.save_screenshot(str(artefact_dir() / "curtain-en.png"))


def test_the_wall_switch_disables_the_curtain_buttons(connected, sim, web_factory, browser_factory, tmpdir_path):
    web = web_factory(connected, "--accounts", str(accounts_file(tmpdir_path)))
    driver = browser_factory("ja")
    sign_in_browser(driver, web, "/curtain")
    buttons = [driver.find_element("id", f"curtain-{b}") for b in ("open", "close", "stop", "move")]
    assert all(b.is_enabled() for b in buttons)
    lockout = driver.find_element("id", "curtain-lockout")
    assert not lockout.is_displayed()

    sim.ctl("press", "open")
    eventually(lambda: lockout.is_displayed(), what="the lockout notice")
    assert lockout.text.startswith("壁スイッチで操作中です")
    assert not any(b.is_enabled() for b in buttons)
    assert driver.find_element("id", "curtain-reconnect").is_enabled()
    driver.save_screenshot(str(artefact_dir() / "curtain-lockout-ja.png"))
    heading = driver.find_element("css selector", "#curtain h2").text  # the curtain's name: data
    assert english_words(driver.find_element("tag name", "body").text, [heading, "root-admin", TZ]) == []

    # Once the switch's motion has ended, the buttons come back.
    eventually(lambda: not lockout.is_displayed(), timeout=15, what="the lockout to end")
    assert all(b.is_enabled() for b in buttons)


# --- Rentals and users (admin) ----------------------------------------------------------------------

def rentals_admin(daemon, web_factory, tmpdir_path, form_marker, path, form):
    """roombridge-web with an admin account. Before signing in, /rentals has no `form_marker` and
    a POST of `form` to `path` is refused (401); returns the client, signed in."""
    c = Client(web_factory(daemon, "--accounts", str(accounts_file(tmpdir_path))))
    assert form_marker not in c.request("GET", "/rentals")[2]  # read-only until signed in
    assert c.request("POST", path, form)[0] == 401
    c.sign_in()
    return c


def test_admin_lends_by_id_and_returns_and_overdue_rows_are_highlighted(daemon, web_factory, tmpdir_path):
    seed(daemon)  # D-0001 lent to U-0001, overdue within 2 s; D-0002 broken
    ctl(daemon, "devices", "add", "D-0003", "--group", "android-phone", "--model", "Pixel 8")
    c = rentals_admin(daemon, web_factory, tmpdir_path, 'id="lend-form"', "/rentals/lend", {"device": "D-0003", "user": "U-0002"})

    _, _, page = c.request("GET", "/rentals")
    status, headers, _ = c.request("POST", "/rentals/lend", {"csrf": c.token(page), "device": "D-0003", "user": "U-0002",
                                                            "due": "2030-12-03"})
    assert status == 303 and headers["Location"] == "/rentals", status
    rental = ctl_json(daemon, "devices", "show", "D-0003")[0]["device"]["rental"]
    assert rental["userId"] == "U-0002" and rental["dueAt"].startswith("2030-12-03T14:59"), rental  # end of the day in Tokyo
    assert rental.get("lentBy", "").startswith("web:"), rental  # the signed-in admin, through roombridge-web

    # The overdue rental is highlighted in both tables; the one due in 2030 is not.
    # The page reads the active and the overdue rentals in two calls, a moment apart: at the due
    # time itself one may see D-0001 overdue and the other not yet, so wait until both do.
    def overdue_rows():
        page = c.request("GET", "/rentals")[2]
        rows = re.findall(r'<tr( class="overdue")?>(.*?)</tr>', page)
        d1 = [bool(cls) for cls, r in rows if "D-0001" in r]
        return d1 and all(d1) and page
    page = eventually(overdue_rows, timeout=10, what="D-0001 to be overdue in both tables")
    rows = re.findall(r'<tr( class="overdue")?>(.*?)</tr>', page)
    assert {("D-0001" in r, bool(cls)) for cls, r in rows if "D-000" in r} == {(True, True), (False, False)}, rows

    status, _, question = c.request("POST", "/rentals/return", {"csrf": c.token(page), "device": "D-0001"})
    assert status == 200 and "Record D-0001 as returned?" in text_of(question)  # asks once
    assert ctl_json(daemon, "devices", "show", "D-0001")[0]["device"].get("rental") is not None
    status, _, _ = c.request("POST", "/rentals/return", {"csrf": c.token(question), "device": "D-0001", "confirmed": "yes"})
    assert status == 303
    assert ctl_json(daemon, "devices", "show", "D-0001")[0]["device"].get("rental") is None

    # The daemon's refusal is shown on the page, in the reader's words where it has them.
    status, _, page = c.request("POST", "/rentals/lend", {"csrf": c.token(page), "device": "D-0002", "user": "U-0001"})
    assert status == 400 and 'id="error"' in page and "D-0002" in text_of(page), text_of(page)
    assert ctl_json(daemon, "devices", "show", "D-0002")[0]["device"].get("rental") is None


def test_admin_renews_a_rental_to_a_new_due_day(daemon, web_factory, tmpdir_path):
    seed(daemon)  # D-0001 lent to U-0001
    before = ctl_json(daemon, "devices", "show", "D-0001")[0]["device"]["rental"]
    c = rentals_admin(daemon, web_factory, tmpdir_path, 'action="/rentals/renew"', "/rentals/renew",
                      {"device": "D-0001", "due": "2030-12-03"})
    web = c.web

    _, _, page = c.request("GET", "/rentals")
    assert 'id="active-renew-D-0001"' in page and "Renew" in text_of(page)
    status, headers, _ = c.request("POST", "/rentals/renew", {"csrf": c.token(page), "device": "D-0001", "due": "2030-12-03"})
    assert status == 303 and headers["Location"] == "/rentals", status
    after = ctl_json(daemon, "devices", "show", "D-0001")[0]["device"]["rental"]
    # The same rental (not a return and a new lend), due at the end of that day in Tokyo.
    assert after["dueAt"].startswith("2030-12-03T14:59"), after
    assert (after["userId"], after["rentedAt"]) == (before["userId"], before["rentedAt"]), (before, after)

    # A day in the past: the daemon's refusal is shown on the page, and nothing changes.
    status, _, page = c.request("POST", "/rentals/renew", {"csrf": c.token(page), "device": "D-0001", "due": "2001-01-01"})
    assert status == 400 and 'id="error"' in page, text_of(page)
    assert ctl_json(daemon, "devices", "show", "D-0001")[0]["device"]["rental"]["dueAt"] == after["dueAt"]

    # The form in Japanese, from the message catalogue.
    req = urllib.request.Request(web.base + "/rentals", headers={"Accept-Language": "ja"})
    with c.opener.open(req, timeout=30) as r:
        ja = r.read().decode()
    assert "延長" in text_of(ja) and "新しい返却期限日" in text_of(ja)


def test_admin_adds_a_user_and_binds_the_badge_just_tapped(daemon_factory, pn532, web_factory, tmpdir_path):
    d = nfc_lending_daemon(daemon_factory, pn532)
    web = web_factory(d, "--accounts", str(accounts_file(tmpdir_path)))
    c = Client(web)
    c.sign_in()
    _, _, page = c.request("GET", "/users")
    status, headers, _ = c.request("POST", "/users/new", {"csrf": c.token(page), "id": "U-0100", "name": "Katherine Johnson"})
    assert status == 303 and headers["Location"] == "/users/U-0100", status
    page = c.request("GET", "/users/U-0100")[2]
    assert "Katherine Johnson" in page and 'id="no-badges"' in page and 'id="bind-badge"' not in page

    place(pn532, "isoa:04C0FFEE")
    eventually(lambda: (ctl_json(d, "status")[0].get("lastTap") or {}).get("uid") == "04C0FFEE", what="the tap")
    lift(d, pn532)
    page = c.request("GET", "/users/U-0100")[2]
    assert "Last tap: 04C0FFEE" in text_of(page), text_of(page)
    status, _, _ = c.request("POST", "/users/U-0100/badge", {"csrf": c.token(page), "uid": "04C0FFEE", "kind": "iso14443a"})
    assert status == 303
    page = c.request("GET", "/users/U-0100")[2]
    assert "04C0FFEE" in re.search(r'(?s)<table id="badges">.*?</table>', page).group(0)
    # The badge just bound is not offered again.
    assert 'id="bind-badge"' not in page and "is Katherine Johnson's now" in text_of(page), text_of(page)

    # The bound badge now arms a lend session for the new user.
    place(pn532, "isoa:04C0FFEE")
    eventually(lambda: (ctl_json(d, "status")[0]["lending"].get("lastOutcome") or {}).get("userId") == "U-0100",
               what="the badge to arm a session for U-0100")
    lift(d, pn532)

    # Not signed in: no binding, and the POST is refused.
    anonymous = Client(web)
    assert 'id="bind-form"' not in anonymous.request("GET", "/users/U-0100")[2]
    assert anonymous.request("POST", "/users/U-0100/badge", {"uid": "04AA"})[0] == 401


STAFF_CSV = "id,name\nU-0201,Mary Jackson\nU-0202,\nU-0203,Dorothy Vaughan\n".encode()  # line 3: no name


def test_admin_imports_users_from_csv_check_only_all_or_nothing_then_partial(daemon, web_factory, tmpdir_path):
    web = web_factory(daemon, "--accounts", str(accounts_file(tmpdir_path)))
    file = {"file": ("staff.csv", STAFF_CSV)}

    def users():
        return {u["id"] for u in ctl_json(daemon, "users", "list")}

    # Signed out: no form, and the upload is refused.
    anonymous = Client(web)
    assert 'id="import-form"' not in anonymous.request("GET", "/users")[2]
    assert anonymous.upload("/users/import", {"kind": "users", "partial": "on"}, file)[0] == 401
    assert "U-0201" not in users()

    c = Client(web)
    c.sign_in()
    page = c.request("GET", "/users")[2]
    assert 'id="import-form"' in page and 'enctype="multipart/form-data"' in page
    token = c.token(page)
    # Signed in, without the form's token: refused.
    assert c.upload("/users/import", {"kind": "users", "partial": "on"}, file)[0] == 403

    # Check only: what would be added, the bad line with its number, nothing written.
    status, _, page = c.upload("/users/import", {"csrf": token, "kind": "users", "dryRun": "on"}, file)
    text = text_of(page)
    assert status == 200 and "Checked only: nothing was written." in text, text
    assert re.search(r"To be added \(2\)\s+U-0201, U-0203", text), text
    problems = re.findall(r"<li>(.*?)</li>", re.search(r'(?s)<ul id="import-problems">.*?</ul>', page).group(0))
    assert len(problems) == 1 and problems[0].startswith("line 3: "), problems
    assert not users() & {"U-0201", "U-0202", "U-0203"}
    assert re.search(r'id="import-dry-run" value="on" checked', page), "the report's form keeps the choices"

    # All or nothing: one bad line, so nothing is written.
    status, _, page = c.upload("/users/import", {"csrf": token, "kind": "users"}, file)
    assert status == 400 and "Nothing was written" in text_of(page) and "line 3: " in text_of(page), text_of(page)
    assert not users() & {"U-0201", "U-0202", "U-0203"}

    # The good lines: two added, the bad one still listed.
    status, _, page = c.upload("/users/import", {"csrf": token, "kind": "users", "partial": "on"}, file)
    text = text_of(page)
    assert status == 200 and "Imported." in text and re.search(r"Added \(2\)\s+U-0201, U-0203", text), text
    assert "line 3: " in text
    assert users() >= {"U-0201", "U-0203"} and "U-0202" not in users()
    # Again: nothing new, both unchanged (idempotent by ID).
    text = text_of(c.upload("/users/import", {"csrf": token, "kind": "users", "partial": "on"}, file)[2])
    assert re.search(r"Unchanged \(2\)\s+U-0201, U-0203", text), text

    # A file over the daemon's message limit (64 KiB by default): split it. The next page still works.
    big = b"id,name\n" + b"".join(b"U-%05d,Someone With A Long Enough Name\n" % i for i in range(2000))
    status, _, page = c.upload("/users/import", {"csrf": token, "kind": "users"}, {"file": ("big.csv", big)})
    assert status == 413 and "Split it into smaller files" in text_of(page), text_of(page)
    assert c.request("GET", "/users")[0] == 200
    assert "U-00001" not in users()

    # In Japanese: the form and the report, with no English left (the daemon's reason is its data).
    req = urllib.request.Request(web.base + "/users", headers={"Accept-Language": "ja"})
    with c.opener.open(req, timeout=30) as r:
        form_ja = r.read().decode()
    status, _, report_ja = c.upload("/users/import", {"csrf": token, "kind": "users", "dryRun": "on"}, file, language="ja")
    reason = re.search(r"3 行目: ([^<]*)</li>", report_ja).group(1)
    data = sorted(["root-admin", "staff.csv", "Mary Jackson", "Dorothy Vaughan", "U-0201", "U-0203", TZ, html.unescape(reason)],
                  key=len, reverse=True)
    for page in (form_ja, report_ja):
        assert '<html lang="ja">' in page
        left = english_words(text_of(page), data)
        assert left == [], f"English left: {left}"
    assert "CSVファイルの取り込み" in text_of(form_ja) and "確認のみです" in text_of(report_ja)


def test_curtain_schedule_toggles_and_refusals_through_the_page(connected, sim, web_factory, tmpdir_path):
    from test_curtain import wait_state
    web = web_factory(connected, "--accounts", str(accounts_file(tmpdir_path)))
    c = Client(web)
    assert c.request("POST", "/curtain/open", {})[0] == 401
    c.sign_in()
    _, _, page = c.request("GET", "/curtain")
    status, headers, _ = c.request("POST", "/curtain/schedule", {"csrf": c.token(page), "open": "06:40", "openEnabled": "true",
                                                                "close": "20:10"})
    assert status == 303 and headers["Location"] == "/curtain"
    wait_state(connected, lambda s: s.get("openSchedule") == {"time": "06:40", "enabled": True}
               and s.get("closeSchedule") == {"time": "20:10", "enabled": False})
    page = c.request("GET", "/curtain")[2]
    assert re.search(r'id="curtain-schedule-openEnabled" value="true" checked', page) and 'value="06:40"' in page
    assert not re.search(r'id="curtain-schedule-closeEnabled" value="true" checked', page)
    # Every id on the page is used once (the motion buttons and the schedule's fields were both curtain-open).
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)

    # The wall switch wins: the page says so in the reader's words, and nothing is written.
    sim.ctl("press", "open")
    wait_state(connected, lambda s: s["manual"] and s["motion"] != "idle")
    before = sim.writes()
    status, _, page = c.request("POST", "/curtain/open", {"csrf": c.token(page)})
    assert status == 409 and "Someone is at the wall switch: nothing was sent" in text_of(page), text_of(page)
    assert sim.writes() == before


def test_kiosk_shows_who_is_here(daemon_factory, tmpdir_path, sim, web_factory, browser_factory):
    from test_presence import ALICE, NEAR, add_beacon, presence_daemon
    d = presence_daemon(daemon_factory, tmpdir_path, sim)
    ctl(d, "users", "add", "u-alice", "--name", "Aiko Tanaka")
    web = web_factory(d)
    driver = browser_factory("ja")
    open_kiosk(driver, web)
    corner = driver.find_element("id", "presence")
    assert not corner.is_displayed()
    address = add_beacon(sim, ALICE, 1, 2, NEAR, "F0:00:00:00:00:01")
    eventually(lambda: corner.is_displayed() and corner.text == "在室: Aiko Tanaka", what="the presence corner")
    sim.ctl("beacon", "vanish", address)
    eventually(lambda: not corner.is_displayed(), what="the presence corner to go when alice has left")
