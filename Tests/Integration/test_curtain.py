"""The curtain end to end: the real roombridged against bluez-sim (a BlueZ stand-in on its own
private dbus-daemon; never the machine's system bus), driven through io.roombridge.Curtain,
followed through io.roombridge.State.Watch, and through roombridgectl."""
import getpass
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import Watcher, binary, eventually, raw_call, stop

DEVICE = "C4:7C:8D:6A:3E:21"


class BlueZSim:
    """bluez-sim run: its own dbus-daemon, one adapter, one curtain; controlled through its socket."""

    def __init__(self, tmp, *args, bus_address=None):
        self.control = str(tmp / "bluez-sim.sock")
        cmd = [binary("bluez-sim"), "run", "--control", self.control, "--time", "12:00",
               "--speed", "40", "--time-scale", "1", *args]
        if bus_address:
            cmd += ["--bus-address", bus_address]
        self.log_path = tmp / "bluez-sim.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log)
        self.address = None
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline().decode()
            if not line:
                break
            if line.startswith("DBUS_SYSTEM_BUS_ADDRESS="):
                self.address = line.split("=", 1)[1].strip()
            if line.startswith("control socket:"):
                break
        assert self.address, f"bluez-sim did not start: {self.log_path.read_text()}"
        assert "/run/dbus/system_bus_socket" not in self.address

    def ctl(self, *command) -> str:
        out = subprocess.run([binary("bluez-sim"), "ctl", "--control", self.control, *command],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0 and out.stdout.startswith("ok"), out.stdout + out.stderr
        return out.stdout.strip()

    def status(self) -> str:
        return self.ctl("status")

    def writes(self) -> int:
        return int(re.search(r"writes=(\d+)", self.status()).group(1))

    def wait_status(self, pattern, timeout=10.0) -> str:
        return eventually(lambda: (s := self.status()) and re.search(pattern, s) and s, timeout=timeout,
                          what=f"simulator status matching {pattern!r}")

    def close(self):
        stop(self.proc)
        self.proc.stdout.close()
        self.log.close()


@pytest.fixture
def sim(tmpdir_path):
    s = BlueZSim(tmpdir_path)
    yield s
    s.close()


@pytest.fixture(params=["start-notify", "acquire-notify"])
def notify_method(request):
    """How the daemon subscribes (curtain.notify): every daemon test runs both ways."""
    return request.param


def start_daemon(daemon_factory, sim, notify_method, *extra, notify=True):
    return daemon_factory("--curtain-enabled", "--curtain-notify", notify_method, *extra,
                          env={"DBUS_SYSTEM_BUS_ADDRESS": sim.address}, notify=notify)


def call(d, method, **params):
    """One call; returns the reply (parameters or error) as sent by the daemon."""
    return raw_call(d.socket_path, {"method": method, "parameters": params})[0]


def curtain(d, method, **params):
    return call(d, "io.roombridge.Curtain." + method, **params)


def state(d):
    return curtain(d, "GetState")["parameters"]["curtain"]


def ok(reply):
    assert "error" not in reply, reply
    return reply


def wait_state(d, predicate, timeout=10.0, what="curtain state"):
    return eventually(lambda: (c := state(d)) and predicate(c) and c, timeout=timeout, what=what)


def curtain_event(pred):
    return lambda e: e["kind"] == "curtain" and pred(e["curtain"])


@pytest.fixture
def connected(daemon_factory, sim, notify_method):
    d = start_daemon(daemon_factory, sim, notify_method)
    wait_state(d, lambda c: c["connection"] == "connected" and c.get("position") is not None)
    return d


# --- Connection and schedule adoption ----------------------------------------------------------

def test_connects_and_adopts_the_devices_schedule(daemon_factory, sim, notify_method):
    sim.ctl("schedule", "07:30", "21:15/off")
    d = start_daemon(daemon_factory, sim, notify_method)
    c = wait_state(d, lambda c: c["connection"] == "connected" and c.get("openSchedule") is not None)
    assert c["address"] == DEVICE
    assert c["openSchedule"] == {"time": "07:30", "enabled": True}
    assert c["closeSchedule"] == {"time": "21:15", "enabled": False}
    assert c["position"] == 0 and c["motion"] == "idle"
    assert "lastError" not in c or c["lastError"] is None

    # Changed on the device afterwards (its own buttons/app): the daemon adopts it.
    w = Watcher(d.socket_path)
    sim.ctl("schedule", "off", "22:05")
    e = w.wait_for(curtain_event(lambda c: c.get("closeSchedule") == {"time": "22:05", "enabled": True}))
    assert e["curtain"]["openSchedule"]["enabled"] is False
    w.close()


def test_searching_for_an_absent_curtain_shows_no_false_error(daemon_factory, sim, notify_method):
    sim.ctl("vanish")
    d = start_daemon(daemon_factory, sim, notify_method)
    sim.wait_status(r"discovering=true")  # the daemon is looking, and finds nothing
    c = wait_state(d, lambda c: c["connection"] == "searching")
    assert c.get("lastError") is None, c  # bluetoothd runs: no "not running" error while looking
    sim.ctl("power", "off")
    wait_state(d, lambda c: "powered off" in (c.get("lastError") or ""))
    sim.ctl("power", "on")
    c = wait_state(d, lambda c: c["connection"] == "searching" and c.get("lastError") is None)
    sim.ctl("reappear")
    wait_state(d, lambda c: c["connection"] == "connected", timeout=10)


def test_curtain_interface_is_listed_and_parses(connected):
    import varlink
    with varlink.Client(address=f"unix:{connected.socket_path}") as c:
        iface = c.get_interface("io.roombridge.Curtain")
        assert {"GetState", "Open", "Close", "Stop", "MoveTo", "SetSchedule", "Sync", "Reconnect"} <= set(iface.members)
        with c.open("io.roombridge.Curtain") as cur:
            assert cur.GetState()["curtain"]["connection"] == "connected"


# --- Motions ----------------------------------------------------------------------------------

def test_open_rises_to_100_in_watch(connected, sim):
    w = Watcher(connected.socket_path)
    ok(curtain(connected, "Open"))
    positions = []
    e = w.wait_for(curtain_event(lambda c: positions.append(c["position"]) or
                                 (c["motion"] == "idle" and c["position"] == 100)), timeout=15)
    assert e["curtain"]["lastRequest"]["kind"] == "open"
    moving = [p for p in positions if p not in (0, 100)]
    assert moving, f"no intermediate positions: {positions}"
    assert moving == sorted(moving)
    assert "idle at 100%" in sim.status()
    w.close()


def test_stop_midway(connected, sim):
    w = Watcher(connected.socket_path)
    ok(curtain(connected, "Open"))
    w.wait_for(curtain_event(lambda c: c["motion"] == "opening" and c["position"] >= 20), timeout=10)
    ok(curtain(connected, "Stop"))
    e = w.wait_for(curtain_event(lambda c: c["motion"] == "idle"), timeout=10)
    stopped = e["curtain"]["position"]
    assert 20 <= stopped < 100
    assert e["curtain"]["lastRequest"]["kind"] == "stop"
    # Ask the device for its STATUS: everything up to its answer says the curtain stayed where it stopped.
    ok(curtain(connected, "Sync"))
    positions = []
    w.wait_for(curtain_event(lambda c: positions.append(c["position"]) or c["lastRequest"]["kind"] == "sync"))
    assert set(positions) == {stopped}, positions
    assert f"idle at {stopped}%" in sim.status()
    w.close()


def test_move_to_40(connected, sim):
    ok(curtain(connected, "MoveTo", position=40))
    c = wait_state(connected, lambda c: c["motion"] == "idle" and c["position"] == 40, timeout=10)
    assert c["lastRequest"]["kind"] == "moveTo" and c["lastRequest"]["position"] == 40
    assert "idle at 40%" in sim.status()
    counters = call(connected, "io.roombridge.State.GetState")["parameters"]["state"]["counters"]
    assert counters["curtainRequests"] >= 1


def test_watchers_see_each_request_before_what_the_curtain_does_after_it(connected, sim):
    """The request's event comes once the curtain answered the write, never after the motion it started (the
    motion's first event carries the request), and a command that changes nothing is shown as well."""
    ok(curtain(connected, "MoveTo", position=40))
    wait_state(connected, lambda c: c["motion"] == "idle" and c["position"] == 40, timeout=10)
    w = Watcher(connected.socket_path)
    ok(curtain(connected, "MoveTo", position=60))
    first = w.wait_for(curtain_event(lambda c: c["motion"] != "idle" or (c.get("lastRequest") or {}).get("position") == 60),
                       timeout=5, what="the move's request or its motion")["curtain"]
    assert first["lastRequest"]["kind"] == "moveTo" and first["lastRequest"]["position"] == 60, first
    w.wait_for(curtain_event(lambda c: c["motion"] == "idle" and c["position"] == 60), timeout=10)
    before = state(connected)["lastRequest"]["at"]
    ok(curtain(connected, "MoveTo", position=60))  # where it is: nothing moves
    again = w.wait_for(curtain_event(lambda c: c["lastRequest"]["at"] != before), timeout=5,
                       what="the request of the move that changed nothing")["curtain"]
    assert again["lastRequest"]["position"] == 60 and again["motion"] == "idle" and again["position"] == 60, again


# --- Manual priority ----------------------------------------------------------------------------

def test_wall_switch_refuses_remote_motions_but_not_schedules(connected, sim):
    w = Watcher(connected.socket_path)
    sim.ctl("press", "open")
    w.wait_for(curtain_event(lambda c: c["manual"] and c["motion"] == "opening"), timeout=10)
    before = sim.writes()
    for method, params in [("Open", {}), ("Close", {}), ("Stop", {}), ("MoveTo", {"position": 10})]:
        r = curtain(connected, method, **params)
        assert r.get("error") == "io.roombridge.Curtain.ManualOperationActive", (method, r)
        assert "wall switch" in r["parameters"]["message"]
    assert sim.writes() == before, "a refused command reached the controller"
    # Watchers learn who asked and that the curtain refused it, and why.
    refused = w.wait_for(curtain_event(lambda c: (c.get("lastRequest") or {}).get("kind") == "moveTo"
                                       and c["lastRequest"].get("refused")), timeout=5)["curtain"]["lastRequest"]
    assert "wall switch" in refused["refused"] and refused["by"].startswith("unix:"), refused
    assert refused["by"] == "unix:" + getpass.getuser()
    shown = subprocess.run([binary("roombridgectl"), "curtain", "status", "--socket", connected.socket_path],
                           capture_output=True, text=True, timeout=30).stdout
    assert "last request move to 10%" in shown and "by unix:" in shown and "refused: " in shown, shown

    # The schedule may still be read and written.
    ok(curtain(connected, "SetSchedule", open="06:40", close="20:10", openEnabled=True, closeEnabled=False))
    w.wait_for(curtain_event(lambda c: c.get("openSchedule") == {"time": "06:40", "enabled": True}), timeout=5)
    assert "open 06:40" in sim.status()

    # Once the switch's motion has ended, remote commands are accepted again.
    w.wait_for(curtain_event(lambda c: c["motion"] == "idle"), timeout=15)
    ok(curtain(connected, "MoveTo", position=30))
    wait_state(connected, lambda c: c["motion"] == "idle" and c["position"] == 30 and not c["manual"], timeout=10)
    w.close()


def test_set_schedule_then_device_change_is_adopted(connected, sim):
    ok(curtain(connected, "SetSchedule", open="07:05", close="21:45", openEnabled=True, closeEnabled=True))
    wait_state(connected, lambda c: c.get("openSchedule") == {"time": "07:05", "enabled": True}
               and c.get("closeSchedule") == {"time": "21:45", "enabled": True})
    assert "schedule=open 07:05, close 21:45" in sim.status()
    assert state(connected)["lastRequest"]["kind"] == "setSchedule"
    sim.ctl("schedule", "08:00/off", "off")  # cleared/changed on the device: the device wins
    c = wait_state(connected, lambda c: c.get("openSchedule") == {"time": "08:00", "enabled": False})
    assert c["closeSchedule"]["enabled"] is False


# --- Refusals before anything is written ---------------------------------------------------------

@pytest.mark.parametrize("method,params,parameter", [
    ("MoveTo", {"position": 101}, "position"),
    ("MoveTo", {"position": -1}, "position"),
    ("SetSchedule", {"open": "24:00", "close": "21:00", "openEnabled": True, "closeEnabled": True}, "open"),
    ("SetSchedule", {"open": "07:00", "close": "21:60", "openEnabled": True, "closeEnabled": True}, "close"),
    ("SetSchedule", {"open": "7h", "close": "21:00", "openEnabled": True, "closeEnabled": True}, "open"),
])
def test_bad_parameters_are_refused_before_writing(connected, sim, method, params, parameter):
    before = sim.writes()
    r = curtain(connected, method, **params)
    assert r.get("error") == "io.roombridge.Curtain.InvalidParameter", r
    assert r["parameters"]["parameter"] == parameter
    assert r["parameters"]["message"]
    assert sim.writes() == before
    assert "idle at 0%" in sim.status()


@pytest.mark.parametrize("method,params,parameter", [
    ("MoveTo", {}, "position"),
    ("SetSchedule", {"open": "07:00", "close": "21:00", "openEnabled": True}, "closeEnabled"),
])
def test_missing_parameters_are_refused_before_writing(connected, sim, method, params, parameter):
    before = sim.writes()
    r = curtain(connected, method, **params)
    assert r.get("error") == "org.varlink.service.InvalidParameter", r
    assert r["parameters"]["parameter"] == parameter
    assert sim.writes() == before


def test_not_connected_fails_at_once_and_is_not_queued(connected, sim):
    sim.ctl("power", "off")
    c = wait_state(connected, lambda c: c["connection"] == "disconnected"
                   and "powered off" in (c.get("lastError") or ""), what="powered-off state")
    assert "power it on" in c["lastError"]
    before = sim.writes()
    r = curtain(connected, "Open")
    assert r.get("error") == "io.roombridge.Curtain.NotConnected", r
    assert sim.writes() == before  # refused by the daemon, nothing reached BlueZ
    sim.ctl("power", "on")
    c = wait_state(connected, lambda c: c["connection"] == "connected", timeout=15)
    assert c.get("lastError") is None
    assert sim.writes() > before  # the reconnection's SYNC …
    ok(curtain(connected, "Sync"))  # … and one more write, after anything a replay could have sent:
    assert "idle at 0%" in sim.status()  # the refused OPEN was not replayed


def test_att_error_from_the_controller_is_rejected_by_device(connected, sim):
    sim.ctl("fail-writes", "1", "org.bluez.Error.Failed", "Operation failed with ATT error: 0x13")
    r = curtain(connected, "Open")
    assert r.get("error") == "io.roombridge.Curtain.RejectedByDevice", r
    assert "out of range" in r["parameters"]["message"]
    c = state(connected)
    assert c["connection"] == "connected" and "refused" in c["lastError"]
    ok(curtain(connected, "MoveTo", position=5))  # the next command goes through
    wait_state(connected, lambda c: c["motion"] == "idle" and c["position"] == 5)


def test_disabled_curtain_refuses_commands(daemon):
    assert state(daemon)["connection"] == "disabled"
    r = curtain(daemon, "Open")
    assert r.get("error") == "io.roombridge.Curtain.Disabled"
    assert "curtain.enabled" in r["parameters"]["message"]


# --- Link loss, bluetoothd restart ---------------------------------------------------------------

def test_link_drop_reconnects_and_resyncs_when_device_returns(connected, sim):
    """Generous timeouts below are "does not hang" bounds, not speed requirements."""
    w = Watcher(connected.socket_path)
    sim.ctl("drop-link")
    w.wait_for(curtain_event(lambda c: c["connection"] != "connected"), timeout=5)
    w.wait_for(curtain_event(lambda c: c["connection"] == "connected"), timeout=5)

    sim.ctl("vanish")
    w.wait_for(curtain_event(lambda c: c["connection"] != "connected"), timeout=5)
    sim.ctl("schedule", "05:55", "23:10")  # changed while out of range
    sim.ctl("reappear")
    w.wait_for(curtain_event(lambda c: c["connection"] == "connected"
                             and c.get("openSchedule") == {"time": "05:55", "enabled": True}), timeout=15)
    ok(curtain(connected, "MoveTo", position=20))
    wait_state(connected, lambda c: c["motion"] == "idle" and c["position"] == 20, timeout=10)
    w.close()


def test_bluetoothd_restart_reconnects(connected, sim):
    w = Watcher(connected.socket_path)
    sim.ctl("restart-bluetoothd", "500")
    e = w.wait_for(curtain_event(lambda c: c["connection"] == "disconnected"), timeout=5)
    assert e["curtain"]["lastError"]
    w.wait_for(curtain_event(lambda c: c["connection"] == "connected"), timeout=10)
    ok(curtain(connected, "Sync"))
    w.close()


def test_notify_session_ending_while_connected_is_recovered(connected, sim):
    """bluetoothd ends the notify session (an AcquireNotify socket is closed) while the link stays up:
    the daemon shows it, subscribes again and hears the next STATUS, never "connected" and deaf."""
    w = Watcher(connected.socket_path)
    sim.ctl("end-notify")
    e = w.wait_for(curtain_event(lambda c: c["connection"] != "connected"
                                 and "notifications from the curtain stopped" in (c.get("lastError") or "")))
    assert e["curtain"]["connection"] == "connecting"
    w.wait_for(curtain_event(lambda c: c["connection"] == "connected"))
    assert "connected=true" in sim.status()  # the same link, no reconnect
    sim.ctl("press", "open")
    w.wait_for(curtain_event(lambda c: c["manual"] and c["motion"] == "opening"))
    assert "notifications from the curtain stopped" in connected.log()
    w.close()


def test_reconnect_request(connected, sim):
    w = Watcher(connected.socket_path)
    ok(curtain(connected, "Reconnect"))
    w.wait_for(curtain_event(lambda c: c["connection"] != "connected"), timeout=5)
    e = w.wait_for(curtain_event(lambda c: c["connection"] == "connected"), timeout=10)
    assert e["curtain"]["lastRequest"]["kind"] == "reconnect"
    w.close()


def test_daemon_restart_takes_the_curtain_over(daemon_factory, sim, notify_method):
    """The old process's notify session ends with it (BlueZ ends it), so a new daemon subscribes."""
    first = start_daemon(daemon_factory, sim, notify_method)
    wait_state(first, lambda c: c["connection"] == "connected")
    assert first.terminate(timeout=10) == 0  # a "does not hang" bound; Disconnect waits for bluetoothd's timer
    first.close()
    second = start_daemon(daemon_factory, sim, notify_method, notify=False)  # the first one's notify socket path is taken
    wait_state(second, lambda c: c["connection"] == "connected" and c.get("position") == 0, timeout=5)
    ok(curtain(second, "MoveTo", position=10))
    wait_state(second, lambda c: c["motion"] == "idle" and c["position"] == 10, timeout=10)


# --- The system bus itself ---------------------------------------------------------------------

def test_no_system_bus_is_a_state_not_a_crash(daemon_factory, tmpdir_path):
    d = daemon_factory("--curtain-enabled",
                       env={"DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={tmpdir_path}/no-such-bus"})
    c = wait_state(d, lambda c: c["connection"] == "disconnected" and c.get("lastError"))
    assert "D-Bus system bus" in c["lastError"]
    assert curtain(d, "Open").get("error") == "io.roombridge.Curtain.NotConnected"
    eventually(lambda: d.log().count("cannot connect to the D-Bus system bus") >= 3, what="three connection attempts")
    assert d.proc.poll() is None  # still serving after several retries
    assert state(d)["connection"] == "disconnected"
    assert d.terminate(timeout=2) == 0


def test_bus_loss_then_bus_back(daemon_factory, tmpdir_path):
    """dbus-daemon restarts (same address): the daemon shows it and comes back with a new connection."""
    bus_path = tmpdir_path / "bus"
    address = f"unix:path={bus_path}"
    config = tmpdir_path / "bus.conf"
    config.write_text(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>{address}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
<allow own="*"/><allow user="*"/></policy></busconfig>""")

    def start_bus():
        p = subprocess.Popen(["dbus-daemon", "--nofork", f"--config-file={config}", "--print-address"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert p.stdout.readline(), "dbus-daemon did not start"
        return p

    bus = start_bus()
    s = BlueZSim(tmpdir_path, bus_address=address)
    d = daemon_factory("--curtain-enabled", env={"DBUS_SYSTEM_BUS_ADDRESS": address})
    try:
        wait_state(d, lambda c: c["connection"] == "connected")
        s.close()
        bus.terminate()
        bus.wait(5)
        c = wait_state(d, lambda c: c["connection"] == "disconnected" and "D-Bus" in (c.get("lastError") or ""))
        assert d.proc.poll() is None
        bus_path.unlink(missing_ok=True)
        bus = start_bus()
        s = BlueZSim(tmpdir_path, bus_address=address)
        wait_state(d, lambda c: c["connection"] == "connected", timeout=40)
    finally:
        s.close()
        bus.terminate()
        bus.wait(5)


# --- The CLI -------------------------------------------------------------------------------------

def ctl(d, *args, timeout=60):
    env = dict(os.environ, ROOMBRIDGE_SOCKET=d.socket_path)
    return subprocess.run([binary("roombridgectl"), *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_cli_open_wait_returns_when_motion_ends(connected, sim):
    r = ctl(connected, "curtain", "open", "--wait")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "Curtain open (100% open).", r.stdout
    # Progress while it moved, with the time to go once the curtain's speed was measured (40 %/s here).
    assert re.search(r"^  opening \d+% → 100%, about [0-3] s to go$", r.stdout, re.M), r.stdout
    c = state(connected)
    assert c["motion"] == "idle" and c["position"] == 100  # already there when the command returned
    assert "idle at 100%" in sim.status()

    r = ctl(connected, "curtain", "move", "40", "--wait", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["position"] == 40 and out["motion"] == "idle"

    # Already there / nothing moving: --wait returns instead of waiting for a motion that never comes.
    r = ctl(connected, "curtain", "move", "40", "--wait", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Curtain at 40% open.", r.stdout  # said once, not "at 40% open (40% open)"
    # A position out of range is refused as one, also when it looks like an option.
    r = ctl(connected, "curtain", "move", "-5")
    assert r.returncode == 64 and "position -5 is out of range" in r.stderr, r.stderr
    r = ctl(connected, "curtain", "stop", "--wait", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    r = ctl(connected, "curtain", "close", "--wait")
    assert r.returncode == 0, r.stderr
    assert state(connected)["position"] == 0


def test_cli_status_schedule_and_refusals(connected, sim):
    r = ctl(connected, "curtain", "schedule", "--open", "07:30", "--close", "21:15", "--no-close")
    assert r.returncode == 0, r.stderr
    c = wait_state(connected, lambda c: c.get("openSchedule") == {"time": "07:30", "enabled": True})
    assert c["closeSchedule"] == {"time": "21:15", "enabled": False}
    r = ctl(connected, "curtain", "status")
    assert r.returncode == 0 and "connected" in r.stdout and "07:30 (on)" in r.stdout, r.stdout
    r = ctl(connected, "curtain", "status", "--json")
    assert json.loads(r.stdout)["connection"] == "connected"

    assert ctl(connected, "curtain", "move", "150").returncode == 64
    assert ctl(connected, "curtain", "schedule", "--open", "25:00").returncode == 64

    sim.ctl("press", "close")
    sim.ctl("press", "open")
    wait_state(connected, lambda c: c["manual"] and c["motion"] == "opening")
    r = ctl(connected, "curtain", "close")
    assert r.returncode == 5
    assert "wall switch" in r.stderr


# --- Shutdown ------------------------------------------------------------------------------------

def test_sigterm_while_connected_exits_cleanly(connected, sim):
    w = Watcher(connected.socket_path)
    ok(curtain(connected, "Open"))
    w.wait_for(curtain_event(lambda c: c["motion"] == "opening"), timeout=5)
    assert connected.terminate(signal.SIGTERM, timeout=10) == 0  # timeout: a "does not hang" bound
    sim.wait_status(r"acquired=false")  # the process's notify session ended with it
    # bluetoothd keeps a link after the client that asked for it has gone: the daemon disconnects it on the way
    # out, so that the curtain's own app or remote can reach it.
    sim.wait_status(r"connected=false")
    w.close()
