"""roombridgectl (and pn532-sim ctl) as a newcomer uses them: pipes closed early, bad dates, East
Asian names in tables, doctor next to a running daemon, socket mistakes, and small slips. Each test
drives the real binaries."""
import json
import os
import subprocess
import threading
import unicodedata

import pytest

from conftest import binary, eventually, raw_call
from test_curtain import sim, start_daemon, wait_state  # noqa: F401 (sim is a fixture)

DEFAULT_SOCKET = "/run/roombridge/roombridge.sock"


def ctl(*args, socket=None, env=None, timeout=30):
    """Runs roombridgectl; returns the CompletedProcess (never raises on a non-zero exit)."""
    e = dict(os.environ)
    e.pop("LIBNFC_LOG_LEVEL", None)  # as in a newcomer's shell
    e.update(env or {})
    cmd = [binary("roombridgectl"), *args] + (["--socket", socket] if socket else [])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)


def ok(r):
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}{r.stderr}"
    return r


def call(d, method, **params):
    reply = raw_call(d.socket_path, {"method": method, "parameters": params})[0]
    assert "error" not in reply, reply
    return reply.get("parameters", {})


class Lines:
    """A process's stdout, collected line by line on a thread (so a test can wait for a line)."""

    def __init__(self, proc):
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, args=(proc.stdout,), daemon=True)
        self.thread.start()

    def _read(self, stream):
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, predicate, what, timeout=20):
        return eventually(lambda: next((l for l in self.lines if predicate(l)), None), timeout=timeout, what=what)


# --- 2. A closed pipe ends roombridgectl quietly ---------------------------------------------------

def test_watch_into_head_exits_quietly_with_status_0(nfc_daemon, pn532):
    # `roombridgectl watch --state | head -2`: head exits after the first lines of the state; the next
    # event finds the pipe closed.
    script = f'"{binary("roombridgectl")}" watch --state --socket "$1" 2>"$2" | head -2 >/dev/null; exit "${{PIPESTATUS[0]}}"'
    err = nfc_daemon.tmp / "watch.err"
    proc = subprocess.Popen(["bash", "-c", script, "bash", nfc_daemon.socket_path, str(err)])
    try:
        def tapped_and_ended():
            pn532.ctl("place", "ntag213")
            pn532.ctl("remove")
            return proc.poll() is not None
        eventually(tapped_and_ended, timeout=30, what="watch to end once its pipe was closed")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, f"exit {proc.returncode}: {err.read_text()}"
    assert err.read_text() == ""


def test_history_json_into_head_exits_quietly_with_status_0(daemon):
    call(daemon, "io.roombridge.Inventory.AddUser", id="U-0001", name="Aiko Tanaka")
    call(daemon, "io.roombridge.Inventory.AddDevice", id="D-0001", fields={"groupId": "android-phone", "model": "Pixel 7"})
    for _ in range(250):  # more JSON than a pipe holds, so roombridgectl is still writing when head exits
        call(daemon, "io.roombridge.Lending.Lend", deviceId="D-0001", userId="U-0001")
        call(daemon, "io.roombridge.Lending.Return", deviceId="D-0001")
    script = f'"{binary("roombridgectl")}" history --json --socket "$1" | head -1 >/dev/null; exit "${{PIPESTATUS[0]}}"'
    r = subprocess.run(["bash", "-c", script, "bash", daemon.socket_path], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""


# --- 3. Dates -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["lend", "--device", "D-0001", "--user", "U-0001", "--due", "tomorrow"],
    ["lend", "--device", "D-0001", "--user", "U-0001", "--due", "yesterday"],
    ["lend", "--device", "D-0001", "--user", "U-0001", "--due", "2026-13-01"],
    ["lend", "--device", "D-0001", "--user", "U-0001", "--due", "2026-02-30"],
    ["history", "--since", "last week"],
    ["history", "--until", "2026-00-10"],
    ["devices", "edit", "D-0001", "--registered", "2026-1-5"],
])
def test_a_bad_date_is_one_clear_usage_error(args):
    r = ctl(*args, socket="/nonexistent/roombridge.sock")
    assert r.returncode == 64, r.stderr
    option = next(a for a in args if a.startswith("--") and a not in ("--device", "--user"))
    first = r.stderr.splitlines()[0]
    assert option in first and ("not a date" in first or "no such day" in first), r.stderr
    assert "CtlError" not in r.stderr and "roombridgectl." not in r.stderr and "(exit:" not in r.stderr
    assert "/nonexistent" not in r.stderr, "a usage error must be reported before connecting"


def test_an_unknown_log_level_is_a_usage_error():
    r = ctl("log-level", "loud", socket="/nonexistent/roombridge.sock")
    assert r.returncode == 64 and "loud" in r.stderr and "/nonexistent" not in r.stderr, r.stderr


def test_times_are_shown_and_read_in_the_kiosks_time_zone(daemon_factory):
    """lending.time_zone decides, not the shell's TZ: --due 2026-12-01 ends at 23:59:59 in Tokyo,
    tables show Tokyo times under a header that names the zone, sentences carry the zone, and the
    CSV export's default zone is Tokyo. The wire stays UTC."""
    d = daemon_factory("--lending-time-zone", "Asia/Tokyo")
    assert call(d, "io.roombridge.State.GetState")["state"]["timeZone"] == "Asia/Tokyo"
    call(d, "io.roombridge.Inventory.AddUser", id="U-0001", name="Aiko Tanaka")
    call(d, "io.roombridge.Inventory.AddDevice", id="D-0001", fields={"groupId": "android-phone", "model": "Pixel 7"})
    shell = {"TZ": "America/New_York"}
    r = ok(ctl("lend", "--device", "D-0001", "--user", "U-0001", "--due", "2026-12-01", "--json",
               socket=d.socket_path, env=shell))
    assert json.loads(r.stdout)["dueAt"].startswith("2026-12-01T14:59:59"), r.stdout  # 23:59:59 JST

    lines = ok(ctl("rentals", socket=d.socket_path, env=shell)).stdout.splitlines()
    assert "DUE (Asia/Tokyo)" in lines[0] and "LENT (Asia/Tokyo)" in lines[0], lines
    assert "2026-12-01 23:59" in lines[1], lines
    detail = ok(ctl("devices", "show", "D-0001", socket=d.socket_path, env=shell)).stdout
    assert "due 2026-12-01 23:59 (Asia/Tokyo)" in detail, detail
    renewed = ok(ctl("renew", "D-0001", "--due", "2026-12-02", socket=d.socket_path, env=shell)).stdout
    assert "until 2026-12-02 23:59 (Asia/Tokyo)" in renewed, renewed
    status = ok(ctl("status", socket=d.socket_path, env=shell)).stdout
    assert "Time zone: Asia/Tokyo" in status, status
    csv_text = ok(ctl("history", "--format", "csv", socket=d.socket_path, env=shell)).stdout
    assert "2026-12-02 23:59:59" in csv_text, csv_text

    # Other bare days start at the kiosk's midnight: 2026-11-01 00:00 in Tokyo is 15:00 UTC the day before.
    edited = ok(ctl("devices", "edit", "D-0001", "--registered", "2026-11-01", "--json", socket=d.socket_path, env=shell))
    assert json.loads(edited.stdout)["registeredAt"].startswith("2026-10-31T15:00:00"), edited.stdout


def test_an_unknown_time_zone_stops_the_daemon_with_what_to_write(tmpdir_path):
    r = subprocess.run([binary("roombridged"), "--lending-time-zone", "Mars/Olympus_Mons", "--print-config"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 78, r.stderr
    assert "lending.time_zone" in r.stderr and "Asia/Tokyo" in r.stderr and "timedatectl" in r.stderr, r.stderr


# --- 4. Tables by display width -------------------------------------------------------------------

def columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def test_tables_align_east_asian_names(daemon):
    for uid, name in [("U-0001", "山田太郎"), ("U-0002", "Ben Okafor"), ("U-0003", "ｽｽﾞｷ")]:
        ok(ctl("users", "add", uid, "--name", name, socket=daemon.socket_path))
    lines = ok(ctl("users", "list", socket=daemon.socket_path)).stdout.splitlines()
    header, rows = lines[0], lines[1:]
    start = columns(header[:header.index("REGISTERED")])
    assert len(rows) == 3
    for row in rows:
        date_at = row.index("20")  # the registration date, e.g. 2026-11-24 03:40
        assert columns(row[:date_at]) == start, f"misaligned:\n" + "\n".join(lines)


# --- 5. doctor asks the running daemon -----------------------------------------------------------

def findings(r):
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def test_doctor_asks_the_running_daemon_for_config_database_and_readers(nfc_daemon):
    d = nfc_daemon
    eventually(lambda: call(d, "io.roombridge.State.GetState")["state"]["readers"][0]["state"] == "connected",
               what="the reader to connect")
    r = ctl("doctor", "--json", "--config", str(d.tmp / "absent.toml"), socket=d.socket_path)
    found = findings(r)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Unable to find USB busses" not in r.stderr and r.stderr == ""
    assert [f for f in found if f["status"] in ("failed", "warning")] == [], found
    by_area = {a: [f for f in found if f["area"] == a] for a in ("config", "reader", "bluetooth", "database")}
    assert str(d.tmp / "roombridged.toml") in by_area["config"][0]["detail"]
    assert [f["status"] for f in by_area["reader"]] == ["ok"] and "connected" in by_area["reader"][0]["detail"]
    assert [f["status"] for f in by_area["bluetooth"]] == ["skipped"]  # the daemon runs with the curtain off
    assert str(d.tmp / "roombridge.sqlite") in by_area["database"][0]["detail"]


def test_doctor_reports_the_curtain_connected_through_the_daemon(daemon_factory, sim):  # noqa: F811
    d = start_daemon(daemon_factory, sim, "start-notify")
    wait_state(d, lambda c: c["connection"] == "connected")
    r = ctl("doctor", "--json", socket=d.socket_path)
    bluetooth = [f for f in findings(r) if f["area"] == "bluetooth"]
    assert [f["status"] for f in bluetooth] == ["ok"], bluetooth
    assert "connected" in bluetooth[0]["detail"]


def test_doctor_without_a_daemon_checks_the_host_without_libnfc_noise(tmpdir_path):
    conf = tmpdir_path / "roombridged.toml"
    conf.write_text(f'[database]\npath = "{tmpdir_path}/db.sqlite"\n[curtain]\nenabled = false\n')
    r = ctl("doctor", "--json", "--config", str(conf), socket=str(tmpdir_path / "none.sock"), timeout=60)
    assert r.returncode == 7  # the daemon is not running: a problem
    assert "Unable to find USB busses" not in r.stderr and "libnfc" not in r.stderr, r.stderr
    socket_findings = [f for f in findings(r) if f["area"] == "socket"]
    assert socket_findings[0]["status"] == "failed" and "not running" in socket_findings[0]["detail"]


def test_doctor_without_a_daemon_asks_the_kernel_for_bluetooth(tmpdir_path):
    """The libbluetooth probe lives in roombridgectl (roombridged does not link libbluetooth): with the
    curtain enabled it reports what the kernel offers, first among the Bluetooth findings, with a fix
    for every problem."""
    conf = tmpdir_path / "roombridged.toml"
    conf.write_text(f'[database]\npath = "{tmpdir_path}/db.sqlite"\n[nfc]\nenabled = false\n'
                    '[curtain]\nenabled = true\naddress = "C4:7C:8D:6A:3E:21"\n')
    r = ctl("doctor", "--json", "--config", str(conf), socket=str(tmpdir_path / "none.sock"), timeout=60)
    kernel = [f for f in findings(r) if f["area"] == "bluetooth"
              and (f["check"] in ("kernel Bluetooth support", "HCI controllers") or f["check"].startswith("controller hci"))]
    assert kernel, findings(r)
    assert all(f.get("fix") for f in kernel if f["status"] != "ok"), kernel
    if kernel[0]["check"] == "kernel Bluetooth support":  # a kernel without AF_BLUETOOTH, as on CI
        assert kernel[0]["status"] == "failed" and "AF_BLUETOOTH" in kernel[0]["detail"]


# --- 6. Socket errors ------------------------------------------------------------------------------

def test_a_file_that_is_not_a_socket_is_named_as_such():
    r = ctl("status", socket="/etc/passwd")
    assert r.returncode == 64, r.stderr
    assert "/etc/passwd is not a socket" in r.stderr and "listening" not in r.stderr


def test_doctor_names_a_file_that_is_not_a_socket(tmpdir_path):
    r = ctl("doctor", "--json", "--config", str(tmpdir_path / "absent.toml"), socket="/etc/passwd", timeout=60)
    socket_finding = next(f for f in findings(r) if f["area"] == "socket")
    assert socket_finding["status"] == "failed" and "/etc/passwd is not a socket" in socket_finding["detail"]


def test_the_not_running_hint_is_given_once(tmpdir_path):
    path = str(tmpdir_path / "roombridge.sock")
    r = ctl("status", socket=path)
    assert r.returncode == 3
    assert r.stderr.count(path) == 1 and r.stderr.count("running") == 1, r.stderr


def test_an_empty_roombridge_socket_means_the_default_path():
    if os.path.exists(DEFAULT_SOCKET):
        pytest.skip(f"a roombridged is running on {DEFAULT_SOCKET}")
    r = ctl("status", env={"ROOMBRIDGE_SOCKET": ""})
    assert r.returncode == 3 and DEFAULT_SOCKET in r.stderr, r.stderr


# --- 7. Small slips --------------------------------------------------------------------------------

def test_a_device_filter_without_match_says_no_match(daemon):
    call(daemon, "io.roombridge.Inventory.AddDevice", id="D-0001", fields={"groupId": "android-phone", "model": "Pixel 7"})
    r = ok(ctl("devices", "list", "--text", "nomatch", socket=daemon.socket_path))
    assert "no match" in r.stdout and "devices add" not in r.stdout


def test_pn532_sim_ctl_help_prints_help_without_connecting(tmpdir_path):
    r = subprocess.run([binary("pn532-sim"), "ctl", "--control", str(tmpdir_path / "absent.sock"), "--help"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "USAGE" in r.stdout.upper() and "place" in r.stdout
    assert "absent.sock" not in r.stdout + r.stderr


def test_tag_write_for_an_unknown_device_fails_at_once(nfc_daemon):
    # A generous "does not hang" bound well below the 60 s the write would wait for a tag.
    r = ctl("tag", "write", "D-9999", "--timeout", "60", socket=nfc_daemon.socket_path, timeout=20)
    assert r.returncode == 5, r.stderr
    assert "D-9999" in r.stderr and "Place a writable tag" not in r.stderr


def test_watch_says_what_changed_when_the_schedule_changes(daemon_factory, sim):  # noqa: F811
    d = start_daemon(daemon_factory, sim, "start-notify")
    wait_state(d, lambda c: c["connection"] == "connected" and c.get("position") is not None)
    proc = subprocess.Popen([binary("roombridgectl"), "watch", "--state", "--socket", d.socket_path],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        out = Lines(proc)
        out.wait_for(lambda l: l.startswith("Counters:"), what="the state at the start of watch")
        sim.ctl("schedule", "06:45", "21:15/off")
        line = out.wait_for(lambda l: "curtain" in l and "schedule" in l, what="a curtain line naming the schedule")
        assert "06:45" in line, line
    finally:
        proc.terminate()
        proc.wait(10)


# --- --help reads as sentences -------------------------------------------------------------------

HELP_WIDTH = 100


def help_text(*command: str) -> str:
    r = subprocess.run([binary("roombridgectl"), *command, "--help"], capture_output=True, text=True, timeout=30,
                       env={**os.environ, "COLUMNS": str(HELP_WIDTH)})
    assert r.returncode == 0, r
    return r.stdout


def subcommands(text: str) -> list[str]:
    """The names in a help text's SUBCOMMANDS section (entries start two spaces in)."""
    names, inside = [], False
    for line in text.splitlines():
        if line.startswith("SUBCOMMANDS:"):
            inside = True
        elif inside and not line.strip():
            break
        elif inside and line.startswith("  ") and not line.startswith("   "):
            names.append(line.split()[0].rstrip(","))  # "tag, tags": the name, then its aliases
    return names


def every_command(prefix=()) -> list[tuple[str, ...]]:
    assert len(prefix) < 4, prefix  # the commands are three deep at most
    found = [prefix]
    for name in subcommands(help_text(*prefix)):
        if name != "help":
            found += every_command(prefix + (name,))
    return found


def hard_breaks_mid_sentence(text: str) -> list[str]:
    """Places where a line ends inside a sentence although the next word would have fitted on it: a newline
    in the source (ArgumentParser keeps those), not the wrapping. Within an option's or subcommand's entry
    the continuation lines are indented further than the entry; in the overview and discussion every line
    is a continuation of the paragraph until an empty line."""
    lines = text.splitlines()
    found = []
    for a, b in zip(lines, lines[1:]):
        if not a.strip() or not b.strip() or a.startswith("USAGE:"):
            continue
        entry_start = b.startswith("  ") and not b.startswith("   ")
        if entry_start or b.rstrip().endswith(":") and not b.startswith(" "):
            continue  # a new option, argument or subcommand, or a section heading
        word = b.split()[0]
        # ArgumentParser breaks at the last space within the width: the word fits with the space after it.
        fits = len(a.rstrip()) + 1 + len(word) + 1 <= HELP_WIDTH
        ends_mid_sentence = a.rstrip()[-1].islower() or a.rstrip()[-1].isdigit() or a.rstrip()[-1] == ","
        continues_sentence = word[0].islower() or word[0].isdigit()
        if fits and ends_mid_sentence and continues_sentence:
            found.append(f"{a.rstrip()!r} / {b.strip()!r}")
    return found


def test_the_break_check_finds_a_newline_inside_a_sentence():
    """The check below, on a text with the fault it looks for (so that it can fail), and on wrapped text."""
    assert hard_breaks_mid_sentence("OVERVIEW: Show it.\n\nTimes are shown in\nthis machine's time zone.\n") != []
    wrapped = "x" * 94 + " and\nthe rest of the sentence.\n"
    assert hard_breaks_mid_sentence(wrapped) == []


def test_help_breaks_lines_only_where_the_width_or_a_sentence_ends():
    """`roombridgectl … --help` at 100 columns for every command: no line ends mid-sentence where the next word
    would have fitted (a hard newline in the source text, which ArgumentParser keeps when it wraps)."""
    commands = every_command()
    assert ("db", "migrate-to") in commands and ("curtain", "move") in commands and len(commands) > 30, commands
    faults = {" ".join(c) or "(top)": hard_breaks_mid_sentence(help_text(*c)) for c in commands}
    assert {c: f for c, f in faults.items() if f} == {}


def test_presence_help_names_the_daemons_time_zone():
    text = help_text("presence")
    assert "kiosk's time zone as roombridged reports it" in " ".join(text.split()) and "this machine's" not in text
