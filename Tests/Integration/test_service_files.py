"""The systemd units, udev rules, D-Bus policy and `make install` — checked with the real tools
where they exist on Debian 12 (systemd-analyze, dbus-daemon), and a small udev rules evaluator
for matching (udevadm 252 has no `verify`)."""
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

import pytest

from conftest import BIN, ROOT, eventually, raw_call

EXPOSURE_TARGET = 1.5


def render_service(directory: pathlib.Path) -> pathlib.Path:
    text = (ROOT / "systemd" / "roombridged.service.in").read_text().replace("@BINDIR@", str(BIN))
    path = directory / "roombridged.service"
    path.write_text(text)
    shutil.copy(ROOT / "systemd" / "roombridged.socket", directory / "roombridged.socket")
    return path


def test_units_verify(tmpdir_path):
    service = render_service(tmpdir_path)
    out = subprocess.run(["systemd-analyze", "verify", str(service), str(tmpdir_path / "roombridged.socket")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "roombridged." not in out.stdout + out.stderr, out.stdout + out.stderr


def test_security_exposure_within_target(tmpdir_path):
    service = render_service(tmpdir_path)
    out = subprocess.run(["systemd-analyze", "security", "--offline=yes", str(service)],
                         capture_output=True, text=True)
    m = re.search(r"Overall exposure level for roombridged.service: ([0-9.]+)", out.stdout)
    assert m, out.stdout + out.stderr
    assert float(m.group(1)) <= EXPOSURE_TARGET, f"exposure {m.group(1)} > {EXPOSURE_TARGET}"


def test_service_essentials():
    text = (ROOT / "systemd" / "roombridged.service.in").read_text()
    for line in ["Type=notify", "NotifyAccess=main", "WatchdogSec=", "Restart=on-failure", "StateDirectory=roombridge",
                 "RuntimeDirectory=roombridge", "ConfigurationDirectory=roombridge", "DevicePolicy=closed",
                 "CapabilityBoundingSet=\n", "SystemCallFilter=@system-service", "MemoryDenyWriteExecute=yes"]:
        assert line in text, line
    assert "\nPrivateDevices=yes" not in text, "PrivateDevices hides the reader"
    sock = (ROOT / "systemd" / "roombridged.socket").read_text()
    assert "SocketMode=0660" in sock and "SocketGroup=roombridge" in sock


def test_exits_a_restart_cannot_fix_are_not_restarted():
    """64 usage, 69 socket in use by another roombridged, 73 unusable database, 78 bad configuration:
    Restart=on-failure would otherwise retry them every RestartSec until the start limit."""
    text = (ROOT / "systemd" / "roombridged.service.in").read_text()
    line = next(l for l in text.splitlines() if l.startswith("RestartPreventExitStatus="))
    assert {"64", "69", "73", "78"} <= set(line.split("=", 1)[1].split()), line


def test_dbus_policy_loads_in_dbus_daemon(tmpdir_path):
    conf = tmpdir_path / "bus.conf"
    conf.write_text(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={tmpdir_path}/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow user="*"/><allow own="*"/></policy>
  <include>{ROOT}/dbus/roombridge.conf</include>
</busconfig>
""")
    proc = subprocess.Popen(["dbus-daemon", f"--config-file={conf}", "--nofork", "--print-address"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("unix:"), proc.stderr.read()
    finally:
        proc.terminate()
        proc.wait(5)


# --- udev -------------------------------------------------------------------------------------------

RULE_TOKEN = re.compile(r'\s*([A-Z_]+)(?:\{([^}]*)\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')


def parse_rules(text):
    rules = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#")[0].strip() if not raw.strip().startswith("#") else ""
        # keep '#' inside quotes: rules here have no '#' inside values
        if not line:
            continue
        pos, tokens = 0, []
        while pos < len(line):
            m = RULE_TOKEN.match(line, pos)
            assert m, f"line {n}: cannot parse at {line[pos:]!r}"
            tokens.append((m.group(1), m.group(2), m.group(3), m.group(4)))
            pos = m.end()
        rules.append((n, tokens))
    return rules


def evaluate(rules, device):
    """A small udev: match keys (==, !=, ATTR/ATTRS/ENV/SUBSYSTEM/ACTION with globs), GOTO/LABEL,
    assignments of GROUP/MODE/SYMLINK/ENV/TAG. Returns the assignments made."""
    import fnmatch
    labels = {tokens[0][3]: i for i, (_, tokens) in enumerate(rules) if tokens[0][0] == "LABEL"}
    result = {"SYMLINK": [], "TAG": [], "ENV": {}}
    i = 0
    while i < len(rules):
        _, tokens = rules[i]
        i += 1
        matched = True
        for key, attr, op, value in tokens:
            if op in ("==", "!="):
                if key in ("ATTR", "ATTRS"):
                    actual = device.get("attrs", {}).get(attr)
                elif key == "ENV":
                    actual = device.get("env", {}).get(attr)
                else:
                    actual = device.get(key.lower())
                hit = actual is not None and any(fnmatch.fnmatchcase(actual, v) for v in value.split("|"))
                if (op == "==") != hit:
                    matched = False
                    break
        if not matched:
            continue
        for key, attr, op, value in tokens:
            if op in ("==", "!="):
                continue
            if key == "GOTO":
                assert value in labels, f"GOTO {value} has no LABEL"
                i = labels[value]
                break
            if key == "LABEL":
                continue
            value = re.sub(r"\$attr\{([^}]*)\}", lambda m: device.get("attrs", {}).get(m.group(1), ""), value)
            if key == "ENV":
                result["ENV"][attr] = value
            elif key in ("SYMLINK", "TAG"):
                result[key].append(value)
            else:
                result[key] = value
    return result


NATIVE_READERS = [("04cc", "0531"), ("054c", "0193"), ("04cc", "2533"), ("04e6", "5591"), ("04e6", "5594"),
                  ("1fd3", "0608"), ("054c", "02e1"), ("072f", "2200"), ("072f", "90cc"), ("072f", "2214")]


def usb_device(vid, pid):
    return {"action": "add", "subsystem": "usb", "env": {"DEVTYPE": "usb_device"},
            "attrs": {"idVendor": vid, "idProduct": pid, "busnum": "1", "devnum": "7"}}


@pytest.mark.parametrize("vid,pid", NATIVE_READERS)
def test_native_reader_gets_group_and_symlink(vid, pid):
    rules = parse_rules((ROOT / "udev" / "60-roombridge-nfc.rules").read_text())
    r = evaluate(rules, usb_device(vid, pid))
    assert r.get("GROUP") == "roombridge" and r.get("MODE") == "0660"
    assert f"nfc/{vid}-{pid}-1-7" in r["SYMLINK"]
    assert "systemd" in r["TAG"] and r["ENV"].get("ID_MM_DEVICE_IGNORE") == "1"


@pytest.mark.parametrize("device", [
    usb_device("10c4", "ea60"),                                  # CP210x bridge: not ours by VID:PID
    usb_device("1a86", "7523"),                                  # CH340
    usb_device("0403", "6001"),                                  # FTDI
    usb_device("04cc", "9999"),                                  # NXP, other product
    {**usb_device("072f", "2200"), "action": "remove"},          # removal
    {**usb_device("072f", "2200"), "env": {"DEVTYPE": "usb_interface"}},
    {"action": "add", "subsystem": "tty", "env": {"ID_VENDOR_ID": "072f"}, "attrs": {"idVendor": "072f"}},
])
def test_other_devices_are_left_alone(device):
    rules = parse_rules((ROOT / "udev" / "60-roombridge-nfc.rules").read_text())
    r = evaluate(rules, device)
    assert "GROUP" not in r and not r["SYMLINK"]


def serial_template(serial):
    text = (ROOT / "udev" / "61-roombridge-pn532-serial.rules.example").read_text()
    return parse_rules(text.replace("REPLACE_WITH_SERIAL", serial))


def tty(serial, vid="10c4", pid="ea60"):
    return {"action": "add", "subsystem": "tty",
            "env": {"ID_SERIAL_SHORT": serial, "ID_VENDOR_ID": vid, "ID_MODEL_ID": pid},
            "attrs": {"idVendor": vid, "idProduct": pid}}


def test_serial_template_matches_only_that_adapter():
    rules = serial_template("0001A2B3")
    mine = evaluate(rules, tty("0001A2B3"))
    assert "nfc/pn532" in mine["SYMLINK"] and mine["GROUP"] == "roombridge"
    assert mine["ENV"].get("ID_MM_DEVICE_IGNORE") == "1" and "systemd" in mine["TAG"]
    other = evaluate(rules, tty("FFFF0000"))  # same bridge chip, another device (say a GPS)
    assert not other["SYMLINK"] and "GROUP" not in other


def test_template_never_matches_on_vid_pid_alone():
    for raw in (ROOT / "udev" / "61-roombridge-pn532-serial.rules.example").read_text().splitlines():
        rule = raw.lstrip("#").strip()
        if "SYMLINK" in rule:
            assert "ID_SERIAL_SHORT" in rule or "ID_PATH" in rule, rule


# --- install -------------------------------------------------------------------------------------------

def test_make_install_tree(tmpdir_path):
    dest = tmpdir_path / "root"
    out = subprocess.run(["make", "-s", "install", f"DESTDIR={dest}", "PREFIX=/usr", f"RELEASE_BIN={BIN}"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    expected = ["usr/bin/roombridged", "usr/bin/roombridgectl", "usr/lib/systemd/system/roombridged.service",
                "usr/lib/systemd/system/roombridged.socket", "usr/lib/sysusers.d/roombridge.conf",
                "usr/lib/tmpfiles.d/roombridge.conf", "usr/lib/udev/rules.d/60-roombridge-nfc.rules",
                "usr/share/dbus-1/system.d/roombridge.conf", "etc/roombridge/roombridged.toml",
                "usr/share/doc/roombridge/61-roombridge-pn532-serial.rules.example",
                "usr/share/doc/roombridge/operations.md", "usr/share/bash-completion/completions/roombridgectl"]
    for rel in expected:
        assert (dest / rel).exists(), rel
    # One program under three names (the multi-call roombridge).
    assert not (dest / "usr/bin/roombridged").is_symlink()
    for name in ("roombridgectl", "roombridge-web"):
        assert os.readlink(dest / "usr/bin" / name) == "roombridged", name
    unit = (dest / "usr/lib/systemd/system/roombridged.service").read_text()
    assert "ExecStart=/usr/bin/roombridged" in unit and "@BINDIR@" not in unit
    # The installed example configuration is valid for the installed daemon.
    out = subprocess.run([str(dest / "usr/bin/roombridged"), "--config", str(dest / "etc/roombridge/roombridged.toml"),
                          "--print-config"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    out = subprocess.run(["make", "-s", "uninstall", f"DESTDIR={dest}", "PREFIX=/usr"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0
    assert not (dest / "usr/bin/roombridged").exists()
    assert (dest / "etc/roombridge/roombridged.toml").exists(), "uninstall removed the configuration"


def test_make_install_default_prefix_puts_the_dbus_policy_where_dbus_daemon_reads(tmpdir_path):
    dest = tmpdir_path / "root"
    out = subprocess.run(["make", "-s", "install", f"DESTDIR={dest}", f"RELEASE_BIN={BIN}"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    # The directories the system bus includes (<includedir> in Debian's system.conf).
    assert (dest / "etc/dbus-1/system.d/roombridge.conf").exists()
    assert not (dest / "usr/local/share/dbus-1").exists()
    assert (dest / "usr/local/bin/roombridged").exists()


def test_daemon_runs_under_memory_deny_write_execute(tmpdir_path):
    """MemoryDenyWriteExecute=yes in the unit: the Swift runtime must not need writable+executable
    memory. The kernel's PR_SET_MDWE (Linux >= 6.3) enforces the same rule on this process tree."""
    probe = subprocess.run(["python3", "-c", "import ctypes; print(ctypes.CDLL(None).prctl(65, 1, 0, 0, 0))"],
                           capture_output=True, text=True)
    if probe.stdout.strip() != "0":
        pytest.skip("this kernel has no PR_SET_MDWE")
    sock = tmpdir_path / "mdwe.sock"
    launcher = ("import ctypes, os, sys; assert ctypes.CDLL(None).prctl(65, 1, 0, 0, 0) == 0; "
                "os.execv(sys.argv[1], sys.argv[1:])")
    proc = subprocess.Popen(["python3", "-c", launcher, str(BIN / "roombridged"), "--socket-path", str(sock),
                             "--socket-group", "", "--database-path", str(tmpdir_path / "db.sqlite"),
                             "--no-curtain-enabled", "--no-nfc-enabled"], stderr=subprocess.PIPE, text=True)
    try:
        def listening():
            assert proc.poll() is None, f"roombridged died under MDWE: {proc.stderr.read()}"
            return sock.exists()
        eventually(listening, what="roombridged to listen under MDWE")
        [r] = raw_call(str(sock), {"method": "io.roombridge.State.GetState"})
        assert "state" in r["parameters"]
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
