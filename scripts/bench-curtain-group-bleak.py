#!/usr/bin/env python3
"""roombridge-bench's curtain-group peer: bleak (PyPI, the BlueZ backend over dbus-fast, which honours
DBUS_SYSTEM_BUS_ADDRESS) drives bluez-sim's four simulated curtains at once (asyncio.gather), writing the bytes the
daemon's group command wrote, one round per --write. With --released each round connects to the four first (to the
devices found before, as PySwitchbot keeps a BLEDevice) and lets them go after; otherwise the four stay connected.
Times come from bluez-sim's `ctl device ADDRESS timing` (CLOCK_MONOTONIC, the same clock as Python's
time.monotonic() on Linux):
- spreadMs: the last curtain's first WriteValue of the round − the first curtain's;
- lastMs: the round's start → the last curtain's first WriteValue.
Prints one JSON line. Exits 3 (message on stderr) when bleak is not installed."""
import argparse
import asyncio
import json
import sys
import time

try:
    import bleak
except ImportError:
    print("bleak not installed", file=sys.stderr)
    sys.exit(3)

from importlib import util as _util  # the single-curtain peer's bluez-sim helpers
_spec = _util.spec_from_file_location("bench_curtain_bleak", __file__.replace("bench-curtain-group-bleak.py",
                                                                                 "bench-curtain-bleak.py"))
single = _util.module_from_spec(_spec)
_spec.loader.exec_module(single)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sim", required=True, help="the bluez-sim binary")
    p.add_argument("--control", required=True, help="bluez-sim's control socket")
    p.add_argument("--address", action="append", required=True, help="a curtain's address; repeat for each")
    p.add_argument("--write-char", required=True)
    p.add_argument("--response", choices=["request", "command"], required=True,
                   help="request: write with response; command: write without response")
    p.add_argument("--released", action="store_true", help="connect for each round and disconnect after it")
    p.add_argument("--write", action="append", default=[], metavar="HEX@TARGET",
                   help="one round: the write to every curtain, then wait until each is idle at TARGET %% open")
    return p.parse_args()


async def ctl(args, *command):
    return await single.ctl(args, *command)


async def device_timing(args, address):
    """The first curtain's writes since the last call, as [(t, hex)]."""
    for part in (await ctl(args, "device", address, "timing")).split(" "):
        key, _, entries = part.partition("=")
        if key == "writes":
            return [(float(t), h) for t, _, h in (e.partition(":") for e in entries.split(",") if e)]
    return []


async def main(args):
    response = args.response == "request"
    devices = []
    for address in args.address:
        device = await bleak.BleakScanner.find_device_by_address(address, timeout=20)
        if device is None:
            raise SystemExit(f"bleak did not find {address}")
        devices.append(device)
    clients = []
    if not args.released:
        for device in devices:
            client = bleak.BleakClient(device, timeout=20)
            await client.connect()
            clients.append(client)
    spread_ms, last_ms = [], []
    try:
        for spec in args.write:
            hex_bytes, _, target = spec.partition("@")
            data = bytes.fromhex(hex_bytes)
            for address in args.address:
                await device_timing(args, address)
            t0 = time.monotonic()
            if args.released:
                async def connect_and_write(device):
                    client = bleak.BleakClient(device, timeout=20)
                    await client.connect()
                    await client.write_gatt_char(args.write_char, data, response=response)
                    return client
                clients = await asyncio.gather(*(connect_and_write(d) for d in devices))
            else:
                await asyncio.gather(*(c.write_gatt_char(args.write_char, data, response=response) for c in clients))
            for address in args.address:
                await single.wait_idle_at(args, int(target), device=address)
            starts = []
            for address in args.address:
                start = next((t for t, h in await device_timing(args, address) if h == hex_bytes), None)
                if start is None:
                    raise SystemExit(f"no write of {hex_bytes} at {address}")
                starts.append(start)
            spread_ms.append((max(starts) - min(starts)) * 1000)
            last_ms.append((max(starts) - t0) * 1000)
            if args.released:
                await asyncio.gather(*(c.disconnect() for c in clients))
                clients = []
    finally:
        await asyncio.gather(*(c.disconnect() for c in clients))
    print(json.dumps({"spreadMs": spread_ms, "lastMs": last_ms}))


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
