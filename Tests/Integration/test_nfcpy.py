"""The PN532 simulator against nfcpy, a reader stack independent of libnfc: nfcpy's own PN532
driver (nfc/clf/pn532.py, over its `tty` transport) finds the simulated NTAG215 and reads its
NDEF message with its own Type 2 Tag code (InCommunicateThru, not libnfc's InDataExchange)."""
import json

import nfc
import nfc.clf
import nfc.clf.pn532
import nfc.clf.transport
import pytest

from test_nfc import DEVICE_MIME, device_message, spec


@pytest.fixture
def nfcpy_clf(pn532):
    """A ContactlessFrontend on the simulator's pty. nfcpy's `tty:` paths only name entries
    directly in /dev (TTY.find lists /dev), so the driver is opened on the pty path itself."""
    clf = nfc.ContactlessFrontend()
    clf.device = nfc.clf.pn532.init(nfc.clf.transport.TTY(pn532.link))
    yield clf
    clf.close()


def read_tag(clf):
    """Waits (bounded, does not hang) for a type A tag and returns nfcpy's tag object."""
    tag = clf.connect(rdwr={"targets": ["106A"], "on-connect": lambda tag: False},
                      terminate=lambda: False, iterations=50, interval=0.1)
    assert tag not in (None, False, True), "nfcpy found no tag on the simulator"
    return tag


def test_nfcpy_reads_the_ntag215_and_its_device_record(nfcpy_clf, pn532):
    pn532.ctl("place", spec(uid="04A1B2C3D4E5F6", ndef=device_message("D-0042", model="Pixel 8")))
    tag = read_tag(nfcpy_clf)
    assert tag.type == "Type2Tag"
    assert tag.product == "NXP NTAG215"  # from nfcpy's own GET_VERSION decoding
    assert tag.identifier.hex().upper() == "04A1B2C3D4E5F6"
    assert tag.ndef is not None, "nfcpy found no NDEF capability container"
    assert tag.ndef.capacity == 492  # the NTAG215 data area (CC 0x3E × 8 = 496) minus a 4-byte NDEF TLV header
    records = tag.ndef.records
    assert [r.type for r in records] == [DEVICE_MIME]
    assert json.loads(records[0].data) == {"v": 1, "deviceId": "D-0042", "model": "Pixel 8", "serial": "SN123"}


def test_nfcpy_sees_no_tag_when_the_field_is_empty(nfcpy_clf, pn532):
    # Guards the test above against a simulator that answers whatever is asked.
    target = nfcpy_clf.sense(nfc.clf.RemoteTarget("106A"))
    assert target is None
