"""Presence end to end: bluez-sim's iBeacons → bluetoothd's D-Bus (DuplicateData, RSSI) → the daemon's scanner →
io.roombridge.Presence, State.Watch `presence` events and roombridgectl. A short presence.exit_after keeps the
exit tests quick; the simulated beacons advertise every 100 ms without noise unless a test says otherwise."""
import datetime
import subprocess

import pytest

from conftest import Watcher, binary, eventually
from test_curtain import BlueZSim, call, ok

ALICE = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
KIT = "B9407F30-F5F8-466E-AFF9-25556B57FE6D"
STRANGER = "FDA50693-A4E2-4FB1-AFCF-C6EB07647825"
# txPower -59 dBm at 1 m; AltBeacon's curve: -50 dBm ≈ 0.2 m (immediate), -62 ≈ 1.1 m (near), -80 ≈ 4.0 m (far);
# near/far is at 3 m ≈ -76 dBm, and with 15 % hysteresis a near beacon turns far only beyond 3.45 m ≈ -78 dBm.
IMMEDIATE, NEAR, FAR = -50, -62, -80


@pytest.fixture
def sim(tmpdir_path):
    s = BlueZSim(tmpdir_path)
    yield s
    s.close()


def presence_daemon(daemon_factory, tmpdir_path, sim, *extra, regions=None, exit_after=1.5, place="front desk"):
    regions = regions or [f"alice={ALICE} user=u-alice", f"kit={KIT}/7 device=D-0042"]
    listed = ", ".join(f'"{r}"' for r in regions)
    (tmpdir_path / "roombridged.toml").write_text(
        f'[log]\nlevel = "debug"\n[presence]\nregions = [{listed}]\nexit_after = {exit_after}\n'
        f'rssi_window = 1.0\ndefault_place = "{place}"\n')
    return daemon_factory(*extra, env={"DBUS_SYSTEM_BUS_ADDRESS": sim.address})


def add_beacon(sim, uuid, major, minor, rssi, address, interval=100):
    answer = sim.ctl("beacon", "add", uuid, str(major), str(minor), "tx=-59", f"rssi={rssi}", f"interval={interval}",
                     f"address={address}")
    assert f"address={address}" in answer
    return address


def presence(d):
    return ok(call(d, "io.roombridge.Presence.GetPresence"))["parameters"]["presence"]


def region(p, name):
    return next(r for r in p["regions"] if r["name"] == name)


def wait_presence(d, predicate, what, timeout=15.0):
    return eventually(lambda: (p := presence(d)) and predicate(p) and p, timeout=timeout, what=what)


def presence_event(kind, region_name=None, **beacon):
    def match(e):
        if e["kind"] != "presence" or e["presence"]["kind"] != kind:
            return False
        p = e["presence"]
        if region_name and p.get("region") != region_name:
            return False
        return all(p.get("beacon", {}).get(k) == v for k, v in beacon.items())
    return match


def test_walk_in_come_close_move_away_and_leave(daemon_factory, tmpdir_path, sim):
    d = presence_daemon(daemon_factory, tmpdir_path, sim)
    wait_presence(d, lambda p: p["status"] == "scanning", "scanning")
    w = Watcher(d.socket_path)
    add_beacon(sim, ALICE, 1, 2, NEAR, "F0:00:00:00:00:01")
    entered = w.wait_for(presence_event("entered", "alice"), what="alice entered")["presence"]
    assert entered["userId"] == "u-alice" and entered["beacon"]["uuid"] == ALICE
    assert (entered["beacon"]["major"], entered["beacon"]["minor"]) == (1, 2)
    assert entered["beacon"]["proximity"] == "near"
    assert entered["beacon"]["lastSeen"].endswith("Z")  # UTC on the wire

    sim.ctl("beacon", "rssi", "F0:00:00:00:00:01", str(IMMEDIATE))
    w.wait_for(presence_event("proximityChanged", "alice", proximity="immediate"), what="immediate")
    sim.ctl("beacon", "rssi", "F0:00:00:00:00:01", str(FAR))
    changed = w.wait_for(presence_event("proximityChanged", "alice", proximity="far"), what="far")["presence"]
    assert changed["from"] in ("immediate", "near")
    p = wait_presence(d, lambda p: region(p, "alice")["beacons"], "alice listed")
    b = region(p, "alice")["beacons"][0]
    assert b["proximity"] == "far" and b["distance"] > 3 and b["rssi"] < -70

    sim.ctl("beacon", "vanish", "F0:00:00:00:00:01")
    w.wait_for(presence_event("exited", "alice"), what="alice exited after exit_after")
    assert region(presence(d), "alice")["beacons"] == []
    w.close()


def test_people_and_devices_are_shown_by_name(daemon_factory, tmpdir_path, sim):
    """A region configured with user= or device= is shown with the person's name and the device's model, as the
    inventory has them (not the region's name or the ID); a rename shows from the person's next arrival."""
    d = presence_daemon(daemon_factory, tmpdir_path, sim)
    ok(call(d, "io.roombridge.Inventory.AddUser", id="u-alice", name="Aiko Tanaka"))
    ok(call(d, "io.roombridge.Inventory.AddDevice", id="D-0042", fields={"groupId": "android-phone", "model": "Pixel 8"}))
    wait_presence(d, lambda p: p["status"] == "scanning", "scanning")
    w = Watcher(d.socket_path)
    add_beacon(sim, ALICE, 1, 2, NEAR, "F0:00:00:00:00:21")
    add_beacon(sim, KIT, 7, 1, NEAR, "F0:00:00:00:00:22")
    entered = w.wait_for(presence_event("entered", "alice"), what="alice entered")["presence"]
    assert entered["userId"] == "u-alice" and entered["userName"] == "Aiko Tanaka"
    kit = w.wait_for(presence_event("entered", "kit"), what="kit entered")["presence"]
    assert kit["deviceId"] == "D-0042" and kit["deviceModel"] == "Pixel 8"
    p = presence(d)
    assert region(p, "alice")["userName"] == "Aiko Tanaka" and region(p, "kit")["deviceModel"] == "Pixel 8"
    status = subprocess.run([binary("roombridgectl"), "status", "--socket", d.socket_path],
                            capture_output=True, text=True, timeout=30)
    assert "Aiko Tanaka (near)" in status.stdout and "Pixel 8 (near)" in status.stdout, status.stdout
    listing = subprocess.run([binary("roombridgectl"), "presence", "--socket", d.socket_path],
                             capture_output=True, text=True, timeout=30).stdout
    assert "alice user u-alice (Aiko Tanaka)" in listing and "kit device D-0042 (Pixel 8)" in listing, listing

    # Renamed while away: the next arrival greets the new name.
    ok(call(d, "io.roombridge.Inventory.UpdateUser", id="u-alice", name="Aiko Sato"))
    sim.ctl("beacon", "vanish", "F0:00:00:00:00:21")
    w.wait_for(presence_event("exited", "alice"), what="alice left")
    add_beacon(sim, ALICE, 1, 2, NEAR, "F0:00:00:00:00:23")
    again = w.wait_for(presence_event("entered", "alice"), what="alice back")["presence"]
    assert again["userName"] == "Aiko Sato"
    w.close()


def test_hysteresis_keeps_a_beacon_at_the_boundary_in_its_class(daemon_factory, tmpdir_path, sim):
    d = presence_daemon(daemon_factory, tmpdir_path, sim)
    w = Watcher(d.socket_path)
    address = add_beacon(sim, ALICE, 1, 2, NEAR, "F0:00:00:00:00:02")
    w.wait_for(presence_event("entered", "alice"), what="entered")
    sim.ctl("beacon", "noise", address, "2")
    sim.ctl("beacon", "rssi", address, "-75")  # ≈ 2.8 m: the smoothed reading crosses 3 m (-76) now and then
    w.none_within(presence_event("proximityChanged", "alice"), 3.0)  # proximity must not flap at the boundary
    w.close()


def test_two_regions_and_an_unknown_uuid(daemon_factory, tmpdir_path, sim):
    d = presence_daemon(daemon_factory, tmpdir_path, sim)
    wait_presence(d, lambda p: p["status"] == "scanning", "scanning")
    add_beacon(sim, STRANGER, 5, 5, IMMEDIATE, "F0:00:00:00:00:09")
    add_beacon(sim, KIT, 7, 1, NEAR, "F0:00:00:00:00:03")
    add_beacon(sim, KIT, 8, 1, NEAR, "F0:00:00:00:00:04")  # major 8: not the kit region's
    add_beacon(sim, ALICE, 1, 2, NEAR, "F0:00:00:00:00:05")
    p = wait_presence(d, lambda p: region(p, "alice")["beacons"] and region(p, "kit")["beacons"], "both regions")
    kit = region(p, "kit")
    assert kit["deviceId"] == "D-0042" and [(b["major"], b["minor"]) for b in kit["beacons"]] == [(7, 1)]
    assert "heard=" in sim.ctl("beacon", "list")
    text = str(p)
    assert STRANGER not in text and "F0:00:00:00:00:09" not in text
    # Never logged either.
    assert STRANGER not in d.log() and "F0_00_00_00_00_09" not in d.log() and "F0:00:00:00:00:09" not in d.log()
    out = subprocess.run([binary("roombridgectl"), "presence", "--socket", d.socket_path],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "u-alice" in out.stdout and "D-0042" in out.stdout and STRANGER not in out.stdout
    status = subprocess.run([binary("roombridgectl"), "status", "--socket", d.socket_path],
                            capture_output=True, text=True, timeout=30)
    # Nobody by that ID in the inventory: the region's name stands in.
    assert "Presence:" in status.stdout and "alice (near)" in status.stdout, status.stdout


def test_another_apple_frame_from_the_same_device_does_not_make_it_leave(daemon_factory, tmpdir_path, sim):
    d = presence_daemon(daemon_factory, tmpdir_path, sim)
    w = Watcher(d.socket_path)
    address = add_beacon(sim, ALICE, 1, 2, NEAR, "F0:00:00:00:00:06")
    w.wait_for(presence_event("entered", "alice"), what="entered")
    sim.ctl("beacon", "apple-frame", address, "1005031c0b6e0f")  # a phone's other Apple frame under 0x004C
    w.none_within(presence_event("exited", "alice"), 3.0)
    w.close()


def test_bluetooth_off_reports_the_default_place_and_why(daemon_factory, tmpdir_path, sim):
    d = presence_daemon(daemon_factory, tmpdir_path, sim)
    wait_presence(d, lambda p: p["status"] == "scanning", "scanning")
    sim.ctl("power", "off")
    p = wait_presence(d, lambda p: p["status"] == "unavailable", "unavailable")
    assert p["defaultPlace"] == "front desk" and "powered off" in p["reason"]
    out = subprocess.run([binary("roombridgectl"), "presence", "--socket", d.socket_path],
                         capture_output=True, text=True, timeout=30)
    assert "assuming front desk" in out.stdout and "not scanning" in out.stdout
    sim.ctl("power", "on")
    p = wait_presence(d, lambda p: p["status"] == "scanning", "scanning again")
    assert p.get("defaultPlace") is None


def test_bluetoothd_restart_resumes_scanning(daemon_factory, tmpdir_path, sim):
    d = presence_daemon(daemon_factory, tmpdir_path, sim, exit_after=5)
    w = Watcher(d.socket_path)
    wait_presence(d, lambda p: p["status"] == "scanning", "scanning")
    sim.ctl("restart-bluetoothd", "300")
    w.wait_for(lambda e: e["kind"] == "presence" and e["presence"]["kind"] == "status"
               and e["presence"]["status"] == "unavailable", what="bluetoothd gone")
    wait_presence(d, lambda p: p["status"] == "scanning", "scanning after the restart")
    add_beacon(sim, ALICE, 1, 2, NEAR, "F0:00:00:00:00:07")
    w.wait_for(presence_event("entered", "alice"), what="a beacon heard after the restart")
    w.close()


def test_no_regions_means_presence_off(daemon, sim):
    p = presence(daemon)
    assert p["status"] == "disabled" and p["regions"] == []


def test_curtain_stays_connected_and_responsive_while_scanning(daemon_factory, tmpdir_path, sim):
    d = presence_daemon(daemon_factory, tmpdir_path, sim, "--curtain-enabled")
    eventually(lambda: ok(call(d, "io.roombridge.Curtain.GetState"))["parameters"]["curtain"]["connection"]
               == "connected", what="curtain connected")
    wait_presence(d, lambda p: p["status"] == "scanning", "scanning")
    for i in range(10):
        add_beacon(sim, ALICE, 1, i, NEAR, f"F0:00:00:00:01:{i:02X}")
    wait_presence(d, lambda p: len(region(p, "alice")["beacons"]) == 10, "ten beacons present")
    w = Watcher(d.socket_path)
    ok(call(d, "io.roombridge.Curtain.Open"))
    w.wait_for(lambda e: e["kind"] == "curtain" and e["curtain"].get("position") == 100, timeout=20,
               what="curtain open while scanning")
    w.none_within(lambda e: e["kind"] == "curtain" and e["curtain"]["connection"] != "connected", 1.0)
    assert "connected=true" in sim.status()
    w.close()


def test_presence_interface_through_python_varlink(daemon_factory, tmpdir_path, sim):
    """An independent client parses io.roombridge.Presence's IDL and calls it; State's IDL (with presence) too."""
    import varlink
    d = presence_daemon(daemon_factory, tmpdir_path, sim)
    with varlink.Client(address=f"unix:{d.socket_path}") as c:
        assert c.get_interface("io.roombridge.State").name == "io.roombridge.State"
        with c.open("io.roombridge.Presence") as presence_iface:
            reply = presence_iface.GetPresence()
    assert {r["name"] for r in reply["presence"]["regions"]} == {"alice", "kit"}


@pytest.mark.parametrize("adverts", ["on", "off"], ids=["keeps-advertising", "stops-advertising"])
def test_presence_keeps_seeing_beacons_while_a_switchbot_connects_and_lets_go(daemon_factory, tmpdir_path, adverts):
    """Presence scanning and an on-demand curtain share the adapter: each has its own discovery session and filter,
    so the curtain connecting for a command, and searching again after it lets go, never stops the beacons from
    being heard (issue 27 §3)."""
    from test_curtain import wait_state
    sim = BlueZSim(tmpdir_path, "--profile", "switchbot", "--speed", "20", "--advertise-while-connected", adverts)
    try:
        d = presence_daemon(daemon_factory, tmpdir_path, sim, "--curtain-enabled", "--curtain-profile", "switchbot",
                            "--curtain-hold", "1", exit_after=1.5)
        wait_state(d, lambda c: c["connection"] == "standby" and c.get("position") is not None, timeout=20,
                   what="the curtain released after its first state")
        w = Watcher(d.socket_path)
        add_beacon(sim, ALICE, 1, 2, NEAR, "F0:00:00:00:00:31")
        w.wait_for(presence_event("entered", "alice"), what="alice entered")

        # Two commands: each connects, moves the curtain, and lets go; alice stays in all along.
        for position in (30, 70):
            ok(call(d, "io.roombridge.Curtain.MoveTo", position=position))
            wait_state(d, lambda c: c["motion"] == "idle" and c.get("position") == position
                       and c["connection"] == "standby", timeout=20, what=f"moved to {position} and released")
        assert region(presence(d), "alice")["beacons"], "alice was lost while the curtain was connected"

        # The scanner still works: she leaves, and that is heard; her first exit is this one, not one during the
        # commands (the events since she entered are all still queued on the Watch connection).
        vanished = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(milliseconds=100)
        sim.ctl("beacon", "vanish", "F0:00:00:00:00:31")
        seen = w.events_until(presence_event("exited", "alice"), timeout=30, what="alice exited")
        exited = datetime.datetime.fromisoformat(seen[-1]["at"].replace("Z", "+00:00"))
        assert exited >= vanished, f"alice left during the commands, at {seen[-1]['at']}"
        assert not [e for e in seen if presence_event("entered", "alice")(e)]
        w.close()
    finally:
        sim.close()
