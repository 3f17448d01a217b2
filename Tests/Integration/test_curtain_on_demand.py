"""SwitchBot curtains on demand (issue 27): roombridged connects for a command, keeps the link for curtain.hold
after the last one, then releases it and hears the curtain through its advertisements. Every test runs against a
simulated SwitchBot that keeps advertising while connected and one that stops."""
import re
import time

import pytest

from conftest import Watcher, eventually
from test_curtain import BlueZSim, curtain, curtain_event, ok, wait_state

HOLD = 2.0
# bluez-sim plays bluetoothd's DISCONNECT_TIMER (device.c, 2 s) between Device1.Disconnect and the link going down.
DISCONNECT_TIMER = 2.0


@pytest.fixture(params=["on", "off"], ids=["keeps-advertising", "stops-advertising"])
def adverts(request):
    return request.param


def switchbot_sim(tmpdir_path, adverts, speed):
    return BlueZSim(tmpdir_path, "--profile", "switchbot", "--speed", str(speed), "--advertise-while-connected", adverts)


@pytest.fixture
def sbsim(tmpdir_path, adverts):
    # 10 %/s: a pull from 30 % takes 7 s, long enough to send commands during it.
    s = switchbot_sim(tmpdir_path, adverts, 10)
    yield s
    s.close()


def launch(daemon_factory, sim, hold=HOLD):
    return daemon_factory("--curtain-enabled", "--curtain-profile", "switchbot", "--curtain-hold", str(hold),
                          env={"DBUS_SYSTEM_BUS_ADDRESS": sim.address})


def start(daemon_factory, sim, hold=HOLD):
    d = launch(daemon_factory, sim, hold)
    wait_state(d, lambda c: c.get("position") is not None and c["connection"] in ("connected", "standby"), timeout=20)
    return d


def linked(sim) -> bool:
    return " connected=true " in sim.status()


def test_released_after_the_hold_a_pull_is_manual_and_a_command_reconnects(daemon_factory, sbsim, adverts):
    assert f"keeps-advertising={'true' if adverts == 'on' else 'false'}" in sbsim.status()
    d = start(daemon_factory, sbsim)
    ok(curtain(d, "MoveTo", position=30))
    commanded = time.monotonic()
    assert linked(sbsim)
    wait_state(d, lambda c: c["motion"] == "idle" and c["position"] == 30, timeout=15, what="moved to 30")

    # The link is released once the hold has passed since the last command.
    eventually(lambda: not linked(sbsim), timeout=HOLD + DISCONNECT_TIMER + 5, what="the link released")
    released = time.monotonic() - commanded
    assert released <= HOLD + DISCONNECT_TIMER + 1.0, released
    wait_state(d, lambda c: c["connection"] == "standby", what="standby")

    # A pull after the release is heard (advertisements) and refuses remote commands.
    w = Watcher(d.socket_path)
    sbsim.ctl("press", "open")
    w.wait_for(curtain_event(lambda c: c["manual"] and c["motion"] == "opening"), timeout=10, what="the pull")
    r = curtain(d, "Close")
    assert r.get("error") == "io.roombridge.Curtain.ManualOperationActive", r
    assert not linked(sbsim), "a refused command connected"
    assert re.search(r"status=opening at \d+% → 100%", sbsim.status()), sbsim.status()
    w.wait_for(curtain_event(lambda c: c["motion"] == "idle" and c["position"] == 100), timeout=15,
               what="the pull ending")
    w.close()

    # A command after the release connects and moves the curtain.
    ok(curtain(d, "MoveTo", position=60))
    assert linked(sbsim)
    sbsim.wait_status(r"→ 60%")
    wait_state(d, lambda c: c["motion"] == "idle" and c["position"] == 60 and not c["manual"], timeout=15,
               what="moved to 60")


def test_a_pull_during_the_hold_is_heard_and_refuses_commands(daemon_factory, sbsim):
    """While the daemon holds the link it polls the curtain's basic info, so a pull is heard even from a curtain
    that does not advertise while connected."""
    d = start(daemon_factory, sbsim, hold=60)
    assert linked(sbsim)
    w = Watcher(d.socket_path)
    sbsim.ctl("press", "open")
    w.wait_for(curtain_event(lambda c: c["manual"] and c["motion"] == "opening"), timeout=10, what="the pull")
    assert linked(sbsim)
    for method, params in [("Open", {}), ("Close", {}), ("Stop", {}), ("MoveTo", {"position": 10})]:
        r = curtain(d, method, **params)
        assert r.get("error") == "io.roombridge.Curtain.ManualOperationActive", (method, r)
    assert re.search(r"status=opening at \d+% → 100%", sbsim.status()), sbsim.status()
    w.close()


@pytest.fixture
def slow_sbsim(tmpdir_path, adverts):
    # 5 %/s: a pull from 0 % takes 20 s, longer than a loaded machine takes to start the daemon.
    s = switchbot_sim(tmpdir_path, adverts, 5)
    yield s
    s.close()


def test_a_pull_under_way_before_the_daemon_starts_is_manual_from_the_first_report(daemon_factory, slow_sbsim):
    """The daemon's first news of the curtain is a hand pull already moving it: it never sent a command, so the
    motion is manual from that first report, and a remote command is refused."""
    sbsim = slow_sbsim
    sbsim.ctl("press", "open")
    assert re.search(r"status=opening", sbsim.status()), sbsim.status()
    d = launch(daemon_factory, sbsim)
    first = wait_state(d, lambda c: c.get("position") is not None, timeout=20, what="the first report")
    assert first["manual"] and first["motion"] == "opening", first
    r = curtain(d, "Close")
    assert r.get("error") == "io.roombridge.Curtain.ManualOperationActive", r
    assert re.search(r"status=opening at \d+% → 100%", sbsim.status()), sbsim.status()
    # When the pull ends the curtain takes commands again; `manual` still says who moved it last, until a
    # command moves the motor.
    wait_state(d, lambda c: c["motion"] == "idle" and c["position"] == 100, timeout=30, what="the pull ending")
    ok(curtain(d, "MoveTo", position=40))
    sbsim.wait_status(r"→ 40%")
    wait_state(d, lambda c: c["motion"] == "idle" and c["position"] == 40 and not c["manual"], timeout=30,
               what="moved to 40")


def test_own_move_outlasting_the_hold_is_never_manual(daemon_factory, sbsim):
    """A full open takes 10 s at 10 %/s: the link is released in the middle of it, and the rest of the move is heard
    from advertisements as the daemon's own."""
    d = start(daemon_factory, sbsim)
    w = Watcher(d.socket_path)
    ok(curtain(d, "Open"))
    seen = w.events_until(curtain_event(lambda c: c["motion"] == "idle" and c["position"] == 100), timeout=20,
                          what="opened")
    states = [e["curtain"] for e in seen if e["kind"] == "curtain"]
    assert any(c["connection"] == "standby" and c["motion"] == "opening" for c in states), \
        "the link was not released during the move"
    assert not any(c["manual"] for c in states), states
    w.close()


def move_write_after(sim, since):
    """Seconds from `since` (time.monotonic(), CLOCK_MONOTONIC as bluez-sim's timing) to the first move request
    (`57 0f 45 …`) the simulated curtain received."""
    writes = re.search(r"writes=(\S*)", sim.ctl("timing")).group(1)
    times = [float(t) for t, data in (w.split(":") for w in writes.split(",") if w) if data.startswith("570f45")]
    assert times, writes
    return times[0] - since


def test_command_to_motor_connected_and_released(daemon_factory, sbsim):
    """Command → move request at the curtain, with the link held and after its release (the reconnect included)."""
    d = start(daemon_factory, sbsim)
    wait_state(d, lambda c: c["connection"] == "standby", timeout=HOLD + DISCONNECT_TIMER + 5, what="standby")
    sbsim.ctl("timing")
    t = time.monotonic()
    ok(curtain(d, "MoveTo", position=20))
    released = move_write_after(sbsim, t)  # (also forgets the timings so far)
    assert linked(sbsim)  # within the hold of that command
    t = time.monotonic()
    ok(curtain(d, "MoveTo", position=10))
    connected = move_write_after(sbsim, t)
    wait_state(d, lambda c: c["motion"] == "idle" and c["position"] == 10 and not c["manual"], timeout=15,
               what="moved to 10")
    print(f"\ncommand → move request: link held {connected * 1000:.1f} ms, released {released * 1000:.1f} ms")
    assert 0 < connected < released
