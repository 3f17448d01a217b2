"""SIGHUP reloads the curtain settings: the real roombridged against bluez-sim, without a restart."""
import signal
import time

import pytest

from conftest import eventually
from test_curtain import BlueZSim, DEVICE, curtain, ok, start_daemon, wait_state


@pytest.fixture
def sim(tmpdir_path):
    s = BlueZSim(tmpdir_path)
    yield s
    s.close()


def reload_line(d):
    return eventually(lambda: next((l for l in d.log().splitlines() if "configuration reloaded" in l), None),
                      what="the reload to be logged")


def test_sighup_reconfigures_the_curtain_without_a_restart(daemon_factory, sim, tmpdir_path):
    config = tmpdir_path / "roombridged.toml"
    config.write_text('[log]\nlevel = "debug"\n[curtain]\naddress = "AA:BB:CC:DD:EE:FF"\n')
    d = start_daemon(daemon_factory, sim, "start-notify")
    pid = d.proc.pid
    # Nothing advertises that address: the daemon keeps searching and never touches the simulated curtain.
    wait_state(d, lambda c: c["connection"] == "searching")
    assert "connected=false" in sim.status()

    config.write_text(f'[log]\nlevel = "debug"\n[curtain]\naddress = "{DEVICE}"\n')
    d.proc.send_signal(signal.SIGHUP)
    c = wait_state(d, lambda c: c["connection"] == "connected" and c.get("position") is not None, timeout=20,
                   what="the curtain at the reloaded address to connect")
    assert c["address"] == DEVICE
    assert d.proc.poll() is None and d.proc.pid == pid, "a reload must not restart the daemon"
    line = reload_line(d)
    assert f'curtain.address = "{DEVICE}"' in line.split("needs a restart")[0], line

    # systemd hears RELOADING=1 with the monotonic time when the reload starts, then READY=1 (sd_notify(3)).
    reloading = d.notify.wait_for(lambda m: "RELOADING=1" in m)
    usec = int(next(f for f in reloading.split("\n") if f.startswith("MONOTONIC_USEC=")).split("=", 1)[1])
    assert 0 < time.monotonic_ns() // 1000 - usec < 600_000_000, "MONOTONIC_USEC is CLOCK_MONOTONIC"
    d.notify.messages = d.notify.messages[d.notify.messages.index(reloading) + 1:]
    d.notify.wait_for(lambda m: "READY=1" in m)

    # The curtain works with the new settings.
    ok(curtain(d, "MoveTo", position=30))
    sim.wait_status(r"status=.* → 30%")
    assert d.terminate() == 0

