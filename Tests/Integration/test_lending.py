"""Inventory and lending end to end: roombridgectl and python-varlink against the real
roombridged (io.roombridge.Inventory, io.roombridge.Lending), taps on the PN532 simulator, the
CSV export, crash safety under kill -9, and two daemons sharing one database file."""
import csv
import datetime
import io
import json
import os
import pathlib
import pwd
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time

import ndef
import pytest
import varlink

from conftest import Connection, Daemon, Watcher, binary, call, eventually
from test_cli import Lines
from test_foundation import run_as_nobody
from test_nfc import connected_watcher, device_message, spec


def ctl(d, *args, check=True):
    """Runs roombridgectl against `d`; returns the CompletedProcess."""
    env = dict(os.environ, ROOMBRIDGE_SOCKET=d.socket_path)
    r = subprocess.run([binary("roombridgectl"), *args], capture_output=True, text=True, timeout=30, env=env)
    if check:
        assert r.returncode == 0, f"roombridgectl {' '.join(args)}: exit {r.returncode}\n{r.stdout}{r.stderr}"
    return r


def ctl_json(d, *args):
    """Runs roombridgectl --json and parses one object per line."""
    out = ctl(d, *args, "--json").stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def seed(d, devices=("D-0001",), users=(("U-0001", "Ada Lovelace"),)):
    for uid, name in users:
        ctl(d, "users", "add", uid, "--name", name)
    for did in devices:
        ctl(d, "devices", "add", did, "--group", "android-phone", "--model", "Pixel 7", "--serial", "SN-" + did)


# --- CRUD -------------------------------------------------------------------------------------------

def test_crud_through_the_cli_with_device_log(daemon):
    seed(daemon)
    ctl(daemon, "devices", "add", "D-0002", "--group", "iphone", "--model", "iPhone 15", "--os", "17.1",
        "--connector", "USB-C", "--note", "spare")
    devices = ctl_json(daemon, "devices", "list")
    assert [d["id"] for d in devices] == ["D-0001", "D-0002"]
    assert devices[1]["groupId"] == "iphone" and devices[1]["osVersion"] == "17.1" and devices[1]["note"] == "spare"

    table = ctl(daemon, "devices", "list").stdout
    assert table.splitlines()[0].split()[:3] == ["ID", "GROUP", "MODEL"]
    assert "iPhone 15" in table

    out = ctl(daemon, "devices", "edit", "D-0002", "--os", "17.2", "--status", "broken").stdout
    assert "osVersion: 17.1 → 17.2" in out and "status: normal → broken" in out
    log = ctl_json(daemon, "devices", "log", "D-0002")
    updates = {(e["field"], e.get("oldValue"), e.get("newValue")) for e in log if e["operation"] == "update"}
    assert updates == {("osVersion", "17.1", "17.2"), ("status", "normal", "broken")}
    assert {e["field"] for e in log if e["operation"] == "add"} >= {"model", "group", "osVersion"}
    assert ctl_json(daemon, "devices", "list", "--status", "broken")[0]["id"] == "D-0002"
    assert "unchanged" in ctl(daemon, "devices", "edit", "D-0002", "--os", "17.2").stdout

    show = ctl(daemon, "devices", "show", "D-0002").stdout
    assert "Model:      iPhone 15" in show and "available" in show

    ctl(daemon, "users", "edit", "U-0001", "--name", "Ada King")
    assert ctl_json(daemon, "users", "show", "U-0001")[0]["user"]["name"] == "Ada King"
    ctl(daemon, "badges", "bind", "04:a1:b2:c3", "--user", "U-0001", "--label", "staff card")
    assert [b["identifier"] for b in ctl_json(daemon, "badges", "list", "--user", "U-0001")] == ["04A1B2C3"]
    ctl(daemon, "tags", "bind", "04112233445566", "--device", "D-0001")
    assert ctl_json(daemon, "devices", "show", "D-0001")[0]["tags"][0]["uid"] == "04112233445566"
    # A badge UID cannot become a device tag.
    r = ctl(daemon, "tags", "bind", "04A1B2C3", "--device", "D-0001", check=False)
    assert r.returncode == 5 and "already bound" in r.stderr and "unbind it first" in r.stderr

    ctl(daemon, "groups", "add", "e-reader", "--name", "E-reader", "--order", "50")
    assert "e-reader" in [g["id"] for g in ctl_json(daemon, "groups", "list")]
    r = ctl(daemon, "groups", "rm", "iphone", check=False)
    assert r.returncode == 5 and "still has 1 device(s); move or delete them first" in r.stderr

    ctl(daemon, "devices", "rm", "D-0002")
    assert [d["id"] for d in ctl_json(daemon, "devices", "list")] == ["D-0001"]
    assert any(e["operation"] == "delete" for e in ctl_json(daemon, "devices", "log", "D-0002"))
    ctl(daemon, "badges", "unbind", "04A1B2C3")
    ctl(daemon, "users", "rm", "U-0001")
    assert ctl_json(daemon, "users", "list") == []


def test_errors_say_what_to_do(daemon):
    seed(daemon)
    r = ctl(daemon, "users", "rm", "U-17", check=False)
    assert r.returncode == 5
    assert "no user U-17; see roombridgectl users list" in r.stderr
    r = ctl(daemon, "devices", "show", "D-9999", check=False)
    assert r.returncode == 5 and "no device D-9999; see roombridgectl devices list" in r.stderr
    r = ctl(daemon, "devices", "add", "D-0001", "--group", "iphone", "--model", "X", check=False)
    assert r.returncode == 5 and "device D-0001 already exists" in r.stderr
    r = ctl(daemon, "devices", "add", "D-0005", "--group", "toasters", "--model", "X", check=False)
    assert r.returncode == 5 and "no device group toasters" in r.stderr

    ctl(daemon, "lend", "--device", "D-0001", "--user", "U-0001", "--due", "2030-01-31")
    r = ctl(daemon, "lend", "--device", "D-0001", "--user", "U-0001", check=False)
    assert r.returncode == 5 and "already lent to Ada Lovelace (U-0001)" in r.stderr and "return it first" in r.stderr
    r = ctl(daemon, "devices", "rm", "D-0001", check=False)
    assert r.returncode == 5 and "return it before deleting it" in r.stderr
    r = ctl(daemon, "users", "rm", "U-0001", check=False)
    assert r.returncode == 5 and "still has D-0001" in r.stderr
    ctl(daemon, "return", "D-0001")
    r = ctl(daemon, "return", "D-0001", check=False)
    assert r.returncode == 5 and "is not lent; nothing to return" in r.stderr

    ctl(daemon, "devices", "edit", "D-0001", "--status", "broken")
    r = ctl(daemon, "lend", "--device", "D-0001", "--user", "U-0001", check=False)
    assert r.returncode == 5 and "is broken and cannot be lent" in r.stderr
    r = ctl(daemon, "lend", "--device", "D-0001", "--user", "U-0001", "--due", "next week", check=False)
    assert r.returncode == 64 and "--due 'next week' is not a date" in r.stderr
    r = ctl(daemon, "users", "list", "--socket", "/nonexistent/rb.sock", check=False)
    assert r.returncode == 3


def test_validation_rules_are_named_for_the_cli_and_varlink(daemon):
    seed(daemon)
    for args, rule in [
        (("devices", "add", "D 0002", "--group", "iphone", "--model", "X"), "idCharacters"),
        (("devices", "add", "d-0001", "--group", "iphone", "--model", "X"), "idCaseCollision"),
        (("devices", "add", "D-" + "9" * 63, "--group", "iphone", "--model", "X"), "idTooLong"),
        (("devices", "add", "D-0002", "--group", "iphone", "--model", "   "), "blankName"),
        (("devices", "edit", "D-0001", "--model", "M" * 201), "nameTooLong"),
        (("users", "add", "U-0002", "--name", " "), "blankName"),
        (("users", "add", "u-0001", "--name", "Eve"), "idCaseCollision"),
    ]:
        r = ctl(daemon, *args, check=False)
        assert r.returncode == 5 and f"(rule {rule})" in r.stderr, (args, r.stderr)
    r = ctl(daemon, "devices", "edit", "D-0001", "--status", "broke", check=False)
    assert r.returncode == 64 and "unknownStatus" in r.stderr and "normal, broken, disposed" in r.stderr, r.stderr
    r = ctl(daemon, "devices", "list", "--status", "lost", check=False)
    assert r.returncode == 64 and "normal, broken, disposed" in r.stderr
    assert [d["id"] for d in ctl_json(daemon, "devices", "list")] == ["D-0001"]
    assert [u["id"] for u in ctl_json(daemon, "users", "list")] == ["U-0001"]

    with varlink.Client(address="unix:" + daemon.socket_path) as client:
        with client.open("io.roombridge.Inventory", namespaced=True) as inv:
            for call, rule in [
                (lambda: inv.AddDevice(id="D-0001 ", fields={"groupId": "ipad", "model": "iPad"}), "idCharacters"),
                (lambda: inv.AddDevice(id="D-0003", fields={"groupId": "ipad", "model": ""}), "blankName"),
                (lambda: inv.AddUser(id="U-0003", name="x" * 201), "nameTooLong"),
            ]:
                with pytest.raises(varlink.VarlinkError) as e:
                    call()
                assert e.value.error() == "io.roombridge.Inventory.InvalidField"
                assert e.value.parameters()["rule"] == rule and f"rule {rule}" in e.value.parameters()["message"]


def test_python_varlink_crud_paging_and_typed_errors(daemon):
    with varlink.Client(address="unix:" + daemon.socket_path) as client:
        assert {"io.roombridge.Inventory", "io.roombridge.Lending"} <= set(client.get_interfaces())
        with client.open("io.roombridge.Inventory", namespaced=True) as inv, \
                client.open("io.roombridge.Lending", namespaced=True) as lending:
            inv.AddUser(id="U-0001", name="Grace Hopper")
            for i in range(1, 8):
                inv.AddDevice(id=f"D-{i:04}", fields={"groupId": "ipad", "model": f"iPad {i}"})
            seen, cursor = [], None
            while True:
                page = inv.ListDevices(limit=3, cursor=cursor) if cursor else inv.ListDevices(limit=3)
                assert len(page.devices) <= 3
                seen += [d.id for d in page.devices]
                cursor = getattr(page, "nextCursor", None)
                if not cursor:
                    break
            assert seen == [f"D-{i:04}" for i in range(1, 8)]

            reply = inv.UpdateDevice(id="D-0003", fields={"model": "iPad Air", "note": "cracked corner"})
            assert reply.device.model == "iPad Air"
            assert {c.field for c in reply.changes} == {"model", "note"}

            due = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 4))
            rental = lending.Lend(deviceId="D-0003", userId="U-0001", dueAt=due).rental
            assert rental.userName == "Grace Hopper" and not rental.overdue
            assert lending.ListOverdue().rentals == []
            overdue = eventually(lambda: [r.deviceId for r in lending.ListOverdue().rentals],
                                 what="the rental to be overdue once its due date passed")
            assert overdue == ["D-0003"]
            assert [r.deviceId for r in lending.ListActive(userId="U-0001").rentals] == ["D-0003"]
            lent = inv.ListDevices(isLent=True).devices
            assert [d.id for d in lent] == ["D-0003"] and lent[0].rental.userId == "U-0001"

            with pytest.raises(varlink.VarlinkError) as e:
                lending.Lend(deviceId="D-0003", userId="U-0001")
            assert e.value.error() == "io.roombridge.Lending.AlreadyLent"
            p = e.value.parameters()
            assert p["deviceId"] == "D-0003" and p["userId"] == "U-0001" and p["userName"] == "Grace Hopper"
            assert "return it first" in p["message"]

            with pytest.raises(varlink.VarlinkError) as e:
                inv.DeleteUser(id="U-0001")
            assert e.value.error() == "io.roombridge.Inventory.UserHasDevices"
            assert e.value.parameters()["deviceIds"] == ["D-0003"]

            with pytest.raises(varlink.VarlinkError) as e:
                inv.GetDevice(id="D-0404")
            assert e.value.error() == "io.roombridge.Inventory.NoSuchDevice"
            assert e.value.parameters()["deviceId"] == "D-0404"

            with pytest.raises(varlink.VarlinkError) as e:
                inv.AddBadge(identifier="0102", userId="U-0001")
            assert e.value.error() == "io.roombridge.Inventory.InvalidField"
            assert "4, 7 or 10 bytes" in e.value.parameters()["reason"]

            with pytest.raises(varlink.VarlinkError) as e:
                lending.History(cursor="not-a-cursor")
            assert e.value.error() == "io.roombridge.Lending.InvalidCursor"
            assert "start again without a cursor" in e.value.parameters()["message"]

            with pytest.raises(varlink.VarlinkError) as e:
                lending.History(since="yesterday")
            assert e.value.error() == "io.roombridge.Lending.InvalidField"
            assert e.value.parameters()["field"] == "since"

            lending.Return(deviceId="D-0003", returnedBy="U-0001")
            history = lending.History(deviceId="D-0003").rentals
            assert len(history) == 1 and history[0].returnedBy == "U-0001" and not history[0].overdue


def test_who_did_it_is_recorded_and_shown(daemon):
    """The socket's peer (SO_PEERCRED) is our Unix user; root (a trusted front end) names its signed-in admin."""
    me = "unix:" + pwd.getpwuid(os.getuid()).pw_name
    seed(daemon)
    ctl(daemon, "devices", "edit", "D-0001", "--note", "spare")
    ctl(daemon, "lend", "--device", "D-0001", "--user", "U-0001")
    ctl(daemon, "return", "D-0001")
    [r] = ctl_json(daemon, "history", "--device", "D-0001")
    assert r["lentBy"] == me and r["returnedBy"] == me
    table = ctl(daemon, "history").stdout.splitlines()
    assert "LENT BY" in table[0] and "RETURNED BY" in table[0] and table[1].count(me) == 2
    log = ctl_json(daemon, "devices", "log", "D-0001")
    assert {e.get("actor") for e in log} == {me}
    assert me in ctl(daemon, "devices", "log", "D-0001").stdout
    if os.getuid() != 0:
        return  # only root and auth.actor_users may name an actor

    with varlink.Client(address="unix:" + daemon.socket_path) as client:
        with client.open("io.roombridge.Lending", namespaced=True) as lending:
            rental = lending.Lend(deviceId="D-0001", userId="U-0001", actor="Ada Admin").rental
            assert rental.lentBy == "web:Ada Admin via unix:root"
            rental = lending.Return(deviceId="D-0001", returnedBy="U-0001").rental
            assert rental.returnedBy == "U-0001"
    out = ctl(daemon, "history", "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(out, newline="")))
    assert rows[0]["lent_by"] == "web:Ada Admin via unix:root" and rows[0]["returned_by"] == "U-0001"


def test_renew_and_a_return_note_through_the_cli(daemon):
    """Renewing keeps the rental (same ID, logged); a return note lands in the history and its CSV,
    and --broken sets the device's status in the same step."""
    seed(daemon)
    [lent] = ctl_json(daemon, "lend", "--device", "D-0001", "--user", "U-0001", "--due", "2030-01-01")
    out = ctl(daemon, "renew", "D-0001", "--due", "2030-02-01").stdout
    assert out.startswith("renewed D-0001") and "Ada Lovelace" in out
    [active] = ctl_json(daemon, "rentals")
    end_of_day = datetime.datetime(2030, 2, 1, 23, 59, 59).astimezone(datetime.timezone.utc)
    assert active["id"] == lent["id"] and active["dueAt"] == end_of_day.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    [entry] = [e for e in ctl_json(daemon, "devices", "log", "D-0001") if e["field"] == "dueAt"]
    assert entry["operation"] == "update" and entry["newValue"].startswith(end_of_day.strftime("%Y-%m-%dT%H:%M:%S"))
    bad = ctl(daemon, "renew", "D-0001", "--due", "2020-01-01", check=False)
    assert bad.returncode != 0 and "dueAt" in bad.stderr and "later date" in bad.stderr

    ctl(daemon, "return", "D-0001", "--note", "cracked screen, \"badly\"", "--broken")
    assert ctl_json(daemon, "devices", "show", "D-0001")[0]["device"]["status"] == "broken"
    [r] = ctl_json(daemon, "history", "--device", "D-0001")
    assert r["id"] == lent["id"] and r["returnNote"] == "cracked screen, \"badly\""
    assert "NOTE" in ctl(daemon, "history").stdout.splitlines()[0]
    rows = list(csv.DictReader(io.StringIO(ctl(daemon, "history", "--format", "csv").stdout, newline="")))
    assert [row["return_note"] for row in rows] == ["cracked screen, \"badly\""]
    not_lent = ctl(daemon, "renew", "D-0001", "--due", "2030-03-01", check=False)
    assert not_lent.returncode != 0 and "D-0001" in not_lent.stderr


def test_the_per_user_limit_refuses_clearly(daemon_factory):
    d = daemon_factory("--lending-max-active-per-user", "1")
    seed(d, devices=("D-0001", "D-0002"))
    ctl(d, "lend", "--device", "D-0001", "--user", "U-0001")
    r = ctl(d, "lend", "--device", "D-0002", "--user", "U-0001", check=False)
    assert r.returncode != 0
    assert "Ada Lovelace (U-0001) already has 1 device (D-0001)" in r.stderr and "lending.max_active_per_user = 1" in r.stderr
    reply = call(d.socket_path, "io.roombridge.Lending.Lend", deviceId="D-0002", userId="U-0001")
    assert reply["error"] == "io.roombridge.Lending.LimitReached"
    assert reply["parameters"]["limit"] == 1 and reply["parameters"]["deviceIds"] == ["D-0001"]
    assert [x["deviceId"] for x in ctl_json(d, "rentals")] == ["D-0001"]
    ctl(d, "return", "D-0001")
    ctl(d, "lend", "--device", "D-0002", "--user", "U-0001")


def test_import_csv_through_the_cli(daemon, tmp_path):
    """A spreadsheet's "CSV UTF-8" (BOM, CRLF, quoted fields with commas and line breaks): a dry
    run writes nothing, a bad line stops the whole file unless --partial, and a second import of
    the same file changes nothing."""
    users = tmp_path / "users.csv"
    users.write_bytes("\ufeffid,name\r\nU-0001,\"Lovelace, Ada\"\r\nU-0002,Grace Hopper\r\n".encode())
    out = ctl(daemon, "import", "users", str(users), "--dry-run").stdout
    assert "would be added: U-0001, U-0002" in out and "dry run: nothing written" in out
    assert ctl_json(daemon, "users", "list") == []
    assert "2 added" in ctl(daemon, "import", "users", str(users)).stdout
    assert [u["name"] for u in ctl_json(daemon, "users", "list")] == ["Lovelace, Ada", "Grace Hopper"]
    assert "0 added, 0 updated, 2 unchanged" in ctl(daemon, "import", "users", str(users)).stdout

    devices = tmp_path / "devices.csv"
    devices.write_text('id,group_id,model,note\nD-0001,iphone,iPhone 15,"boxed,\nwith cable"\nD 0002,iphone,Pixel,\n'
                       'D-0003,nosuchgroup,Pixel,\n', encoding="utf-8")
    r = ctl(daemon, "import", "devices", str(devices), check=False)
    assert r.returncode == 5
    assert f"{devices}:4: invalid device ID (rule idCharacters)" in r.stderr  # the note of line 2 spans line 3 and f"{devices}:5: no device group nosuchgroup" in r.stderr
    assert "nothing written" in r.stdout and ctl_json(daemon, "devices", "list") == []
    out = ctl(daemon, "import", "devices", str(devices), "--partial").stdout
    assert "1 added" in out and "2 bad lines (skipped)" in out
    assert ctl_json(daemon, "devices", "show", "D-0001")[0]["device"]["note"] == "boxed,\nwith cable"

    reply = call(daemon.socket_path, "io.roombridge.Inventory.Import", kind="badges",
                 csv="identifier,user_id\n04:a1:b2:c3,U-0001\n")
    assert reply["parameters"]["added"] == ["04A1B2C3"] and reply["parameters"]["written"] is True
    bad = ctl(daemon, "import", "groups", str(users), check=False)
    assert bad.returncode == 64 and "users, badges, devices" in bad.stderr

    # Whose card is this, and every badge.
    ctl(daemon, "badges", "bind", "0102030405060708", "--user", "U-0002", "--kind", "felica", "--label", "phone")
    assert "is Lovelace, Ada's (U-0001)" in ctl(daemon, "badges", "show", "04-a1-b2-c3").stdout
    assert [(b["identifier"], b["userId"]) for b in ctl_json(daemon, "badges", "list")] == [("0102030405060708", "U-0002"), ("04A1B2C3", "U-0001")]
    missing = ctl(daemon, "badges", "show", "04FFFFFF", check=False)
    assert missing.returncode == 5 and "no badge 04FFFFFF" in missing.stderr


def replayed_events(socket_path):
    """Every event the daemon has emitted since it started (Watch since 0, from its replay ring)."""
    c = Connection(socket_path)
    last = c.call("io.roombridge.State.GetState")["parameters"]["state"]["seq"]
    events = []
    if last > 0:
        c.send({"method": "io.roombridge.State.Watch", "parameters": {"since": 0}, "more": True})
        assert c.receive(10)["parameters"].get("resumedAfter") == 0
        while not events or events[-1]["seq"] < last:
            events.append(c.receive(10)["parameters"]["event"])
    c.close()
    return events


def test_an_overdue_rental_is_announced_once_also_after_a_restart(daemon):
    """The daemon wakes at the due time (no polling by the test: a loan due 2 s after it was made);
    status counts it; a restart on the same database does not announce it again."""
    seed(daemon, devices=("D-0001", "D-0002"))
    w = Watcher(daemon.socket_path)
    assert w.state["lending"].get("overdue") == 0
    c = Connection(daemon.socket_path)
    due = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert "error" not in c.call("io.roombridge.Lending.Lend", deviceId="D-0001", userId="U-0001", dueAt=due)
    assert "error" not in c.call("io.roombridge.Lending.Lend", deviceId="D-0002", userId="U-0001", dueAt="2099-01-01")
    c.close()
    event = w.wait_for(lambda e: e["kind"] == "overdue", timeout=20, what="the overdue event")["overdue"]
    assert event["deviceId"] == "D-0001" and event["userName"] == "Ada Lovelace" and "roombridgectl renew D-0001" in event["message"]
    assert ctl_json(daemon, "status")[0]["lending"]["overdue"] == 1
    assert "overdue: 1 rental" in ctl(daemon, "status").stdout
    w.close()

    assert daemon.terminate() == 0
    daemon.notify.messages.clear()
    daemon.stderr.close()
    daemon.start()
    assert ctl_json(daemon, "status")[0]["lending"]["overdue"] == 1
    assert not [e for e in replayed_events(daemon.socket_path) if e["kind"] == "overdue"]
    # Returning it brings the count down (in the state the return's event carries).
    w = Watcher(daemon.socket_path)
    ctl(daemon, "return", "D-0001")
    assert w.wait_for(lambda e: e["kind"] == "lending", what="the return")["lending"]["kind"] == "returned"
    assert ctl_json(daemon, "status")[0]["lending"]["overdue"] == 0
    w.close()


def test_nobody_may_list_but_not_change_the_inventory(daemon_factory):
    d = daemon_factory("--socket-mode", "0666", "--auth-group", "users")
    r = run_as_nobody(d, "print(json.dumps(call('io.roombridge.Inventory.ListDevices')))")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["parameters"]["devices"] == []
    for method, params in [("io.roombridge.Inventory.AddUser", {"id": "U-1", "name": "Eve"}),
                           ("io.roombridge.Lending.Arm", {"userId": "U-1"})]:
        r = run_as_nobody(d, f"print(json.dumps(call({method!r}, {params!r})))")
        out = json.loads(r.stdout)
        assert out["error"] == "io.roombridge.State.PermissionDenied", out
        assert out["parameters"]["group"] == "users"
    assert ctl_json(d, "users", "list") == []


# --- Taps on the PN532 simulator --------------------------------------------------------------------

BADGE = "isoa:0A0B0C0D"
TAG_UID = "04A1B2C3D4E5F6"  # the simulator's default tag UID (test_nfc.spec)


def lending_event(w, kind, timeout=10):
    return w.wait_for(lambda e: e["kind"] == "lending" and e["lending"]["kind"] == kind, timeout, f"lending {kind}")["lending"]


def tap(w, pn532, tag, kind, timeout=10):
    """Places a tag, waits for the lending outcome `kind`, removes the tag and waits for its removal."""
    pn532.ctl("place", tag)
    outcome = lending_event(w, kind, timeout)
    pn532.ctl("remove")
    w.wait_for(lambda e: e["kind"] == "tagRemoved", 10, "tagRemoved")
    return outcome


def nfc_lending_daemon(daemon_factory, pn532, *extra):
    d = daemon_factory("--nfc-enabled", "--nfc-readers", f"front=pn532_uart:{pn532.link}",
                       "--nfc-modulations", "iso14443a", *extra)
    ctl(d, "users", "add", "U-0001", "--name", "Ada Lovelace")
    ctl(d, "badges", "bind", "0A:0B:0C:0D", "--user", "U-0001")
    return d


def test_taps_arm_lend_return_and_refuse(daemon_factory, pn532):
    # Lent and returned by taps in quick succession: no repeat window here.
    d = nfc_lending_daemon(daemon_factory, pn532, "--lending-repeat-window", "0")
    ctl(d, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
    ctl(d, "devices", "add", "D-0002", "--group", "android-phone", "--model", "Pixel 6", "--status", "broken")
    ctl(d, "tags", "bind", TAG_UID, "--device", "D-0001")
    ctl(d, "tags", "bind", "04B1B2B3B4B5B6", "--device", "D-0002")
    w = connected_watcher(d)

    o = tap(w, pn532, spec(ndef=device_message("D-0001")), "badgeRequired")
    assert o["deviceId"] == "D-0001"

    o = tap(w, pn532, BADGE, "armed")
    assert o["userId"] == "U-0001" and o["userName"] == "Ada Lovelace"

    o = tap(w, pn532, spec(ndef=device_message("D-0001")), "lent")
    assert o["deviceId"] == "D-0001" and o["userId"] == "U-0001"
    rentals = ctl_json(d, "rentals")
    assert [(r["deviceId"], r["userId"]) for r in rentals] == [("D-0001", "U-0001")]
    assert "Ada Lovelace" in ctl(d, "rentals").stdout

    o = tap(w, pn532, spec(ndef=device_message("D-0001")), "returned")
    assert o["deviceId"] == "D-0001"
    assert ctl_json(d, "rentals") == []
    assert ctl_json(d, "history", "--device", "D-0001")[0]["returnedAt"]

    o = tap(w, pn532, spec(uid="04B1B2B3B4B5B6", ndef=device_message("D-0002", model="Pixel 6")), "refused")
    assert o["deviceId"] == "D-0002" and o["refusal"] == "deviceBroken" and o["reason"] == "deviceBroken"

    text = b"".join(ndef.message_encoder([ndef.TextRecord("hello", "en")])).hex()
    o = tap(w, pn532, spec(uid="04112233445566", kind="ntag213", ndef=text), "unknownTag")
    assert o["uid"] == "04112233445566"

    ctl(d, "lend", "disarm")
    lending_event(w, "disarmed")
    w.close()


def test_roombridgectl_watch_names_the_refusal(daemon_factory, pn532):
    """roombridgectl watch shows a refused tap with its typed refusal, not only the sentence."""
    d = nfc_lending_daemon(daemon_factory, pn532)
    ctl(d, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
    proc = subprocess.Popen([binary("roombridgectl"), "watch", "--state", "--socket", d.socket_path],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        out = Lines(proc)
        out.wait_for(lambda l: l.startswith("Counters:"), what="the state at the start of watch")
        w = connected_watcher(d)
        tap(w, pn532, spec(uid="04DEADBEEF0001", ndef=device_message("D-0001")), "refused")
        line = out.wait_for(lambda l: " lending " in l, what="roombridgectl watch's lending line")
        assert "lending refused (unregisteredTag): Refused" in line, line
        w.close()
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_device_record_on_an_unregistered_tag_lends_nothing(daemon_factory, pn532):
    """Anyone can write D-0001's record on a blank tag: only the UID bound at registration counts."""
    d = nfc_lending_daemon(daemon_factory, pn532)
    ctl(d, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
    w = connected_watcher(d)
    tap(w, pn532, BADGE, "armed")
    o = tap(w, pn532, spec(uid="04DEADBEEF0001", ndef=device_message("D-0001")), "refused")
    assert o["refusal"] == "unregisteredTag" and o["deviceId"] == "D-0001" and o["uid"] == "04DEADBEEF0001"
    assert "Refused" in o["message"] and "D-0001" in o["message"]
    assert "roombridgectl tags bind 04DEADBEEF0001 --device D-0001" in o["message"]
    assert ctl_json(d, "rentals") == [] and ctl_json(d, "history") == []

    # Registered, the same record on its bound tag lends; the forged tag cannot return it.
    ctl(d, "tags", "bind", TAG_UID, "--device", "D-0001")
    tap(w, pn532, spec(ndef=device_message("D-0001")), "lent")
    o = tap(w, pn532, spec(uid="04DEADBEEF0001", ndef=device_message("D-0001")), "refused")
    assert o["reason"] == "unregisteredTag"
    assert [r["deviceId"] for r in ctl_json(d, "rentals")] == ["D-0001"]
    w.close()


def test_a_double_tap_lends_once(daemon_factory, pn532):
    """Placed, lifted and placed again at once: lent, then "already lent to …", not returned."""
    d = nfc_lending_daemon(daemon_factory, pn532)
    ctl(d, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
    ctl(d, "tags", "bind", TAG_UID, "--device", "D-0001")
    w = connected_watcher(d)
    tap(w, pn532, BADGE, "armed")
    device_tag = spec(ndef=device_message("D-0001"))
    pn532.ctl("place", device_tag)
    assert lending_event(w, "lent")["deviceId"] == "D-0001"
    pn532.ctl("remove")
    w.wait_for(lambda e: e["kind"] == "tagRemoved", 10, "tagRemoved")
    pn532.ctl("place", device_tag)
    o = lending_event(w, "refused")
    assert o["refusal"] == "alreadyLent" and o["deviceId"] == "D-0001"
    assert "already lent to Ada Lovelace" in o["message"]
    pn532.ctl("remove")
    w.wait_for(lambda e: e["kind"] == "tagRemoved", 10, "tagRemoved")
    rentals = ctl_json(d, "rentals")
    assert [(r["deviceId"], r["userId"]) for r in rentals] == [("D-0001", "U-0001")]
    assert len(ctl_json(d, "history")) == 1

    # Returned at the desk, a tap right after is "already returned" and lends nothing.
    ctl(d, "return", "D-0001")
    o = tap(w, pn532, device_tag, "refused")
    assert o["reason"] == "alreadyReturned" and "already returned" in o["message"]
    assert ctl_json(d, "rentals") == [] and len(ctl_json(d, "history")) == 1
    w.close()


def test_arm_session_times_out(daemon_factory, pn532):
    d = nfc_lending_daemon(daemon_factory, pn532, "--lending-arm-seconds", "1")
    w = connected_watcher(d)
    pn532.ctl("place", BADGE)
    armed = lending_event(w, "armed")
    assert armed["userId"] == "U-0001"
    pn532.ctl("remove")
    o = lending_event(w, "disarmed", timeout=10)
    assert o["userId"] == "U-0001" and "timed out" in o["message"]
    state = json.loads(ctl(d, "status", "--json").stdout)
    assert "armed" not in state["lending"]
    w.close()


def test_client_arm_and_lend_by_id_are_published(daemon):
    seed(daemon)
    w = Watcher(daemon.socket_path)
    assert "U-0001" in ctl(daemon, "lend", "arm", "--user", "U-0001").stdout
    assert lending_event(w, "armed")["userId"] == "U-0001"
    ctl(daemon, "lend", "--device", "D-0001", "--user", "U-0001")
    assert lending_event(w, "lent")["deviceId"] == "D-0001"
    ctl(daemon, "return", "D-0001")
    assert lending_event(w, "returned")["deviceId"] == "D-0001"
    w.close()


# --- History export ---------------------------------------------------------------------------------

def test_history_csv_keeps_copies_after_deletes(daemon):
    ctl(daemon, "users", "add", "U-0042", "--name", "Müller, \"Hans\"")
    ctl(daemon, "devices", "add", "D-0042", "--group", "other", "--model", "=Galaxy, Tab S9", "--serial", "R5C")
    ctl(daemon, "lend", "--device", "D-0042", "--user", "U-0042", "--due", "2030-01-01")
    ctl(daemon, "return", "D-0042")
    ctl(daemon, "devices", "rm", "D-0042")
    ctl(daemon, "users", "rm", "U-0042")

    out = ctl(daemon, "history", "--format", "csv").stdout
    rows = list(csv.reader(io.StringIO(out, newline="")))
    assert rows[0][:7] == ["rental_id", "device_id", "model", "os_version", "serial_number", "user_id", "user_name"]
    assert len(rows) == 2
    row = dict(zip(rows[0], rows[1]))
    assert row["device_id"] == "D-0042" and row["serial_number"] == "R5C"
    assert row["model"] == "'=Galaxy, Tab S9"  # formula neutralised, comma quoted
    assert row["user_name"] == "Müller, \"Hans\""
    # --due 2030-01-01: the end of that day in the local zone; the CSV shows UTC.
    end_of_day = datetime.datetime(2030, 1, 1, 23, 59, 59).astimezone(datetime.timezone.utc)
    assert row["due_at"] == end_of_day.strftime("%Y-%m-%d %H:%M:%S") and row["returned_at"]

    table = ctl(daemon, "history", "--since", "2000-01-01", "--until", "2100-01-01").stdout
    assert "D-0042" in table
    assert ctl_json(daemon, "history", "--user", "U-0042")[0]["userName"] == "Müller, \"Hans\""
    assert ctl(daemon, "history", "--since", "2099-01-01").stdout.strip() == "no rentals match"


@pytest.mark.sqlite_only
def test_history_csv_of_more_than_one_page(daemon):
    seed(daemon)
    c = Connection(daemon.socket_path)
    for _ in range(1003):  # the CLI fetches 1000 rentals per call
        assert "error" not in c.call("io.roombridge.Lending.Lend", deviceId="D-0001", userId="U-0001")
        assert "error" not in c.call("io.roombridge.Lending.Return", deviceId="D-0001")
    c.close()
    out = ctl(daemon, "history", "--format", "csv", "--bom").stdout
    assert out.startswith("\ufeffrental_id,") and out.count("rental_id") == 1
    rows = list(csv.reader(io.StringIO(out.lstrip("\ufeff"), newline="")))
    ids = [int(r[0]) for r in rows[1:]]
    assert len(ids) == 1003 and len(set(ids)) == 1003
    assert ids == sorted(ids, reverse=True)


# --- Crash safety -----------------------------------------------------------------------------------

def active_rentals_by_device(db_path):
    con = sqlite3.connect(db_path)
    try:
        return con.execute("SELECT device_id, COUNT(*) FROM rentals WHERE returned_at IS NULL GROUP BY device_id").fetchall()
    finally:
        con.close()


@pytest.mark.sqlite_only
def test_acknowledged_lends_and_returns_survive_kill_9(daemon):
    devices = [f"D-{i:04}" for i in range(1, 6)]
    seed(daemon, devices=devices)
    acked = []  # (operation, device, rental id)
    stop = threading.Event()

    def hammer():
        try:
            c = Connection(daemon.socket_path)
            i = 0
            while not stop.is_set():
                dev = devices[i % len(devices)]
                r = c.call("io.roombridge.Lending.Lend", deviceId=dev, userId="U-0001")
                if "error" not in r:
                    acked.append(("lend", dev, r["parameters"]["rental"]["id"]))
                r = c.call("io.roombridge.Lending.Return", deviceId=dev)
                if "error" not in r:
                    acked.append(("return", dev, r["parameters"]["rental"]["id"]))
                # Every third device stays lent for a round, so lent and available devices mix.
                if i % 3 == 0:
                    r = c.call("io.roombridge.Lending.Lend", deviceId=dev, userId="U-0001")
                    if "error" not in r:
                        acked.append(("lend", dev, r["parameters"]["rental"]["id"]))
                i += 1
        except (EOFError, OSError, json.JSONDecodeError):
            pass

    t = threading.Thread(target=hammer)
    t.start()
    try:
        eventually(lambda: len(acked) >= 60, what="60 acknowledged changes before the kill")
    finally:
        daemon.proc.send_signal(signal.SIGKILL)
        daemon.proc.wait()
        stop.set()
        t.join(10)

    # Restart on the same database.
    daemon.notify.messages.clear()
    daemon.stderr.close()
    daemon.start()
    c = Connection(daemon.socket_path)
    history = c.call("io.roombridge.Lending.History", limit=1000)["parameters"]["rentals"]
    by_id = {r["id"]: r for r in history}
    for op, dev, rid in acked:
        assert rid in by_id, f"acknowledged {op} of {dev} (rental {rid}) is missing"
        assert by_id[rid]["deviceId"] == dev
        if op == "return":
            assert by_id[rid].get("returnedAt"), f"acknowledged return of rental {rid} is missing"
    listed = c.call("io.roombridge.Inventory.ListDevices")["parameters"]["devices"]
    active = {r["deviceId"]: r["id"] for r in history if not r.get("returnedAt")}
    for dev in listed:
        assert ("rental" in dev) == (dev["id"] in active)
        if "rental" in dev:
            assert dev["rental"]["id"] == active[dev["id"]]
    c.close()
    assert daemon.terminate() == 0

    # The file itself, read by SQLite directly after the daemon stopped.
    db = str(daemon.tmp / "roombridge.sqlite")
    assert all(count == 1 for _, count in active_rentals_by_device(db))
    con = sqlite3.connect(db)
    rows = {rid: (dev, returned) for rid, dev, returned in con.execute("SELECT id, device_id, returned_at FROM rentals")}
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    for op, dev, rid in acked:
        assert rows[rid][0] == dev
        if op == "return":
            assert rows[rid][1] is not None
    assert {rid for rid, (_, returned) in rows.items() if returned is None} == set(active.values())


# --- Two daemons, one database ----------------------------------------------------------------------

def race_lends(a, b, devices, round_=0):
    """U-A at daemon `a` and U-B at daemon `b` lend every device at the same moment: each device
    has exactly one winner, and the loser is told AlreadyLent naming the winner."""
    results = {}
    barrier = threading.Barrier(2)

    def race(d, user):
        c = Connection(d.socket_path)
        barrier.wait()
        for dev in devices:
            results[(user, dev)] = c.call("io.roombridge.Lending.Lend", deviceId=dev, userId=user)
        c.close()

    threads = [threading.Thread(target=race, args=(a, "U-A")), threading.Thread(target=race, args=(b, "U-B"))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    for dev in devices:
        pair = results[("U-A", dev)], results[("U-B", dev)]
        winners = [r for r in pair if "error" not in r]
        losers = [r for r in pair if "error" in r]
        assert len(winners) == 1 and len(losers) == 1, (round_, dev, pair)
        assert losers[0]["error"] == "io.roombridge.Lending.AlreadyLent", losers[0]
        assert losers[0]["parameters"]["userId"] == winners[0]["parameters"]["rental"]["userId"]


@pytest.mark.sqlite_only
def test_two_daemons_on_one_database_never_lend_twice(daemon):
    devices = [f"D-{i:04}" for i in range(1, 9)]
    seed(daemon, devices=devices, users=(("U-A", "Alice"), ("U-B", "Bob")))
    db = str(daemon.tmp / "roombridge.sqlite")
    with tempfile.TemporaryDirectory(prefix="rb-test-") as other_dir:
        other = Daemon(pathlib.Path(other_dir))
        other.args[other.args.index("--database-path") + 1] = db
        other.start()
        try:
            for round_ in range(5):
                race_lends(daemon, other, devices, round_)
                assert all(count == 1 for _, count in active_rentals_by_device(db))
                # Each daemon sees the other's rentals.
                c = Connection(other.socket_path)
                assert len(c.call("io.roombridge.Lending.ListActive")["parameters"]["rentals"]) == len(devices)
                for dev in devices:
                    assert "error" not in c.call("io.roombridge.Lending.Return", deviceId=dev)
                c.close()
        finally:
            other.close()
