"""An independent check of bluez-sim's SwitchBot Curtain model: PySwitchbot (PyPI), the library Home Assistant
uses, drives the simulated curtain through bleak on the simulator's private bus — discovery and advertisement
parsing, open, move to 30, stop, basic info. Nothing here is our code but the simulator."""
import asyncio
import re
import time

import pytest

from conftest import eventually
from test_curtain import BlueZSim
from test_curtain_on_demand import move_write_after

switchbot = pytest.importorskip("switchbot", reason="PySwitchbot is installed by scripts/install-deps.sh")
bleak = pytest.importorskip("bleak")

ADDRESS = "C4:7C:8D:6A:3E:22"
SWITCHBOT_COMPANY = 0x0969
SERVICE_DATA_UUID = "0000fd3d-0000-1000-8000-00805f9b34fb"


@pytest.fixture(params=["on", "off"], ids=["keeps-advertising", "stops-advertising"])
def adverts(request):
    """bluez-sim's curtain keeps advertising while connected, or stops until the link is down (issue 27)."""
    return request.param


@pytest.fixture
def sb_sim(tmpdir_path, monkeypatch, adverts):
    # Slow motor (5 %/s) so that a motion is still running when the test looks at it.
    s = BlueZSim(tmpdir_path, "--profile", "switchbot", "--device-address", ADDRESS, "--speed", "5",
                 "--advertise-while-connected", adverts)
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", s.address)
    yield s
    s.close()


def sim_position(sim) -> tuple[str, int, int]:
    """(motion, position, target) in our orientation (0 = closed) from `bluez-sim ctl status`."""
    m = re.search(r"status=(\w+) at (\d+)% → (\d+)%", sim.status())
    assert m, sim.status()
    return m.group(1), int(m.group(2)), int(m.group(3))


async def discover():
    """Scans until the curtain's advertisement carries SwitchBot data; returns (BLEDevice, AdvertisementData)."""
    found = {}

    def matches(device, adv):
        if device.address.upper() == ADDRESS and SWITCHBOT_COMPANY in adv.manufacturer_data:
            found["adv"] = adv
            return True
        return False

    device = await bleak.BleakScanner.find_device_by_filter(matches, timeout=20)  # does-not-hang bound
    assert device is not None, "bleak did not find the simulated SwitchBot"
    return device, found["adv"]


async def eventually_async(condition, timeout, what):
    """`eventually` for a test whose event loop must keep running meanwhile (pySwitchbot's disconnect timer is on
    it): polls `condition` without blocking the loop."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}"
        await asyncio.sleep(0.01)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))  # a generous does-not-hang bound


def test_advertisement_parses_as_a_curtain(sb_sim):
    async def scenario():
        device, adv = await discover()
        parsed = switchbot.parse_advertisement_data(device, adv)
        assert parsed is not None, adv
        assert parsed.data["modelName"] == switchbot.SwitchbotModel.CURTAIN_3  # the simulator plays a Curtain 3
        data = parsed.data["data"]
        # The simulator starts closed (our 0); pySwitchbot's default reverse mode is our orientation.
        assert data["position"] == 0
        assert data["inMotion"] is False
        assert data["calibration"] is True
        assert data["battery"] == 87
        assert data["lightLevel"] == 3
        assert SERVICE_DATA_UUID in adv.service_data

        # `ctl battery` (issue 27's low-battery notices) changes what PySwitchbot reads from the next advertisement.
        sb_sim.ctl("battery", "12")
        found = {}

        def battery_12(d, a):
            parsed = switchbot.parse_advertisement_data(d, a) if d.address.upper() == ADDRESS else None
            if parsed and parsed.data["data"].get("battery") == 12:
                found["data"] = parsed.data["data"]
                return True
            return False

        assert await bleak.BleakScanner.find_device_by_filter(battery_12, timeout=20) is not None, \
            "PySwitchbot never read the battery at 12 %"
        assert found["data"]["position"] == 0 and found["data"]["lightLevel"] == 3

    run(scenario())


def test_open_move_stop_and_basic_info(sb_sim):
    async def scenario():
        device, adv = await discover()
        curtain = switchbot.SwitchbotCurtain(device)
        curtain.update_from_advertisement(switchbot.parse_advertisement_data(device, adv))
        try:
            assert await curtain.open() is True
            eventually(lambda: sim_position(sb_sim)[0] == "opening" and sim_position(sb_sim)[2] == 100,
                       what="the simulated curtain opening")

            # The motion shows in the advertisement, as pySwitchbot parses it.
            def moving_adv(d, a):
                if d.address.upper() != ADDRESS or SWITCHBOT_COMPANY not in a.manufacturer_data:
                    return False
                p = switchbot.parse_advertisement_data(d, a)
                return bool(p and p.data["data"]["inMotion"])
            assert await bleak.BleakScanner.find_device_by_filter(moving_adv, timeout=20) is not None

            assert await curtain.set_position(30) is True
            eventually(lambda: sim_position(sb_sim)[2] == 30, what="target 30 on the simulated curtain")

            assert await curtain.stop() is True
            eventually(lambda: sim_position(sb_sim)[0] == "idle", what="the simulated curtain stopping")
            _, position, _ = sim_position(sb_sim)

            info = await curtain.get_basic_info()
            assert info is not None
            assert info["battery"] == 87
            assert info["calibrated"] is True
            assert info["inMotion"] is False
            assert info["position"] == position
            assert info["firmware"] == 4.2
        finally:
            await curtain._execute_forced_disconnect()

    run(scenario())


def test_password_is_required_when_set(tmpdir_path, monkeypatch):
    s = BlueZSim(tmpdir_path, "--profile", "switchbot", "--device-address", ADDRESS, "--password", "hunter2")
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", s.address)
    try:
        async def scenario():
            device, adv = await discover()
            without = switchbot.SwitchbotCurtain(device)
            assert await without.get_basic_info() is None  # the curtain answers 07 "password required"
            await without._execute_forced_disconnect()
            with_password = switchbot.SwitchbotCurtain(device, password="hunter2")
            assert await with_password.open() is True
            eventually(lambda: sim_position(s)[2] == 100, what="the curtain opening with the password")
            await with_password._execute_forced_disconnect()

        run(scenario())
    finally:
        s.close()


def test_command_then_timed_disconnect_and_adverts_during_the_move(sb_sim):
    """pySwitchbot's own connection policy, which roombridged's on-demand profile follows: one command, the link
    dropped DISCONNECT_DELAY (8.5 s, switchbot/devices/device.py) after it, and the move that goes on is read from
    the advertisements by its parser."""
    from switchbot.devices import device as sb_device

    async def scenario():
        device, adv = await discover()
        curtain = switchbot.SwitchbotCurtain(device)
        curtain.update_from_advertisement(switchbot.parse_advertisement_data(device, adv))
        try:
            sb_sim.ctl("timing")
            t = time.monotonic()
            assert await curtain.open() is True  # 0 → 100 % at 5 %/s: 20 s
            commanded = time.monotonic()
            # Next to roombridged's figure in test_curtain_on_demand.py (both print with pytest -s).
            print(f"\nPySwitchbot: command → move request, connect included {move_write_after(sb_sim, t) * 1000:.1f} ms")
            assert " connected=true " in sb_sim.status()
            await eventually_async(lambda: " connected=false " in sb_sim.status(),
                                   timeout=sb_device.DISCONNECT_DELAY + 2.0 + 5, what="pySwitchbot's timed disconnect")
            released = time.monotonic() - commanded
            # bluez-sim plays bluetoothd's 2 s DISCONNECT_TIMER after Device1.Disconnect.
            assert sb_device.DISCONNECT_DELAY <= released <= sb_device.DISCONNECT_DELAY + 2.0 + 1.5, released
            assert sim_position(sb_sim)[0] == "opening", "the move ended before the disconnect"

            def moving_adv(d, a):
                if d.address.upper() != ADDRESS or SWITCHBOT_COMPANY not in a.manufacturer_data:
                    return False
                p = switchbot.parse_advertisement_data(d, a)
                return bool(p and p.data["data"]["inMotion"] and 0 < p.data["data"]["position"] < 100)
            assert await bleak.BleakScanner.find_device_by_filter(moving_adv, timeout=10) is not None
        finally:
            await curtain._execute_forced_disconnect()

    run(scenario())
