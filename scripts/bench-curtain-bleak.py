#!/usr/bin/env python3
"""roombridge-bench's curtain peer: bleak (PyPI, the BlueZ backend over dbus-fast, which honours
DBUS_SYSTEM_BUS_ADDRESS) connects to bluez-sim's simulated curtain and does the writes the daemon did, with
the same bytes and the same response mode. Times come from bluez-sim's `ctl timing` (CLOCK_MONOTONIC, the
same clock as Python's time.monotonic() on Linux):
- writeMs: write_gatt_char call → WriteValue at the simulator;
- notifyMs: the simulator's notification → the start_notify callback with the same bytes;
- advertMs (with --adverts, for curtains that advertise their motion, as SwitchBot's do): the simulator's
  advertisement (a PropertiesChanged on ServiceData/ManufacturerData) → the first BleakScanner detection
  callback for the curtain's address that arrives after it;
- rawWriteMs: the floor of bleak's figure, the same WriteValue sent by dbus-fast alone (bleak's D-Bus library,
  one method call on its own connection to the bus, no bleak): call → WriteValue at the simulator;
- busctlWriteMs: the same WriteValue by `busctl call` (systemd's D-Bus tool, a new process per call): process
  start → WriteValue at the simulator;
- releasedWriteMs (with --released, for curtains driven on demand): after bleak let the link go, connect again to
  the device found before (a BLEDevice, as PySwitchbot keeps it) and write: connect call → WriteValue;
- pullMs (with --pulls and --adverts): the wall switch pressed at the simulator (the control line `press`,
  alternately open and close) → the first detection callback after it, bleak not connected: the earliest moment a
  client can know of the pull;
- pullNotifications (with --pulls, without --adverts): for each press, the notifications that followed it while
  connected, as [ms after the press, hex]; roombridge-bench decodes them with the profile's codec and takes the
  first from which a client can tell that the curtain moves.
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
    p.add_argument("--released", action="append", default=[], metavar="HEX@TARGET",
                   help="after the link is let go: one timed connect and write, then wait until idle at TARGET")
    p.add_argument("--pulls", type=int, default=0, help="wall-switch presses to time")
    return p.parse_args()


async def ctl(args, *command):
    """`bluez-sim ctl …` without blocking the event loop (bleak's callbacks must not wait for it)."""
    proc = await asyncio.create_subprocess_exec(args.sim, "ctl", "--control", args.control, *command,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"bluez-sim ctl {' '.join(command)}: {out.decode()}{err.decode()}")
    return out.decode().strip()


async def send(args, line):
    """One control line on bluez-sim's control socket itself (for timing: starting `bluez-sim ctl` costs tens of
    milliseconds); the answer line."""
    reader, writer = await asyncio.open_unix_connection(args.control)
    writer.write((line + "\n").encode())
    await writer.drain()
    answer = (await reader.readline()).decode().strip()
    writer.close()
    if not answer.startswith("ok"):
        raise SystemExit(f"bluez-sim {line}: {answer}")
    return answer


async def timing(args):
    """bluez-sim's writes and notifications since the last call: {"writes": [(t, hex)], ...}."""
    result = {}
    for part in (await ctl(args, "timing")).split(" "):
        key, _, entries = part.partition("=")
        result[key] = [(float(t), h) for t, _, h in (e.partition(":") for e in entries.split(",") if e)]
    return result


async def wait_idle_at(args, target=None, device=None):
    """Until the simulated motor (the first curtain, or `device`) is idle at `target` % open (None: anywhere)."""
    where = ["device", device] if device else []
    want = "status=idle" if target is None else f"idle at {target}%"
    deadline = time.monotonic() + 30  # a "does not hang" bound
    while want not in (status := await ctl(args, *where, "status")):
        if time.monotonic() > deadline:
            raise SystemExit(f"the simulated motor did not stop ({want}): {status}")
        await asyncio.sleep(0.02)


async def timed_writes(args, specs, send_one):
    """Each write of `specs` (HEX@TARGET) sent by `send_one(data)`: sent → WriteValue at the simulator (ms), the
    motor run to TARGET before the next."""
    samples = []
    for spec in specs:
        hex_bytes, _, target = spec.partition("@")
        await timing(args)
        t0 = time.monotonic()
        await send_one(bytes.fromhex(hex_bytes))
        await wait_idle_at(args, int(target))
        write = next((t for t, h in (await timing(args)).get("writes", []) if h == hex_bytes), None)
        if write is not None:
            samples.append((write - t0) * 1000)
    return samples


async def raw_writes(args, path, response, specs):
    """Each write of `specs` as one org.bluez.GattCharacteristic1.WriteValue sent with dbus-fast on a connection
    of its own (what bleak sends for write_gatt_char, without bleak): call → WriteValue (ms)."""
    from dbus_fast import BusType, Message, MessageType, Variant
    from dbus_fast.aio import MessageBus
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    options = {"type": Variant("s", "request" if response else "command")}

    async def send_one(data):
        reply = await bus.call(Message(destination="org.bluez", path=path, interface="org.bluez.GattCharacteristic1",
                                       member="WriteValue", signature="aya{sv}", body=[data, options]))
        if reply.message_type == MessageType.ERROR:
            raise SystemExit(f"dbus-fast WriteValue: {reply.error_name} {reply.body}")
    try:
        return await timed_writes(args, specs, send_one)
    finally:
        bus.disconnect()


async def busctl_writes(args, path, response, specs):
    """Each write of `specs` by `busctl call` (a process each): process start → WriteValue (ms)."""
    import os
    address = os.environ["DBUS_SYSTEM_BUS_ADDRESS"]

    async def send_one(data):
        proc = await asyncio.create_subprocess_exec(
            "busctl", f"--address={address}", "call", "org.bluez", path, "org.bluez.GattCharacteristic1", "WriteValue",
            "aya{sv}", str(len(data)), *[str(b) for b in data], "1", "type", "s", "request" if response else "command",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"busctl WriteValue: {out.decode()}{err.decode()}")
    return await timed_writes(args, specs, send_one)


async def pulls(args, arrivals, count, notifications=None):
    """`count` wall-switch presses: press → the first arrival (monotonic) in `arrivals` after it; each press runs the
    motor to its end before the next. With `notifications` (the connected client's (arrival, hex)), returns each
    press's notifications instead."""
    samples = []
    for i in range(count):
        direction, end = ("open", 100) if i % 2 == 0 else ("close", 0)
        await wait_idle_at(args)
        arrivals.clear()
        t0 = time.monotonic()
        await send(args, f"press {direction}")
        deadline = time.monotonic() + 10  # a "does not hang" bound
        while not any(a >= t0 for a in arrivals) and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        hit = next((a for a in arrivals if a >= t0), None)
        await wait_idle_at(args, end)
        if notifications is not None:
            samples.append([[(t - t0) * 1000, h] for t, h in notifications if t >= t0])
        elif hit is not None:
            samples.append((hit - t0) * 1000)
    return samples


async def main(args):
    response = args.response == "request"
    received = []  # (monotonic arrival, hex)
    detected = []  # monotonic arrivals of detection callbacks for the curtain
    notified = []  # monotonic arrivals of notifications
    write_ms, notify_ms, advert_ms, released_ms, pull_ms, pull_notifications = [], [], [], [], [], []
    raw_ms, busctl_ms = [], []
    scanner = None
    device = await bleak.BleakScanner.find_device_by_address(args.address, timeout=20)
    if device is None:
        raise SystemExit(f"bleak did not find {args.address}; bluez-sim: {await ctl(args, 'status')}")
    try:
        client = bleak.BleakClient(device, timeout=20)
        await client.connect()
    except bleak.exc.BleakError as e:
        raise SystemExit(f"bleak could not connect ({e}); bluez-sim: {await ctl(args, 'status')}")
    try:
        def notification(_, data):
            received.append((time.monotonic(), bytes(data).hex()))
            notified.append(time.monotonic())
        await client.start_notify(args.notify_char, notification)
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
        # The floors, on the same link: the same writes as one raw method call each.
        path = client.services.get_characteristic(args.write_char).obj[0]  # bleak's BlueZ backend: (path, properties)
        raw_ms = await raw_writes(args, path, response, args.write)
        busctl_ms = await busctl_writes(args, path, response, args.write)
        if not args.adverts and args.pulls:  # the curtain tells its motion through notifications, on the link
            pull_notifications = await pulls(args, notified, args.pulls, notifications=received)
        await client.stop_notify(args.notify_char)
        await client.disconnect()
        for spec in args.released:
            hex_bytes, _, target = spec.partition("@")
            await wait_idle_at(args)
            await timing(args)
            t0 = time.monotonic()
            again = bleak.BleakClient(device, timeout=20)
            await again.connect()
            await again.write_gatt_char(args.write_char, bytes.fromhex(hex_bytes), response=response)
            await wait_idle_at(args, int(target))
            write = next((t for t, h in (await timing(args)).get("writes", []) if h == hex_bytes), None)
            if write is not None:
                released_ms.append((write - t0) * 1000)
            await again.disconnect()
        if args.adverts and args.pulls:  # released: the curtain tells its motion through advertisements
            pull_ms = await pulls(args, detected, args.pulls)
    finally:
        if scanner is not None:
            await scanner.stop()
        await client.disconnect()
    print(json.dumps({"writeMs": write_ms, "rawWriteMs": raw_ms, "busctlWriteMs": busctl_ms,
                      "notifyMs": notify_ms, "advertMs": advert_ms,
                      "releasedWriteMs": released_ms, "pullMs": pull_ms, "pullNotifications": pull_notifications}))


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
