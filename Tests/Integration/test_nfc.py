"""NFC end to end: the real roombridged drives libnfc's pn532_uart driver against the PN532
simulator on a pty. Tag contents are encoded by Python's ndeflib (an independent NDEF encoder)."""
import json
import signal
import subprocess

import ndef
import pytest

from conftest import Watcher, binary, eventually

DEVICE_MIME = "application/vnd.roombridge.device+json"


def device_message(device_id, model="Pixel 7", serial="SN123", extra=()):
    payload = json.dumps({"v": 1, "deviceId": device_id, "model": model, "serial": serial}).encode()
    records = [*extra, ndef.Record(DEVICE_MIME, "", payload)]
    return b"".join(ndef.message_encoder(records)).hex()


def spec(uid="04A1B2C3D4E5F6", kind="ntag215", **fields):
    return json.dumps({"type": kind, "uid": uid, **fields})


def wait_reader(w, state="connected", timeout=15):
    return w.wait_for(lambda e: e["kind"] == "reader" and e["reader"]["state"] == state, timeout, f"reader {state}")


def lift(d, pn532):
    """Removes the tag and waits until the daemon has seen it leave the field. A tag with the same
    UID placed again before that is, to the reader, the same tag still lying there: no new tap."""
    def removals():
        out = subprocess.run([binary("roombridgectl"), "status", "--json", "--socket", d.socket_path],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)["counters"]["removals"]
    before = removals()
    pn532.ctl("remove")
    eventually(lambda: removals() > before, what="the daemon to see the tag lifted")


def connected_watcher(d):
    w = Watcher(d.socket_path)
    if not any(r["state"] == "connected" for r in w.state["readers"]):
        wait_reader(w)
    return w


def test_tap_gives_one_arrival_with_the_device_record(nfc_daemon, pn532):
    w = connected_watcher(nfc_daemon)
    pn532.ctl("place", spec(ndef=device_message("D-0001", extra=[ndef.UriRecord("https://example.com/d/1")])))
    e = w.wait_for(lambda e: e["kind"] == "tagArrived", what="tap")
    tap = e["tap"]
    assert tap["reader"] == "front"
    assert tap["uid"] == "04A1B2C3D4E5F6"
    assert tap["tagType"] == "NTAG215"
    assert tap["atqa"] == "0044" and tap["sak"] == "00"
    assert tap["device"] == {"deviceId": "D-0001", "model": "Pixel 7", "serial": "SN123"}
    assert [r["type"] for r in tap["records"]] == ["U", DEVICE_MIME]
    assert tap["records"][0]["uri"] == "https://example.com/d/1"
    assert "readError" not in tap
    # Held on the reader: it checks the tag's presence again and again (a presence check is a
    # 12-byte READ command: 120 bytes are about ten), and reports no repeat.
    pn532.ctl("counters", "reset")
    eventually(lambda: pn532.host_bytes() >= 120, what="the reader to check the held tag ten times")
    pn532.ctl("remove")
    events = w.events_until(lambda e: e["kind"] == "tagRemoved", what="removal")
    assert [e["kind"] for e in events if e["kind"] == "tagArrived"] == [], "a held tag was reported again"
    assert events[-1]["removal"]["uid"] == "04A1B2C3D4E5F6"
    # The same tag again is a new tap.
    pn532.ctl("place", spec(ndef=device_message("D-0001")))
    again = w.wait_for(lambda e: e["kind"] == "tagArrived", what="second tap")
    assert again["seq"] > e["seq"]
    state = json.loads(subprocess.run([binary("roombridgectl"), "status", "--json", "--socket", nfc_daemon.socket_path],
                                      capture_output=True, text=True).stdout)
    assert state["lastTap"]["device"]["deviceId"] == "D-0001"
    assert state["counters"]["taps"] == 2 and state["counters"]["removals"] == 1


def test_unknown_tag_reports_uid_type_and_records(nfc_daemon, pn532):
    w = connected_watcher(nfc_daemon)
    msg = b"".join(ndef.message_encoder([ndef.TextRecord("hello", "en")])).hex()
    pn532.ctl("place", spec(uid="04112233445566", kind="ntag213", ndef=msg))
    tap = w.wait_for(lambda e: e["kind"] == "tagArrived")["tap"]
    assert tap["uid"] == "04112233445566" and tap["tagType"] == "NTAG213"
    assert "device" not in tap
    assert tap["records"][0]["text"] == "hello"


def test_badges_iso_a_and_felica(nfc_daemon, pn532):
    w = connected_watcher(nfc_daemon)
    pn532.ctl("place", "isoa:0A0B0C0D")
    tap = w.wait_for(lambda e: e["kind"] == "tagArrived")["tap"]
    assert tap["uid"] == "0A0B0C0D" and tap["tagType"] == "ISO14443-A" and tap["records"] == []
    pn532.ctl("remove")
    w.wait_for(lambda e: e["kind"] == "tagRemoved")
    pn532.ctl("place", "felica:0123456789ABCDEF")
    tap = w.wait_for(lambda e: e["kind"] == "tagArrived")["tap"]
    assert tap["uid"] == "0123456789ABCDEF" and tap["tagType"] == "FeliCa"


@pytest.mark.parametrize("data_area,reason", [
    ("03FF0100D1", "length past the end"),   # NDEF TLV claims 256 bytes
    ("03" + "20" + "D1" * 32 + "FE", "not an NDEF message"),
])
def test_malformed_tag_is_reported_and_reader_carries_on(nfc_daemon, pn532, data_area, reason):
    w = connected_watcher(nfc_daemon)
    pn532.ctl("place", spec(uid="04DEADBEEF0001", kind="ntag213", dataArea=data_area))
    tap = w.wait_for(lambda e: e["kind"] == "tagArrived")["tap"]
    assert tap["uid"] == "04DEADBEEF0001"
    assert tap.get("readError"), f"{reason}: no readError in {tap}"
    assert "device" not in tap
    pn532.ctl("remove")
    pn532.ctl("place", spec(ndef=device_message("D-0002")))
    tap = w.wait_for(lambda e: e["kind"] == "tagArrived")["tap"]
    assert tap["device"]["deviceId"] == "D-0002"


def test_unplug_and_replug(nfc_daemon, pn532):
    w = connected_watcher(nfc_daemon)
    pn532.ctl("unplug")
    down = wait_reader(w, "disconnected", timeout=5)
    assert down["reader"]["lastError"]
    pn532.ctl("replug")
    # Reconnects by itself (a generous "does not hang" bound, not a speed check: the
    # reconnect time is measured by roombridge-bench).
    wait_reader(w, "connected", timeout=30)
    pn532.ctl("place", spec(ndef=device_message("D-0003")))
    assert w.wait_for(lambda e: e["kind"] == "tagArrived")["tap"]["device"]["deviceId"] == "D-0003"


def test_sigterm_while_polling_exits_zero_quickly(nfc_daemon, pn532):
    w = connected_watcher(nfc_daemon)
    w.close()
    # A generous "does not hang" bound: polling is aborted, not waited out (the shutdown time
    # is measured by roombridge-bench).
    assert nfc_daemon.terminate(signal.SIGTERM, timeout=30) == 0
    # The device was released: libnfc's own tool can open it now.
    out = subprocess.run(["nfc-list"], env={"LIBNFC_DEVICE": f"pn532_uart:{pn532.link}", "LIBNFC_AUTO_SCAN": "false",
                                            "LIBNFC_LOG_LEVEL": "0", "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=30)
    assert "device opened" in out.stdout, out.stdout + out.stderr


def test_doctor_sees_the_reader_through_the_daemon_and_the_database(nfc_daemon, pn532, tmpdir_path):
    connected_watcher(nfc_daemon).close()
    cfg = tmpdir_path / "doctor.toml"
    cfg.write_text(f'[nfc]\nreaders = ["front=pn532_uart:{pn532.link}"]\n[database]\npath = "{tmpdir_path / "roombridge.sqlite"}"\n')
    out = subprocess.run([binary("roombridgectl"), "doctor", "--json", "--config", str(cfg), "--socket", nfc_daemon.socket_path],
                         capture_output=True, text=True, timeout=60)
    findings = {f["check"]: f for f in map(json.loads, out.stdout.splitlines())}
    assert findings["reader front"]["status"] == "ok", findings
    database = findings["roombridged's database"]
    assert database["status"] == "ok" and "current" in database["detail"]
    kernel = findings.get("kernel Bluetooth support")
    if kernel and kernel["status"] == "failed":  # these machines: no Bluetooth in the kernel
        assert "AF_BLUETOOTH" in kernel["detail"] and kernel["fix"]


def test_doctor_flags_a_corrupt_database(tmpdir_path):
    db = tmpdir_path / "bad.sqlite"
    db.write_bytes(b"this is not a database" * 100)
    cfg = tmpdir_path / "doctor.toml"
    cfg.write_text(f'[database]\npath = "{db}"\n[nfc]\nenabled = false\n')
    out = subprocess.run([binary("roombridgectl"), "doctor", "--json", "--config", str(cfg), "--socket", str(tmpdir_path / "none")],
                         capture_output=True, text=True, timeout=60)
    findings = {f["check"]: f for f in map(json.loads, out.stdout.splitlines())}
    assert findings["schema"]["status"] == "failed" and findings["schema"]["fix"]
    assert db.read_bytes() == b"this is not a database" * 100, "doctor changed the file"
    # And the daemon refuses it at start with a clear message, without touching it.
    out = subprocess.run([binary("roombridged"), "--config", str(cfg), "--socket-path", str(tmpdir_path / "s.sock"),
                          "--socket-group", "", "--no-curtain-enabled"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 73, out.stderr
    assert "corrupt" in out.stderr or "not a RoomBridge database" in out.stderr
    assert not (tmpdir_path / "s.sock").exists()
    assert db.read_bytes() == b"this is not a database" * 100
