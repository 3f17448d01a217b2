"""The daemon drives the commercial curtain profiles (curtain.profile = switchbot / am43) against bluez-sim's device
models: connect, state adopted, open/move/stop, manual refusal, link drop, bluetoothd restart."""
import re

import pytest

from conftest import Watcher
from test_curtain import BlueZSim, ctl, curtain, curtain_event, ok, wait_state

# The SwitchBot runs twice: a curtain that keeps advertising while connected, and one that stops (issue 27).
VARIANTS = [("switchbot", "on"), ("switchbot", "off"), ("am43", "on")]
VARIANT_IDS = ["switchbot-keeps-advertising", "switchbot-stops-advertising", "am43"]
# What each simulated device reports on connecting (bluez-sim defaults: SwitchBot basic info, AM43 A2 reply).
BATTERY = {"switchbot": 87, "am43": 76}


@pytest.fixture(params=VARIANTS, ids=VARIANT_IDS)
def variant(request):
    return request.param


@pytest.fixture
def profile(variant):
    return variant[0]


@pytest.fixture
def psim(tmpdir_path, variant):
    profile, adverts = variant
    s = BlueZSim(tmpdir_path, "--profile", profile, "--advertise-while-connected", adverts)
    yield s
    s.close()


@pytest.fixture
def pconnected(daemon_factory, psim, profile):
    d = daemon_factory("--curtain-enabled", "--curtain-profile", profile,
                       env={"DBUS_SYSTEM_BUS_ADDRESS": psim.address})
    wait_state(d, lambda c: c["connection"] == "connected" and c.get("position") is not None, timeout=20)
    return d


def test_connects_and_adopts_position_and_battery(pconnected, profile):
    c = wait_state(pconnected, lambda c: c.get("battery") is not None)
    assert c["profile"] == profile
    assert c["scheduleSource"] == "daemon"
    assert c["position"] == 0 and c["motion"] == "idle"
    assert c["battery"] == BATTERY[profile]


def test_cli_status_shows_profile_levels_and_schedule_keeper(pconnected, profile):
    wait_state(pconnected, lambda c: c.get("battery") is not None)
    ok(curtain(pconnected, "SetSchedule", open="07:00", close="21:30", openEnabled=True, closeEnabled=True))
    wait_state(pconnected, lambda c: c.get("openSchedule") == {"time": "07:00", "enabled": True})
    out = ctl(pconnected, "status")
    assert out.returncode == 0, out.stderr
    assert f"{profile}  battery {BATTERY[profile]}%" in out.stdout, out.stdout
    assert "(kept by the daemon)" in out.stdout, out.stdout


def test_open_move_stop(pconnected, psim):
    ok(curtain(pconnected, "Open"))
    wait_state(pconnected, lambda c: c["motion"] == "idle" and c["position"] == 100, timeout=15,
               what="open to 100")
    assert "idle at 100%" in psim.status()
    ok(curtain(pconnected, "MoveTo", position=40))
    wait_state(pconnected, lambda c: c["motion"] == "idle" and c["position"] == 40, timeout=15, what="move to 40")
    ok(curtain(pconnected, "Close"))
    wait_state(pconnected, lambda c: c["motion"] == "closing" and c["position"] <= 30, what="closing")
    ok(curtain(pconnected, "Stop"))
    psim.wait_status(r"status=idle")
    c = wait_state(pconnected, lambda c: c["motion"] == "idle", what="stopped")
    assert 0 < c["position"] <= 30


def test_manual_motion_refuses_remote_motions(pconnected, psim):
    w = Watcher(pconnected.socket_path)
    psim.ctl("press", "open")  # SwitchBot touch-and-go / AM43 remote: a motion the daemon did not command
    w.wait_for(curtain_event(lambda c: c["manual"] and c["motion"] == "opening"), timeout=10)
    for method, params in [("Open", {}), ("Close", {}), ("Stop", {}), ("MoveTo", {"position": 10})]:
        r = curtain(pconnected, method, **params)
        assert r.get("error") == "io.roombridge.Curtain.ManualOperationActive", (method, r)
    # (The SwitchBot's status polls count as writes: the motion itself shows that no command reached the curtain.)
    assert re.search(r"status=opening at \d+% → 100%", psim.status()), psim.status()
    w.wait_for(curtain_event(lambda c: c["motion"] == "idle"), timeout=15)
    w.close()


def test_uncalibrated_switchbot_says_to_calibrate(tmpdir_path, daemon_factory):
    s = BlueZSim(tmpdir_path, "--profile", "switchbot", "--uncalibrated")
    try:
        d = daemon_factory("--curtain-enabled", "--curtain-profile", "switchbot",
                           env={"DBUS_SYSTEM_BUS_ADDRESS": s.address})
        wait_state(d, lambda c: c["connection"] == "connected", timeout=20)
        ok(curtain(d, "Open"))  # written; the curtain answers 02
        c = wait_state(d, lambda c: "needs calibration" in (c.get("lastError") or ""), what="calibration advice")
        assert "calibrate it in the SwitchBot app once" in c["lastError"]
        assert c["motion"] == "idle"
    finally:
        s.close()


def test_link_drop_and_bluetoothd_restart_reconnect(pconnected, psim, profile):
    # The SwitchBot is on demand: after a loss it waits in standby (advertisements heard) for the next command.
    ready = "standby" if profile == "switchbot" else "connected"
    psim.ctl("drop-link")
    wait_state(pconnected, lambda c: c["connection"] not in ("connected", "standby"), what="link loss seen")
    wait_state(pconnected, lambda c: c["connection"] == ready, timeout=20, what="reconnected")
    psim.ctl("restart-bluetoothd", "300")
    wait_state(pconnected, lambda c: c["connection"] not in ("connected", "standby"), what="restart seen")
    wait_state(pconnected, lambda c: c["connection"] == ready, timeout=30, what="reconnected after restart")
    ok(curtain(pconnected, "MoveTo", position=20))
    wait_state(pconnected, lambda c: c["motion"] == "idle" and c["position"] == 20, timeout=15)


@pytest.mark.parametrize("variant", [("switchbot", "on"), ("switchbot", "off")], ids=["keeps", "stops"])
def test_simulator_times_the_advertisements_that_carry_motion(pconnected, psim, variant):
    """`bluez-sim ctl timing` (roombridge-bench's clock) lists each advertisement bluetoothd signalled, with the
    position it carries. A SwitchBot that keeps advertising while connected tells the daemon its motion that way; one
    that stops sends none while the daemon holds the link, and the daemon hears the move from its status polls."""
    psim.ctl("timing")  # forget what came before
    ok(curtain(pconnected, "MoveTo", position=40))
    wait_state(pconnected, lambda c: c["motion"] == "idle" and c["position"] == 40, timeout=15, what="move to 40")
    assert " connected=true " in psim.status(), "released within the hold"
    adverts = re.search(r"adverts=(\S*)", psim.ctl("timing"))
    assert adverts, "bluez-sim's timing line has no adverts"
    positions = [int(entry.split(":")[1], 16) for entry in adverts.group(1).split(",") if entry]
    if variant[1] == "off":
        assert positions == [], positions
        return
    assert positions and positions[-1] == 40, positions
    assert all(0 <= p <= 40 for p in positions), positions


def test_the_daemon_kept_schedule_survives_a_restart(daemon_factory, psim, profile):
    """These curtains keep no schedule: the daemon keeps it in its database, so a restart does not lose it."""
    first = daemon_factory("--curtain-enabled", "--curtain-profile", profile,
                           env={"DBUS_SYSTEM_BUS_ADDRESS": psim.address})
    wait_state(first, lambda c: c["connection"] == "connected", timeout=20)
    ok(curtain(first, "SetSchedule", open="06:45", close="22:10", openEnabled=True, closeEnabled=False))
    wait_state(first, lambda c: c.get("openSchedule") == {"time": "06:45", "enabled": True})
    assert first.terminate(timeout=10) == 0  # a "does not hang" bound
    first.close()
    second = daemon_factory("--curtain-enabled", "--curtain-profile", profile, notify=False,
                            env={"DBUS_SYSTEM_BUS_ADDRESS": psim.address})
    c = wait_state(second, lambda c: c.get("openSchedule") is not None, timeout=20, what="the kept schedule")
    assert c["openSchedule"] == {"time": "06:45", "enabled": True}
    assert c["closeSchedule"] == {"time": "22:10", "enabled": False}
    assert c["scheduleSource"] == "daemon"
