"""roombridge-web's stocktakes end to end: the real roombridged behind the real roombridge-web; an
admin starts a stocktake in a real browser, the kiosk (English and Japanese) shows the banner and
counts up as the PN532 simulator taps a device, says an unknown tag is unexpected and refuses a
badge; the admin closes it, the report lists found, missing, lent and unexpected devices, the CSV
downloads, and the report prints to a clean A4 PDF (checked with pdftotext, kept as a PNG).
Times are Tokyo's (TZ)."""
import base64
import datetime
import os
import re
import shutil
import subprocess
import urllib.parse

import pytest

from conftest import ROOT, call, eventually
from test_lending import BADGE, ctl, nfc_lending_daemon
from test_nfc import device_message, lift, spec
from test_web import (Client, accounts_file, browser_factory, english_words, kiosk_shows,  # noqa: F401 (fixtures)
                      notify_method, open_kiosk, place, text_of, web_factory)
from test_web_bookings import ZONE, shown, sign_in

UNKNOWN_UID = "04112233445566"
CSV_HEADER = "list,device_id,model,serial_number,user_id,user_name,uid,tapped_at,location"


def lending(d, method, **params):
    """One io.roombridge.Lending call straight to the daemon; its reply parameters."""
    reply = call(d.socket_path, f"io.roombridge.Lending.{method}", params)
    assert "error" not in reply, reply
    return reply.get("parameters", reply)


def seed(d):
    """D-0001 (its tag is the simulator's default UID) to be tapped, D-0002 never tapped, D-0003 lent to Grace."""
    ctl(d, "users", "add", "U-0002", "--name", "Grace Hopper")
    ctl(d, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7", "--serial", "SN-1")
    ctl(d, "devices", "add", "D-0002", "--group", "android-phone", "--model", "Pixel 6", "--serial", "SN-2")
    ctl(d, "devices", "add", "D-0003", "--group", "android-phone", "--model", "Pixel 8", "--serial", "SN-3")
    ctl(d, "tags", "bind", "04A1B2C3D4E5F6", "--device", "D-0001")
    ctl(d, "lend", "--device", "D-0003", "--user", "U-0002")


def unknown_tag():
    import ndef
    text = b"".join(ndef.message_encoder([ndef.TextRecord("hello", "en")])).hex()
    return spec(uid=UNKNOWN_UID, kind="ntag213", ndef=text)


def banner(driver):
    """The kiosk's stocktake banner text, or None while it is hidden."""
    element = driver.find_element("id", "stocktake")
    return element.text if element.is_displayed() else None


def rows(page, table):
    """The rows of the report table `table` as lists of cell texts."""
    m = re.search(rf'<table id="{table}">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert m, f"no table {table}"
    return [[text_of(c).strip() for c in re.findall(r"<td>(.*?)</td>", r, re.S)] for r in re.findall(r"<tr[^>]*>(.*?)</tr>", m.group(1), re.S)]


# --- The whole round: browser, kiosk, report, CSV ---------------------------------------------------

def test_stocktake_in_the_browser_counts_at_the_kiosk_and_reports_four_lists(
        daemon_factory, pn532, web_factory, browser_factory, tmpdir_path):
    d = nfc_lending_daemon(daemon_factory, pn532, "--lending-repeat-window", "0")  # Ada Lovelace, badge BADGE
    seed(d)
    web = web_factory(d, "--accounts", str(accounts_file(tmpdir_path)))
    en, ja = browser_factory("en"), browser_factory("ja")
    for kiosk in (en, ja):
        open_kiosk(kiosk, web)
        assert banner(kiosk) is None

    # The admin starts a stocktake of all devices from /stocktakes.
    admin = browser_factory("en")
    sign_in(admin, web, "/stocktakes")
    assert admin.find_element("id", "scope-all").is_selected()
    admin.find_element("id", "start-stocktake").click()
    notice = eventually(lambda: admin.find_elements("id", "notice"), what="the start's notice")[0].text
    [open_one] = lending(d, "ListStocktakes")["stocktakes"]
    number = open_one["id"]
    assert notice == f"Stocktake {number} started: tap each device at the kiosk, then close it here.", notice
    assert open_one.get("startedBy", "").startswith("web:root-admin") and "closedAt" not in open_one, open_one
    assert admin.find_element("id", "open-stocktake").text.startswith(f"Stocktake {number} (All devices) is open: 0 counted")
    assert not admin.find_elements("id", "start-form")

    # Both kiosks show the banner, each in its language.
    eventually(lambda: banner(en) == "Stocktake: tap each device to count it (0 counted)", what="the English banner")
    eventually(lambda: banner(ja) == "棚卸し中: 端末を1台ずつタップしてください（0 台確認済み）", what="the Japanese banner")

    # A device: counted, and the banner counts up; again: counted already, the count stays.
    place(pn532, spec(ndef=device_message("D-0001")))
    assert kiosk_shows(en, "counted") == "Counted Pixel 7 (D-0001)"
    assert kiosk_shows(ja, "counted") == "Pixel 7（D-0001）を確認しました"
    eventually(lambda: banner(en) == "Stocktake: tap each device to count it (1 counted)", what="the count to go up")
    eventually(lambda: banner(ja) == "棚卸し中: 端末を1台ずつタップしてください（1 台確認済み）", what="the Japanese count")
    lift(d, pn532)
    place(pn532, spec(ndef=device_message("D-0001")))
    eventually(lambda: en.find_element("id", "headline").text == "Pixel 7 (D-0001) was counted already", what="counted again")
    assert banner(en) == "Stocktake: tap each device to count it (1 counted)"
    lift(d, pn532)

    # A tag not in the inventory: noted as unexpected, with its UID.
    place(pn532, unknown_tag())
    assert kiosk_shows(en, "unexpected") == "Not in the inventory — noted as unexpected"
    assert en.find_element("id", "detail").text == UNKNOWN_UID
    assert kiosk_shows(ja, "unexpected") == "在庫にないタグです — 想定外として記録しました"
    lift(d, pn532)

    # A badge: refused, lending waits for the stocktake.
    place(pn532, BADGE)
    assert kiosk_shows(en, "refused") == "Stocktake in progress — lending resumes when it is closed"
    assert kiosk_shows(ja, "refused") == "棚卸し中です — 終了後に貸し出しを再開します"
    lift(d, pn532)
    assert banner(en) == "Stocktake: tap each device to count it (1 counted)"

    # A kiosk opened now starts with the count so far (the snapshot).
    late = browser_factory("en")
    open_kiosk(late, web)
    assert banner(late) == "Stocktake: tap each device to count it (1 counted)"

    # Closed in the browser: on the report; the kiosks' banners go.
    admin.get(web.base + "/stocktakes")
    admin.find_element("id", "close-stocktake").click()
    notice = eventually(lambda: admin.find_elements("id", "notice"), what="the close's notice")[0].text
    assert notice == f"Stocktake {number} closed: 1 counted, 1 unexpected.", notice
    assert urllib.parse.urlparse(admin.current_url).path == f"/stocktakes/{number}"
    for kiosk in (en, ja, late):
        eventually(lambda: banner(kiosk) is None, what="the banner to go")

    # The report: the four lists, times in Tokyo.
    report = lending(d, "GetStocktake", id=number)["report"]
    started = datetime.datetime.fromisoformat(report["stocktake"]["startedAt"].replace("Z", "+00:00")).astimezone(ZONE)
    closed = datetime.datetime.fromisoformat(report["stocktake"]["closedAt"].replace("Z", "+00:00")).astimezone(ZONE)
    assert admin.find_element("tag name", "h1").text == f"Stocktake {number}"
    assert admin.find_element("id", "fact-scope").text == "All devices"
    # The actor as the daemon recorded it ("web:root-admin via unix:root").
    assert admin.find_element("id", "fact-started").text.startswith(f"{shown(started.date(), started.hour, started.minute)} by web:root-admin")
    assert admin.find_element("id", "fact-closed").text.startswith(shown(closed.date(), closed.hour, closed.minute))
    assert admin.find_element("id", "fact-zone").text == "Asia/Tokyo"
    page = admin.page_source
    [found] = rows(page, "found")
    assert found[:3] == ["D-0001", "Pixel 7", "SN-1"] and found[3] != "", found
    assert rows(page, "missing") == [["D-0002", "Pixel 6", "SN-2"]]
    assert rows(page, "lent") == [["D-0003", "Pixel 8", "SN-3", "Grace Hopper (U-0002)"]]
    [unexpected] = rows(page, "unexpected")
    assert unexpected[0] == UNKNOWN_UID, unexpected
    headings = [h.text for h in admin.find_elements("css selector", "section h2")]
    assert headings == ["Found (1)", "Missing (1)", "Lent (1)", "Unexpected (1)"], headings

    # The CSV download: an attachment with the daemon's header and one row per entry.
    c = Client(web)
    status, headers, text = c.request("GET", f"/stocktakes/{number}.csv")
    assert status == 200 and headers["Content-Type"] == "text/csv; charset=utf-8"
    assert headers["Content-Disposition"] == f'attachment; filename="roombridge-stocktake-{number}.csv"'
    lines = text.split("\r\n")
    assert lines[0] == CSV_HEADER and lines[-1] == "", lines
    by_list = {line.split(",")[0] + ":" + (line.split(",")[1] or line.split(",")[6]): line for line in lines[1:-1]}
    assert sorted(by_list) == ["found:D-0001", "lent:D-0003", "missing:D-0002", f"unexpected:{UNKNOWN_UID}"], by_list
    assert by_list["lent:D-0003"].startswith("lent,D-0003,Pixel 8,SN-3,U-0002,Grace Hopper,"), by_list
    tapped = by_list["found:D-0001"].split(",")[7]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?", tapped), tapped  # the kiosk's zone, as the history's CSV
    status, _, bom = c.request("GET", f"/stocktakes/{number}.csv?bom=1")
    assert status == 200 and bom.startswith("\ufeff" + CSV_HEADER)
    assert [a.get_attribute("href") for a in admin.find_elements("css selector", "#downloads a")] \
        == [f"{web.base}/stocktakes/{number}.csv", f"{web.base}/stocktakes/{number}.csv?bom=1"]

    # The list has it, closed, newest first; a new one may be started again.
    admin.get(web.base + "/stocktakes")
    row = admin.find_element("css selector", f'#stocktakes tr[data-stocktake="{number}"]').text
    assert f"Stocktake {number}" in row and "All devices" in row and "open" not in row, row
    assert admin.find_elements("id", "start-form")


# --- Refusals and who may do what -------------------------------------------------------------------

def test_starting_and_closing_need_an_admin_and_refusals_say_what_to_do(daemon, web_factory, tmpdir_path):
    seed(daemon)
    web = web_factory(daemon, "--accounts", str(accounts_file(tmpdir_path)))
    anonymous = Client(web)
    status, _, page = anonymous.request("GET", "/stocktakes")
    assert status == 200 and 'id="start-form"' not in page and "No stocktake is open." in text_of(page)
    assert anonymous.request("POST", "/stocktakes/start", {"csrf": "x", "scope": "all"})[0] == 401
    c = Client(web)
    c.sign_in()
    assert c.request("POST", "/stocktakes/start", {"scope": "all"})[0] == 403
    assert lending(daemon, "ListStocktakes")["stocktakes"] == []

    # A group or a location without its name: said on the form, which keeps the choice.
    page = c.request("GET", "/stocktakes")[2]
    status, _, page = c.request("POST", "/stocktakes/start", {"csrf": c.token(page), "scope": "location", "location": " "})
    assert status == 400 and "Type the location to count" in text_of(page) and 'id="scope-location" checked' in page
    status, _, page = c.request("POST", "/stocktakes/start", {"csrf": c.token(page), "scope": "group", "group": "tablets"})
    assert status == 400 and "There is no group tablets." in text_of(page), text_of(page)

    # Of a group, by its name; a second one while it is open is refused (as if two admins raced).
    status, headers, _ = c.request("POST", "/stocktakes/start", {"csrf": c.token(page), "scope": "group", "group": "android-phone"})
    assert status == 303 and headers["Location"] == "/stocktakes"
    [s] = lending(daemon, "ListStocktakes")["stocktakes"]
    assert (s["scope"], s["scopeValue"]) == ("group", "android-phone")
    page = c.request("GET", "/stocktakes")[2]
    assert f"Stocktake {s['id']} (Group " in text_of(page)
    status, _, page = c.request("POST", "/stocktakes/start", {"csrf": c.token(page), "scope": "all"})
    assert status == 400 and f"Stocktake {s['id']} is still open; close it before starting another." in text_of(page)

    # An open one's page says its lists come at the close; anyone reads it, only an admin has the button.
    status, _, page = anonymous.request("GET", f"/stocktakes/{s['id']}")
    assert status == 200 and "still open" in text_of(page) and 'id="close-stocktake"' not in page
    assert anonymous.request("POST", f"/stocktakes/{s['id']}/close", {"csrf": "x"})[0] == 401
    page = c.request("GET", f"/stocktakes/{s['id']}")[2]
    assert 'id="close-stocktake"' in page
    assert c.request("POST", f"/stocktakes/{s['id']}/close", {"csrf": c.token(page)})[0] == 303
    status, _, page = c.request("POST", f"/stocktakes/{s['id']}/close", {"csrf": c.token(page)})
    assert status == 400 and f"Stocktake {s['id']} is closed already; nothing more to do." in text_of(page), text_of(page)

    # No such stocktake: said, with where to look; in Japanese too.
    status, _, page = anonymous.request("GET", "/stocktakes/999")
    assert status == 404 and "There is no stocktake 999; see the list of stocktakes." in text_of(page)
    status, _, page = web.get("/stocktakes/999", language="ja", expect=404)
    assert "棚卸し 999 はありません。棚卸しの一覧を確認してください。" in text_of(page)
    assert anonymous.request("GET", "/stocktakes/999.csv")[0] == 404
    assert anonymous.request("GET", "/stocktakes/x1")[0] == 404

    # The Japanese list has no English left but the data.
    page = web.get("/stocktakes", language="ja")[2]
    assert english_words(text_of(page), ["RoomBridge", "Asia/Tokyo", "English", "android-phone", "Android phone"]) == [], text_of(page)


# --- Printing ---------------------------------------------------------------------------------------

def closed_stocktake(d, pn532):
    """A closed stocktake with an entry in each list (D-0001 tapped, the unknown tag); its number."""
    number = lending(d, "StartStocktake", scope="all")["stocktake"]["id"]
    def recorded(field):
        return lending(d, "GetStocktake")["report"]["stocktake"][field] >= 1
    for tag, field in ((spec(ndef=device_message("D-0001")), "counted"), (unknown_tag(), "unexpected")):
        place(pn532, tag)
        eventually(lambda: recorded(field), what=f"the tap to be {field}")
        lift(d, pn532)
    lending(d, "CloseStocktake")
    return number


def print_to_pdf(driver, path):
    """The page as Chromium's Save as PDF makes it (DevTools Page.printToPDF, the page's @page size)."""
    pdf = driver.execute_cdp_cmd("Page.printToPDF", {"preferCSSPageSize": True, "printBackground": False})
    path.write_bytes(base64.b64decode(pdf["data"]))
    return path


def printed(driver, path):
    """Prints the page to `path` and checks it is A4; returns (pages, its text laid out, its words on one line)."""
    pdf = print_to_pdf(driver, path)
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert re.search(r"Page size:.*\(A4\)", info), info
    pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return pages, text, " ".join(text.split())


def keep_png(pdf, png):
    """The PDF's first page as a PNG for a person to look at; copied to Tests/Integration/artifacts/ when it exists."""
    subprocess.run(["pdftoppm", "-png", "-r", "50", "-singlefile", str(pdf), str(png)], check=True)
    assert png.with_suffix(".png").stat().st_size > 1000
    artefacts = ROOT / "Tests" / "Integration" / "artifacts"
    if artefacts.is_dir():
        shutil.copy(png.with_suffix(".png"), artefacts / png.with_suffix(".png").name)


def poppler():
    if shutil.which("pdftotext") and shutil.which("pdftoppm") and shutil.which("pdfinfo"):
        return
    if os.environ.get("CI"):
        pytest.fail("pdftotext, pdftoppm and pdfinfo (poppler-utils) are missing: run scripts/install-deps.sh")
    pytest.skip("poppler-utils is not installed (scripts/install-deps.sh installs it; CI requires it)")


PRINTED = {
    "en": ["Stocktake {n}", "Scope", "All devices", "Started", "Closed", "Asia/Tokyo", "Found (1)", "Missing (1)", "Lent (1)",
           "Unexpected (1)", "Grace Hopper (U-0002)"],
    "ja": ["棚卸し {n}", "対象", "すべての端末", "開始", "終了", "Asia/Tokyo", "確認済み（1）", "所在不明（1）", "貸出中（1）",
           "想定外（1）", "Grace Hopper さん（U-0002）"],
}


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_report_prints_to_a_clean_a4_pdf(daemon_factory, pn532, web_factory, browser_factory, tmpdir_path, language):
    poppler()
    d = nfc_lending_daemon(daemon_factory, pn532, "--lending-repeat-window", "0")
    seed(d)
    number = closed_stocktake(d, pn532)
    web = web_factory(d, "--accounts", str(accounts_file(tmpdir_path)))
    driver = browser_factory(language)
    sign_in(driver, web, f"/stocktakes/{number}")  # signed in: the page has a sign-out form and links, which must not print
    driver.get(web.base + f"/stocktakes/{number}?lang={language}")
    eventually(lambda: driver.find_elements("id", "found"), what="the report")

    pdf = tmpdir_path / f"stocktake-{language}.pdf"
    pages, text, flat = printed(driver, pdf)
    for expected in PRINTED[language]:
        assert " ".join(expected.format(n=number).split()) in flat, (expected, text)
    for device in ["D-0001", "D-0002", "D-0003", UNKNOWN_UID]:
        assert device in flat, (device, text)
    # The document alone: no navigation, no buttons, no download links; the page number at the foot.
    for chrome in {"en": ["Devices", "Rentals", "Sign out", "Download CSV", "Close stocktake", "English"],
                   "ja": ["利用者", "ログアウト", "CSV をダウンロード", "English"]}[language]:
        assert chrome not in text, (chrome, text)
    # The @page footer's "1 / N" (pdftotext closes up the small type's spaces).
    assert re.search(rf"\b1\s*/\s*{pages}$", flat), text

    keep_png(pdf, tmpdir_path / f"stocktake-report-{language}")
