#!/usr/bin/env python3
"""roombridge-bench's curtain peer: bleak (PyPI, the BlueZ backend over dbus-fast, which honours
DBUS_SYSTEM_BUS_ADDRESS) connects to bluez-sim's simulated curtain and does the writes the daemon did, with
the same bytes and the same response mode. Times come from bluez-sim's `ctl timing` (CLOCK_MONOTONIC, the
same clock as Python's time.monotonic() on Linux):
- writeMs: write_gatt_char call → WriteValue at the simulator;
- notifyMs: the simulator's notification → the start_notify callback with the same bytes;
- advertMs (with --adverts, for curtains that advertise their motion, as SwitchBot's do): the simulator's
  advertisement (a PropertiesChanged on ServiceData/ManufacturerData) → the first BleakScanner detection
  callback for the curtain's address that arrives after it.
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


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sim", required=True, help="the bluez-sim binary")
    p.add_argument("--control", required=True, help="bluez-sim's control socket")
    p.add_argument("--address", required=True, help="the curtain's address")
    p.add_argument("--write-char", required=True)
    p.add_argument("--notify-char", required=True)
    p.add_argument("--response", choices=["request", "command"], required=True,
                   help="request: write with response; command: write without response")
    p.add_argument("--prelude", action="append", default=[], metavar="HEX",
                   help="a write before the timed ones (e.g. the AM43 login); repeat for more")
    p.add_argument("--adverts", action="store_true",
                   help="also time advertisements to a BleakScanner detection callback")
    p.add_argument("--write", action="append", default=[], metavar="HEX@TARGET",
                   help="one timed write, then wait until the simulated motor is idle at TARGET %% open")
    return p.parse_args()


async def ctl(args, *command):
    """`bluez-sim ctl …` without blocking the event loop (bleak's callbacks must not wait for it)."""
    proc = await asyncio.create_subprocess_exec(args.sim, "ctl", "--control", args.control, *command,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"bluez-sim ctl {' '.join(command)}: {out.decode()}{err.decode()}")
    return out.decode().strip()


async def timing(args):
    """bluez-sim's writes and notifications since the last call: {"writes": [(t, hex)], ...}."""
    result = {}
    for part in (await ctl(args, "timing")).split(" "):
        key, _, entries = part.partition("=")
        result[key] = [(float(t), h) for t, _, h in (e.partition(":") for e in entries.split(",") if e)]
    return result


async def wait_idle_at(args, target):
    deadline = time.monotonic() + 30  # a "does not hang" bound
    while f"idle at {target}%" not in (status := await ctl(args, "status")):
        if time.monotonic() > deadline:
            raise SystemExit(f"the simulated motor did not reach {target}%: {status}")
        await asyncio.sleep(0.02)


async def main(args):
    response = args.response == "request"
    received = []  # (monotonic arrival, hex)
    detected = []  # monotonic arrivals of detection callbacks for the curtain
    write_ms, notify_ms, advert_ms = [], [], []
    scanner = None
    try:
        client = bleak.BleakClient(args.address, timeout=20)
        await client.connect()
    except bleak.exc.BleakError as e:
        raise SystemExit(f"bleak could not connect ({e}); bluez-sim: {await ctl(args, 'status')}")
    try:
        await client.start_notify(args.notify_char, lambda _, data: received.append((time.monotonic(), bytes(data).hex())))
        if args.adverts:
            def seen(device, _advertisement):
                if device.address.upper() == args.address.upper():
                    detected.append(time.monotonic())
            scanner = bleak.BleakScanner(detection_callback=seen)
            await scanner.start()
        for hex_bytes in args.prelude:
            await client.write_gatt_char(args.write_char, bytes.fromhex(hex_bytes), response=response)
        for spec in args.write:
            hex_bytes, _, target = spec.partition("@")
            await timing(args)
            received.clear()
            detected.clear()
            t0 = time.monotonic()
            await client.write_gatt_char(args.write_char, bytes.fromhex(hex_bytes), response=response)
            await wait_idle_at(args, int(target))
            t = await timing(args)
            if t.get("writes"):
                write_ms.append((t["writes"][0][0] - t0) * 1000)
            # Let the callbacks of the last notifications arrive (a "does not hang" bound).
            deadline = time.monotonic() + 2
            while len(received) < len(t.get("notifications", [])) and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            unused = list(received)
            for sent, h in t.get("notifications", []):
                hit = next((r for r in unused if r[1] == h and r[0] >= sent), None)
                if hit:
                    unused.remove(hit)
                    notify_ms.append((hit[0] - sent) * 1000)
            arrivals = list(detected)
            for sent, _ in t.get("adverts", []):
                hit = next((a for a in arrivals if a >= sent), None)
                if hit is not None:
                    arrivals = [a for a in arrivals if a > hit]
                    advert_ms.append((hit - sent) * 1000)
        await client.stop_notify(args.notify_char)
    finally:
        if scanner is not None:
            await scanner.stop()
        await client.disconnect()
    print(json.dumps({"writeMs": write_ms, "notifyMs": notify_ms, "advertMs": advert_ms}))


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
