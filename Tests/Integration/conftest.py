"""Fixtures that run the real roombridged (and, later, the simulators) for integration tests.

The binaries come from one `swift build` ($ROOMBRIDGE_BIN, default .build/debug).
"""
import os
import pathlib
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("ROOMBRIDGE_BIN", ROOT / ".build" / "debug"))

# The one raw Varlink client, shared with scripts/scenario.py (standard library only).
sys.path.insert(0, str(ROOT / "scripts"))
from varlinkclient import Connection, call, raw_call  # noqa: E402,F401 - re-exported for the tests


def accepts_connections(path) -> bool:
    """The socket file appears at bind(), before listen(): until then a connect is refused."""
    try:
        if not stat.S_ISSOCK(os.stat(path).st_mode):
            return False
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(str(path))
        return True
    except (FileNotFoundError, ConnectionRefusedError):
        return False


def eventually(condition, timeout=20.0, what="condition", poll=0.01):
    """The one way the integration tests wait: polls `condition` until it returns a truthy
    value and returns that value; fails loudly, naming `what`, if it has not after `timeout`.
    The timeout counts the time the test was running: a round of polling longer than
    STALL_ALLOWANCE (the machine stalled every process, as a CI machine building two trees
    at once does) counts as that allowance, not as its whole length (as the Swift tests'
    `eventually`)."""
    waited, last = 0.0, time.monotonic()
    while True:
        value = condition()
        if value:
            return value
        now = time.monotonic()
        waited += min(now - last, STALL_ALLOWANCE)
        last = now
        if waited >= timeout:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(poll)


# The most one round of `eventually`'s polling counts for; rounds are milliseconds apart.
STALL_ALLOWANCE = 1.0


def stop(proc, within=10.0):
    """Stops a child with SIGTERM; returns True if it exited within `within` seconds (a "does not
    hang" bound), else kills it and returns False."""
    if proc.poll() is not None:
        return True
    proc.terminate()
    try:
        proc.wait(within)
        return True
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return False


def binary(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `swift build` first (make test does)")
    return str(path)


class NotifyListener:
    """A datagram socket standing in for systemd's NOTIFY_SOCKET."""

    def __init__(self, directory: pathlib.Path):
        self.path = str(directory / "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.messages: list[str] = []

    def wait_for(self, predicate, timeout=10.0):
        deadline = time.monotonic() + timeout
        for m in self.messages:
            if predicate(m):
                return m
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                break
            self.messages.append(data)
            if predicate(data):
                return data
        raise AssertionError(f"no matching notify message within {timeout}s; got {self.messages!r}")

    def close(self):
        self.sock.close()


# Which database the daemons of these tests use: SQLite (a file in the test's directory), or with
# ROOMBRIDGE_IT_BACKEND=postgresql a database of its own on the server ROOMBRIDGE_PG_URL names
# (make test runs the lending and outbox tests a second time that way).
BACKEND = os.environ.get("ROOMBRIDGE_IT_BACKEND", "sqlite")


def pytest_configure(config):
    config.addinivalue_line("markers", "sqlite_only: reads or writes the SQLite file itself; not run on PostgreSQL")


def pytest_collection_modifyitems(config, items):
    if BACKEND == "postgresql":
        skip = pytest.mark.skip(reason="the test works on the SQLite file itself")
        for item in items:
            if "sqlite_only" in item.keywords:
                item.add_marker(skip)


def postgres_database_args(tmp: pathlib.Path) -> list:
    """Daemon arguments for a PostgreSQL database of `tmp`'s own (made on first use, so two daemons of
    one test share it, as they would share the SQLite file)."""
    import hashlib
    url = os.environ.get("ROOMBRIDGE_PG_URL")
    password_file = os.environ.get("ROOMBRIDGE_PG_PASSWORD_FILE")
    assert url and password_file, "ROOMBRIDGE_IT_BACKEND=postgresql needs ROOMBRIDGE_PG_URL and ROOMBRIDGE_PG_PASSWORD_FILE"
    name = "rb_it_" + hashlib.sha1(str(tmp).encode()).hexdigest()[:16]
    base, _, query = url.partition("?")
    server = base.rsplit("/", 1)[0]
    env = dict(os.environ, PGPASSWORD=pathlib.Path(password_file).read_text().strip())
    exists = subprocess.run(["psql", "-X", "-A", "-t", f"{server}/postgres?{query}", "-c",
                             f"SELECT 1 FROM pg_database WHERE datname = '{name}'"],
                            capture_output=True, text=True, env=env, timeout=60)
    assert exists.returncode == 0, exists.stderr
    if exists.stdout.strip() != "1":
        made = subprocess.run(["psql", "-X", f"{server}/postgres?{query}", "-c", f"CREATE DATABASE {name}"],
                              capture_output=True, text=True, env=env, timeout=60)
        assert made.returncode == 0, made.stderr
    return ["--database-url", f"{server}/{name}?{query}", "--database-password-file", password_file]


class Daemon:
    """A running roombridged on a private socket and temporary database."""

    def __init__(self, tmp: pathlib.Path, extra_args=(), env=None, notify=True):
        self.tmp = tmp
        self.socket_path = str(tmp / "roombridge.sock")
        self.notify = NotifyListener(tmp) if notify else None
        self.args = [
            binary("roombridged"),
            "--config", str(self.write_config()),
            "--socket-path", self.socket_path,
            "--socket-group", "",
            *(postgres_database_args(tmp) if BACKEND == "postgresql" else ["--database-path", str(tmp / "roombridge.sqlite")]),
            "--no-nfc-enabled", "--no-curtain-enabled",
            *extra_args,
        ]
        self.env = dict(os.environ)
        self.env.setdefault("LIBNFC_LOG_LEVEL", "0")
        if self.notify:
            self.env["NOTIFY_SOCKET"] = self.notify.path
        if env:
            self.env.update(env)
        self.proc = None
        self.stderr_path = tmp / "roombridged.log"

    def write_config(self) -> pathlib.Path:
        path = self.tmp / "roombridged.toml"
        if not path.exists():
            path.write_text("[log]\nlevel = \"debug\"\n")
        return path

    def start(self, wait=True):
        self.stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(self.args, env=self.env, stdout=subprocess.DEVNULL, stderr=self.stderr)
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout=15.0):
        if self.notify:
            try:
                self.notify.wait_for(lambda m: "READY=1" in m, timeout)
            except AssertionError as e:
                # Say what the daemon did instead (seen once in CI: no READY=1 within 15 s, nothing else known).
                status = "still running" if self.proc.poll() is None else f"exited with {self.proc.returncode}"
                raise AssertionError(f"{e}; the daemon is {status}; its log:\n{self.log()[-4000:]}") from None
        else:
            def listening():
                assert self.proc.poll() is None, f"daemon exited before listening: {self.log()}"
                return accepts_connections(self.socket_path)
            eventually(listening, timeout, what=f"the daemon's socket {self.socket_path}")

    def log(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def terminate(self, sig=signal.SIGTERM, timeout=5.0):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"roombridged did not exit within {timeout}s of {sig!r}")
        return self.proc.returncode

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.notify:
            self.notify.close()
        if getattr(self, "stderr", None):
            self.stderr.close()


class PN532Sim:
    """The PN532 simulator on a pty (pn532-sim run), controlled through its socket."""

    def __init__(self, tmp: pathlib.Path, realistic=False):
        self.link = str(tmp / "pn532.tty")
        self.control = str(tmp / "pn532.ctl")
        args = [binary("pn532-sim"), "run", "--link", self.link, "--control", self.control]
        if realistic:
            args.append("--realistic-timing")
        self.log_path = tmp / "pn532-sim.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.log)
        line = self.proc.stdout.readline().decode()
        assert "pn532-sim ready" in line, f"simulator did not start: {line!r} {self.log_path.read_text()}"

    def ctl(self, *command) -> str:
        out = subprocess.run([binary("pn532-sim"), "ctl", "--control", self.control, *command],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0 and out.stdout.startswith("ok"), out.stdout + out.stderr
        return out.stdout.strip()

    def host_bytes(self) -> int:
        """Bytes the host (libnfc) sent since the last `ctl("counters reset")`: a reader that
        polls or checks a tag's presence keeps sending."""
        fields = dict(f.split("=") for f in self.ctl("counters").split()[1:])
        return int(fields["rx"])

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Watcher:
    """A raw Watch subscription: the first reply (state), then events as they come."""

    def __init__(self, socket_path: str):
        self.conn = Connection(socket_path)
        self.conn.send({"method": "io.roombridge.State.Watch", "more": True})
        self.state = self.conn.receive(10)["parameters"]["state"]

    def next_event(self, timeout=10.0):
        reply = self.conn.receive(timeout)
        if "error" in reply:
            raise AssertionError(f"Watch ended: {reply}")
        return reply["parameters"]["event"]

    def wait_for(self, predicate, timeout=10.0, what="event"):
        """Returns the first event matching predicate; fails after timeout."""
        return self.events_until(predicate, timeout, what)[-1]

    def events_until(self, predicate, timeout=10.0, what="event"):
        """The events up to and including the first one matching predicate; fails after timeout."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            remaining = deadline - time.monotonic()
            try:
                e = self.next_event(max(0.01, remaining))
            except TimeoutError:
                raise AssertionError(f"no {what} within {timeout}s; saw {[x['kind'] for x in seen]}")
            seen.append(e)
            if predicate(e):
                return seen

    def none_within(self, predicate, seconds):
        """Asserts that no matching event arrives within `seconds`."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                e = self.next_event(remaining)
            except TimeoutError:
                return
            assert not predicate(e), f"unexpected event {e}"

    def close(self):
        self.conn.close()


@pytest.fixture
def pn532(tmpdir_path):
    sim = PN532Sim(tmpdir_path)
    yield sim
    sim.close()


@pytest.fixture
def nfc_daemon(daemon_factory, pn532):
    d = daemon_factory("--nfc-enabled", "--nfc-readers", f"front=pn532_uart:{pn532.link}",
                       "--nfc-modulations", "iso14443a", "--nfc-modulations", "felica212")
    return d


@pytest.fixture
def tmpdir_path():
    with tempfile.TemporaryDirectory(prefix="rb-test-") as d:
        os.chmod(d, 0o755)
        yield pathlib.Path(d)


@pytest.fixture
def daemon_factory(tmpdir_path):
    made = []

    def make(*extra_args, env=None, notify=True, start=True):
        d = Daemon(tmpdir_path, extra_args, env=env, notify=notify)
        made.append(d)
        return d.start() if start else d

    yield make
    for d in made:
        d.close()


@pytest.fixture
def daemon(daemon_factory):
    return daemon_factory()
