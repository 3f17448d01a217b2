"""make run: the whole system on the simulators; Ctrl-C (SIGINT to the terminal's process group)
stops everything and leaves nothing running or behind."""
import os
import re
import signal
import subprocess
import time

from conftest import BIN, ROOT


def test_run_starts_everything_and_ctrl_c_leaves_nothing_behind():
    env = dict(os.environ, ROOMBRIDGE_FORCE_SIMULATORS="1", ROOMBRIDGE_BIN=str(BIN))
    proc = subprocess.Popen(["scripts/run.sh"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    out, run_dir = "", None
    deadline = time.monotonic() + 60
    try:
        while "Ctrl-C here stops everything." not in out:
            assert time.monotonic() < deadline and proc.poll() is None, out
            out += proc.stdout.readline()
        run_dir = re.search(r"(/tmp/roombridge-run\.\w+)/roombridge\.sock", out).group(1)
        assert "pn532-sim ctl --control" in out and "bluez-sim ctl --control" in out
        sock = f"{run_dir}/roombridge.sock"
        status = subprocess.run([str(BIN / "roombridgectl"), "devices", "list", "--json", "--socket", sock],
                                capture_output=True, text=True, timeout=30)
        assert "D-0001" in status.stdout, status.stdout + status.stderr
        os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        proc.wait(15)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert not os.path.exists(run_dir), f"{run_dir} left behind"
    leftovers = subprocess.run(["pgrep", "-f", run_dir], capture_output=True, text=True).stdout.split()
    assert leftovers == [], f"processes left running: {leftovers}"
