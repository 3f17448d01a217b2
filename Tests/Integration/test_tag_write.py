"""Device tag registration end to end: roombridgectl tag write → the real daemon writes through
libnfc to a tag on the PN532 simulator, reads it back, binds the UID. The simulator's memory dump
is decoded with ndeflib (independent of our codec)."""
import json
import subprocess
import threading

import ndef

from conftest import binary, eventually
from test_nfc import connected_watcher, device_message, lift, spec

DEVICE_MIME = "application/vnd.roombridge.device+json"


def ctl(d, *args, check=True, timeout=60):
    out = subprocess.run([binary("roombridgectl"), *args, "--socket", d.socket_path],
                         capture_output=True, text=True, timeout=timeout)
    if check:
        assert out.returncode == 0, out.stdout + out.stderr
    return out


def add_device(d, device_id="D-0001", model="Pixel 7", serial="SN123"):
    ctl(d, "devices", "add", device_id, "--group", "android-phone", "--model", model, "--serial", serial)


def nfc_registered(d, device_id):
    device = json.loads(ctl(d, "devices", "show", device_id, "--json").stdout.splitlines()[0])
    return (device.get("device") or device)["isNfcRegistered"]


def start_write(d, *args):
    """Runs `tag write` in the background (it waits for a tag); returns (thread, result holder)."""
    result = {}

    def run():
        result["out"] = ctl(d, "tag", "write", *args, "--json", check=False)

    t = threading.Thread(target=run)
    t.start()
    eventually(lambda: json.loads(ctl(d, "status", "--json").stdout).get("tagWrite", {}).get("phase") == "armed",
               what="the daemon to show the tag write as armed")
    return t, result


def tag_memory(pn532):
    """The simulated tag's memory, and the NDEF message in it, decoded by ndeflib."""
    hexdump = pn532.ctl("dump").split(" ", 1)[1]
    mem = bytes.fromhex(hexdump)
    data = mem[16:]  # from page 4
    assert data[0] == 0x03, f"no NDEF TLV at page 4: {data[:8].hex()}"
    if data[1] == 0xFF:
        length, start = int.from_bytes(data[2:4], "big"), 4
    else:
        length, start = data[1], 2
    return mem, list(ndef.message_decoder(data[start:start + length]))


def test_blank_tag_is_formatted_written_verified_and_bound(nfc_daemon, pn532):
    d = nfc_daemon
    add_device(d)
    w = connected_watcher(d)
    thread, result = start_write(d, "D-0001", "--uri", "https://example.com/d/D-0001")
    pn532.ctl("place", json.dumps({"type": "ntag213", "uid": "04C0FFEE000001", "format": "blank"}))
    thread.join(30)
    out = result["out"]
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report == {"uid": "04C0FFEE000001", "tagType": "NTAG213", "formatted": True, "locked": False}
    mem, records = tag_memory(pn532)
    assert mem[12:16] == bytes([0xE1, 0x10, 0x12, 0x00]), "capability container of an NTAG213"
    assert records[0].type == "urn:nfc:wkt:U" and records[0].iri == "https://example.com/d/D-0001"
    assert records[1].type == DEVICE_MIME
    assert json.loads(records[1].data) == {"v": 1, "deviceId": "D-0001", "model": "Pixel 7", "serial": "SN123"}
    # Events: armed → done; the device is NFC registered and the UID bound.
    e = w.wait_for(lambda e: e["kind"] == "tagWrite" and e["tagWrite"]["phase"] == "done")
    assert e["tagWrite"]["uid"] == "04C0FFEE000001"
    assert nfc_registered(d, "D-0001") is True
    # The next tap of that tag reads the device record.
    lift(d, pn532)
    pn532.ctl("place", json.dumps({"type": "ntag213", "uid": "04C0FFEE000001", "memory": mem.hex()}))
    tap = w.wait_for(lambda e: e["kind"] == "tagArrived" and e["tap"]["uid"] == "04C0FFEE000001")["tap"]
    assert tap["device"]["deviceId"] == "D-0001"


def test_tag_bound_to_another_device_is_refused_unless_forced(nfc_daemon, pn532):
    d = nfc_daemon
    add_device(d, "D-0001")
    add_device(d, "D-0002", model="iPhone 15", serial="SN2")
    ctl(d, "tag", "bind", "04AB0000000002", "--device", "D-0002")
    thread, result = start_write(d, "D-0001")
    original = device_message("D-0002")
    pn532.ctl("place", spec(uid="04AB0000000002", kind="ntag215", ndef=original))
    thread.join(30)
    out = result["out"]
    assert out.returncode == 5
    assert "bound to device D-0002" in out.stderr and "--force" in out.stderr
    _, records = tag_memory(pn532)
    assert json.loads(records[0].data)["deviceId"] == "D-0002", "the refused tag was written"
    # With --force it is re-registered.
    lift(d, pn532)
    thread, result = start_write(d, "D-0001", "--force")
    pn532.ctl("place", spec(uid="04AB0000000002", kind="ntag215", ndef=original))
    thread.join(30)
    assert result["out"].returncode == 0, result["out"].stderr
    _, records = tag_memory(pn532)
    assert json.loads(records[-1].data)["deviceId"] == "D-0001"


def test_read_only_tag_is_refused_and_nothing_recorded(nfc_daemon, pn532):
    d = nfc_daemon
    add_device(d)
    thread, result = start_write(d, "D-0001")
    pn532.ctl("place", json.dumps({"type": "ntag213", "uid": "040000000000A1", "format": "empty", "readOnly": True}))
    thread.join(30)
    out = result["out"]
    assert out.returncode == 5 and "read-only" in out.stderr
    assert nfc_registered(d, "D-0001") is False


def test_lock_makes_the_tag_read_only(nfc_daemon, pn532):
    d = nfc_daemon
    add_device(d)
    thread, result = start_write(d, "D-0001", "--lock")
    pn532.ctl("place", json.dumps({"type": "ntag213", "uid": "040000000000B1", "format": "empty"}))
    thread.join(30)
    assert result["out"].returncode == 0, result["out"].stderr
    assert json.loads(result["out"].stdout)["locked"] is True
    mem, _ = tag_memory(pn532)
    assert mem[15] == 0x0F, "CC write access byte is read-only"
    assert mem[10] == 0xFF and mem[11] == 0xFF, "static lock bits set"


def test_unknown_device_cancel_and_timeout(nfc_daemon, pn532):
    d = nfc_daemon
    out = ctl(d, "tag", "write", "D-9999", check=False)
    assert out.returncode == 5 and "no device D-9999" in out.stderr
    add_device(d)
    thread, result = start_write(d, "D-0001")
    assert ctl(d, "tag", "cancel").stdout.strip() == "Cancelled."
    thread.join(30)
    assert result["out"].returncode == 5 and "cancelled" in result["out"].stderr
    out = ctl(d, "tag", "write", "D-0001", "--timeout", "1", check=False)
    assert out.returncode == 5 and "within 1 s" in out.stderr


def test_sigterm_while_a_write_waits_for_a_tag(nfc_daemon, pn532):
    d = nfc_daemon
    add_device(d)
    thread, result = start_write(d, "D-0001")
    # A generous "does not hang" bound: the waiting write ends with its caller, it is not
    # waited out (its 60 s default timeout would exceed this bound).
    assert d.terminate(timeout=30) == 0
    thread.join(30)
    assert not thread.is_alive()
    assert result["out"].returncode != 0
