"""An independent client against bluez-sim: bleak (PyPI, 3.x, the BlueZ backend over dbus-fast, which honours
DBUS_SYSTEM_BUS_ADDRESS) discovers the simulated curtain on the simulator's private bus, connects, subscribes
with StartNotify and with AcquireNotify, writes OPEN and receives STATUS; its scanner sees the curtain again when
the link drops. We did not write bleak: if it works with the simulator the way it works with bluetoothd, the
simulator behaves as bleak expects."""
import asyncio
import importlib.metadata

import bleak
import pytest

from test_curtain import DEVICE, BlueZSim

# scripts/install-deps.sh pins it; 3.x defaults to StartNotify and takes bluez={"use_start_notify": …}.
assert importlib.metadata.version("bleak").startswith("3."), "bleak 3.x is needed: run scripts/install-deps.sh"

SERVICE = "5c3a0001-8f4e-4b8e-9e61-637572746e00"
COMMAND = "5c3a0002-8f4e-4b8e-9e61-637572746e00"
STATUS = "5c3a0003-8f4e-4b8e-9e61-637572746e00"
OPEN = bytes([0x01])
SYNC = bytes([0x06])
OPENING = 1
RSSI = -58  # what bluez-sim's curtain advertises (BlueZSimulatorConfiguration.rssi)


@pytest.fixture
def sim(tmpdir_path, monkeypatch):
    s = BlueZSim(tmpdir_path)
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", s.address)  # bleak's bus: the simulator's, never the machine's
    yield s
    s.close()


async def discover():
    """Active discovery (SetDiscoveryFilter + StartDiscovery); returns the device and its advertisement."""
    seen = {}

    def match(device, adv):
        if device.address == DEVICE:
            seen["adv"] = adv
            return True
        return False

    device = await bleak.BleakScanner.find_device_by_filter(match, timeout=20)  # a "does not hang" bound
    assert device is not None, "bleak did not discover the curtain"
    return device, seen["adv"]


async def open_and_watch(use_start_notify: bool):
    device, adv = await discover()
    assert adv.local_name == "Curtain-Living"
    assert SERVICE in adv.service_uuids and SERVICE in adv.service_data
    assert adv.service_data[SERVICE][0] == 0  # the advertised position: closed
    frames = asyncio.Queue()
    async with bleak.BleakClient(device, timeout=20) as client:
        assert client.services.get_characteristic(STATUS) is not None
        await client.start_notify(STATUS, lambda _, data: frames.put_nowait(bytes(data)),
                                  bluez={"use_start_notify": use_start_notify})
        # bluetoothd drops what the curtain notifies before an AcquireNotify socket exists: ask again.
        await client.write_gatt_char(COMMAND, SYNC, response=True)
        status = await asyncio.wait_for(next_status(frames, lambda f: True), 20)
        assert status[1:4] == bytes([0, 0, 0])  # idle, closed, target 0
        await client.write_gatt_char(COMMAND, OPEN, response=True)
        moving = await asyncio.wait_for(next_status(frames, lambda f: f[1] == OPENING), 20)
        assert moving[3] == 100  # target: fully open
        await client.stop_notify(STATUS)


async def next_status(frames, predicate):
    while True:
        frame = await frames.get()
        if frame[0] == 0x81 and predicate(frame):
            return frame


@pytest.mark.parametrize("use_start_notify", [True, False], ids=["StartNotify", "AcquireNotify"])
def test_bleak_drives_the_simulated_curtain(sim, use_start_notify):
    asyncio.run(open_and_watch(use_start_notify))
    status = sim.wait_status(r"connected=false")  # bleak disconnected on leaving its context
    assert "→ 100%" in status  # the OPEN bleak wrote moves the motor
    assert "writes=2" in status  # SYNC and OPEN, both from bleak
    # AcquireNotify: bleak's socket really was bluetoothd's (dropped frames before it existed, closed on stop).
    if not use_start_notify:
        assert "dropped=2" in status and "acquired=false" in status


async def report_after_link_drop(sim):
    """bleak connects, then scans while the link is up; the simulator drops the link. Returns the curtain's first
    report that carries an RSSI (an advertisement) and the Connected property bleak held when it came."""
    device, _ = await discover()  # that discovery ends: bluetoothd invalidates the curtain's RSSI (discovery_cleanup)
    advertised = asyncio.get_running_loop().create_future()

    # bleak 3.1 BlueZManager._parse_msg() reports on every Device1 PropertiesChanged, Connected too: an advert has RSSI.
    def seen(found, adv):
        props = adv.platform_data[1]
        if found.address == DEVICE and "RSSI" in props and not advertised.done():
            advertised.set_result((adv, props["Connected"]))

    async with bleak.BleakClient(device, timeout=20) as client:
        async with bleak.BleakScanner(detection_callback=seen):  # a discovery started while the link is up
            assert client.is_connected
            sim.ctl("drop-link")
            return await asyncio.wait_for(advertised, 20)  # a "does not hang" bound


def test_bleak_scanner_reports_the_curtain_again_when_its_link_drops(sim):
    """A connected peripheral does not advertise, so a discovery started while the link is up reports nothing for
    it; once the link is down it advertises again and the running discovery reports it (adapter.c
    btd_adapter_device_found() for the next advertising report; device.c device_set_rssi() from 0)."""
    adv, connected = asyncio.run(report_after_link_drop(sim))
    assert connected is False  # signals come in order: an advert while the link was up would still see Connected=true
    assert adv.rssi == RSSI  # reported again from the invalidated 0
    assert adv.service_data[SERVICE][0] == 0  # the advertised position: closed
    sim.wait_status(r"discovering=false visible=true connected=false")  # bleak stopped its discovery on leaving
