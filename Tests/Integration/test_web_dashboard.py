"""roombridge-web's dashboard end to end: the real roombridged behind the real roombridge-web; lends and
returns made through roombridgectl show in a real browser as server-drawn SVG charts (now by group,
the last 30 days, the busiest devices) with the figures also as tables and a sentence for screen
readers, and the devices never lent; for a signed-in admin or an API token only, in English and
Japanese. A screenshot is kept as a test artefact. Times are Tokyo's (TZ)."""
import datetime
import json
import shutil
import subprocess

from conftest import binary, call, eventually
from test_curtain import BlueZSim, call as call_kw, ok
from test_presence import ALICE, NEAR, add_beacon, presence, presence_daemon, region
from test_lending import ctl
from test_web import (Client, TZ, accounts_file, artefact_dir, browser_factory, text_of, web_factory)  # noqa: F401 (fixtures)
from test_web_bookings import ZONE, sign_in


def dashboard(d, days=30):
    """GetDashboard straight from the daemon, in the kiosk's zone."""
    reply = call(d.socket_path, "io.roombridge.Lending.GetDashboard", {"days": days, "timeZone": TZ})
    assert "error" not in reply, reply
    return reply.get("parameters", reply)["dashboard"]


def seed(d):
    """Two groups: android-phone (D-0001 lent twice, D-0002 never) and iphone (D-0003 lent, D-0004 broken,
    D-0005 never lent). Three lends today, one return."""
    ctl(d, "users", "add", "U-0001", "--name", "Ada Lovelace")
    ctl(d, "users", "add", "U-0002", "--name", "山田 花子")
    for n, group, model in [(1, "android-phone", "Pixel 7"), (2, "android-phone", "Pixel 6"), (3, "iphone", "iPhone 15"),
                            (4, "iphone", "iPhone 14"), (5, "iphone", "iPhone 13")]:
        ctl(d, "devices", "add", f"D-000{n}", "--group", group, "--model", model, "--serial", f"SN-{n}")
    ctl(d, "devices", "edit", "D-0004", "--status", "broken")
    ctl(d, "lend", "--device", "D-0001", "--user", "U-0001")
    ctl(d, "return", "D-0001")
    ctl(d, "lend", "--device", "D-0001", "--user", "U-0002")
    ctl(d, "lend", "--device", "D-0003", "--user", "U-0001")


def bars(driver, chart, series=None):
    css = f"#{chart}-chart rect.bar" + (f".{series}" if series else "")
    return driver.find_elements("css selector", css)


def test_the_dashboard_draws_the_figures_the_daemon_answers(daemon, web_factory, browser_factory, tmpdir_path):
    seed(daemon)
    board = dashboard(daemon)
    today = datetime.datetime.now(ZONE).date().isoformat()
    assert len(board["days"]) == 30 and board["days"][-1] == {"day": today, "lends": 3, "overdue": 0}, board["days"][-3:]
    groups = {g["groupId"]: g for g in board["groups"]}
    assert (groups["android-phone"]["lent"], groups["android-phone"]["available"]) == (1, 1)
    assert (groups["iphone"]["lent"], groups["iphone"]["available"], groups["iphone"]["broken"]) == (1, 1, 1)
    assert board["neverLentCount"] == 3 and [x["deviceId"] for x in board["neverLent"]] == ["D-0002", "D-0004", "D-0005"]
    assert [(t["deviceId"], t["lends"]) for t in board["topDevices"]] == [("D-0001", 2), ("D-0003", 1)]
    assert board["medianRentalSeconds"] is not None and board["medianRentalSeconds"] < 60

    web = web_factory(daemon, "--accounts", str(accounts_file(tmpdir_path)))
    en = browser_factory("en")
    en.get(web.base + "/dashboard")
    eventually(lambda: "/login" in en.current_url, what="the sign-in first")
    sign_in(en, web, "/dashboard")
    eventually(lambda: en.find_elements("id", "now-chart"), what="the dashboard")
    # Now, by group: android-phone lent and available; iphone lent, available and broken.
    assert len(bars(en, "now")) == 5
    assert [b.get_attribute("data-group") for b in bars(en, "now", "broken")] == ["iphone"]
    assert "5 devices: 2 lent (0 of them overdue), 2 available, 1 broken." in en.find_element("id", "now-desc").text
    # The last 30 days: a lends bar and an overdue bar per day; today's lends bar is the tallest.
    assert len(bars(en, "days", "lends")) == 30 and len(bars(en, "days", "overdue")) == 30
    tallest = max(bars(en, "days", "lends"), key=lambda b: float(b.get_attribute("height")))
    assert tallest.get_attribute("data-day") == today
    assert all(float(b.get_attribute("height")) == 0 for b in bars(en, "days", "overdue"))
    assert "3 lends in the last 30 days, and 0 rentals fell overdue." in en.find_element("id", "days-desc").text
    assert "Median rental: 0 h 0 min." in en.find_element("id", "days-desc").text and "Median" not in text_of(
        en.find_element("id", "days").get_attribute("innerHTML").split("</svg>")[1]), "the median is said once"
    # The busiest devices, and the never-lent ones as a table.
    assert [b.get_attribute("data-device") for b in bars(en, "busiest")] == ["D-0001", "D-0003"]
    assert "D-0001 (Pixel 7) was lent most: 2 times." in en.find_element("id", "busiest-desc").text
    rows = en.find_elements("css selector", "#never-lent-table tbody tr")
    assert [r.find_elements("tag name", "td")[0].text for r in rows] == ["D-0002", "D-0004", "D-0005"]
    # Each chart is an image with a name and a description; its figures are also a table.
    for chart in ("now", "days", "busiest"):
        svg = en.find_element("id", f"{chart}-chart")
        assert svg.get_attribute("role") == "img" and svg.get_attribute("aria-labelledby") == f"{chart}-title {chart}-desc"
        assert en.find_elements("css selector", f"#{chart} details table tbody tr")
    en.set_window_size(1200, 1800)
    en.save_screenshot(str(tmpdir_path / "dashboard-en.png"))
    shutil.copy(tmpdir_path / "dashboard-en.png", artefact_dir() / "dashboard-en.png")

    ja = browser_factory("ja")
    sign_in(ja, web, "/dashboard?lang=ja")
    eventually(lambda: ja.find_elements("id", "now-chart"), what="the Japanese dashboard")
    assert "端末 5 台：貸出中 2 台（うち期限切れ 0 台）、貸出可能 2 台、故障 1 台。" in ja.find_element("id", "now-desc").text
    assert "期限切れになった貸出は 0 件。最も多かったのは" in ja.find_element("id", "days-desc").text
    assert "一度も貸し出されていない端末（3 台）" in ja.find_element("css selector", "#never-lent h2").text
    assert len(bars(ja, "days", "lends")) == 30
    ja.set_window_size(1200, 1800)
    ja.save_screenshot(str(artefact_dir() / "dashboard-ja.png"))


def test_the_dashboard_needs_an_admin_or_a_token(daemon, web_factory, tmpdir_path):
    seed(daemon)
    tokens = tmpdir_path / "web-tokens"
    out = subprocess.run([binary("roombridge-web"), "token", "add", "wallboard", "--scope", "read", "--file", str(tokens)],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    web = web_factory(daemon, "--api-tokens", str(tokens))
    anonymous = Client(web)
    status, headers, _ = anonymous.request("GET", "/dashboard")
    assert status == 303 and headers["Location"].startswith("/login"), status
    status, _, page = anonymous.request("GET", "/dashboard?days=7", headers={"Authorization": f"Bearer {out.stdout.strip()}"})
    assert status == 200 and page.count('class="bar lends"') == 7, status
    status, _, _ = anonymous.request("GET", "/dashboard", headers={"Authorization": "Bearer rbt_not-a-token"})
    assert status == 303
    # The API has the same figures as JSON.
    req_headers = {"Authorization": f"Bearer {out.stdout.strip()}"}
    status, _, body = anonymous.request("GET", "/api/v1/dashboard?days=7", headers=req_headers)
    assert status == 200 and len(json.loads(body)["dashboard"]["days"]) == 7, body
    status, _, page = anonymous.request("GET", "/dashboard?days=0", headers=req_headers)
    assert status == 400 and "give ?days= from 1 to 366" in text_of(page), (status, text_of(page))


def test_today_draws_the_curtains_position_and_who_was_in_the_room(daemon_factory, web_factory, browser_factory, tmpdir_path):
    """Today's time axis: bluez-sim's curtain moves to 40 % and a beacon comes, goes and comes back; the daemon's
    GetTimeline has the curtain's positions and the two stays (the second still open), and the dashboard draws
    them on one axis (a position line, a bar per stay) with the same as tables, in both languages."""
    sim = BlueZSim(tmpdir_path)
    try:
        d = presence_daemon(daemon_factory, tmpdir_path, sim, "--curtain-enabled", "--curtain-notify", "start-notify")
        ok(call_kw(d, "io.roombridge.Inventory.AddUser", id="u-alice", name="山田 花子"))
        eventually(lambda: (c := ok(call_kw(d, "io.roombridge.Curtain.GetState"))["parameters"]["curtain"])["connection"] == "connected"
                   and c.get("position") is not None, what="the curtain connected")
        eventually(lambda: presence(d)["status"] == "scanning", what="scanning")
        ok(call_kw(d, "io.roombridge.Curtain.MoveTo", position=40))
        add_beacon(sim, ALICE, 1, 2, NEAR, "F0:00:00:00:00:31")
        eventually(lambda: region(presence(d), "alice")["beacons"], what="alice in the room")
        sim.ctl("beacon", "vanish", "F0:00:00:00:00:31")
        eventually(lambda: not region(presence(d), "alice")["beacons"], what="alice gone after exit_after")
        add_beacon(sim, ALICE, 1, 2, NEAR, "F0:00:00:00:00:32")

        def timeline():
            return ok(call_kw(d, "io.roombridge.State.GetTimeline"))["parameters"]["timeline"]
        t = eventually(lambda: (t := timeline()) and t["presence"] and len(t["presence"][0]["stays"]) == 2
                       and t["curtains"][0]["points"][-1].get("position") == 40 and t, what="two stays and the curtain at 40")
        assert t["from"].endswith("Z") and t["until"].endswith("Z") and t["from"] <= t["until"]
        track = t["curtains"][0]
        assert track["id"] == "curtain" and len(track["points"]) >= 2, track
        stays = t["presence"][0]
        assert (stays["region"], stays["label"]) == ("alice", "山田 花子")
        assert "until" in stays["stays"][0] and "until" not in stays["stays"][1], "the first stay closed, the second open"

        web = web_factory(d, "--accounts", str(accounts_file(tmpdir_path)))
        en = browser_factory("en")
        sign_in(en, web, "/dashboard")
        eventually(lambda: en.find_elements("id", "today-chart"), what="the dashboard's today")
        assert [b.get_attribute("data-region") for b in bars(en, "today", "stay")] == ["alice", "alice"]
        line = en.find_element("css selector", "#today-chart path.position")
        assert line.get_attribute("data-curtain") == "curtain" and line.get_attribute("d").startswith("M")
        desc = en.find_element("id", "today-desc").text
        assert "curtain is at 40%" in desc and "山田 花子 was here 2 times" in desc, desc
        assert "Nothing was recorded before" in desc, "the daemon started today: the hours before it are not known"
        presence_rows = en.find_elements("css selector", "#today-presence-table tbody tr")
        assert [r.find_elements("tag name", "td")[2].get_attribute("textContent") for r in presence_rows][-1] == "still here"
        curtain_rows = en.find_elements("css selector", "#today-curtain-table tbody tr")
        assert curtain_rows[-1].find_elements("tag name", "td")[2].get_attribute("textContent") == "40%"
        svg = en.find_element("id", "today-chart")
        assert svg.get_attribute("role") == "img" and svg.get_attribute("aria-labelledby") == "today-title today-desc"
        en.set_window_size(1200, 900)
        en.save_screenshot(str(artefact_dir() / "dashboard-today.png"))

        ja = browser_factory("ja")
        sign_in(ja, web, "/dashboard?lang=ja")
        eventually(lambda: ja.find_elements("id", "today-chart"), what="the Japanese dashboard's today")
        assert "curtain は現在 40%" in ja.find_element("id", "today-desc").text
        assert "山田 花子 は 2 回在室" in ja.find_element("id", "today-desc").text
    finally:
        sim.close()
