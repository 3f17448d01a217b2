"""Stocktake by tapping, end to end: roombridgectl stocktake against roombridged, taps on the PN532
simulator (libnfc's own driver), the report's four lists and its CSV, and a stocktake started at one
kiosk and tapped at another on the same database. Run on SQLite and, by make test, on PostgreSQL."""
import csv
import io
import json
import os
import pathlib
import tempfile
import time

from conftest import Connection, Daemon, Watcher, eventually
from test_bookings import second_daemon
from test_lending import BADGE, ctl, ctl_json, lending_event, nfc_lending_daemon, tap
from test_nfc import connected_watcher, device_message, spec


def uid(n):
    return f"04{n:012X}"


def device_tag(n):
    return spec(uid=uid(n), ndef=device_message(f"D-{n:04}"))


def seed_devices(d, count, lent=(), user="U-0001"):
    """D-0001…D-count with a bound tag each (UID 04…n); `lent` ones lent to `user`. One import for speed."""
    rows = "\n".join(f"D-{n:04},android-phone,Pixel 7,SN-{n:04}" for n in range(1, count + 1))
    path = d.tmp / "devices.csv"
    path.write_text("id,group_id,model,serial_number\n" + rows + "\n")
    ctl(d, "import", "devices", str(path))
    c = Connection(d.socket_path)
    for n in range(1, count + 1):
        assert "error" not in c.call("io.roombridge.Inventory.BindTag", uid=uid(n), deviceId=f"D-{n:04}")
    for n in lent:
        assert "error" not in c.call("io.roombridge.Lending.Lend", deviceId=f"D-{n:04}", userId=user)
    c.close()


def count_tap(w, pn532, tag, kind="counted"):
    return tap(w, pn532, tag, kind)


def test_a_stocktake_by_taps_gives_four_lists_and_a_csv(daemon_factory, pn532):
    d = nfc_lending_daemon(daemon_factory, pn532, "--lending-repeat-window", "0")
    seed_devices(d, 5, lent=(3, 4))
    w = connected_watcher(d)
    out = ctl(d, "stocktake", "start").stdout
    assert "started stocktake 1 of all devices" in out, out
    started = w.wait_for(lambda e: e["kind"] == "stocktake", what="stocktake started")["stocktake"]
    assert started["change"] == "started" and started["status"]["id"] == 1
    r = ctl(d, "stocktake", "start", check=False)
    assert r.returncode != 0 and "stocktake 1 is still open" in r.stderr, r.stderr

    o = count_tap(w, pn532, device_tag(1))
    assert o["deviceId"] == "D-0001" and o["model"] == "Pixel 7" and o.get("reason") is None
    o = count_tap(w, pn532, device_tag(1))
    assert o["reason"] == "again"
    count_tap(w, pn532, device_tag(3))                      # lent, but here: found
    o = tap(w, pn532, BADGE, "refused")                      # nobody is armed during a stocktake
    assert o["refusal"] == "stocktake"
    o = tap(w, pn532, spec(uid="04FEEDFEEDFEED"), "unexpected")
    assert o["uid"] == "04FEEDFEEDFEED"
    # Taps changed nothing about rentals.
    assert sorted(r["deviceId"] for r in ctl_json(d, "rentals")) == ["D-0003", "D-0004"]
    status = ctl_json(d, "status")[0]["lending"]["stocktake"]
    assert (status["counted"], status["unexpected"]) == (2, 1)
    assert "2 counted, 1 unexpected" in ctl(d, "stocktake").stdout

    out = ctl(d, "stocktake", "close").stdout
    assert "2 found, 2 missing, 1 lent, 1 unexpected" in out, out
    closed = w.wait_for(lambda e: e["kind"] == "stocktake", what="stocktake closed")["stocktake"]
    assert closed["change"] == "closed"
    report = json.loads(ctl(d, "stocktake", "report", "1", "--format", "json").stdout)
    lists = {}
    for e in report:
        lists.setdefault(e["list"], []).append(e.get("deviceId") or e.get("uid"))
    assert lists == {"found": ["D-0001", "D-0003"], "missing": ["D-0002", "D-0005"], "lent": ["D-0004"],
                     "unexpected": ["04FEEDFEEDFEED"]}, lists
    lent = next(e for e in report if e["list"] == "lent")
    assert lent["userName"] == "Ada Lovelace" and lent["serialNumber"] == "SN-0004"
    text = ctl(d, "stocktake", "report", "1", "--format", "csv", "--bom").stdout  # (universal newlines: \n)
    assert text.startswith("\ufefflist,device_id,model,serial_number,user_id,user_name,uid,tapped_at,location\n")
    exported = Connection(d.socket_path).call("io.roombridge.Lending.ExportStocktake", id=1, format="csv")["parameters"]
    assert exported["count"] == 6 and exported["text"].count("\r\n") == 7  # RFC 4180: CRLF, a header and six rows
    rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))
    assert [(r["list"], r["device_id"] or r["uid"]) for r in rows][:2] == [("found", "D-0001"), ("found", "D-0003")]
    # After the close, taps lend again.
    tap(w, pn532, BADGE, "armed")
    tap(w, pn532, device_tag(2), "lent")
    w.close()


def test_a_stocktake_started_at_one_kiosk_is_tapped_at_another(daemon_factory, pn532):
    kiosk = nfc_lending_daemon(daemon_factory, pn532)
    seed_devices(kiosk, 3)
    with tempfile.TemporaryDirectory(prefix="rb-test-") as directory:
        office = second_daemon(kiosk, directory)
        try:
            office_watch = Watcher(office.socket_path)
            c = Connection(office.socket_path)
            w = connected_watcher(kiosk)
            started = c.call("io.roombridge.Lending.StartStocktake", scope="all")
            assert "error" not in started, started
            number = started["parameters"]["stocktake"]["id"]
            # The kiosk hears of it before anyone taps there: its screen switches to counting.
            w.wait_for(lambda e: e["kind"] == "stocktake" and e["stocktake"]["change"] == "started", timeout=30,
                       what="the office's stocktake at the kiosk, before a tap")
            o = count_tap(w, pn532, device_tag(2))
            assert o["deviceId"] == "D-0002"
            # The kiosk knows it is counting (its state says so), and the office closes it.
            assert ctl_json(kiosk, "status")[0]["lending"]["stocktake"]["id"] == started["parameters"]["stocktake"]["id"]
            closed = c.call("io.roombridge.Lending.CloseStocktake")
            assert "error" not in closed, closed
            found = [e["deviceId"] for e in closed["parameters"]["report"]["entries"] if e["list"] == "found"]
            assert found == ["D-0002"]
            assert office_watch.wait_for(lambda e: e["kind"] == "stocktake" and e["stocktake"]["change"] == "closed",
                                         what="closed at the office")
            w.wait_for(lambda e: e["kind"] == "stocktake" and e["stocktake"]["change"] == "closed"
                       and e["stocktake"]["status"]["id"] == number, timeout=30, what="the close at the kiosk, before a tap")
            # The kiosk lends again at its next tap.
            tap(w, pn532, BADGE, "armed")
            tap(w, pn532, device_tag(1), "lent")
            c.close()
            office_watch.close()
            w.close()
        finally:
            office.close()


def test_a_stocktake_left_open_is_on_the_state_from_the_daemons_start(daemon_factory, pn532):
    d = nfc_lending_daemon(daemon_factory, pn532)
    seed_devices(d, 2)
    c = Connection(d.socket_path)
    number = c.call("io.roombridge.Lending.StartStocktake", scope="all")["parameters"]["stocktake"]["id"]
    c.close()
    assert d.terminate() == 0
    d.notify.messages.clear()  # so that start() waits for the new run's READY=1
    d.stderr.close()
    d.start()
    # Read before anyone taps: the kiosk is in stocktake mode from the start.
    assert ctl_json(d, "status")[0]["lending"]["stocktake"]["id"] == number
    w = connected_watcher(d)
    assert count_tap(w, pn532, device_tag(1))["deviceId"] == "D-0001"
    w.close()


def test_a_stocktake_of_many_devices_tapped_through_the_simulator(daemon_factory, pn532):
    """ROOMBRIDGE_STOCKTAKE_DEVICES devices (default 120; the benchmark run uses 1000): every one not
    lent is tapped except every tenth; the report's lists are exactly right."""
    n = int(os.environ.get("ROOMBRIDGE_STOCKTAKE_DEVICES", "120"))
    lent = set(range(5, n + 1, 20))
    skipped = {k for k in range(1, n + 1) if k % 10 == 0} - lent
    d = nfc_lending_daemon(daemon_factory, pn532, "--lending-repeat-window", "0")
    seed_devices(d, n, lent=sorted(lent))
    w = connected_watcher(d)
    ctl(d, "stocktake", "start")
    began = time.monotonic()
    tapped = [k for k in range(1, n + 1) if k not in lent and k not in skipped]
    for k in tapped:
        count_tap(w, pn532, device_tag(k))
    taps = time.monotonic() - began
    report = json.loads(ctl(d, "stocktake", "close", "--json").stdout)
    lists = {}
    for e in report["entries"]:
        lists.setdefault(e["list"], []).append(e["deviceId"])
    assert lists.get("found") == [f"D-{k:04}" for k in tapped]
    assert lists.get("missing") == [f"D-{k:04}" for k in sorted(skipped)]
    assert lists.get("lent") == [f"D-{k:04}" for k in sorted(lent)]
    assert "unexpected" not in lists
    print(f"{len(tapped)} taps in {taps:.1f} s")
    w.close()


def test_a_months_lending_report_through_the_cli(daemon_factory):
    """roombridgectl report YYYY-MM: the kiosk's month, its counts, the most lent devices and who had what."""
    import datetime
    import zoneinfo
    d = daemon_factory("--lending-time-zone", "Asia/Tokyo")
    ctl(d, "users", "add", "U-0001", "--name", "Ada Lovelace")
    ctl(d, "users", "add", "U-0002", "--name", "木村 花子")
    seed_devices(d, 3)
    c = Connection(d.socket_path)
    for device, user in (("D-0001", "U-0001"), ("D-0002", "U-0002")):
        assert "error" not in c.call("io.roombridge.Lending.Lend", deviceId=device, userId=user)
    assert "error" not in c.call("io.roombridge.Lending.Return", deviceId="D-0001")
    assert "error" not in c.call("io.roombridge.Lending.Lend", deviceId="D-0001", userId="U-0002")
    c.close()
    month = datetime.datetime.now(zoneinfo.ZoneInfo("Asia/Tokyo")).strftime("%Y-%m")
    report = json.loads(ctl(d, "report", month, "--json").stdout)
    assert (report["month"], report["timeZone"], report["lends"], report["returns"]) == (month, "Asia/Tokyo", 3, 1)
    assert [(t["deviceId"], t["lends"]) for t in report["topDevices"]] == [("D-0001", 2), ("D-0002", 1)]
    assert [(b["userName"], [h["deviceId"] for h in b["rentals"]]) for b in report["borrowers"]] == [
        ("Ada Lovelace", ["D-0001"]), ("木村 花子", ["D-0002", "D-0001"])]
    text = ctl(d, "report", month).stdout
    assert f"Lending in {month} (Asia/Tokyo): 3 lent, 1 returned, 0 fell overdue" in text, text
    # The device column starts at the same display column after a wide (Japanese) name as after a Latin one.
    import unicodedata

    def width(t):
        return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in t)
    rows = [line for line in text.splitlines() if line.startswith("U-000")]
    starts = {width(line[:line.index(" D-000") + 1]) for line in rows}
    assert len(rows) == 3 and len(starts) == 1, text
    r = ctl(d, "report", "November", check=False)
    assert r.returncode == 64 and "YYYY-MM" in r.stderr
