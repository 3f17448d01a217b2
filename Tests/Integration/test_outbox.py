"""The outbox end to end: lends, returns and renewals through roombridgectl reach a real local
HTTP receiver that fails the first requests and is down for a while; every event arrives, in
order for each device, with no duplicates after deduplication by Idempotency-Key, signed with
HMAC-SHA256 -- also across a kill -9 of the daemon in the middle of the backlog."""
import datetime
import hashlib
import hmac
import http.server
import json
import os
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import Watcher, binary, eventually

SECRET = b"outbox-test-secret"


class Receiver:
    """An HTTP receiver on a fixed local port: answers 503 to the first `fail_first` requests,
    can be taken down (port closed) and brought back, and records every request it answers."""

    def __init__(self, fail_first=0, delay=0.0):
        self.fail_first = fail_first
        self.delay = delay
        self.requests = []  # (headers dict, body bytes, status)
        self.lock = threading.Lock()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.server = None
        self.thread = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/hook"

    def up(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if receiver.delay:
                    time.sleep(receiver.delay)
                with receiver.lock:
                    status = 503 if receiver.fail_first > 0 else 200
                    if receiver.fail_first > 0:
                        receiver.fail_first -= 1
                    receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body, status))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def down(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def accepted(self):
        with self.lock:
            return [(h, b) for h, b, status in self.requests if status == 200]

    def failed(self):
        with self.lock:
            return sum(1 for _, _, status in self.requests if status != 200)

    def events(self):
        """Accepted events, deduplicated by Idempotency-Key, in order of first arrival."""
        seen, out = set(), []
        for headers, body in self.accepted():
            key = headers["idempotency-key"]
            if key not in seen:
                seen.add(key)
                out.append(json.loads(body))
        return out


def configure(tmp, receiver):
    secret = tmp / "hook.secret"
    secret.write_bytes(SECRET + b"\n")
    os.chmod(secret, 0o600)
    (tmp / "roombridged.toml").write_text(f"""
[log]
level = "debug"

[outbox]
retry_base = 0.2
retry_max = 1.0
poll_interval = 0.1
failing_alert = 0.5

[outbox.targets.hook]
url = "{receiver.url}"
secret_file = "{secret}"
timeout = 1
""")


def ctl(d, *args):
    env = dict(os.environ, ROOMBRIDGE_SOCKET=d.socket_path)
    r = subprocess.run([binary("roombridgectl"), *args], capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 0, f"roombridgectl {' '.join(args)}: exit {r.returncode}\n{r.stdout}{r.stderr}"
    return r.stdout


def seed(d, devices):
    ctl(d, "users", "add", "U-1", "--name", "Ada Lovelace")
    ctl(d, "users", "add", "U-2", "--name", "Grace Hopper")
    for device in devices:
        ctl(d, "devices", "add", device, "--group", "android-phone", "--model", "Pixel 7", "--serial", "SN-" + device)


def check_signatures(receiver):
    for headers, body in receiver.accepted():
        expected = hmac.new(SECRET, headers["x-roombridge-timestamp"].encode() + b"." + body, hashlib.sha256).hexdigest()
        assert headers["x-roombridge-signature"] == "sha256=" + expected
        assert json.loads(body)["id"] == headers["idempotency-key"]


def per_device(events):
    out = {}
    for e in events:
        out.setdefault(e["deviceId"], []).append(e["kind"])
    return out


def status(d):
    out = ctl(d, "outbox", "--json")
    return {t["target"]: t for t in map(json.loads, out.splitlines())}


def test_every_event_arrives_in_order_through_failures_and_an_outage(tmpdir_path, daemon_factory):
    receiver = Receiver(fail_first=3)
    configure(tmpdir_path, receiver)
    receiver.up()
    d = daemon_factory()
    try:
        seed(d, ["D-1", "D-2", "D-3"])
        ctl(d, "lend", "--device", "D-1", "--user", "U-1")
        ctl(d, "lend", "--device", "D-2", "--user", "U-2")
        eventually(lambda: receiver.failed() >= 3, what="the first three requests refused")

        # Down: the port is closed while more happens.
        receiver.down()
        ctl(d, "return", "D-1")
        ctl(d, "lend", "--device", "D-3", "--user", "U-1")
        ctl(d, "renew", "D-2", "--due", "2099-01-01")
        ctl(d, "lend", "--device", "D-1", "--user", "U-2")
        eventually(lambda: status(d)["hook"]["failing"] >= 1, what="the outbox reports failing entries")
        receiver.up()

        expected = {"D-1": ["lend", "return", "lend"], "D-2": ["lend", "renew"], "D-3": ["lend"]}
        eventually(lambda: per_device(receiver.events()) == expected, timeout=30,
                   what=f"every event delivered in order per device (got {per_device(receiver.events())})")
        eventually(lambda: status(d)["hook"]["delivered"] == 6 and status(d)["hook"]["pending"] == 0,
                   what="all six entries marked delivered")
        check_signatures(receiver)
        events = receiver.events()
        assert len({e["id"] for e in events}) == 6
        assert [e["rental"]["userName"] for e in events if e["deviceId"] == "D-2"] == ["Grace Hopper"] * 2
        assert ctl(d, "outbox", "list", "--state", "delivered", "--json").count("\n") == 6
    finally:
        receiver.down()


def test_delivery_resumes_after_kill_9_in_the_middle_of_the_backlog(tmpdir_path, daemon_factory):
    receiver = Receiver(delay=0.3)  # slow: the kill lands in the middle of the backlog
    configure(tmpdir_path, receiver)
    d = daemon_factory()
    try:
        seed(d, ["D-1", "D-2"])
        # The receiver is down while the backlog builds up.
        for _ in range(3):
            for device in ("D-1", "D-2"):
                ctl(d, "lend", "--device", device, "--user", "U-1")
                ctl(d, "return", device)
        receiver.up()
        eventually(lambda: 3 <= len(receiver.events()) < 12, what="some of the twelve events delivered")
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait()
        got_before = len(receiver.events())
        assert got_before < 12, "the backlog was delivered before the kill"

        d.notify.messages.clear()
        d.stderr.close()
        d.start()
        expected = {"D-1": ["lend", "return"] * 3, "D-2": ["lend", "return"] * 3}
        eventually(lambda: per_device(receiver.events()) == expected, timeout=30,
                   what=f"every event delivered in order per device after the restart (got {per_device(receiver.events())})")
        check_signatures(receiver)
        assert len({e["id"] for e in receiver.events()}) == 12
        eventually(lambda: status(d)["hook"]["delivered"] == 12, what="all twelve entries marked delivered")
    finally:
        receiver.down()


def test_outbox_interface_through_python_varlink_and_the_cli(tmpdir_path, daemon_factory):
    """An independent client parses io.roombridge.Outbox's IDL; an entry nobody accepts is dropped
    and retried from the CLI; watch reports the target failing too long, and its recovery."""
    import varlink
    receiver = Receiver()  # down until the end: every attempt fails
    configure(tmpdir_path, receiver)
    d = daemon_factory()
    seed(d, ["D-1"])
    watcher = Watcher(d.socket_path)
    ctl(d, "lend", "--device", "D-1", "--user", "U-1")
    failing = watcher.wait_for(lambda e: e["kind"] == "outbox", what="an outbox event")["outbox"]
    assert failing["target"] == "hook" and failing["failing"] is True and failing["lastError"]
    assert "has been failing since" in failing["message"]
    with varlink.Client(address=f"unix:{d.socket_path}") as c:
        with c.open("io.roombridge.Outbox") as outbox:
            eventually(lambda: outbox.Status()["targets"][0]["failing"] == 1, what="the entry failing")
            entry = outbox.List("pending", 10, None)["entries"][0]
    assert entry["kind"] == "lend" and entry["deviceId"] == "D-1" and entry["attempts"] >= 1
    assert "Connection refused" in entry.get("lastError", "") or "connect" in entry.get("lastError", "").lower()
    seq = str(entry["seq"])
    assert "dropped" in ctl(d, "outbox", "drop", seq)
    assert status(d)["hook"]["dropped"] == 1
    ctl(d, "outbox", "retry", seq)
    assert status(d)["hook"]["pending"] == 1
    table = ctl(d, "outbox").splitlines()
    assert table[0].split() == ["TARGET", "PENDING", "FAILING", "DELIVERED", "DROPPED"]

    receiver.up()
    try:
        recovered = watcher.wait_for(lambda e: e["kind"] == "outbox", timeout=15, what="the recovery event")["outbox"]
        assert recovered["failing"] is False and recovered["since"] == failing["since"]
        eventually(lambda: status(d)["hook"]["delivered"] == 1, what="the entry delivered")
    finally:
        receiver.down()
        watcher.close()


def test_a_secret_file_others_can_read_stops_the_daemon(tmpdir_path):
    receiver = Receiver()
    configure(tmpdir_path, receiver)
    os.chmod(tmpdir_path / "hook.secret", 0o644)
    socket_path = tmpdir_path / "s.sock"
    out = subprocess.run([binary("roombridged"), "--config", str(tmpdir_path / "roombridged.toml"),
                          "--socket-path", str(socket_path), "--database-path", str(tmpdir_path / "db.sqlite"),
                          "--no-nfc-enabled", "--no-curtain-enabled"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 78
    assert "outbox.targets.hook.secret" in out.stderr and "chmod 600" in out.stderr
    assert not socket_path.exists()


def test_reminders_a_digest_and_a_due_notice_arrive_once(tmpdir_path, daemon_factory, monkeypatch):
    """[reminders] at a time a few seconds ahead (the kiosk's time zone, UTC here): the digest
    and the notice of the rental due today reach the target; a restart later that day sends
    neither again."""
    monkeypatch.setenv("TZ", "UTC")
    receiver = Receiver()
    configure(tmpdir_path, receiver)
    receiver.up()
    now = datetime.datetime.now(datetime.timezone.utc)
    fire = now + datetime.timedelta(seconds=4)
    if (fire + datetime.timedelta(seconds=60)).date() != now.date():
        pytest.skip("too close to midnight UTC for a same-day reminder")
    at = fire.strftime("%H:%M:%S")
    d = daemon_factory("--reminders-digest-at", at, "--reminders-due-notice-at", at)
    try:
        seed(d, ["D-1", "D-2"])
        ctl(d, "lend", "--device", "D-1", "--user", "U-1", "--due", now.strftime("%Y-%m-%d"))
        ctl(d, "lend", "--device", "D-2", "--user", "U-2", "--due", "2099-01-01")

        def reminders():
            return [e for e in receiver.events() if e["kind"] in ("digest", "due")]
        eventually(lambda: len(reminders()) == 2, timeout=30, what=f"the digest and one due notice (got {reminders()})")
        digest = next(e for e in reminders() if e["kind"] == "digest")
        assert digest["day"] == now.strftime("%Y-%m-%d")
        assert (digest["lent"], digest["overdueCount"], digest["dueTodayCount"]) == (2, 0, 1)
        assert [r["deviceId"] for r in digest["dueToday"]] == ["D-1"]
        due = next(e for e in reminders() if e["kind"] == "due")
        assert due["deviceId"] == "D-1" and due["rental"]["userName"] == "Ada Lovelace"
        check_signatures(receiver)

        # Restarted the same day: today's reminders are in the outbox already.
        assert d.terminate() == 0
        d.notify.messages.clear()
        d.stderr.close()
        d.start()
        eventually(lambda: ": 0 new outbox entries" in d.log(), what="the restarted daemon's reminder pass")
        eventually(lambda: status(d)["hook"]["pending"] == 0, what="nothing left to send")
        assert len(reminders()) == 2
    finally:
        receiver.down()


def test_booking_reminders_reach_the_booker_and_the_borrower_it_waits_for(tmpdir_path, daemon_factory, monkeypatch):
    """At due_notice_at: a `booking` reminder for each booking that starts that day, and the due notice
    of a rental that a booking waits for names that booking; a restart sends none of them again."""
    monkeypatch.setenv("TZ", "UTC")
    receiver = Receiver()
    configure(tmpdir_path, receiver)
    receiver.up()
    now = datetime.datetime.now(datetime.timezone.utc)
    fire = now + datetime.timedelta(seconds=4)
    if (now + datetime.timedelta(hours=3)).date() != now.date():
        pytest.skip("too close to midnight UTC for bookings later the same day")
    d = daemon_factory("--reminders-due-notice-at", fire.strftime("%H:%M:%S"))

    def iso(moment):
        return moment.isoformat().replace("+00:00", "Z")
    try:
        seed(d, ["D-1", "D-2"])
        due = now + datetime.timedelta(hours=2)
        ctl(d, "lend", "--device", "D-1", "--user", "U-1", "--due", iso(due))
        ctl(d, "book", "D-1", "--user", "U-2", "--from", iso(due), "--until", iso(due + datetime.timedelta(hours=1)))
        ctl(d, "book", "D-2", "--user", "U-1", "--from", iso(now + datetime.timedelta(hours=1)),
            "--until", iso(now + datetime.timedelta(hours=2)))

        def reminders():
            return [e for e in receiver.events() if e["kind"] in ("due", "booking")]
        eventually(lambda: len(reminders()) == 3, timeout=30, what=f"one due notice and two booking reminders (got {reminders()})")
        notice = next(e for e in reminders() if e["kind"] == "due")
        assert notice["deviceId"] == "D-1" and notice["booking"]["userName"] == "Grace Hopper", notice
        booked = sorted((e["deviceId"], e["booking"]["userName"]) for e in reminders() if e["kind"] == "booking")
        assert booked == [("D-1", "Grace Hopper"), ("D-2", "Ada Lovelace")]
        check_signatures(receiver)

        assert d.terminate() == 0
        d.notify.messages.clear()
        d.stderr.close()
        d.start()
        eventually(lambda: ": 0 new outbox entries" in d.log(), what="the restarted daemon's reminder pass")
        eventually(lambda: status(d)["hook"]["pending"] == 0, what="nothing left to send")
        assert len(reminders()) == 3
    finally:
        receiver.down()


def test_sighup_adds_changes_and_removes_targets_without_a_restart(tmpdir_path, daemon_factory):
    """`systemctl reload` applies [outbox.targets]: a target added by a reload gets the events that
    happen after it (not earlier ones, which had no target), with the secret read from its file
    then; a removed target gets nothing more, and what it had pending stays in the outbox."""
    receiver = Receiver()
    receiver.up()
    config = tmpdir_path / "roombridged.toml"
    config.write_text('[log]\nlevel = "debug"\n[outbox]\npoll_interval = 0.1\n')
    d = daemon_factory()
    pid = d.proc.pid
    seed(d, ["D-1", "D-2", "D-3"])
    ctl(d, "lend", "--device", "D-1", "--user", "U-1")
    assert status(d) == {}

    configure(tmpdir_path, receiver)  # the same file, now with the target `hook`
    d.proc.send_signal(signal.SIGHUP)
    eventually(lambda: "SIGHUP: configuration reloaded" in d.log() and "hook" in status(d),
               what="the reload to add the target")
    line = next(l for l in d.log().splitlines() if "SIGHUP: configuration reloaded" in l)
    assert "outbox.targets = [hook]" in line.split("needs a restart")[0], line
    ctl(d, "lend", "--device", "D-2", "--user", "U-2")
    eventually(lambda: [e["deviceId"] for e in receiver.events()] == ["D-2"], what="D-2's lend at the new target")
    eventually(lambda: status(d)["hook"]["delivered"] == 1, what="the delivery to be recorded")
    check_signatures(receiver)

    config.write_text('[log]\nlevel = "debug"\n[outbox]\npoll_interval = 0.1\n')
    d.proc.send_signal(signal.SIGHUP)
    eventually(lambda: "hook" not in status(d) or not status(d)["hook"]["configured"],
               what="the reload to remove the target")
    ctl(d, "lend", "--device", "D-3", "--user", "U-1")
    ctl(d, "return", "D-2")
    # The changes after the removal wrote no entries for it: only D-2's lend, delivered, is left.
    hook = status(d).get("hook")
    assert hook is None or (hook["pending"], hook["failing"], hook["delivered"]) == (0, 0, 1), hook
    assert [e["deviceId"] for e in receiver.events()] == ["D-2"]
    assert d.proc.poll() is None and d.proc.pid == pid, "a reload must not restart the daemon"
