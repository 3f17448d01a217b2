"""The foundation end to end: the real roombridged on a private socket, driven by independent
clients (the Python `varlink` package, raw NUL-terminated JSON), systemd's notify protocol and
socket activation, authorization by SO_PEERCRED, and roombridgectl."""
import json
import os
import pathlib
import signal
import socket
import subprocess

import pytest
import varlink

from conftest import ROOT, binary, eventually, raw_call


def client(d):
    return varlink.Client(address=f"unix:{d.socket_path}")


# --- Independent client: python varlink --------------------------------------------------------

def test_getinfo_lists_interfaces(daemon):
    with client(daemon) as c, c.open("org.varlink.service") as svc:
        info = svc.GetInfo()
    assert info["product"] == "roombridged"
    assert "io.roombridge.State" in info["interfaces"]
    assert "org.varlink.service" in info["interfaces"]


def test_interface_descriptions_parse_in_python_varlink(daemon):
    with client(daemon) as c:
        for name in ["io.roombridge.State", "org.varlink.service"]:
            iface = c.get_interface(name)  # python varlink parses our IDL text
            assert iface.name == name
        state_iface = c.get_interface("io.roombridge.State")
        assert {"GetState", "Watch", "SetLogLevel"} <= set(state_iface.members)


def test_get_state_through_python_varlink(daemon):
    with client(daemon) as c, c.open("io.roombridge.State") as st:
        state = st.GetState()["state"]
    assert state["seq"] >= 0
    assert state["curtain"]["connection"] == "disabled"
    assert state["readers"] == []
    assert state["counters"]["subscribers"] == 0


def test_watch_sends_state_first_and_counts_subscriber(daemon):
    with client(daemon) as c, c.open("io.roombridge.State") as st:
        stream = st.Watch(_more=True)
        first = next(stream)
        assert "state" in first and first["state"]["curtain"]["connection"] == "disabled"
        # The subscription is visible to another client.
        with client(daemon) as c2, c2.open("io.roombridge.State") as st2:
            eventually(lambda: st2.GetState()["state"]["counters"]["subscribers"] == 1,
                       what="Watch to register a subscriber")
    # After hang-up the subscriber goes away.
    with client(daemon) as c3, c3.open("io.roombridge.State") as st3:
        eventually(lambda: st3.GetState()["state"]["counters"]["subscribers"] == 0,
                   what="the hung-up Watch client to be forgotten")


# --- Raw protocol --------------------------------------------------------------------------------

def test_standard_errors_and_daemon_keeps_serving(daemon):
    p = daemon.socket_path
    [r] = raw_call(p, {"method": "io.roombridge.Nope.Get"})
    assert r["error"] == "org.varlink.service.InterfaceNotFound"
    assert r["parameters"]["interface"] == "io.roombridge.Nope"
    [r] = raw_call(p, {"method": "io.roombridge.State.Frobnicate"})
    assert r["error"] == "org.varlink.service.MethodNotFound"
    [r] = raw_call(p, {"method": "io.roombridge.State.SetLogLevel", "parameters": {"level": 5}})
    assert r["error"] == "org.varlink.service.InvalidParameter"
    assert r["parameters"]["parameter"] == "level"
    [r] = raw_call(p, {"method": "io.roombridge.State.Watch"})
    assert r["error"] == "org.varlink.service.ExpectedMore"
    [r] = raw_call(p, b'{"method": "io.roombridge.State.GetState", \0')
    assert r["error"].startswith("org.varlink.service.")
    for params in [None, {}]:
        msg = {"method": "io.roombridge.State.GetState"}
        if params is not None or True:
            msg["parameters"] = params
        [r] = raw_call(p, msg)
        assert "state" in r["parameters"], r
    [r] = raw_call(p, {"method": "io.roombridge.State.GetState"})
    assert "state" in r["parameters"]


def test_pipelined_calls_are_answered_in_order(daemon):
    msgs = b"".join(json.dumps(m).encode() + b"\0" for m in [
        {"method": "org.varlink.service.GetInfo"},
        {"method": "io.roombridge.State.GetState"},
        {"method": "io.roombridge.State.Nope"},
        {"method": "org.varlink.service.GetInterfaceDescription", "parameters": {"interface": "io.roombridge.State"}},
    ])
    replies = raw_call(daemon.socket_path, msgs, read_replies=4)
    assert "product" in replies[0]["parameters"]
    assert "state" in replies[1]["parameters"]
    assert replies[2]["error"] == "org.varlink.service.MethodNotFound"
    assert replies[3]["parameters"]["description"].startswith("# The state")


def test_oneway_gets_no_reply(daemon):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(daemon.socket_path)
    s.sendall(json.dumps({"method": "io.roombridge.State.GetState", "oneway": True}).encode() + b"\0")
    s.sendall(json.dumps({"method": "org.varlink.service.GetInfo"}).encode() + b"\0")
    s.settimeout(5)
    data = b""
    while b"\0" not in data:
        data += s.recv(65536)
    first = json.loads(data.split(b"\0")[0])
    assert "product" in first["parameters"], "the oneway call was answered"
    s.close()


def test_oversized_message_gets_error_then_close(daemon_factory):
    d = daemon_factory("--socket-max-message-size", "1024")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(d.socket_path)
    s.settimeout(5)
    try:
        s.sendall(b'{"method":"io.roombridge.State.GetState","parameters":{"x":"' + b"a" * 4096)
    except BrokenPipeError:
        pass
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    reply = json.loads(data.split(b"\0")[0])
    assert reply["error"].startswith("org.varlink.service.")
    # Other clients are unaffected.
    [r] = raw_call(d.socket_path, {"method": "io.roombridge.State.GetState"})
    assert "state" in r["parameters"]


def test_stalled_half_message_is_closed(daemon_factory):
    d = daemon_factory("--socket-stall-timeout", "0.5")
    idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    idle.connect(d.socket_path)  # connected, sends nothing: not stalled, stays open
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(d.socket_path)
    s.sendall(b'{"method": "io.roombri')
    s.settimeout(30)  # a "does not hang" bound: recv raises if the daemon never closes it
    while s.recv(65536):
        pass
    s.close()
    # Only the stalled one was closed: the idle connection is still served.
    idle.settimeout(30)
    idle.sendall(json.dumps({"method": "org.varlink.service.GetInfo"}).encode() + b"\0")
    assert b'"product"' in idle.recv(65536), "the idle connection was closed with the stalled one"
    idle.close()


def test_connection_limit(daemon_factory):
    d = daemon_factory("--socket-max-connections", "2")
    held = []
    for _ in range(2):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(d.socket_path)
        s.sendall(json.dumps({"method": "org.varlink.service.GetInfo"}).encode() + b"\0")
        s.settimeout(5)
        assert s.recv(65536)
        held.append(s)
    extra = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    extra.connect(d.socket_path)
    extra.settimeout(5)
    try:
        extra.sendall(json.dumps({"method": "org.varlink.service.GetInfo"}).encode() + b"\0")
    except BrokenPipeError:
        pass
    data = b""
    try:
        while True:
            chunk = extra.recv(65536)
            if not chunk:
                break
            data += chunk
    except ConnectionResetError:
        pass
    assert b'"product"' not in data, "a connection over the limit was served"
    for s in held:
        s.close()
    # Once the others hang up, new clients are served again.
    def served():
        try:
            [r] = raw_call(d.socket_path, {"method": "org.varlink.service.GetInfo"})
            return "parameters" in r
        except (ConnectionResetError, BrokenPipeError, ValueError):
            return False
    eventually(served, what="a new client to be served once the others hung up")


# --- Authorization ---------------------------------------------------------------------------------

# A client run as nobody with the system python gets the shared client as source text (nobody
# may not be able to read this checkout, nor root's pip packages).
NOBODY_CLIENT = (ROOT / "scripts" / "varlinkclient.py").read_text() + """
import sys
_call = call
def call(method, parameters=None):
    return _call(sys.argv[1], method, parameters)
"""


def run_as_nobody(d, code, groups=None):
    """Runs a stdlib-only client as nobody (the system python: nobody cannot read root's pip packages)."""
    cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup"]
    cmd += [f"--groups={groups}"] if groups else ["--clear-groups"]
    cmd += ["/usr/bin/python3", "-c", NOBODY_CLIENT + code, d.socket_path]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30)


def test_nobody_may_read_but_not_mutate(daemon_factory):
    d = daemon_factory("--socket-mode", "0666", "--auth-group", "users")
    r = run_as_nobody(d, "print(json.dumps(call('io.roombridge.State.GetState')))")
    assert r.returncode == 0, r.stderr
    assert "state" in json.loads(r.stdout)["parameters"]
    r = run_as_nobody(d, "print(json.dumps(call('io.roombridge.State.SetLogLevel', {'level': 'debug'})))")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip())
    assert out["error"] == "io.roombridge.State.PermissionDenied"
    assert out["parameters"]["group"] == "users"
    assert "usermod -aG users" in out["parameters"]["hint"]


def test_member_of_auth_group_may_mutate(daemon_factory):
    d = daemon_factory("--socket-mode", "0666", "--auth-group", "users")
    users_gid = subprocess.run(["getent", "group", "users"], capture_output=True, text=True).stdout.split(":")[2]
    r = run_as_nobody(d, "print(json.dumps(call('io.roombridge.State.SetLogLevel', {'level': 'debug'})))",
                      groups=users_gid)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"parameters": {}}


def test_root_may_mutate(daemon):
    with client(daemon) as c, c.open("io.roombridge.State") as st:
        st.SetLogLevel("warning")
        st.SetLogLevel("debug")


# --- Lifecycle and systemd -------------------------------------------------------------------------

def test_ready_status_stopping_and_clean_exit(daemon):
    ready = daemon.notify.wait_for(lambda m: "READY=1" in m)
    assert "STATUS=" in ready and "curtain: not configured" in ready
    assert os.path.exists(daemon.socket_path)
    # A generous "does not hang" bound (the shutdown time is measured by roombridge-bench).
    assert daemon.terminate(signal.SIGTERM, timeout=30) == 0
    daemon.notify.wait_for(lambda m: "STOPPING=1" in m, timeout=1)
    assert not os.path.exists(daemon.socket_path), "socket file left behind"


def test_sigint_also_exits_zero(daemon):
    assert daemon.terminate(signal.SIGINT) == 0


def test_watch_client_is_told_on_shutdown(daemon):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(daemon.socket_path)
    s.sendall(json.dumps({"method": "io.roombridge.State.Watch", "more": True}).encode() + b"\0")
    s.settimeout(5)
    data = b""
    while b"\0" not in data:
        data += s.recv(65536)
    daemon.proc.send_signal(signal.SIGTERM)
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    messages = [json.loads(m) for m in data.split(b"\0") if m]
    assert messages[-1].get("error") == "io.roombridge.State.ShuttingDown", messages[-1]
    assert daemon.proc.wait(5) == 0


def test_watchdog_pings(daemon_factory):
    d = daemon_factory(env={"WATCHDOG_USEC": "400000", "WATCHDOG_PID": ""}, start=False)
    d.env.pop("WATCHDOG_PID")
    d.start()
    d.notify.wait_for(lambda m: "WATCHDOG=1" in m, timeout=3)


def test_socket_activation_with_systemd_socket_activate(tmpdir_path):
    sock = str(tmpdir_path / "activated.sock")
    notify = tmpdir_path / "n.sock"
    env = dict(os.environ, LIBNFC_LOG_LEVEL="0")
    proc = subprocess.Popen(
        ["systemd-socket-activate", "-l", sock, binary("roombridged"),
         "--socket-path", str(tmpdir_path / "unused.sock"), "--database-path", str(tmpdir_path / "db.sqlite"),
         "--no-nfc-enabled", "--no-curtain-enabled", "--socket-group", ""],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        eventually(lambda: os.path.exists(sock), what="systemd-socket-activate to listen")
        # The first connection makes systemd-socket-activate exec the daemon with the socket as fd 3.
        [r] = raw_call(sock, {"method": "org.varlink.service.GetInfo"}, timeout=15)
        assert r["parameters"]["product"] == "roombridged"
        assert not os.path.exists(tmpdir_path / "unused.sock"), "bound its own path instead of adopting fd 3"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(5) == 0
        assert os.path.exists(sock), "removed a socket file it did not create"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_stale_socket_is_replaced(daemon_factory, tmpdir_path):
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(tmpdir_path / "roombridge.sock"))
    stale.close()  # a socket file nobody listens on
    d = daemon_factory()
    [r] = raw_call(d.socket_path, {"method": "org.varlink.service.GetInfo"})
    assert r["parameters"]["product"] == "roombridged"


def test_live_socket_is_not_stolen(daemon_factory):
    first = daemon_factory()
    second = daemon_factory(notify=False, start=False)
    second.start(wait=False)
    assert second.proc.wait(10) == 69
    assert "roombridge.sock" in second.log()
    [r] = raw_call(first.socket_path, {"method": "org.varlink.service.GetInfo"})
    assert r["parameters"]["product"] == "roombridged"


# --- Configuration -----------------------------------------------------------------------------------

def test_print_config_shows_effective_values(tmpdir_path):
    cfg = tmpdir_path / "c.toml"
    cfg.write_text('[socket]\npath = "/tmp/x.sock"\n')
    out = subprocess.run([binary("roombridged"), "--config", str(cfg), "--print-config",
                          "--lending-arm-seconds", "45"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert 'path = "/tmp/x.sock"' in out.stdout
    assert "arm_seconds = 45" in out.stdout


def test_bad_config_names_key_and_line_and_binds_nothing(tmpdir_path):
    cfg = tmpdir_path / "bad.toml"
    cfg.write_text('[socket]\npath = "%s"\n\n[lending]\narm_seconds = "soon"\n' % (tmpdir_path / "s.sock"))
    out = subprocess.run([binary("roombridged"), "--config", str(cfg)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 78
    assert f"{cfg}:5: lending.arm_seconds must be a whole number" in out.stderr
    assert not (tmpdir_path / "s.sock").exists()


def test_unknown_flag_is_usage_error():
    out = subprocess.run([binary("roombridged"), "--no-such-flag"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 64
    assert "--help" in out.stderr


# --- roombridgectl -------------------------------------------------------------------------------------

def ctl(*args, socket_path, user=None):
    cmd = [binary("roombridgectl"), *args, "--socket", socket_path]
    if user:
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30)


def test_ctl_status_human_and_json(daemon):
    out = ctl("status", socket_path=daemon.socket_path)
    assert out.returncode == 0, out.stderr
    assert "Curtain:   not configured" in out.stdout
    out = ctl("status", "--json", socket_path=daemon.socket_path)
    assert out.returncode == 0
    assert json.loads(out.stdout)["curtain"]["connection"] == "disabled"


def test_ctl_without_daemon_says_what_to_do(tmpdir_path):
    out = ctl("status", socket_path=str(tmpdir_path / "none.sock"))
    assert out.returncode == 3
    assert "systemctl status roombridged" in out.stderr


def test_ctl_permission_denied_names_group(daemon_factory):
    d = daemon_factory("--socket-mode", "0666", "--auth-group", "users")
    out = ctl("log-level", "debug", socket_path=d.socket_path, user="nobody")
    assert out.returncode == 4, out.stderr
    assert "group users" in out.stderr


def test_ctl_socket_permission_denied(daemon_factory):
    d = daemon_factory("--socket-mode", "0600")
    out = ctl("status", socket_path=d.socket_path, user="nobody")
    assert out.returncode == 4, out.stderr
    assert "permission denied" in out.stderr


def test_ctl_watch_json_prints_state_first(daemon):
    proc = subprocess.Popen([binary("roombridgectl"), "watch", "--state", "--json", "--socket", daemon.socket_path],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert json.loads(line)["curtain"]["connection"] == "disabled"
    finally:
        proc.terminate()
        proc.wait(5)


def test_ctl_completion_script():
    out = subprocess.run([binary("roombridgectl"), "--generate-completion-script", "bash"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "roombridgectl" in out.stdout


def test_doctor_reports_on_this_machine(daemon, tmpdir_path):
    cfg = tmpdir_path / "roombridged.toml"
    out = subprocess.run([binary("roombridgectl"), "doctor", "--config", str(cfg), "--socket", daemon.socket_path, "--json"],
                         capture_output=True, text=True, timeout=60)
    findings = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
    by_check = {f["check"]: f for f in findings}
    assert by_check["roombridged's configuration"]["status"] == "ok"  # the daemon runs: doctor asks it
    assert by_check["roombridged answers"]["status"] == "ok"
    assert {"config", "socket", "reader", "bluetooth"} <= {f["area"] for f in findings}
    failed = [f for f in findings if f["status"] == "failed"]
    assert all(f.get("fix") for f in failed), failed
    assert out.returncode == (7 if failed else 0)
    human = subprocess.run([binary("roombridgectl"), "doctor", "--config", str(cfg), "--socket", daemon.socket_path],
                           capture_output=True, text=True, timeout=60)
    assert "SOCKET" in human.stdout and "roombridged answers" in human.stdout


def test_doctor_without_daemon(tmpdir_path):
    out = subprocess.run([binary("roombridgectl"), "doctor", "--config", str(tmpdir_path / "x.toml"),
                          "--socket", str(tmpdir_path / "none.sock")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 7
    assert "systemctl start roombridged" in out.stdout
