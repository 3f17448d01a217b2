"""roombridge-web's bookings end to end: the real roombridged behind the real roombridge-web; an
admin books through the form (in a real browser and over HTTP), sees the booking on the device's
week strip and the user's page, is refused an overlap in words, cancels; and the kiosk, driven by
the PN532 simulator, says that a device is booked for someone else. Times are Tokyo's (TZ)."""
import datetime
import re
import subprocess
import urllib.parse
import urllib.request
from zoneinfo import ZoneInfo

import pytest

from conftest import binary, call, eventually
from test_lending import BADGE, ctl, ctl_json, nfc_lending_daemon
from test_nfc import device_message, lift, spec
from test_web import (TZ, Client, accounts_file, browser_factory, english_words, kiosk_shows,  # noqa: F401 (fixtures)
                      notify_method, open_kiosk, place, text_of, web_factory, PASSWORD)

ZONE = ZoneInfo(TZ)
LISTEN = "io.roombridge.Lending.ListBookings"


def bookings(d, **params):
    """ListBookings straight from the daemon (not through the web)."""
    reply = call(d.socket_path, LISTEN, params)
    assert "error" not in reply, reply
    return reply.get("parameters", reply)["bookings"]


def local(day, hour, minute=0):
    """A wall time in Tokyo as the form's datetime-local field sends it."""
    return f"{day.isoformat()}T{hour:02d}:{minute:02d}"


def utc(day, hour, minute=0):
    """The same wall time on the wire (UTC)."""
    t = datetime.datetime(day.year, day.month, day.day, hour, minute, tzinfo=ZONE).astimezone(datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M")


def shown(day, hour, minute=0):
    """The same time as the English pages write it, e.g. "28 Nov 2026 at 10:00"."""
    return f"{day.day} {day.strftime('%b')} {day.year} at {hour:02d}:{minute:02d}"


def today():
    return datetime.datetime.now(ZONE).date()


def seed(d):
    ctl(d, "users", "add", "U-0001", "--name", "Ada Lovelace")
    ctl(d, "users", "add", "U-0002", "--name", "Grace Hopper")
    ctl(d, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7", "--serial", "SN-1")


def column(page, day):
    """The text of the week strip's column for `day` (None when the strip does not show that day)."""
    m = re.search(rf'<td data-day="{day.isoformat()}">(.*?)</td>', page, re.S)
    return m and " ".join(text_of(m.group(1)).split())


def book(c, device, user, starts, ends):
    """POSTs the booking form as the browser would; returns (status, headers, page)."""
    _, _, page = c.request("GET", "/bookings/new")
    return c.request("POST", "/bookings/new", {"csrf": c.token(page), "device": device, "user": user, "starts": starts, "ends": ends})


# --- A real browser ---------------------------------------------------------------------------------

def sign_in(driver, web, next_path):
    driver.get(web.base + "/login?next=" + urllib.parse.quote(next_path))
    driver.find_element("id", "name").send_keys("root-admin")
    driver.find_element("id", "password").send_keys(PASSWORD)
    driver.find_element("id", "sign-in").click()
    eventually(lambda: driver.find_elements("id", "signed-in"), what="signed in")


def fill(driver, **fields):
    """Sets the booking form's fields (datetime-local by script: typing one depends on the locale)."""
    for name, value in fields.items():
        element = driver.find_element("id", f"booking-{name}")
        driver.execute_script("arguments[0].value = arguments[1]", element, value)


def test_admin_books_in_a_browser_sees_the_week_strip_and_user_page_is_refused_an_overlap_and_cancels(
        daemon, web_factory, browser_factory, tmpdir_path):
    seed(daemon)
    web = web_factory(daemon, "--accounts", str(accounts_file(tmpdir_path)))
    driver = browser_factory("en")
    sign_in(driver, web, "/devices/D-0001")
    tomorrow = today() + datetime.timedelta(days=1)

    # From the device page: "Book this device" opens the form with the device filled in.
    driver.find_element("id", "book-device").click()
    eventually(lambda: driver.find_elements("id", "booking-form"), what="the booking form")
    assert driver.find_element("id", "booking-device").get_attribute("value") == "D-0001"
    assert "Asia/Tokyo" in driver.find_element("id", "booking-zone").text
    fill(driver, user="U-0002", starts=local(tomorrow, 10), ends=local(tomorrow, 12))
    driver.find_element("id", "book").click()

    # Back on the device page, at the week of the booking, which shows it in tomorrow's column.
    notice = eventually(lambda: driver.find_elements("id", "notice"), what="the booking's notice")[0].text
    assert notice == f"Booked D-0001 for Grace Hopper, {shown(tomorrow, 10)} to {shown(tomorrow, 12)}", notice
    assert urllib.parse.urlparse(driver.current_url).path == "/devices/D-0001"
    assert column(driver.page_source, tomorrow) == "10:00–12:00 Grace Hopper"
    # The wire has it in UTC, made by the signed-in admin through roombridge-web.
    [b] = bookings(daemon, deviceId="D-0001")
    assert (b["userId"], b["startsAt"][:16], b["endsAt"][:16], b["state"]) == ("U-0002", utc(tomorrow, 10), utc(tomorrow, 12), "booked"), b
    assert b.get("bookedBy", "").startswith("web:root-admin"), b

    # The user's page lists it, with a Cancel button.
    driver.get(web.base + "/users/U-0002")
    row = driver.find_element("css selector", f'#bookings tr[data-booking="{b["id"]}"]').text
    assert "D-0001" in row and shown(tomorrow, 10) in row and shown(tomorrow, 12) in row and "Booked" in row, row

    # An overlapping booking is refused in words that say what to do, and the form keeps its input.
    driver.get(web.base + "/bookings/new?device=D-0001")
    fill(driver, user="U-0001", starts=local(tomorrow, 11, 30), ends=local(tomorrow, 13))
    driver.find_element("id", "book").click()
    error = eventually(lambda: driver.find_elements("id", "error"), what="the refusal")[0].text
    assert error == (f"D-0001 is already booked for Grace Hopper from {shown(tomorrow, 10)} to {shown(tomorrow, 12)}; "
                     "choose another time or another device."), error
    assert [driver.find_element("id", f"booking-{k}").get_attribute("value") for k in ["device", "user", "starts", "ends"]] \
        == ["D-0001", "U-0001", local(tomorrow, 11, 30), local(tomorrow, 13)]
    assert len(bookings(daemon, deviceId="D-0001")) == 1

    # Cancelled from the user's page: gone from it and from the strip; the daemon has it cancelled.
    driver.get(web.base + "/users/U-0002")
    driver.find_element("id", f"cancel-booking-{b['id']}").click()
    notice = eventually(lambda: driver.find_elements("id", "notice"), what="the cancellation's notice")[0].text
    assert notice == f"Cancelled Grace Hopper's booking of D-0001 from {shown(tomorrow, 10)}", notice
    assert driver.find_elements("id", "no-bookings")
    assert bookings(daemon, deviceId="D-0001") == []
    [cancelled] = bookings(daemon, deviceId="D-0001", includeCancelled=True)
    assert cancelled["state"] == "cancelled" and cancelled.get("cancelledBy", "").startswith("web:root-admin"), cancelled
    driver.get(web.base + "/devices/D-0001")
    assert column(driver.page_source, tomorrow) == "Free"


# --- HTTP -------------------------------------------------------------------------------------------

def test_week_strip_shows_exactly_its_week_and_moves_by_weeks(daemon, web_factory, tmpdir_path):
    seed(daemon)
    c = Client(web_factory(daemon, "--accounts", str(accounts_file(tmpdir_path))))
    c.sign_in()
    first = today()
    soon, later = first + datetime.timedelta(days=2), first + datetime.timedelta(days=9)
    assert book(c, "D-0001", "U-0002", local(soon, 22), local(soon + datetime.timedelta(days=1), 2))[0] == 303
    assert book(c, "D-0001", "U-0001", local(later, 9), local(later, 17, 30))[0] == 303

    page = c.request("GET", "/devices/D-0001")[2]
    days = re.findall(r'<td data-day="([\d-]+)">', page)
    assert days == [(first + datetime.timedelta(days=i)).isoformat() for i in range(7)], days
    # Over midnight: the evening in one column, the small hours in the next.
    assert column(page, soon) == "22:00–24:00 Grace Hopper"
    assert column(page, soon + datetime.timedelta(days=1)) == "00:00–02:00 Grace Hopper"
    assert "Ada Lovelace" not in text_of(page.split('id="week"')[1].split("</table>")[0])
    assert 'id="week-this"' not in page

    nxt = re.search(r'id="week-next" href="([^"]+)"', page).group(1)
    assert nxt == f"/devices/D-0001?week={(first + datetime.timedelta(days=7)).isoformat()}"
    page = c.request("GET", nxt)[2]
    assert column(page, later) == "09:00–17:30 Ada Lovelace"
    assert column(page, soon) is None and "Grace Hopper" not in text_of(page.split('id="week"')[1].split("</table>")[0])
    prev = re.search(r'id="week-previous" href="([^"]+)"', page).group(1)
    assert prev == f"/devices/D-0001?week={first.isoformat()}" and 'id="week-this"' in page

    # A week that is no date: said, not guessed.
    status, _, page = c.request("GET", "/devices/D-0001?week=2026-02-30")
    assert status == 400 and "2026-02-30" in text_of(page)

    # Anyone may read the strip; the user page lists the user's bookings to come, without buttons.
    anonymous = Client(c.web)
    status, _, page = anonymous.request("GET", "/devices/D-0001")
    assert status == 200 and column(page, soon) == "22:00–24:00 Grace Hopper" and 'id="book-device"' not in page
    page = anonymous.request("GET", "/users/U-0001")[2]
    assert "D-0001" in text_of(page) and "<form" not in page.split('id="bookings"')[1] and 'id="book-for-user"' not in page


def test_booking_form_refusals_keep_the_input_and_need_a_signed_in_admin(daemon, web_factory, tmpdir_path):
    seed(daemon)
    ctl(daemon, "devices", "add", "D-0002", "--group", "android-phone", "--model", "Pixel 8")
    ctl(daemon, "lend", "--device", "D-0002", "--user", "U-0001", "--due", "2030-12-03T14:59:59Z")
    web = web_factory(daemon, "--accounts", str(accounts_file(tmpdir_path)))
    tomorrow = today() + datetime.timedelta(days=1)

    # Not signed in: the form sends to the sign-in (and back), a POST is refused; nothing is booked.
    # Nobody books without signing in.
    anonymous = Client(web)
    status, headers, _ = anonymous.request("GET", "/bookings/new?device=D-0001")
    assert status == 303 and headers["Location"] == "/login?next=%2Fbookings%2Fnew%3Fdevice%3DD-0001", headers["Location"]
    form = {"device": "D-0001", "user": "U-0002", "starts": local(tomorrow, 10), "ends": local(tomorrow, 12)}
    assert anonymous.request("POST", "/bookings/new", {**form, "csrf": "x"})[0] == 401
    c = Client(web)
    c.sign_in()
    status, _, page = c.request("POST", "/bookings/new", form)
    assert status == 403 and "reload the page" in text_of(page)
    assert bookings(daemon, deviceId="D-0001") == []

    # Lent until 3 Dec 2030 (Tokyo): booking before that is refused with the due date, in Tokyo time.
    status, _, page = book(c, "D-0002", "U-0002", local(tomorrow, 10), local(tomorrow, 12))
    assert status == 400, status
    assert "D-0002 is lent to Ada Lovelace until 3 Dec 2030 at 23:59; book it from then on." in text_of(page), text_of(page)
    assert "BookedWhileLent" not in page and "roombridgectl" not in text_of(page) and "T14:59" not in page

    # No such time, an end before the start, an unknown user: each said on the form, which keeps the input.
    status, _, page = book(c, "D-0001", "U-0002", "2026-02-30T10:00", local(tomorrow, 12))
    assert status == 400 and "Give the start and the end each as a date and a time" in text_of(page)
    assert 'value="2026-02-30T10:00"' in page and 'value="U-0002"' in page
    status, _, page = book(c, "D-0001", "U-0002", local(tomorrow, 12), local(tomorrow, 10))
    assert status == 400 and "Choose an end after the start that is still to come" in text_of(page), text_of(page)
    status, _, page = book(c, "D-0001", "U-9999", local(tomorrow, 10), local(tomorrow, 12))
    assert status == 400 and "There is no user U-9999." in text_of(page) and 'value="U-9999"' in page, text_of(page)
    assert bookings(daemon, deviceId="D-0001") == []

    # In Japanese: the overlap, in the reader's words and Tokyo time.
    assert book(c, "D-0001", "U-0002", local(tomorrow, 10), local(tomorrow, 12))[0] == 303
    c.request("GET", "/devices?lang=ja")  # the choice is remembered
    status, _, page = book(c, "D-0001", "U-0001", local(tomorrow, 9), local(tomorrow, 11))
    assert status == 400
    m = re.search(r'id="error">([^<]*)<', page)
    assert m and m.group(1).startswith("D-0001 には ") and "Grace Hopper さんの予約があります。別の日時か別の端末を選んでください。" in m.group(1), m
    assert f"{tomorrow.month}月{tomorrow.day}日" in m.group(1) and "10:00" in m.group(1) and "12:00" in m.group(1), m.group(1)
    assert english_words(text_of(page), ["D-0001", "U-0001", "U-0002", "Grace Hopper", "Ada Lovelace", "root-admin",
                                         "Asia/Tokyo", "English"]) == [], text_of(page)

    # Cancelling twice: the second says it is done already, on the user's page.
    [b] = bookings(daemon, deviceId="D-0001")
    c.request("GET", "/devices?lang=en")
    page = c.request("GET", "/users/U-0002")[2]
    path = f"/users/U-0002/bookings/{b['id']}/cancel"
    assert anonymous.request("POST", path, {"csrf": "x"})[0] == 401
    assert c.request("POST", path, {"csrf": c.token(page)})[0] == 303
    status, _, page = c.request("POST", path, {"csrf": c.token(page)})
    assert status == 400 and "That booking was cancelled already; nothing more to do." in text_of(page), text_of(page)


# --- The kiosk --------------------------------------------------------------------------------------

KIOSK = {
    "en": ("D-0042 is booked for Grace Hopper from today {time}", "Borrow another device, or ask an admin",
           r"Lent Pixel 7 \(D-0042\) to Grace Hopper — due .+"),
    "ja": ("D-0042 は 今日 {time} から Grace Hopper さんの予約があります", "別の端末を借りるか、管理者に相談してください",
           r"Pixel 7（D-0042）を Grace Hopper さんに貸し出しました.*"),
}


@pytest.mark.parametrize("language", ["en", "ja"])
def test_kiosk_says_a_device_is_booked_for_someone_else_and_lends_it_to_the_booker(
        daemon_factory, pn532, web_factory, browser_factory, tmpdir_path, language):
    d = nfc_lending_daemon(daemon_factory, pn532, "--lending-repeat-window", "0")  # Ada Lovelace, badge BADGE
    ctl(d, "users", "add", "U-0002", "--name", "Grace Hopper")
    ctl(d, "badges", "bind", "01:02:03:04", "--user", "U-0002")
    ctl(d, "devices", "add", "D-0042", "--group", "android-phone", "--model", "Pixel 7")
    ctl(d, "tags", "bind", "04A1B2C3D4E5F6", "--device", "D-0042")  # the simulator's default tag UID
    web = web_factory(d, "--accounts", str(accounts_file(tmpdir_path)))

    # Booked for Grace from this minute (it runs now) for two hours, through the form.
    c = Client(web)
    c.sign_in()
    now = datetime.datetime.now(ZONE).replace(second=0, microsecond=0)
    ends = now + datetime.timedelta(hours=2)
    assert book(c, "D-0042", "U-0002", now.strftime("%Y-%m-%dT%H:%M"), ends.strftime("%Y-%m-%dT%H:%M"))[0] == 303

    driver = browser_factory(language)
    open_kiosk(driver, web)
    headline, detail, lent = KIOSK[language]

    # Ada taps her badge, then the device: refused, for Grace, from when.
    place(pn532, BADGE)
    kiosk_shows(driver, "armed")
    lift(d, pn532)
    place(pn532, spec(ndef=device_message("D-0042")))
    # The kiosk writes the time as its language does: "00:30" in English, "0:30" in Japanese (ICU's ja "H:mm").
    time = now.strftime("%H:%M") if language == "en" else f"{now.hour}:{now.minute:02d}"
    assert kiosk_shows(driver, "refused") == headline.format(time=time)
    assert driver.find_element("id", "detail").text == detail
    assert "tone-refusal" in driver.find_element("id", "outcome").get_attribute("class")
    lift(d, pn532)

    # Grace taps: lent, and the booking is fulfilled.
    place(pn532, "isoa:01020304")
    kiosk_shows(driver, "armed")
    lift(d, pn532)
    place(pn532, spec(ndef=device_message("D-0042")))
    text = kiosk_shows(driver, "lent")
    assert re.fullmatch(lent, text), text
    lift(d, pn532)
    [b] = bookings(d, deviceId="D-0042")
    assert b["state"] == "fulfilled" and b.get("rentalId"), b
    # Lent until the booking's end.
    rental = ctl_json(d, "devices", "show", "D-0042")[0]["device"]["rental"]
    assert (rental["userId"], rental["dueAt"][:16]) == ("U-0002", b["endsAt"][:16]), (rental, b)


def test_a_self_service_account_books_only_for_its_own_user_and_changes_nothing_else(daemon, web_factory, tmpdir_path):
    seed(daemon)
    accounts = accounts_file(tmpdir_path)
    out = subprocess.run([binary("roombridge-web"), "hash-password", "grace", "--user", "U-0002"], input=PASSWORD + "\n",
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip().endswith(":user=U-0002"), out
    accounts.write_text(accounts.read_text() + out.stdout)
    web = web_factory(daemon, "--accounts", str(accounts))
    tomorrow = today() + datetime.timedelta(days=1)
    c = Client(web)
    assert c.sign_in(name="grace")[0] == 303
    status, _, page = c.request("GET", "/bookings/new?device=D-0001&user=U-0001")
    # The form is for Grace alone: her ID, fixed, and no list of the other users.
    assert status == 200 and "Signed in as grace" in text_of(page)
    assert re.search(r'<input name="user" id="booking-user" value="U-0002" readonly>', page), page
    assert "Ada Lovelace" not in page

    # Naming someone else (a crafted POST) is refused in words, and nothing is booked.
    status, _, page = book(c, "D-0001", "U-0001", local(tomorrow, 10), local(tomorrow, 12))
    assert status == 403 and "You can book only for yourself (U-0002)" in text_of(page), text_of(page)
    assert bookings(daemon, deviceId="D-0001") == []

    status, headers, _ = book(c, "D-0001", "U-0002", local(tomorrow, 10), local(tomorrow, 12))
    assert status == 303 and headers["Location"].startswith("/devices/D-0001"), status
    [b] = bookings(daemon, deviceId="D-0001")
    assert b["userId"] == "U-0002" and b["startsAt"].startswith(utc(tomorrow, 10)), b
    assert b.get("bookedBy", "").startswith("web:grace "), b

    # Every admin change is refused with what the account can do; the booking and the device stay.
    _, _, page = c.request("GET", "/devices/D-0001")
    token = c.token(page)
    status, _, page = c.request("POST", "/devices/new", {"csrf": token, "id": "D-0009", "group": "android-phone", "model": "X"})
    assert status == 403 and "Only an admin can do this" in text_of(page), text_of(page)
    status, _, page = c.request("POST", f"/users/U-0002/bookings/{b['id']}/cancel", {"csrf": token})
    assert status == 403 and "Only an admin can do this" in text_of(page)
    assert [x["state"] for x in bookings(daemon, deviceId="D-0001")] == ["booked"]
    assert ctl(daemon, "devices", "show", "D-0009", check=False).returncode != 0

    # Signing out works as for an admin.
    assert c.request("POST", "/logout", {"csrf": token})[0] == 303
    assert c.request("POST", "/bookings/new", {"csrf": token, "device": "D-0001", "user": "U-0002",
                                               "starts": local(tomorrow, 13), "ends": local(tomorrow, 14)})[0] == 401
