#!/usr/bin/env python3
"""A scripted tour of a running RoomBridge (started by scripts/run.sh --scenario): taps on the
PN532 simulator and the curtain on the BlueZ simulator, each step checked through the daemon's
Varlink socket. Exits 0 only if every step behaved. Standard library only."""
import argparse
import json
import queue
import subprocess
import sys
import threading
import time

from varlinkclient import Connection, call


class Varlink:
    def __init__(self, path):
        self.path = path

    def call(self, method, parameters=None):
        return call(self.path, method, parameters)

    def watch(self, events):
        """Puts every Watch event on the queue, from a thread."""
        conn = Connection(self.path)
        conn.send({"method": "io.roombridge.State.Watch", "more": True})

        def pump():
            while True:
                try:
                    reply = conn.receive(timeout=24 * 3600)
                except (EOFError, OSError):
                    return
                if "event" in reply.get("parameters", {}):
                    events.put(reply["parameters"]["event"])

        threading.Thread(target=pump, daemon=True).start()


class Tour:
    def __init__(self, args):
        self.v = Varlink(args.socket)
        self.bin = args.bin
        self.pn532 = args.pn532
        self.bluez = args.bluez
        self.events = queue.Queue()
        self.v.watch(self.events)
        self.failures = 0

    def sim(self, tool, control, *command):
        out = subprocess.run([f"{self.bin}/{tool}", "ctl", "--control", control, *command],
                             capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            raise AssertionError(f"{tool} ctl {' '.join(command)}: {out.stdout}{out.stderr}")

    def tap(self, spec):
        self.sim("pn532-sim", self.pn532, "place", spec)

    def lift(self):
        # Until the daemon has seen the tag leave, the same tag placed again is the same tap.
        self.sim("pn532-sim", self.pn532, "remove")
        self.expect(lambda e: e["kind"] == "tagRemoved")

    def expect(self, predicate, timeout=10.0):
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError("the expected event did not come")
            try:
                e = self.events.get(timeout=remaining)
            except queue.Empty:
                continue
            if predicate(e):
                return e

    def lending(self, kind, **fields):
        return self.expect(lambda e: e["kind"] == "lending" and e["lending"]["kind"] == kind
                           and all(e["lending"].get(k) == v for k, v in fields.items()))

    def curtain(self, predicate, timeout=30.0):
        return self.expect(lambda e: e["kind"] == "curtain" and predicate(e["curtain"]), timeout)

    def step(self, name, body):
        try:
            detail = body()
            print(f"  ok    {name}" + (f" — {detail}" if detail else ""), flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is reported, the tour goes on
            self.failures += 1
            print(f"  FAIL  {name}: {e}", flush=True)

    def run(self):
        print("RoomBridge scenario")
        if self.pn532:
            state = self.v.call("io.roombridge.State.GetState")["parameters"]["state"]
            if not any(r["state"] == "connected" for r in state["readers"]):
                self.expect(lambda e: e["kind"] == "reader" and e["reader"]["state"] == "connected", 15)
            self.step("badge tap arms lending", self.badge)
            self.step("device tap lends it to the armed user", self.lend)
            self.step("tapping it again returns it", self.give_back)
            self.step("an unknown tag is reported with its UID", self.unknown)
        if self.bluez:
            self.step("the curtain connects and its schedule is adopted", self.curtain_connects)
            self.step("open reaches 100 % open", self.open_fully)
            self.step("the wall switch wins: a remote command is refused", self.wall_switch)
            self.step("a schedule is set and read back", self.schedule)
            self.step("link drop: reconnected", self.link_drop)
        print(f"{'All steps behaved.' if self.failures == 0 else f'{self.failures} step(s) failed.'}")
        return 0 if self.failures == 0 else 1

    # NFC and lending
    def badge(self):
        self.tap("isoa:04A1B2C3")
        e = self.lending("armed", userId="U-0001")
        self.lift()
        return e["lending"]["message"]

    def lend(self):
        self.tap("device:D-0001:Pixel 7:SN-P7-0001")
        e = self.lending("lent", deviceId="D-0001", userId="U-0001")
        self.lift()
        active = self.v.call("io.roombridge.Lending.ListActive")["parameters"]
        assert "D-0001" in json.dumps(active), active
        return e["lending"]["message"]

    def give_back(self):
        self.tap("device:D-0001:Pixel 7:SN-P7-0001")
        e = self.lending("returned", deviceId="D-0001")
        self.lift()
        return e["lending"]["message"]

    def unknown(self):
        self.tap('{"type":"ntag215","uid":"04DEC0DE000042","format":"empty"}')
        e = self.lending("unknownTag", uid="04DEC0DE000042")
        self.lift()
        return e["lending"]["message"]

    # Curtain
    def curtain_state(self):
        return self.v.call("io.roombridge.Curtain.GetState")["parameters"]["curtain"]

    def curtain_connects(self):
        self.sim("bluez-sim", self.bluez, "schedule", "07:30", "21:15")
        deadline = time.monotonic() + 30
        while True:
            c = self.curtain_state()
            if c["connection"] == "connected" and c.get("openSchedule", {}).get("time") == "07:30":
                return f"{c.get('name', '?')} {c.get('address', '')}"
            assert time.monotonic() < deadline, f"not connected: {c}"
            time.sleep(0.2)

    def open_fully(self):
        r = self.v.call("io.roombridge.Curtain.Open")
        assert "error" not in r, r
        self.curtain(lambda c: c.get("position") == 100 and c["motion"] == "idle", 60)
        return "position 100"

    def wall_switch(self):
        self.sim("bluez-sim", self.bluez, "press", "close")
        self.curtain(lambda c: c["manual"] and c["motion"] == "closing")
        r = self.v.call("io.roombridge.Curtain.Open")
        assert r.get("error") == "io.roombridge.Curtain.ManualOperationActive", r
        self.sim("bluez-sim", self.bluez, "press", "stop")
        self.curtain(lambda c: c["motion"] == "idle")
        return "ManualOperationActive"

    def schedule(self):
        r = self.v.call("io.roombridge.Curtain.SetSchedule",
                        {"open": "06:45", "close": "22:00", "openEnabled": True, "closeEnabled": False})
        assert "error" not in r, r
        c = self.curtain(lambda c: c.get("openSchedule", {}).get("time") == "06:45")["curtain"]
        assert c["closeSchedule"] == {"time": "22:00", "enabled": False}, c
        return "open 06:45 (on), close 22:00 (off)"

    def link_drop(self):
        self.sim("bluez-sim", self.bluez, "drop-link")
        self.curtain(lambda c: c["connection"] != "connected")
        t0 = time.monotonic()
        self.curtain(lambda c: c["connection"] == "connected", 15)
        return f"back after {time.monotonic() - t0:.1f} s"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--socket", required=True)
    p.add_argument("--bin", required=True)
    p.add_argument("--pn532", default="")
    p.add_argument("--bluez", default="")
    sys.exit(Tour(p.parse_args()).run())


if __name__ == "__main__":
    main()
