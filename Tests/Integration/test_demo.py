"""make run: the whole system on the simulators; Ctrl-C (SIGINT to the terminal's process group)
stops everything and leaves nothing running or behind."""
import json
import os
import re
import signal
import subprocess
import time

from conftest import BIN, ROOT, eventually


def session_members(sid: int) -> list[str]:
    """Every process in session `sid` (run.sh is started as a session leader, as a terminal's shell
    starts a job), as "pid command"; a process that left the process group or ignored SIGINT is
    still in the session."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state ppid pgrp session …
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append(f"{pid} {cmd}")
    return found


def test_run_starts_everything_and_ctrl_c_leaves_nothing_behind():
    env = dict(os.environ, ROOMBRIDGE_FORCE_SIMULATORS="1", ROOMBRIDGE_BIN=str(BIN))
    proc = subprocess.Popen(["scripts/run.sh"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    out, run_dir = "", None
    deadline = time.monotonic() + 60  # a generous "does not hang" bound for the start
    try:
        while "Ctrl-C here stops everything." not in out:
            assert time.monotonic() < deadline and proc.poll() is None, out
            out += proc.stdout.readline()
        run_dir = re.search(r"(/\S*/roombridge-run\.\w+)/roombridge\.sock", out).group(1)
        assert "pn532-sim ctl --control" in out and "bluez-sim ctl --control" in out
        sock = f"{run_dir}/roombridge.sock"
        status = subprocess.run([str(BIN / "roombridgectl"), "devices", "list", "--json", "--socket", sock],
                                capture_output=True, text=True, timeout=30)
        assert "D-0001" in status.stdout, status.stdout + status.stderr
        # The simulated iBeacon of Aiko's phone puts her in the region "aiko".
        def aiko_present():
            r = subprocess.run([str(BIN / "roombridgectl"), "presence", "--json", "--socket", sock],
                               capture_output=True, text=True, timeout=30)
            regions = json.loads(r.stdout or "{}").get("regions", [])
            return any(g["name"] == "aiko" and g.get("beacons") for g in regions)
        eventually(aiko_present, timeout=20, what="Aiko's simulated beacon is present in the region aiko")
        assert any("dbus-daemon" in p for p in session_members(proc.pid)), "the private bus is not running"
        os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        proc.wait(15)
        eventually(lambda: not session_members(proc.pid), timeout=10,
                   what="every process started by run.sh to exit after Ctrl-C")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for line in session_members(proc.pid):  # orphans (e.g. a dbus-daemon) must not outlive a failure
            os.kill(int(line.split()[0]), signal.SIGKILL)
    assert not os.path.exists(run_dir), f"{run_dir} left behind"
