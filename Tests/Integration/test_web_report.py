"""roombridge-web's monthly lending report end to end: the real roombridged behind the real
roombridge-web; lends and returns made through roombridgectl this month (one borrower with a
Japanese name, one rental falling overdue) show in a real browser as the summary, the most lent
devices and who had what, in English and Japanese; /reports goes to this month, a bad month is a
400 that says how to write one, and the page prints to a clean A4 PDF (checked with pdfinfo and
pdftotext, kept as a PNG). Times are Tokyo's (TZ)."""
import datetime
import re

import pytest

from conftest import call, eventually
from test_lending import ctl
from test_web import (Client, TZ, accounts_file, browser_factory, text_of, web_factory)  # noqa: F401 (fixtures)
from test_web_bookings import ZONE, sign_in
from test_web_stocktake import keep_png, poppler, printed, rows

YAMADA = "山田 花子"


def monthly(d, month):
    """GetMonthlyReport straight from the daemon, in the kiosk's zone."""
    reply = call(d.socket_path, "io.roombridge.Lending.GetMonthlyReport", {"month": month, "timeZone": TZ})
    assert "error" not in reply, reply
    return reply.get("parameters", reply)["report"]


def seed(d):
    """Three lends and a return this month: D-0001 twice (山田 花子, returned; then Grace), D-0002 to 山田 花子,
    due in two seconds so that it falls overdue; the month, once the overdue one is counted."""
    ctl(d, "users", "add", "U-0002", "--name", "Grace Hopper")
    ctl(d, "users", "add", "U-0003", "--name", YAMADA)
    ctl(d, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7", "--serial", "SN-1")
    ctl(d, "devices", "add", "D-0002", "--group", "android-phone", "--model", "Pixel 6", "--serial", "SN-2")
    ctl(d, "devices", "add", "D-0003", "--group", "android-phone", "--model", "Pixel 8", "--serial", "SN-3")
    ctl(d, "lend", "--device", "D-0001", "--user", "U-0003")
    ctl(d, "return", "D-0001")
    ctl(d, "lend", "--device", "D-0001", "--user", "U-0002")
    due = (datetime.datetime.now(ZONE) + datetime.timedelta(seconds=2)).isoformat(timespec="seconds")
    ctl(d, "lend", "--device", "D-0002", "--user", "U-0003", "--due", due)
    month = datetime.datetime.now(ZONE).strftime("%Y-%m")
    eventually(lambda: monthly(d, month)["overdue"] == 1, what="D-0002 to fall overdue")
    return month


def summary(driver):
    return {k: driver.find_element("id", f"summary-{k}").text for k in ("lends", "returns", "overdue", "borrowers", "zone")}


def test_the_report_in_the_browser_shows_the_month_in_both_languages(daemon, web_factory, browser_factory):
    month = seed(daemon)
    web = web_factory(daemon)
    expected = monthly(daemon, month)
    assert (expected["lends"], expected["returns"], expected["overdue"]) == (3, 1, 1), expected

    en = browser_factory("en")
    en.get(web.base + "/reports")  # this month, in the kiosk's zone
    eventually(lambda: en.current_url.endswith(f"/reports/{month}"), what="the redirect to this month")
    title = eventually(lambda: en.find_elements("tag name", "h1"), what="the report")[0].text
    year, number = map(int, month.split("-"))
    assert title == f"Lending report {datetime.date(year, number, 1).strftime('%B %Y')} (Asia/Tokyo)", title
    assert summary(en) == {"lends": "3", "returns": "1", "overdue": "1", "borrowers": "2", "zone": "Asia/Tokyo"}
    assert en.find_element("css selector", "nav a[aria-current=page]").get_attribute("href").endswith("/reports")

    page = en.page_source
    assert rows(page, "top-devices") == [["1", "D-0001", "Pixel 7", "2"], ["2", "D-0002", "Pixel 6", "1"]]
    # Who had what: by name, each with their rentals by lend time, lent and returned in Tokyo's time.
    names = [h.text for h in en.find_elements("css selector", "#section-borrowers h3")]
    assert names == ["Grace Hopper (U-0002)", f"{YAMADA} (U-0003)"], names
    yamada = rows(page, "rentals-U-0003")
    assert [r[:2] for r in yamada] == [["D-0001", "Pixel 7"], ["D-0002", "Pixel 6"]], yamada
    first = next(r for r in expected["borrowers"] if r["userId"] == "U-0003")["rentals"][0]
    lent = datetime.datetime.fromisoformat(first["rentedAt"].replace("Z", "+00:00")).astimezone(ZONE)
    assert lent.strftime("%H:%M") in yamada[0][2] and str(lent.year) in yamada[0][2], yamada
    assert yamada[0][4] != "not returned" and yamada[1][4] == "not returned", yamada
    assert rows(page, "rentals-U-0002") and rows(page, "rentals-U-0002")[0][4] == "not returned"
    assert "D-0003" not in text_of(page)  # never lent

    # The months around it.
    previous = en.find_element("id", "previous-month")
    previous.click()
    before = f"{year - 1}-12" if number == 1 else f"{year}-{number - 1:02d}"
    eventually(lambda: en.current_url.endswith(f"/reports/{before}"), what="the previous month")
    assert summary(en)["lends"] == "0"
    assert en.find_element("id", "top-empty").text == "Nothing was lent this month."
    assert en.find_element("id", "borrowers-empty").text == "Nobody had a device this month."
    en.find_element("id", "next-month").click()
    eventually(lambda: en.current_url.endswith(f"/reports/{month}"), what="back to this month")

    ja = browser_factory("ja")
    ja.get(web.base + f"/reports/{month}")
    title = eventually(lambda: ja.find_elements("tag name", "h1"), what="the Japanese report")[0].text
    assert title == f"貸出月報 {year}年{number}月（Asia/Tokyo）", title
    assert summary(ja)["lends"] == "3"
    assert [dt.text for dt in ja.find_elements("css selector", "#report-summary dt")][:3] == ["貸出", "返却", "期限超過"]
    names = [h.text for h in ja.find_elements("css selector", "#section-borrowers h3")]
    assert names == ["Grace Hopper さん（U-0002）", f"{YAMADA} さん（U-0003）"], names
    assert ja.find_element("css selector", "#section-borrowers h2").text == "利用者ごとの貸出（2 人）"
    assert rows(ja.page_source, "rentals-U-0003")[1][4] == "未返却"


def test_reports_goes_to_this_month_and_a_bad_month_says_how_to_write_one(daemon, web_factory):
    web = web_factory(daemon)
    client = Client(web)
    status, headers, _ = client.request("GET", "/reports")
    assert status == 302 and headers["Location"] == "/reports/" + datetime.datetime.now(ZONE).strftime("%Y-%m"), (status, headers)
    for bad in ["2026-13", "2026-1", "november", "2026-11-01", "%E4%BB%8A%E6%9C%88"]:
        status, _, page = client.request("GET", f"/reports/{bad}")
        assert status == 400, (bad, status)
        assert "Months are written YYYY-MM, e.g. /reports/2026-11" in text_of(page), page
    status, _, page = client.request("GET", "/reports/2026-13?lang=ja")
    assert status == 400 and "月は YYYY-MM の形で書いてください（例: /reports/2026-11）: 2026-13" in text_of(page), page
    # An empty month is a report, not an error; anyone may read it, as the history.
    status, _, page = client.request("GET", "/reports/2026-02")
    assert status == 200 and 'id="summary-lends">0<' in page, page


# --- Printing ---------------------------------------------------------------------------------------

PRINTED = {
    "en": ["Lending report {name} (Asia/Tokyo)", "Lent", "Returned", "Fell overdue", "Most lent devices", "Times lent",
           "Who had what (2)", "Grace Hopper (U-0002)", YAMADA + " (U-0003)", "not returned"],
    "ja": ["貸出月報 {ja}（Asia/Tokyo）", "貸出", "返却", "期限超過", "よく貸し出された端末", "貸出回数",
           "利用者ごとの貸出（2 人）", "Grace Hopper さん（U-0002）", YAMADA + " さん（U-0003）", "未返却"],
}


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_report_prints_to_a_clean_a4_pdf(daemon, web_factory, browser_factory, tmpdir_path, language):
    poppler()
    month = seed(daemon)
    year, number = map(int, month.split("-"))
    web = web_factory(daemon, "--accounts", str(accounts_file(tmpdir_path)))
    driver = browser_factory(language)
    sign_in(driver, web, f"/reports/{month}")  # signed in: the page has a sign-out form and links, which must not print
    driver.get(web.base + f"/reports/{month}?lang={language}")
    eventually(lambda: driver.find_elements("id", "top-devices"), what="the report")

    pdf = tmpdir_path / f"report-{language}.pdf"
    pages, text, flat = printed(driver, pdf)
    name = datetime.date(year, number, 1).strftime("%B %Y")
    for expected in PRINTED[language]:
        expected = expected.format(name=name, ja=f"{year}年{number}月")
        assert " ".join(expected.split()) in flat, (expected, text)
    for device in ["D-0001", "D-0002", "Pixel 7", "Pixel 6"]:
        assert device in flat, (device, text)
    # The document alone: no navigation, no buttons, no month links or print hint; the page number at the foot.
    for chrome in {"en": ["Devices", "Rentals", "Sign out", "Monthly report", "Save as PDF", "←", "→", "English"],
                   "ja": ["ログアウト", "貸出中", "履歴", "PDF に保存", "←", "→", "English"]}[language]:
        assert chrome not in text, (chrome, text)
    assert re.search(rf"\b1\s*/\s*{pages}$", flat), text

    keep_png(pdf, tmpdir_path / f"monthly-report-{language}")
