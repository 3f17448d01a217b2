"""Bookings end to end: roombridgectl book/bookings/cancel-booking against roombridged, a booking met
at the reader (PN532 simulator), and two daemons on one database booking the same slot at once.
Run on SQLite and, by make test, again on PostgreSQL (ROOMBRIDGE_IT_BACKEND)."""
import datetime
import pathlib
import tempfile
import threading
import zoneinfo

from conftest import Connection, Daemon, Watcher
from test_lending import BADGE, TAG_UID, ctl, ctl_json, lending_event, nfc_lending_daemon, seed, tap
from test_nfc import connected_watcher, device_message, spec

ZONE = "Asia/Tokyo"


def tomorrow_at(hour, minute=0):
    """A wall-clock time tomorrow in the kiosk's zone: (text for roombridgectl, the UTC instant)."""
    local = datetime.datetime.now(zoneinfo.ZoneInfo(ZONE)).date() + datetime.timedelta(days=1)
    at = datetime.datetime(local.year, local.month, local.day, hour, minute, tzinfo=zoneinfo.ZoneInfo(ZONE))
    return at.strftime("%Y-%m-%d %H:%M"), at.astimezone(datetime.timezone.utc)


def utc(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def iso(moment):
    return moment.astimezone(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


def test_book_list_and_cancel_through_the_cli_in_the_kiosks_time_zone(daemon_factory):
    d = daemon_factory("--lending-time-zone", ZONE)
    seed(d, devices=("D-0001",), users=(("U-0001", "Ada Lovelace"), ("U-0002", "Grace Hopper")))
    w = Watcher(d.socket_path)
    start_text, start = tomorrow_at(14)
    end_text, end = tomorrow_at(17)
    out = ctl(d, "book", "D-0001", "--user", "U-0001", "--from", start_text, "--until", end_text).stdout
    assert f"{start_text} – {end_text} ({ZONE})" in out and "Ada Lovelace" in out, out
    [booking] = ctl_json(d, "bookings")
    # On the wire, UTC: 14:00 in Tokyo is 05:00Z.
    assert utc(booking["startsAt"]) == start and utc(booking["endsAt"]) == end
    assert booking["state"] == "booked" and booking["userName"] == "Ada Lovelace" and booking["bookedBy"].startswith("unix:")
    e = w.wait_for(lambda e: e["kind"] == "booking", what="booking event")["booking"]
    assert e["change"] == "booked" and e["bookingId"] == booking["id"]

    # An overlapping booking is refused, saying whose booking holds the time and what to do.
    _, overlap_end = tomorrow_at(18)
    r = ctl(d, "book", "D-0001", "--user", "U-0002", "--from", tomorrow_at(16)[0], "--until", tomorrow_at(18)[0], check=False)
    assert r.returncode != 0
    assert "already booked for Ada Lovelace" in r.stderr and "choose another time" in r.stderr, r.stderr
    # Its end touching the next start is no overlap.
    ctl(d, "book", "D-0001", "--user", "U-0002", "--from", end_text, "--until", tomorrow_at(18)[0])
    assert [b["userId"] for b in ctl_json(d, "bookings", "--device", "D-0001")] == ["U-0001", "U-0002"]
    table = ctl(d, "bookings").stdout
    assert f"FROM ({ZONE})" in table and start_text in table, table

    # A range query: only what overlaps [17:30, 19:00).
    assert [b["userId"] for b in ctl_json(d, "bookings", "--from", tomorrow_at(17, 30)[0], "--until", tomorrow_at(19)[0])] == ["U-0002"]

    out = ctl(d, "cancel-booking", str(booking["id"])).stdout
    assert f"cancelled booking {booking['id']}" in out
    e = w.wait_for(lambda e: e["kind"] == "booking" and e["booking"]["change"] == "cancelled", what="cancel event")["booking"]
    assert e["bookingId"] == booking["id"] and e["by"].startswith("unix:")
    assert [b["userId"] for b in ctl_json(d, "bookings")] == ["U-0002"]
    assert [(b["userId"], b["state"]) for b in ctl_json(d, "bookings", "--all")] == [("U-0001", "cancelled"), ("U-0002", "booked")]
    r = ctl(d, "cancel-booking", str(booking["id"]), check=False)
    assert r.returncode != 0 and "is cancelled and can no longer be cancelled" in r.stderr, r.stderr
    # A bad time is a usage error that says what to write.
    r = ctl(d, "book", "D-0001", "--user", "U-0001", "--from", "tomorrow", "--until", end_text, check=False)
    assert r.returncode == 64 and "2026-11-21 14:00" in r.stderr, r.stderr
    w.close()


def test_a_tap_meets_a_booking(daemon_factory, pn532):
    d = nfc_lending_daemon(daemon_factory, pn532, "--lending-repeat-window", "0", "--lending-loan-days", "7")
    ctl(d, "users", "add", "U-0002", "--name", "Grace Hopper")
    ctl(d, "badges", "bind", "0E:0F:10:11", "--user", "U-0002")
    ctl(d, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
    ctl(d, "tags", "bind", TAG_UID, "--device", "D-0001")
    # Grace's booking starts in ten minutes, within the default guard of an hour.
    now = datetime.datetime.now(datetime.timezone.utc)
    c = Connection(d.socket_path)
    booked = c.call("io.roombridge.Lending.Book", deviceId="D-0001", userId="U-0002",
                    startsAt=iso(now + datetime.timedelta(minutes=10)), endsAt=iso(now + datetime.timedelta(hours=3)))
    assert "error" not in booked, booked
    w = connected_watcher(d)
    device = spec(ndef=device_message("D-0001"))

    tap(w, pn532, BADGE, "armed")
    o = tap(w, pn532, device, "refused")
    assert o["refusal"] == "booked" and o["bookedFor"] == "Grace Hopper" and o["userId"] == "U-0002", o
    assert utc(o["bookedFrom"]) == utc(booked["parameters"]["booking"]["startsAt"])
    assert ctl_json(d, "rentals") == []

    tap(w, pn532, "isoa:0E0F1011", "armed")
    o = tap(w, pn532, device, "lent")
    assert o["userId"] == "U-0002" and utc(o["dueAt"]) == utc(booked["parameters"]["booking"]["endsAt"]), o
    [b] = ctl_json(d, "bookings")
    assert b["state"] == "fulfilled" and b["rentalId"] == ctl_json(d, "rentals")[0]["id"]

    # Returned, then booked by Grace again tomorrow: Ada's lend now is due by that start, and says so.
    tap(w, pn532, device, "returned")
    later = now + datetime.timedelta(days=1)
    again = c.call("io.roombridge.Lending.Book", deviceId="D-0001", userId="U-0002", startsAt=iso(later),
                   endsAt=iso(later + datetime.timedelta(hours=1)))["parameters"]["booking"]
    tap(w, pn532, BADGE, "armed")
    o = tap(w, pn532, device, "lent")
    assert o["userId"] == "U-0001" and utc(o["dueAt"]) == utc(again["startsAt"]) == utc(o["bookedFrom"]), o
    c.close()
    w.close()


def second_daemon(first, directory):
    """Another daemon on `first`'s database (a second kiosk), its socket in `directory`."""
    other = Daemon(pathlib.Path(directory))
    for option in ("--database-path", "--database-url"):
        if option in first.args:
            other.args[other.args.index(option) + 1] = first.args[first.args.index(option) + 1]
    return other.start()


def test_two_daemons_booking_one_slot_at_once_have_one_winner(daemon):
    seed(daemon, devices=("D-0001",), users=[(f"U-{i:04}", f"User {i}") for i in range(4)])
    with tempfile.TemporaryDirectory(prefix="rb-test-") as directory:
        race_bookings(daemon, second_daemon(daemon, directory))


def race_bookings(daemon, other):
    try:
        base = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=2)
        for round_ in range(3):
            start = base + datetime.timedelta(hours=10 * round_)
            results = []
            barrier = threading.Barrier(32)
            lock = threading.Lock()

            def attempt(i):
                c = Connection((daemon if i % 2 else other).socket_path)
                barrier.wait()
                r = c.call("io.roombridge.Lending.Book", deviceId="D-0001", userId=f"U-{i % 4:04}",
                           startsAt=iso(start + datetime.timedelta(minutes=i)),
                           endsAt=iso(start + datetime.timedelta(hours=2, minutes=i)))
                c.close()
                with lock:
                    results.append(r)

            threads = [threading.Thread(target=attempt, args=(i,)) for i in range(32)]
            for th in threads:
                th.start()
            for th in threads:
                th.join(60)
            assert len(results) == 32
            winners = [r for r in results if "error" not in r]
            assert len(winners) == 1, (round_, [r.get("error") for r in results])
            assert {r["error"] for r in results if "error" in r} == {"io.roombridge.Lending.BookingOverlaps"}
        c = Connection(other.socket_path)
        assert len(c.call("io.roombridge.Lending.ListBookings")["parameters"]["bookings"]) == 3
        c.close()
    finally:
        other.close()
