"""The seams a person at the desk meets first: the kiosk and the admin pages after the daemon has
closed roombridge-web's quiet connection (socket.idle_timeout), a page that fails and the one
after it, and a browser that resumes its event stream. The real roombridged with pn532-sim for
taps, the real roombridge-web, and what a person would see on the screen."""
import datetime
import re
import threading
import urllib.request

from conftest import eventually
from test_lending import BADGE, ctl, ctl_json, nfc_lending_daemon
from test_nfc import device_message, lift, spec
from test_web import SSE, Client, accounts_file, browser_factory, text_of, web_factory  # noqa: F401 (fixtures)

PLACEHOLDER = re.compile(r"\{[A-Za-z]+\}")
IDLE = "2"  # seconds: the daemon closes a quiet connection after this


def closed_idle(d, count):
    """Waits until the daemon has closed `count` quiet connections in all (its debug log says so)."""
    eventually(lambda: d.log().count("closing idle connection") >= count, timeout=15,
               what=f"the daemon to close {count} idle connection(s)")
    return d.log().count("closing idle connection")


def web_connections_closed(d, web):
    """Makes roombridge-web read from the daemon, then waits until the daemon closed that quiet
    connection: the next call is the first after a quiet spell longer than the idle timeout."""
    before = d.log().count("closing idle connection")
    web.get("/devices")
    return closed_idle(d, before + 1)


def test_the_kiosk_after_a_quiet_spell_shows_the_countdown_and_the_lends_details(daemon_factory, pn532, web_factory):
    d = nfc_lending_daemon(daemon_factory, pn532, "--socket-idle-timeout", IDLE, "--lending-repeat-window", "0",
                           "--lending-loan-days", "7")
    ctl(d, "devices", "add", "D-0042", "--group", "android-phone", "--model", "Pixel 7")
    ctl(d, "tags", "bind", "04A1B2C3D4E5F6", "--device", "D-0042")
    web = web_factory(d)
    events = SSE(web)
    assert events.next()[1] == "snapshot"

    web_connections_closed(d, web)
    pn532.ctl("place", BADGE)
    armed = events.until("outcome", lambda m: m["kind"] == "armed")[2]
    # The session's end was read on a fresh connection: the page counts down to it.
    assert armed["countdownUntil"], armed
    assert armed["headline"] == "Badge accepted: Ada Lovelace, now tap a device ({seconds} s)"
    lift(d, pn532)

    web_connections_closed(d, web)
    pn532.ctl("place", spec(ndef=device_message("D-0042")))
    lent = events.until("outcome", lambda m: m["kind"] == "lent")[2]
    assert re.fullmatch(r"Lent Pixel 7 \(D-0042\) to Ada Lovelace — due \w{3} \d{1,2} \w{3}", lent["headline"]), lent
    assert not PLACEHOLDER.search(lent["headline"] + (lent.get("detail") or ""))
    lift(d, pn532)
    events.close()
    assert "will reconnect" not in web.log_path.read_text()


def test_an_admin_lend_after_a_quiet_spell_is_recorded_once(daemon, web_factory, tmpdir_path):
    ctl(daemon, "users", "add", "U-0001", "--name", "Ada Lovelace")
    ctl(daemon, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
    daemon.terminate()
    d = daemon
    d.args += ["--socket-idle-timeout", IDLE]
    d.start()
    web = web_factory(d, "--accounts", str(accounts_file(tmpdir_path)))
    admin = Client(web)
    admin.sign_in()
    page = admin.request("GET", "/rentals")[2]

    web_connections_closed(d, web)
    status, _, body = admin.request("POST", "/rentals/lend", {"csrf": admin.token(page), "device": "D-0001", "user": "U-0001"})
    assert status == 303, text_of(body)
    rentals = ctl(d, "rentals", "--json").stdout
    assert rentals.count('"D-0001"') == 1, rentals
    assert "Lent to Ada Lovelace" in text_of(web.get("/devices")[2])


def test_a_page_that_fails_does_not_break_the_next_one(daemon, web_factory):
    """GET /users/NOPE (404) cancelled the user page's other call, and the cancel closed the
    shared connection: the next page was 503. Now a cancelled call only stops waiting."""
    ctl(daemon, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
    web = web_factory(daemon)
    failures = []

    def loop_missing_user():
        for _ in range(60):
            try:
                web.get("/users/NOPE", expect=404)
            except AssertionError as e:  # noqa: PERF203
                failures.append(str(e))
    looper = threading.Thread(target=loop_missing_user)
    looper.start()
    statuses = []
    for _ in range(60):
        req = urllib.request.Request(web.base + "/devices/D-0001")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                statuses.append(r.status)
        except urllib.error.HTTPError as e:
            statuses.append(e.code)
    looper.join()
    assert statuses == [200] * 60, statuses
    assert failures == []
    assert "will reconnect" not in web.log_path.read_text()


def test_resuming_browsers_open_no_daemon_connections(daemon, web_factory):
    """A browser's Last-Event-ID is served from roombridge-web's own ring: a burst of resumes
    opens no connection to the daemon (each used to open its own Watch)."""
    ctl(daemon, "users", "add", "U-0001", "--name", "Ada Lovelace")
    ctl(daemon, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
    web = web_factory(daemon)
    first = SSE(web)
    seq, kind, _ = first.next()
    assert kind == "snapshot"
    ctl(daemon, "lend", "--device", "D-0001", "--user", "U-0001")
    ctl(daemon, "return", "D-0001")
    last = first.until("outcome", lambda m: m["kind"] == "returned")[0]
    first.close()
    opened = daemon.log().count("connection opened")
    resumes = [SSE(web, last_event_id=seq) for _ in range(40)]
    for r in resumes:
        got = [r.next()]
        while got[-1][0] != last:
            got.append(r.next())
        assert "snapshot" not in [e[1] for e in got], got
        r.close()
    assert daemon.log().count("connection opened") == opened, "a resume opened a daemon connection"


def test_ctl_watch_outlives_a_quiet_spell_and_a_restart_of_the_daemon(daemon_factory):
    import subprocess
    from conftest import binary
    from test_cli import Lines
    d = daemon_factory("--socket-idle-timeout", IDLE)
    ctl(d, "users", "add", "U-0001", "--name", "Ada Lovelace")
    ctl(d, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
    err_path = d.tmp / "watch.err"
    with open(err_path, "w") as err:
        proc = subprocess.Popen([binary("roombridgectl"), "watch", "--socket", d.socket_path],
                                stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        out = Lines(proc)
        # A watch is never a quiet connection: an event after a spell longer than the idle timeout arrives.
        before = d.log().count("closing idle connection")
        ctl(d, "devices", "show", "D-0001")  # something for the daemon to close meanwhile
        closed_idle(d, before + 1)
        ctl(d, "lend", "--device", "D-0001", "--user", "U-0001")
        out.wait_for(lambda l: "D-0001" in l and "Ada Lovelace" in l, what="the lend on the watch")

        d.terminate()
        eventually(lambda: "lost roombridged" in err_path.read_text(), what="watch to say the daemon went away")
        assert proc.poll() is None, "watch exited when the daemon stopped"
        d.start(wait=False)
        # The same watch subscribes again by itself (with backoff) and says so; what happens after that reaches it.
        eventually(lambda: "roombridged is back" in err_path.read_text(), what="watch to say the daemon is back")
        ctl(d, "return", "D-0001")
        out.wait_for(lambda l: "D-0001" in l and "eturned" in l, what="the return after the restart on the same watch")
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_burst_of_old_resumes_after_a_restart_of_roombridge_web_shares_one_backfill(daemon_factory, web_factory):
    """roombridge-web restarted keeps no events: browsers that come back with an old
    Last-Event-ID are served from the daemon's replay ring by one shared backfill, and when the
    daemon no longer keeps them either, by a snapshot, without a daemon connection each."""
    import concurrent.futures
    d = daemon_factory("--state-replay-buffer", "16")
    ctl(d, "users", "add", "U-0001", "--name", "Ada Lovelace")
    ctl(d, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
    ctl(d, "lend", "--device", "D-0001", "--user", "U-0001")  # an event before, so that the browser has one to resume after
    ctl(d, "return", "D-0001")
    first = web_factory(d)
    probe = SSE(first)
    seen = probe.next()[0]
    probe.close()
    first.close()
    ctl(d, "lend", "--device", "D-0001", "--user", "U-0001")
    ctl(d, "return", "D-0001")
    latest = ctl_json(d, "status")[0]["seq"]
    web = web_factory(d)
    SSE(web).close()  # the hub is up and watching
    opened = d.log().count("connection opened")

    def resume(last):
        s = SSE(web, last_event_id=last)
        got = [s.next()]
        while got[-1][1] != "snapshot" and got[-1][0] != latest:
            got.append(s.next())
        s.close()
        return got
    with concurrent.futures.ThreadPoolExecutor(30) as pool:
        replays = list(pool.map(resume, [seen] * 30))
    for got in replays:
        assert [e[0] for e in got] == list(range(seen + 1, latest + 1)), got
    # One backfill, and the pooled connection for the lend's details.
    assert d.log().count("connection opened") - opened <= 2

    # Events the daemon no longer keeps: more than its replay ring of 16 since event 1.
    for _ in range(10):
        ctl(d, "lend", "--device", "D-0001", "--user", "U-0001")
        ctl(d, "return", "D-0001")
    latest = ctl_json(d, "status")[0]["seq"]
    opened = d.log().count("connection opened")
    with concurrent.futures.ThreadPoolExecutor(30) as pool:
        replays = list(pool.map(resume, [1] * 30))
    assert all(got[-1][1] == "snapshot" for got in replays), replays[0]
    assert d.log().count("connection opened") - opened <= 1


def test_a_device_whose_tag_was_bound_is_nfc_registered_everywhere(daemon, web_factory):
    """`tags bind` made the tag lend the device, yet the CLI, the JSON and the web said "NFC: no"."""
    ctl(daemon, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
    ctl(daemon, "devices", "add", "D-0002", "--group", "android-phone", "--model", "Pixel 8")
    ctl(daemon, "tags", "bind", "04ED2C4CAC92A2", "--device", "D-0001")
    shown = ctl_json(daemon, "devices", "show", "D-0001")[0]["device"]
    assert shown["isNfcRegistered"] is True, shown
    assert re.search(r"NFC tag:\s+yes", ctl(daemon, "devices", "show", "D-0001").stdout)
    web = web_factory(daemon)
    listed = text_of(web.get("/devices?nfc=true")[2])
    assert "D-0001" in listed and "D-0002" not in listed
    ctl(daemon, "tags", "unbind", "04ED2C4CAC92A2")
    assert ctl_json(daemon, "devices", "show", "D-0001")[0]["device"]["isNfcRegistered"] is False
    # The device's log says who bound and who unbound it.
    import getpass
    flags = [e for e in ctl_json(daemon, "devices", "log", "D-0001") if e.get("field") == "isNFCRegistered"
             and e.get("operation") == "update"]
    assert [(e["oldValue"], e["newValue"], e.get("actor")) for e in reversed(flags)] == [
        ("false", "true", "unix:" + getpass.getuser()), ("true", "false", "unix:" + getpass.getuser())], flags


def test_a_language_chosen_once_holds_on_every_page_after_it(daemon, web_factory):
    """`?lang=ja` was lost after the first link, and there was no switch."""
    web = web_factory(daemon)
    client = Client(web)
    status, headers, page = client.request("GET", "/devices?lang=ja")
    assert status == 200 and "rb_lang=ja" in headers["Set-Cookie"]
    assert 'id="lang-en"' in page and 'href="?lang=en"' in page  # the switch, in the header
    # The next pages, without ?lang= and with an English browser, stay Japanese.
    for path in ["/rentals", "/users", "/history"]:
        assert '<html lang="ja">' in client.request("GET", path)[2], path
    status, headers, page = client.request("GET", "/rentals?lang=en")
    assert "rb_lang=en" in headers["Set-Cookie"] and '<html lang="en">' in page
    assert '<html lang="en">' in client.request("GET", "/devices")[2]


def test_the_history_csv_has_a_byte_order_mark_for_excel_by_default_on_japanese_pages(daemon, web_factory):
    """Excel opened by double-click garbled "ギャラクシー S24": the CSV had no byte order mark."""
    ctl(daemon, "users", "add", "U-0001", "--name", "田中 愛子")
    ctl(daemon, "devices", "add", "D-0001", "--group", "android-phone", "--model", "ギャラクシー S24")
    ctl(daemon, "lend", "--device", "D-0001", "--user", "U-0001")
    web = web_factory(daemon)

    def csv_bytes(path, language):
        req = urllib.request.Request(web.base + path, headers={"Accept-Language": language})
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.read()
    page = web.get("/history", language="ja")[2]
    link = re.search(r'id="csv" href="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert "bom=1" in link
    ja = csv_bytes(link, "ja")
    assert ja.startswith(b"\xef\xbb\xbf") and "ギャラクシー S24".encode() in ja
    assert not csv_bytes("/history.csv", "en").startswith(b"\xef\xbb\xbf")  # English: as roombridgectl writes it
    assert csv_bytes("/history.csv?bom=1", "en").startswith(b"\xef\xbb\xbf")
    assert not csv_bytes("/history.csv?bom=0", "ja").startswith(b"\xef\xbb\xbf")
    # The column names stay the same in both languages: they are for machines (docs/web.md).
    assert ja[3:].split(b"\r\n")[0] == csv_bytes("/history.csv", "en").split(b"\r\n")[0]


def desk_with_admin(daemon, web_factory, tmpdir_path):
    """Aiko Tanaka (U-0001) and a Pixel 7 (D-0042), and roombridge-web with an admin signed in."""
    ctl(daemon, "users", "add", "U-0001", "--name", "Aiko Tanaka")
    ctl(daemon, "devices", "add", "D-0042", "--group", "android-phone", "--model", "Pixel 7")
    web = web_factory(daemon, "--accounts", str(accounts_file(tmpdir_path)))
    admin = Client(web)
    admin.sign_in()
    return web, admin


def test_every_admin_action_says_what_it_did_once(daemon, web_factory, tmpdir_path):
    web, admin = desk_with_admin(daemon, web_factory, tmpdir_path)
    page = admin.request("GET", "/rentals")[2]
    assert 'id="notice"' not in page
    status, headers, _ = admin.request("POST", "/rentals/lend", {"csrf": admin.token(page), "device": "D-0042", "user": "U-0001",
                                                               "due": "2030-12-03"})
    assert status == 303
    page = admin.request("GET", headers["Location"])[2]
    notice = re.search(r'<p class="notice" id="notice" role="status">([^<]*)</p>', page)
    assert notice and notice.group(1) == "Lent D-0042 to Aiko Tanaka, due Tue 3 Dec", page
    assert 'id="notice"' not in admin.request("GET", "/rentals")[2]  # said once
    status, headers, _ = admin.request("POST", "/rentals/return", {"csrf": admin.token(page), "device": "D-0042", "confirmed": "yes"})
    assert status == 303
    assert "D-0042 is back from Aiko Tanaka" in text_of(admin.request("GET", headers["Location"])[2])
    # Another browser (not signed in) never sees the admin's notice.
    assert 'id="notice"' not in Client(web).request("GET", "/rentals")[2]


def test_refusals_on_the_pages_are_sentences_not_wire_names_or_cli_advice(daemon, web_factory, tmpdir_path):
    """"invalid dueAt: …Z is not in the future", "no user U-9999; see roombridgectl users list"."""
    _, admin = desk_with_admin(daemon, web_factory, tmpdir_path)
    for language, form, expected in [
        ("en", {"device": "D-0042", "user": "U-9999"}, "There is no user U-9999."),
        ("en", {"device": "D-0042", "user": "U-0001", "due": "2020-01-01"}, "The due day must be after today."),
        ("ja", {"device": "D-0042", "user": "U-9999"}, "利用者 U-9999 はいません。"),
    ]:
        page = admin.request("GET", f"/rentals?lang={language}")[2]
        status, _, page = admin.request("POST", "/rentals/lend", {"csrf": admin.token(page), **form})
        text = text_of(page)
        assert status == 400 and expected in text, text
        assert "roombridgectl" not in text and "dueAt" not in text and not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", text), text


def test_the_cli_says_what_is_wrong_and_what_it_did(daemon):
    ctl(daemon, "users", "add", "U-0001", "--name", "Aiko Tanaka")
    ctl(daemon, "devices", "add", "D-0042", "--group", "android-phone", "--model", "Pixel 7")
    # A range that ends before it starts is the caller's mistake (64), not a refusal of the daemon (5).
    r = ctl(daemon, "history", "--since", "2026-11-30", "--until", "2026-11-01", check=False)
    assert r.returncode == 64 and "--since 2026-11-30 is not before --until 2026-11-01" in r.stderr, r.stderr
    # A return with a note and --broken confirms both.
    ctl(daemon, "lend", "--device", "D-0042", "--user", "U-0001")
    out = ctl(daemon, "return", "D-0042", "--note", "cracked screen", "--broken").stdout
    assert "note recorded: cracked screen" in out and "D-0042 is now marked broken" in out, out
    assert ctl_json(daemon, "devices", "show", "D-0042")[0]["device"]["status"] == "broken"


def test_doctor_skips_the_bluetooth_policy_when_nothing_uses_bluetooth(daemon, tmpdir_path):
    import json
    import subprocess
    from conftest import binary
    cfg = tmpdir_path / "quiet.toml"
    cfg.write_text("[curtain]\nenabled = false\n")
    out = subprocess.run([binary("roombridgectl"), "doctor", "--config", str(cfg), "--socket", str(tmpdir_path / "none.sock"),
                          "--json"], capture_output=True, text=True, timeout=60)
    policy = [json.loads(line) for line in out.stdout.splitlines() if "D-Bus policy" in line]
    assert policy and policy[0]["status"] == "skipped" and "not needed" in policy[0]["detail"], out.stdout


def test_devices_log_reads_in_peoples_words(daemon):
    ctl(daemon, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
    ctl(daemon, "devices", "edit", "D-0001", "--os", "14")
    ctl(daemon, "users", "add", "U-0001", "--name", "Aiko Tanaka")
    ctl(daemon, "lend", "--device", "D-0001", "--user", "U-0001")
    ctl(daemon, "renew", "D-0001", "--due", "2030-01-02")
    out = ctl(daemon, "devices", "log", "D-0001").stdout
    assert re.search(r"changed\s+OS version\s+14", out) and re.search(r"changed\s+due\s+—\s+2030-01-02 23:59", out), out
    assert "osVersion" not in out and "dueAt" not in out and not re.search(r"\d{4}-\d\d-\d\dT", out), out


# --- A day at the desk, in a browser ------------------------------------------------------------------------------

def zone_whose_midnight_is_near(lead=30):
    """A fixed-offset time zone (ICU's GMT±hh:mm) whose midnight is the first whole UTC minute at least `lead` s
    away, so the kiosk's day ends during the test; returns (zone, offset, midnight as UTC)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    midnight = (now + datetime.timedelta(seconds=lead + 59)).replace(second=0, microsecond=0)
    minutes = (-(midnight.hour * 60 + midnight.minute)) % 1440
    if minutes > 720:
        minutes -= 1440
    sign = "+" if minutes >= 0 else "-"
    zone = f"GMT{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return zone, datetime.timedelta(minutes=minutes), midnight


def screen_text(driver):
    return driver.find_element("tag name", "body").text


def no_placeholder(driver, where):
    text = screen_text(driver)
    assert not PLACEHOLDER.search(text), f"{where}: a message with a missing parameter: {text}"
    return text


def set_date(driver, element_id, day):
    """Types a date into an <input type=date> as the browser stores it (the typed form depends on its locale)."""
    driver.execute_script("arguments[0].value = arguments[1]", driver.find_element("id", element_id), day.isoformat())


def notice(driver):
    return eventually(lambda: driver.find_elements("id", "notice") and driver.find_element("id", "notice").text,
                      what="the page's notice")


def test_a_day_at_the_desk_in_chromium(daemon_factory, pn532, web_factory, browser_factory, tmpdir_path):
    """The whole system as `make run` runs it (roombridged, roombridge-web, pn532-sim, bluez-sim, kiosks in
    Chromium) through a day with real gaps: taps after the daemon closed the quiet connection, an admin lending,
    renewing and deleting in the browser, the daemon restarted under open kiosks, bluetoothd restarted, the
    kiosk's day ending (a time zone whose midnight falls during the test) with its reminders, a Japanese kiosk
    and the CSV as bytes. Every screen is read as a person reads it, and no message may carry a placeholder."""
    from test_curtain import BlueZSim, curtain, ok, state
    from test_outbox import Receiver, configure
    from test_web import PASSWORD, english_words, kiosk_shows, open_kiosk

    sim = BlueZSim(tmpdir_path)
    receiver = Receiver()
    receiver.up()
    configure(tmpdir_path, receiver)  # the outbox target that receives the reminders
    try:
        zone, offset, midnight = zone_whose_midnight_is_near()
        today = (datetime.datetime.now(datetime.timezone.utc) + offset).date()
        d = daemon_factory("--nfc-enabled", "--nfc-readers", f"front=pn532_uart:{pn532.link}",
                           "--nfc-modulations", "iso14443a", "--curtain-enabled",
                           "--socket-idle-timeout", IDLE, "--lending-repeat-window", "0", "--lending-loan-days", "7",
                           "--lending-time-zone", zone, "--reminders-digest-at", "00:00:01",
                           env={"DBUS_SYSTEM_BUS_ADDRESS": sim.address})
        ctl(d, "users", "add", "U-0001", "--name", "Ada Lovelace")
        ctl(d, "badges", "bind", "0A:0B:0C:0D", "--user", "U-0001")
        ctl(d, "devices", "add", "D-0042", "--group", "android-phone", "--model", "Pixel 7")
        ctl(d, "tags", "bind", "04A1B2C3D4E5F6", "--device", "D-0042")
        ctl(d, "devices", "add", "D-0043", "--group", "android-phone", "--model", "ギャラクシー S24")
        ctl(d, "devices", "add", "D-0044", "--group", "android-phone", "--model", "Pixel 5")
        ctl(d, "devices", "add", "D-0045", "--group", "android-phone", "--model", "Pixel 6")
        # Due at the end of today, the kiosk's day: overdue once its midnight has passed.
        ctl(d, "lend", "--device", "D-0045", "--user", "U-0001", "--due", today.isoformat())

        web = web_factory(d, "--accounts", str(accounts_file(tmpdir_path)), time_zone=None)  # the daemon's zone
        en, ja = browser_factory("en"), browser_factory("ja")
        open_kiosk(en, web)
        open_kiosk(ja, web)
        assert en.find_element("id", "headline").text == "Tap your badge, then a device"
        corner = en.find_element("id", "curtain")
        away = ("Curtain: searching", "Curtain: not connected", "Curtain: connecting")
        eventually(lambda: corner.text.startswith("Curtain: ") and corner.text not in away,
                   what="the curtain corner (connected)")

        # Morning: the first tap comes after a quiet spell longer than the daemon's idle timeout.
        web_connections_closed(d, web)
        pn532.ctl("place", BADGE)
        armed = kiosk_shows(en, "armed")
        assert re.fullmatch(r"Badge accepted: Ada Lovelace, now tap a device \(\d+ s\)", armed), armed
        assert re.fullmatch(r"社員証を確認しました: Ada Lovelace さん、端末をタッチしてください（残り \d+ 秒）",
                            kiosk_shows(ja, "armed"))
        lift(d, pn532)
        web_connections_closed(d, web)
        pn532.ctl("place", spec(ndef=device_message("D-0042")))
        lent = kiosk_shows(en, "lent")
        due = today + datetime.timedelta(days=7)
        assert lent == f"Lent Pixel 7 (D-0042) to Ada Lovelace — due {due:%a} {due.day} {due:%b}" \
            or (datetime.datetime.now(datetime.timezone.utc) >= midnight), lent  # lent after midnight: a day later
        ja_lent = kiosk_shows(ja, "lent")
        assert ja_lent.startswith("Pixel 7（D-0042）を Ada Lovelace さんに貸し出しました"), ja_lent
        assert english_words(screen_text(ja), ["Pixel 7", "D-0042", "Ada Lovelace"]) == []
        no_placeholder(en, "the English kiosk")
        no_placeholder(ja, "the Japanese kiosk")
        lift(d, pn532)

        # An admin at the desk, in the browser: lend, renew, delete, each after a quiet spell.
        admin = browser_factory("en")
        admin.get(web.base + "/login?next=/rentals")
        admin.find_element("id", "name").send_keys("root-admin")
        admin.find_element("id", "password").send_keys(PASSWORD)
        admin.find_element("id", "sign-in").click()
        eventually(lambda: admin.find_elements("id", "signed-in") and admin.find_elements("id", "lend-form"),
                   what="signed in, on the rentals page")
        web_connections_closed(d, web)
        admin.find_element("id", "lend-device").send_keys("D-0043")
        admin.find_element("id", "lend-user").send_keys("U-0001")
        first_due = today + datetime.timedelta(days=30)
        set_date(admin, "lend-due", first_due)
        admin.find_element("id", "lend").click()
        assert notice(admin) == f"Lent D-0043 to Ada Lovelace, due {first_due:%a} {first_due.day} {first_due:%b}"
        no_placeholder(admin, "the rentals page after a lend")
        web_connections_closed(d, web)
        renewed_due = today + datetime.timedelta(days=40)
        set_date(admin, "active-due-D-0043", renewed_due)
        admin.find_element("id", "active-renew-D-0043").click()
        assert notice(admin) == (f"Renewed D-0043 for Ada Lovelace, now due "
                                 f"{renewed_due:%a} {renewed_due.day} {renewed_due:%b}")
        rentals = ctl_json(d, "rentals")
        assert len([r for r in rentals if r["deviceId"] == "D-0043"]) == 1  # renewed, not lent twice
        admin.get(web.base + "/devices/D-0044")
        admin.find_element("id", "delete-device").click()
        # The click submits a form: the question is on the page that comes back, once it has come.
        question = eventually(lambda: admin.find_elements("id", "confirm-question"), what="the confirmation page")[0]
        assert question.text.startswith("Delete D-0044"), question.text
        assert "D-0044" in ctl(d, "devices", "list").stdout  # asked once: nothing deleted yet
        admin.find_element("id", "confirm").click()
        assert notice(admin) == "Deleted D-0044"
        assert "D-0044" not in ctl(d, "devices", "list").stdout
        no_placeholder(admin, "the devices page after a delete")

        # The daemon restarts under the open kiosks: they say so, then carry on.
        assert d.terminate() == 0
        assert kiosk_shows(en, "offline", timeout=15) == "Offline — nothing recorded"
        d.notify.messages.clear()
        d.stderr.close()
        d.start()
        eventually(lambda: en.find_element("id", "outcome").get_attribute("data-kind") != "offline", timeout=20,
                   what="the kiosk back from offline")
        pn532.ctl("place", BADGE)
        kiosk_shows(en, "armed")
        lift(d, pn532)
        pn532.ctl("place", spec(ndef=device_message("D-0042")))
        assert kiosk_shows(en, "returned") == "Returned — thank you"
        assert kiosk_shows(ja, "returned") == "返却しました — ありがとうございます"
        no_placeholder(ja, "the Japanese kiosk after the restart")
        lift(d, pn532)

        # bluetoothd restarts: the corner says the curtain is away, then it answers commands again.
        eventually(lambda: state(d)["connection"] == "connected", timeout=20, what="the curtain after the restart")
        sim.ctl("restart-bluetoothd", "1000")
        eventually(lambda: corner.text in away,
                   timeout=10, what="the corner to say the curtain is away")
        eventually(lambda: state(d)["connection"] == "connected", timeout=30, what="the curtain back")
        ok(curtain(d, "Open"))
        eventually(lambda: corner.text == "Curtain: open", timeout=30, what="the corner to say open")

        # The kiosk's day ends: the next day's digest counts the rental due yesterday as overdue.
        def digests():
            return {e["day"]: e for e in receiver.events() if e["kind"] == "digest"}
        tomorrow = today + datetime.timedelta(days=1)
        eventually(lambda: tomorrow.isoformat() in digests(), timeout=150,
                   what=f"the digest of {tomorrow} after the kiosk's midnight ({zone})")
        assert set(digests()) == {today.isoformat(), tomorrow.isoformat()}  # one per kiosk day
        assert digests()[tomorrow.isoformat()]["overdueCount"] == 1
        admin.get(web.base + "/rentals")
        overdue = admin.find_elements("css selector", "#overdue tr.overdue")
        assert overdue and "D-0045" in overdue[0].text, screen_text(admin)
        no_placeholder(admin, "the rentals page after midnight")

        # The history as the Japanese page offers it, opened as bytes (as Excel would).
        ja.get(web.base + "/history")
        link = ja.find_element("id", "csv").get_attribute("href")
        with urllib.request.urlopen(urllib.request.Request(link, headers={"Accept-Language": "ja"}), timeout=10) as r:
            data = r.read()
        assert data.startswith(b"\xef\xbb\xbf") and "ギャラクシー S24".encode() in data
        assert b"\r\n" in data and b"{" not in data.split(b"\r\n")[0]
    finally:
        receiver.down()
        sim.close()
