"""roombridged on PostgreSQL (database.url): a private server of the test's own
(scripts/pg-test-server.sh, so that it can be stopped and started), two daemons racing lends on
one database, and honest offline behaviour: while the server is down every lend is refused with
"offline — nothing was recorded, try again", state and status say since when, and the daemon
reconnects by itself when the server is back."""
import glob
import os
import pathlib
import subprocess
import tempfile
import threading
import time
import uuid

import pytest

from conftest import Connection, Daemon, binary, eventually
from test_lending import BADGE, TAG_UID, ctl, nfc_lending_daemon, race_lends, seed, tap
from test_nfc import connected_watcher, device_message, spec

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = str(REPO / "scripts" / "pg-test-server.sh")


def have_server_binaries() -> bool:
    return bool(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))


class PgServer:
    """A private PostgreSQL server in `directory`, stopped and started at will."""

    def __init__(self, directory: pathlib.Path):
        self.dir = directory
        self.url = self.start()
        self.password_file = str(directory / "password")

    def start(self) -> str:
        r = subprocess.run([SCRIPT, "start", str(self.dir)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"pg-test-server start: {r.stdout}{r.stderr}"
        return r.stdout.strip()

    def stop(self):
        r = subprocess.run([SCRIPT, "stop", str(self.dir)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"pg-test-server stop: {r.stdout}{r.stderr}"

    def psql(self, sql: str, database="postgres") -> str:
        port = (self.dir / "port").read_text().strip()
        r = subprocess.run(["psql", "-X", "-A", "-t", "-h", str(self.dir), "-p", port, "-U", "roombridge",
                            "-d", database, "-c", sql], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    def new_database(self) -> str:
        name = "rb_it_" + uuid.uuid4().hex
        self.psql(f"CREATE DATABASE {name}")
        return name

    def url_for(self, database: str) -> str:
        base, query = self.url.split("?", 1)
        return base.rsplit("/", 1)[0] + "/" + database + "?" + query


@pytest.fixture
def pg():
    if not have_server_binaries():
        if os.environ.get("CI") or os.environ.get("ROOMBRIDGE_REQUIRE_PG"):
            pytest.fail("PostgreSQL's server binaries are missing: install Debian's postgresql (scripts/install-deps.sh)")
        pytest.skip("PostgreSQL's server binaries are missing: install Debian's postgresql (scripts/install-deps.sh)")
    with tempfile.TemporaryDirectory(prefix="rb-pg-") as d:
        server = PgServer(pathlib.Path(d))
        try:
            yield server
        finally:
            server.stop()


def pg_daemon(tmp: pathlib.Path, pg: PgServer, database: str, location: str) -> Daemon:
    d = Daemon(tmp, ["--database-url", pg.url_for(database), "--database-password-file", pg.password_file,
                     "--lending-location", location])
    return d.start()


def test_offline_refuses_honestly_and_reconnects(pg, tmpdir_path):
    database = pg.new_database()
    d = pg_daemon(tmpdir_path, pg, database, "front-desk")
    try:
        seed(d, devices=("D-0001", "D-0002"))
        # The pool's own logger is quieter; the daemon's level (info) stays.
        assert "database postgresql://" in d.log() and " open (password authentication)" in d.log(), d.log()
        c = Connection(d.socket_path)
        r = c.call("io.roombridge.Lending.Lend", deviceId="D-0001", userId="U-0001")
        assert "error" not in r, r
        assert r["parameters"]["rental"]["location"] == "front-desk"
        state = c.call("io.roombridge.State.GetState")["parameters"]["state"]
        assert state["database"]["backend"] == "postgresql" and "offlineSince" not in state["database"]

        pg.stop()
        r = c.call("io.roombridge.Lending.Lend", deviceId="D-0002", userId="U-0001")
        assert r.get("error") == "io.roombridge.Lending.StorageOffline", r
        assert "offline — nothing was recorded, try again" in r["parameters"]["message"]
        # Later calls fail fast, reads too, with the same message.
        r = c.call("io.roombridge.Lending.ListActive")
        assert r.get("error") == "io.roombridge.Lending.StorageOffline", r
        # The store tells the state it is offline through its own stream, after the refusal it
        # answered (a CI run under load read the state before that).
        database_state = lambda: c.call("io.roombridge.State.GetState")["parameters"]["state"]["database"]
        eventually(lambda: database_state().get("offlineSince"), what="GetState to say since when the database is offline")
        status = ctl(d, "status").stdout
        assert "database:  offline since" in status.lower(), status

        pg.start()

        def lends_again():
            r = c.call("io.roombridge.Lending.Lend", deviceId="D-0002", userId="U-0001")
            assert r.get("error") in (None, "io.roombridge.Lending.StorageOffline"), r
            return "error" not in r
        eventually(lends_again, timeout=30, what="a lend after the database came back")
        eventually(lambda: "back online" in d.log(), what="the log line saying the database is back")
        eventually(lambda: "offlineSince" not in database_state(), what="GetState to say the database is back")
        # Nothing was half-recorded: exactly the two acknowledged lends exist.
        assert pg.psql("SELECT device_id FROM rentals ORDER BY device_id", database) == "D-0001\nD-0002"
        c.close()
    finally:
        d.close()


def test_two_daemons_on_one_postgresql_never_lend_twice(pg, tmpdir_path):
    database = pg.new_database()
    devices = [f"D-{i:04}" for i in range(1, 9)]
    a = pg_daemon(tmpdir_path, pg, database, "desk-a")
    with tempfile.TemporaryDirectory(prefix="rb-test-") as other_dir:
        os.chmod(other_dir, 0o755)
        b = pg_daemon(pathlib.Path(other_dir), pg, database, "desk-b")
        try:
            seed(a, devices=devices, users=(("U-A", "Alice"), ("U-B", "Bob")))
            acknowledged = 0
            for round_ in range(3):
                race_lends(a, b, devices, round_)
                acknowledged += len(devices)
                # Acknowledged against stored: one active rental per device, every lend recorded.
                assert pg.psql("SELECT COUNT(*) FROM rentals WHERE returned_at IS NULL", database) == str(len(devices))
                assert pg.psql("SELECT COUNT(*) FROM rentals", database) == str(acknowledged)
                c = Connection(b.socket_path)
                assert len(c.call("io.roombridge.Lending.ListActive")["parameters"]["rentals"]) == len(devices)
                for dev in devices:
                    assert "error" not in c.call("io.roombridge.Lending.Return", deviceId=dev)
                c.close()
            locations = pg.psql("SELECT DISTINCT location FROM rentals ORDER BY location", database)
            assert set(locations.split("\n")) <= {"desk-a", "desk-b"}
        finally:
            b.close()
            a.close()


def test_a_database_restart_mid_storm_loses_nothing_acknowledged(pg, tmpdir_path):
    """Clients lend and return as fast as they can while the server is stopped and started:
    every acknowledged lend and return is stored, nothing refused as offline is, and the
    daemon recovers without a restart."""
    database = pg.new_database()
    d = pg_daemon(tmpdir_path, pg, database, "front-desk")
    devices = [f"D-{i:04}" for i in range(1, 7)]
    allowed = {"io.roombridge.Lending.AlreadyLent", "io.roombridge.Lending.NotLent",
               "io.roombridge.Lending.StorageOffline",
               # A connection lost during COMMIT itself: the outcome is unknown (checked below).
               "io.roombridge.Lending.StorageOutcomeUnknown"}
    try:
        seed(d, devices=devices, users=(("U-0001", "Ada"), ("U-0002", "Bob")))
        calls = []  # (operation, device, reply)
        stop = threading.Event()
        hung = []  # calls without a reply within the client's 10 s: offline must fail fast

        def storm(user, mine):
            c = Connection(d.socket_path)
            try:
                while not stop.is_set():
                    for dev in mine:
                        for op, method, params in (("lend", "Lend", {"userId": user}), ("return", "Return", {})):
                            started = time.monotonic()
                            try:
                                calls.append((op, dev, c.call("io.roombridge.Lending." + method, deviceId=dev, **params)))
                            except TimeoutError:
                                hung.append((op, dev, round(time.monotonic() - started, 1)))
                                return
            finally:
                c.close()

        threads = [threading.Thread(target=storm, args=("U-0001", devices[:3])),
                   threading.Thread(target=storm, args=("U-0002", devices[3:]))]
        for th in threads:
            th.start()
        try:
            eventually(lambda: sum("error" not in r for _, _, r in calls) >= 20, what="lends before the restart")
            pg.stop()
            eventually(lambda: hung or any(r.get("error") == "io.roombridge.Lending.StorageOffline" for _, _, r in calls),
                       what="a call refused as offline")
            assert not hung, f"calls without a reply: {hung}\n{d.log()[-3000:]}"
            pg.start()
            seen = len(calls)
            eventually(lambda: sum("error" not in r for _, _, r in calls[seen:]) >= 20, timeout=60,
                       what="lends after the restart, without restarting the daemon")
        finally:
            stop.set()
            for th in threads:
                th.join(60)

        assert not hung, f"calls without a reply: {hung}\n{d.log()[-3000:]}"
        unexpected = [(op, dev, r) for op, dev, r in calls if "error" in r and r["error"] not in allowed]
        assert not unexpected, unexpected[:5]
        stored = {int(rid): (dev, returned == "t") for rid, dev, returned in
                  (line.split("|") for line in pg.psql(
                      "SELECT id, device_id, returned_at IS NOT NULL FROM rentals", database).splitlines())}
        lent = [r["parameters"]["rental"] for op, _, r in calls if op == "lend" and "error" not in r]
        returned = [r["parameters"]["rental"] for op, _, r in calls if op == "return" and "error" not in r]
        # Acknowledged against stored.
        for rental in lent:
            assert stored.get(rental["id"], (None,))[0] == rental["deviceId"], rental
        for rental in returned:
            assert stored[rental["id"]] == (rental["deviceId"], True), rental
        # Anything stored but not acknowledged came from a call whose outcome was unknown.
        unknown = sum(r.get("error") == "io.roombridge.Lending.StorageOutcomeUnknown" for _, _, r in calls)
        assert len(stored) - len(lent) <= unknown, (len(stored), len(lent), unknown)
        assert pg.psql("SELECT COUNT(*) FROM (SELECT device_id FROM rentals WHERE returned_at IS NULL "
                       "GROUP BY device_id HAVING COUNT(*) > 1) AS doubled", database) == "0"
    finally:
        d.close()


def test_a_tap_while_offline_records_nothing_and_says_so(daemon_factory, pn532, pg):
    database = pg.new_database()
    d = nfc_lending_daemon(daemon_factory, pn532, "--database-url", pg.url_for(database),
                           "--database-password-file", pg.password_file, "--lending-repeat-window", "0")
    ctl(d, "devices", "add", "D-0001", "--group", "android-phone", "--model", "Pixel 7")
    ctl(d, "tags", "bind", TAG_UID, "--device", "D-0001")
    w = connected_watcher(d)
    tap(w, pn532, BADGE, "armed")

    pg.stop()
    o = tap(w, pn532, spec(ndef=device_message("D-0001")), "failed", timeout=20)
    assert "offline — nothing was recorded, try again" in o["message"] + o.get("reason", ""), o

    pg.start()

    def lent_after_restart():
        pn532.ctl("place", spec(ndef=device_message("D-0001")))
        o = w.wait_for(lambda e: e["kind"] == "lending" and e["lending"]["kind"] in ("lent", "failed", "badgeRequired"),
                       20, "a lending outcome")["lending"]
        pn532.ctl("remove")
        w.wait_for(lambda e: e["kind"] == "tagRemoved", 10, "tagRemoved")
        if o["kind"] == "badgeRequired":  # the arm session ran out meanwhile
            tap(w, pn532, BADGE, "armed")
        return o["kind"] == "lent"
    eventually(lent_after_restart, timeout=60, what="a tap lending after the database came back")
    assert pg.psql("SELECT device_id, location IS NOT NULL FROM rentals", database) == "D-0001|t"
    w.close()


def test_migrate_to_copies_a_sqlite_inventory_into_postgresql(pg, tmpdir_path):
    """`roombridgectl db migrate-to`: refused while the daemon runs; then the SQLite inventory, its history and
    change log arrive, counted, and a daemon on PostgreSQL carries on from them."""
    sqlite = Daemon(tmpdir_path, []).start()
    database = pg.new_database()
    url = pg.url_for(database)
    migrate = [binary("roombridgectl"), "db", "migrate-to", url, "--from", str(tmpdir_path / "roombridge.sqlite"),
               "--password-file", pg.password_file, "--socket", sqlite.socket_path]
    try:
        seed(sqlite, devices=("D-0001", "D-0002"))
        ctl(sqlite, "lend", "--device", "D-0001", "--user", "U-0001")
        ctl(sqlite, "return", "D-0001")
        ctl(sqlite, "lend", "--device", "D-0002", "--user", "U-0001")
        r = subprocess.run(migrate, capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and "roombridged is running" in r.stderr, r
        assert pg.psql("SELECT COUNT(*) FROM pg_tables WHERE tablename = 'devices'", database) == "0"
    finally:
        sqlite.close()

    r = subprocess.run(migrate, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "rentals: 2 rows" in r.stdout and "devices: 2 rows" in r.stdout, r.stdout
    # A second run finds the data there and changes nothing.
    again = subprocess.run(migrate, capture_output=True, text=True, timeout=300)
    assert again.returncode == 1 and "not empty" in again.stderr, again
    assert pg.psql("SELECT COUNT(*) FROM rentals", database) == "2"

    with tempfile.TemporaryDirectory(prefix="rb-test-") as other_dir:
        os.chmod(other_dir, 0o755)
        d = pg_daemon(pathlib.Path(other_dir), pg, database, "desk-b")
        try:
            history = ctl(d, "history", "--json").stdout
            assert history.count('"deviceId":"D-0001"') == 1 and '"returnedAt"' in history, history
            log = ctl(d, "devices", "log", "D-0001").stdout
            assert "add" in log, log
            ctl(d, "return", "D-0002")
            ctl(d, "lend", "--device", "D-0001", "--user", "U-0001")
            assert pg.psql("SELECT COUNT(*) FROM rentals", database) == "3"
        finally:
            d.close()


def sqlite_inventory(tmpdir_path) -> str:
    """A SQLite inventory written by a daemon that has stopped again."""
    Daemon(tmpdir_path, []).start().close()
    return str(tmpdir_path / "roombridge.sqlite")


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound for a moment, then closed)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def migrate_to(url: str, sqlite: str, tmpdir_path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([binary("roombridgectl"), "db", "migrate-to", url, "--from", sqlite,
                           "--socket", str(tmpdir_path / "no-daemon.sock"), *extra],
                          capture_output=True, text=True, timeout=120)


def assert_one_plain_line(r: subprocess.CompletedProcess):
    """What the user reads: one sentence of ours, no log line, no library's error dump."""
    assert r.stdout == "" and r.stderr.count("\n") == 1 and r.stderr.startswith("roombridgectl: "), r
    for leak in ("errno", "connectionError", "SingleConnectionFailure", "authMechanismRequiresPassword", "PSQLError",
                 " error ", "offline"):
        assert leak not in r.stderr, (leak, r.stderr)


def test_migrate_to_without_a_server_says_so_and_exits_69(tmpdir_path):
    """Nothing listens at the URL's port: the message names the address and the fix, exit 69 (EX_UNAVAILABLE)."""
    port = closed_port()
    r = migrate_to(f"postgresql://roombridge@127.0.0.1:{port}/roombridge?sslmode=disable",
                   sqlite_inventory(tmpdir_path), tmpdir_path)
    assert r.returncode == 69, r
    assert f"cannot reach PostgreSQL at 127.0.0.1:{port} (connection refused): is the server running" in r.stderr, r
    assert_one_plain_line(r)


def test_migrate_to_without_the_password_the_server_wants_says_how_to_give_it(pg, tmpdir_path):
    """The test server authenticates TCP logins by password: none given, or a wrong one, is exit 77 (EX_NOPERM)
    with the option that gives it; nothing is written."""
    sqlite = sqlite_inventory(tmpdir_path)
    database = pg.new_database()
    port = (pg.dir / "port").read_text().strip()
    r = migrate_to(pg.url_for(database), sqlite, tmpdir_path)
    assert r.returncode == 77, r
    assert f"PostgreSQL at 127.0.0.1:{port} asks for a password for the user roombridge: give it with --password-file" \
        in r.stderr, r
    assert_one_plain_line(r)

    wrong = tmpdir_path / "wrong-password"
    wrong.write_text("not-the-password\n")
    r = migrate_to(pg.url_for(database), sqlite, tmpdir_path, "--password-file", str(wrong))
    assert r.returncode == 77, r
    assert "refused the login of roombridge" in r.stderr and "check the password in the --password-file" in r.stderr, r
    assert pg.psql("SELECT COUNT(*) FROM pg_tables WHERE tablename = 'devices'", database) == "0"


def test_a_lend_at_one_kiosk_reaches_watch_at_the_other(pg, tmpdir_path):
    """LISTEN/NOTIFY: kiosk B's Watch clients see kiosk A's lends and returns, marked with A's location, and B's own
    last outcome is left alone."""
    from conftest import Watcher
    database = pg.new_database()
    a = pg_daemon(tmpdir_path, pg, database, "desk-a")
    with tempfile.TemporaryDirectory(prefix="rb-test-") as other_dir:
        os.chmod(other_dir, 0o755)
        b = pg_daemon(pathlib.Path(other_dir), pg, database, "desk-b")
        try:
            seed(a, devices=("D-0001",))
            w = Watcher(b.socket_path)
            ctl(a, "lend", "--device", "D-0001", "--user", "U-0001")
            lent = w.wait_for(lambda e: e.get("kind") == "lending" and e["lending"]["kind"] == "lent", timeout=10)
            assert lent["lending"]["origin"] == "desk-a" and lent["lending"]["deviceId"] == "D-0001", lent
            ctl(a, "return", "D-0001")
            back = w.wait_for(lambda e: e.get("kind") == "lending" and e["lending"]["kind"] == "returned", timeout=10)
            assert back["lending"]["origin"] == "desk-a", back
            w.close()
            state = Connection(b.socket_path).call("io.roombridge.State.GetState")["parameters"]["state"]
            assert "lastOutcome" not in state["lending"], state["lending"]
        finally:
            b.close()
            a.close()


# --- Without a password: trust and peer authentication ----------------------------------------------

def allow(pg: PgServer, *rules: str):
    """Puts `rules` before the server's own pg_hba.conf lines (the first matching line wins) and has the
    server read the file again; the caller waits until the rules are in force."""
    hba = pg.dir / "data" / "pg_hba.conf"
    hba.write_text("".join(rule + "\n" for rule in rules) + hba.read_text())
    assert pg.psql("SELECT pg_reload_conf()") == "t"


def psql_as(user: str, role: str, host: str, port: str, database: str) -> subprocess.CompletedProcess:
    """psql run as the Unix user `user`, logging in as `role` without a password."""
    return subprocess.run(["runuser", "-u", user, "--", "psql", "-X", "-A", "-t", "-w", "-h", host, "-p", port,
                           "-U", role, "-d", database, "-c", "SELECT 1"],
                          capture_output=True, text=True, timeout=60)


def lend_one(d: Daemon):
    seed(d)
    c = Connection(d.socket_path)
    try:
        r = c.call("io.roombridge.Lending.Lend", deviceId="D-0001", userId="U-0001")
        assert "error" not in r, r
    finally:
        c.close()


def test_trust_authentication_needs_no_password(pg, tmpdir_path):
    """A role the server trusts over TCP: no password file, no credential; the daemon says it used none."""
    port = (pg.dir / "port").read_text().strip()
    pg.psql("CREATE ROLE rb_trust LOGIN")
    pg.psql("CREATE DATABASE rb_trust OWNER rb_trust")
    allow(pg, "host all rb_trust 127.0.0.1/32 trust")
    # Until the server has read the rule, a login without a password is refused (scram-sha-256).
    eventually(lambda: psql_as("root", "rb_trust", "127.0.0.1", port, "rb_trust").returncode == 0,
               what="the server trusting rb_trust over TCP")
    url = f"postgresql://rb_trust@127.0.0.1:{port}/rb_trust?sslmode=disable"
    d = Daemon(tmpdir_path, ["--database-url", url]).start()
    try:
        assert f"database {url} open (no password: trust or peer)" in d.log(), d.log()
        lend_one(d)
        assert pg.psql("SELECT device_id, user_id FROM rentals", "rb_trust") == "D-0001|U-0001"
    finally:
        d.close()


def test_peer_authentication_over_the_unix_socket(pg, tmpdir_path):
    """Debian's usual local setup: `peer` on the Unix socket, the role named after the Unix user. The daemon
    runs as root and logs in as the role root; the server checks the socket's peer, not a password."""
    port = (pg.dir / "port").read_text().strip()
    pg.psql("CREATE ROLE root LOGIN")
    pg.psql("CREATE DATABASE rb_peer OWNER root")
    allow(pg, "local all root peer")
    # peer, not the socket's trust, decides once the server has read the rule: nobody may not be root.
    def peer_in_force():
        r = psql_as("nobody", "root", str(pg.dir), port, "rb_peer")
        return r.returncode != 0 and "Peer authentication failed" in r.stderr
    eventually(peer_in_force, what="peer authentication for the role root on the socket")
    url = f"postgresql://root@/rb_peer?host={pg.dir}&port={port}&sslmode=disable"
    d = Daemon(tmpdir_path, ["--database-url", url]).start()
    try:
        assert f"database postgresql://root@/rb_peer?host={pg.dir}&port={port}&sslmode=disable open " \
               "(no password: trust or peer)" in d.log(), d.log()
        lend_one(d)
        assert pg.psql("SELECT device_id, user_id FROM rentals", "rb_peer") == "D-0001|U-0001"
    finally:
        d.close()
