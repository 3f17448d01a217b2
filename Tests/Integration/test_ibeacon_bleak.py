"""An independent check of bluez-sim's iBeacons: bleak's scanner (PyPI, the BlueZ backend over dbus-fast, pointed at
the simulator's private bus through DBUS_SYSTEM_BUS_ADDRESS) sees them with Apple manufacturer data, and Home
Assistant's `ibeacon-ble` parser (PyPI) decodes UUID, major, minor and txPower from it. We wrote neither."""
import asyncio
import importlib.metadata
import uuid

import bleak
import pytest
from home_assistant_bluetooth import BluetoothServiceInfo
from ibeacon_ble import iBeaconParser

from conftest import eventually
from test_curtain import BlueZSim

assert importlib.metadata.version("ibeacon-ble") == "1.2.0", "ibeacon-ble 1.2.0 is needed: run scripts/install-deps.sh"

BEACON_UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
ADDRESS = "F0:BE:AC:00:00:42"


@pytest.fixture
def sim(tmpdir_path, monkeypatch):
    s = BlueZSim(tmpdir_path)
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", s.address)  # bleak's bus: the simulator's, never the machine's
    yield s
    s.close()


async def scan_for(address, predicate=lambda adv: True):
    """bleak's active discovery until `address` advertises data matching `predicate`; returns the advertisement."""
    found = asyncio.get_running_loop().create_future()

    def seen(device, adv):
        if device.address == address and predicate(adv) and not found.done():
            found.set_result(adv)

    async with bleak.BleakScanner(detection_callback=seen):
        return await asyncio.wait_for(found, 20)  # a "does not hang" bound


async def parse(adv):
    parser = iBeaconParser()
    await parser.async_setup()
    info = BluetoothServiceInfo(name=adv.local_name or ADDRESS, address=ADDRESS, rssi=adv.rssi,
                                manufacturer_data=adv.manufacturer_data, service_data=adv.service_data,
                                service_uuids=adv.service_uuids, source="bluez-sim")
    return parser.parse(info)


def test_bleak_sees_the_beacon_and_ibeacon_ble_parses_it(sim):
    sim.ctl("beacon", "add", BEACON_UUID, "4660", "22136", "tx=-61", "rssi=-70", "interval=100", f"address={ADDRESS}")
    adv = asyncio.run(scan_for(ADDRESS))
    assert set(adv.manufacturer_data) == {0x004C}
    assert adv.manufacturer_data[0x004C][:2] == bytes([0x02, 0x15])
    beacon = asyncio.run(parse(adv))
    assert beacon is not None, "ibeacon-ble did not recognise the frame"
    assert beacon.uuid == uuid.UUID(BEACON_UUID)
    assert (beacon.major, beacon.minor, beacon.power) == (4660, 22136, -61)
    assert beacon.rssi == -70


def adverts_heard(sim) -> int:
    """How many adverts the simulated bluetoothd has heard (`beacon list`: heard=N …); one beacon here."""
    return int(sim.ctl("beacon", "list").split("heard=")[1].split()[0])


def test_rssi_reaches_bleak_only_when_it_moves_by_8_dbm(sim):
    """bleak sets no RSSI filter, so bluetoothd reports an RSSI change only when it is 8 dBm or more
    (device.c device_set_rssi_with_delta with RSSI_THRESHOLD)."""
    sim.ctl("beacon", "add", BEACON_UUID, "1", "1", "rssi=-70", "interval=100", f"address={ADDRESS}")

    async def watch():
        readings = []
        first = asyncio.get_running_loop().create_future()
        moved = asyncio.get_running_loop().create_future()

        def seen(device, adv):
            if device.address != ADDRESS:
                return
            readings.append(adv.rssi)
            if not first.done():
                first.set_result(adv)
            if adv.rssi == -55 and not moved.done():
                moved.set_result(adv)

        async with bleak.BleakScanner(detection_callback=seen):
            await asyncio.wait_for(first, 20)
            sim.ctl("beacon", "rssi", ADDRESS, "-66")  # 4 dBm: bluetoothd keeps -70
            # Ten adverts at the new level reach bluetoothd (the simulator counts them); nothing may report them.
            # Whatever bluetoothd sent for them is on the bus before the -55 report below, so bleak has had it
            # by the time it sees -55.
            heard_at_66 = adverts_heard(sim)
            await asyncio.to_thread(eventually, lambda: adverts_heard(sim) >= heard_at_66 + 10,
                                    what="ten adverts at -66 dBm heard by bluetoothd")
            sim.ctl("beacon", "rssi", ADDRESS, "-55")  # 15 dBm: reported
            adv = await asyncio.wait_for(moved, 20)
        return readings, adv

    readings, adv = asyncio.run(watch())
    assert -66 not in readings
    assert adv.manufacturer_data[0x004C][18:22] == bytes([0, 1, 0, 1])
