"""Prometheus metrics (metrics.listen): roombridged serves GET /metrics on a loopback port; the text parses with
Prometheus' own Python client, and the figures follow what happened: taps, outcomes by kind, the tap → outcome
histogram, the reader, the outbox and the socket's connections."""
import re
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import binary, eventually
from test_lending import BADGE, ctl, nfc_lending_daemon
from test_nfc import device_message, lift, spec


def metrics_url(d):
    m = eventually(lambda: re.search(r"metrics: listening on (http://127\.0\.0\.1:\d+/metrics)", d.log()),
                   what="the metrics endpoint's address in the log")
    return m.group(1)


def scrape(url):
    from prometheus_client.parser import text_string_to_metric_families
    with urllib.request.urlopen(url, timeout=10) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))))


def test_metrics_follow_taps_outcomes_and_the_reader(daemon_factory, pn532):
    d = nfc_lending_daemon(daemon_factory, pn532, "--metrics-listen", "127.0.0.1:0", "--lending-repeat-window", "0")
    ctl(d, "devices", "add", "D-0042", "--group", "android-phone", "--model", "Pixel 7")
    ctl(d, "tags", "bind", "04A1B2C3D4E5F6", "--device", "D-0042")
    url = metrics_url(d)
    eventually(lambda: value(scrape(url), "roombridge_reader_connected", reader="front") == 1, what="reader connected")
    before = scrape(url)
    assert value(before, "roombridge_lending_outcomes_total", kind="lent") is None

    pn532.ctl("place", BADGE)
    eventually(lambda: value(scrape(url), "roombridge_lending_outcomes_total", kind="armed") == 1, what="armed counted")
    lift(d, pn532)
    pn532.ctl("place", spec(ndef=device_message("D-0042")))
    after = eventually(lambda: (s := scrape(url)) and value(s, "roombridge_lending_outcomes_total", kind="lent") == 1
                       and s, what="lent counted")
    lift(d, pn532)
    assert value(after, "roombridge_taps_total", reader="front") == 2
    # Both taps reached an outcome: two observations of tap → outcome, each under 5 s.
    assert value(after, "roombridge_tap_outcome_seconds_count") == 2
    assert value(after, "roombridge_tap_outcome_seconds_bucket", le="5.0") == 2
    assert value(after, "roombridge_store_offline_seconds") == 0
    assert value(after, "roombridge_varlink_connections") is not None


def test_metrics_count_refused_socket_connections(daemon_factory, tmpdir_path):
    d = daemon_factory("--metrics-listen", "127.0.0.1:0", "--socket-max-connections", "2",
                       "--socket-reserved-connections", "0")
    url = metrics_url(d)
    import socket
    held = []
    try:
        for _ in range(3):
            s = socket.socket(socket.AF_UNIX)
            s.connect(d.socket_path)
            held.append(s)
        eventually(lambda: value(scrape(url), "roombridge_varlink_refused_connections_total", reason="full") == 1,
                   what="the third connection counted as refused (the limit of 2 is full)")
        assert value(scrape(url), "roombridge_varlink_connections") == 2
    finally:
        for s in held:
            s.close()


def test_other_paths_and_methods_are_refused(daemon_factory):
    d = daemon_factory("--metrics-listen", "127.0.0.1:0")
    base = metrics_url(d).rsplit("/", 1)[0]
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(base + "/", timeout=10)
    assert missing.value.code == 404
    with pytest.raises(urllib.error.HTTPError) as posted:
        urllib.request.urlopen(urllib.request.Request(base + "/metrics", data=b"x", method="POST"), timeout=10)
    assert posted.value.code == 405


def test_a_non_loopback_address_is_refused_at_start(tmpdir_path):
    out = subprocess.run([binary("roombridged"), "--socket-path", str(tmpdir_path / "s.sock"),
                          "--database-path", str(tmpdir_path / "db.sqlite"), "--metrics-listen", "0.0.0.0:9466"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 78, out
    assert "metrics.listen" in out.stderr and "loopback" in out.stderr, out.stderr
