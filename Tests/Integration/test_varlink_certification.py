"""The Varlink project's own conformance test, org.varlink.certification, between our Varlink
library and independent implementations, in both directions:

- varlink-go-certification (Debian's varlink-go package; varlink-go's
  cmd/varlink-go-certification/main.go) as client of our server and as server for our client;
- python-varlink's reference (varlink/tests/test_certification.py) the same two ways.

Our side is `varlink-cert` (Sources/varlink-cert): `serve` implements the interface on
VarlinkServer, `client` runs the sequence on VarlinkClient. varlink-go's client exits 0 even when
a step fails (it prints "TestNN() failed" and stops), so its output is what is checked.
"""
import json
import shutil
import socket
import subprocess
import sys
import threading

import pytest

from conftest import accepts_connections, binary, eventually, stop

# Generous "does not hang" bound for one whole certification run (it takes well under a second).
RUN_TIMEOUT = 60


def tool(name):
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is missing: apt-get install varlink-go (scripts/install-deps.sh installs it)")
    return path


class Server:
    """A certification server process listening on `path`."""

    def __init__(self, args, path, log_path):
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        eventually(lambda: accepts_connections(path) or self.proc.poll() is not None, what=f"{args[0]} to listen on {path}")
        assert self.proc.poll() is None, f"{args[0]} exited: {log_path.read_text()}"

    def close(self):
        stop(self.proc)
        self.log.close()


@pytest.fixture
def servers():
    started = []

    def start(args, path, log_path):
        s = Server(args, path, log_path)
        started.append(s)
        return s

    yield start
    for s in started:
        s.close()


def our_server(servers, tmp):
    path = str(tmp / "ours.sock")
    servers([binary("varlink-cert"), "serve", "--socket", path], path, tmp / "varlink-cert.log")
    return path


def our_client(path):
    return subprocess.run([binary("varlink-cert"), "client", "--socket", path],
                          capture_output=True, text=True, timeout=RUN_TIMEOUT)


# --- our server, their clients -------------------------------------------------------------------

def test_varlink_go_client_certifies_our_server(servers, tmpdir_path):
    path = our_server(servers, tmpdir_path)
    out = subprocess.run([tool("varlink-go-certification"), "-client", "-varlink", f"unix:{path}"],
                         capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert "failed" not in out.stdout, out.stdout + out.stderr
    assert "Test10: '[Reply number 1 " in out.stdout and "Reply number 10]'" in out.stdout, out.stdout
    assert out.stdout.rstrip().endswith("End: 'true'"), out.stdout + out.stderr


def test_python_varlink_client_certifies_our_server(servers, tmpdir_path):
    path = our_server(servers, tmpdir_path)
    out = subprocess.run([sys.executable, "-m", "varlink.tests.test_certification", "--client",
                          f"--varlink=unix:{path}"], capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "End: {'all_ok': True}" in out.stdout and "Certification passed" in out.stdout, out.stdout


# --- their servers, our client -------------------------------------------------------------------

def test_our_client_passes_varlink_go_server(servers, tmpdir_path):
    path = str(tmpdir_path / "go.sock")
    servers([tool("varlink-go-certification"), "-varlink", f"unix:{path}"], path, tmpdir_path / "go.log")
    out = our_client(path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'End: {"all_ok":true}' in out.stdout and "certification passed" in out.stdout, out.stdout


def test_our_client_passes_python_varlink_server(servers, tmpdir_path):
    path = str(tmpdir_path / "py.sock")
    servers([sys.executable, "-m", "varlink.tests.test_certification", f"--varlink=unix:{path}"],
            path, tmpdir_path / "py.log")
    out = our_client(path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'End: {"all_ok":true}' in out.stdout and "certification passed" in out.stdout, out.stdout


# --- the checks themselves can fail --------------------------------------------------------------

def calls(path, method, parameters=None, **flags):
    """One call on its own connection; returns its replies (all of them with `more`). The server
    keeps each client's progress by client_id, not by connection."""
    message = {"method": f"org.varlink.certification.{method}", **flags}
    if parameters is not None:
        message["parameters"] = parameters
    replies, buf = [], b""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(path)
        s.sendall(json.dumps(message).encode() + b"\0")
        while not replies or replies[-1].get("continues"):
            while b"\0" not in buf:
                chunk = s.recv(65536)
                assert chunk, f"{method}: connection closed without a reply"
                buf += chunk
            raw, buf = buf.split(b"\0", 1)
            replies.append(json.loads(raw))
    return replies


def call(path, method, parameters=None, **flags):
    return calls(path, method, parameters, **flags)[0]


def start_and_run_to_test10(path):
    """Start, Test01 … Test09 as the reference client calls them; returns (client_id, Test09's reply)."""
    cid = call(path, "Start")["parameters"]["client_id"]
    reply = {}
    for method in ["Test01", "Test02", "Test03", "Test04", "Test05", "Test06", "Test07", "Test08", "Test09"]:
        answer = call(path, method, {**reply, "client_id": cid})
        assert "error" not in answer, (method, answer)
        reply = answer["parameters"]
    return cid, reply


def test_our_server_rejects_calls_out_of_order_and_wrong_values(servers, tmpdir_path):
    path = our_server(servers, tmpdir_path)
    assert call(path, "Test01", {"client_id": "nobody"})["error"] == "org.varlink.certification.ClientIdError"

    cid = call(path, "Start")["parameters"]["client_id"]
    skipped = call(path, "Test02", {"client_id": cid, "bool": True})
    assert skipped["error"] == "org.varlink.certification.CertificationError", skipped
    assert skipped["parameters"]["wants"] == {"method": "org.varlink.certification.Test01"}
    # The client is forgotten after a failure: even the right call is refused now.
    assert call(path, "Test01", {"client_id": cid})["error"] == "org.varlink.certification.ClientIdError"

    cid = call(path, "Start")["parameters"]["client_id"]
    assert call(path, "Test01", {"client_id": cid})["parameters"] == {"bool": True}
    wrong = call(path, "Test02", {"client_id": cid, "bool": False})
    assert wrong["error"] == "org.varlink.certification.CertificationError", wrong
    assert wrong["parameters"]["got"]["parameters"]["bool"] is False


def test_our_server_requires_more_for_test10_and_oneway_for_test11(servers, tmpdir_path):
    path = our_server(servers, tmpdir_path)
    cid, mytype = start_and_run_to_test10(path)
    without_more = call(path, "Test10", {**mytype, "client_id": cid})
    assert without_more["error"] == "org.varlink.certification.CertificationError", without_more

    cid, mytype = start_and_run_to_test10(path)
    streamed = calls(path, "Test10", {**mytype, "client_id": cid}, more=True)
    assert [r.get("continues", False) for r in streamed] == [True] * 9 + [False]
    strings = [r["parameters"]["string"] for r in streamed]
    assert strings == [f"Reply number {i}" for i in range(1, 11)]
    # Test11 as a normal call instead of oneway fails the run; End then no longer knows the client.
    not_oneway = call(path, "Test11", {"client_id": cid, "last_more_replies": strings})
    assert not_oneway["error"] == "org.varlink.certification.CertificationError", not_oneway
    assert call(path, "End", {"client_id": cid})["error"] == "org.varlink.certification.ClientIdError"

    # Done right: oneway Test11 and End on one connection (so End comes after it); one reply, End's.
    cid, mytype = start_and_run_to_test10(path)
    calls(path, "Test10", {**mytype, "client_id": cid}, more=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(path)
        for message in ({"method": "org.varlink.certification.Test11", "oneway": True,
                         "parameters": {"client_id": cid, "last_more_replies": strings}},
                        {"method": "org.varlink.certification.End", "parameters": {"client_id": cid}}):
            s.sendall(json.dumps(message).encode() + b"\0")
        buf = b""
        while b"\0" not in buf:
            buf += s.recv(65536)
    assert json.loads(buf.split(b"\0", 1)[0]) == {"parameters": {"all_ok": True}}


def test_our_client_reports_a_wrong_reply(tmpdir_path):
    """A server that answers Test01 with the wrong value: the client must fail, naming the step."""
    path = str(tmpdir_path / "wrong.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)

    def serve():
        conn, _ = listener.accept()
        with conn:
            buf = b""
            for reply in ({"parameters": {"client_id": "c"}}, {"parameters": {"bool": False}}):
                while b"\0" not in buf:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                _, buf = buf.split(b"\0", 1)
                conn.sendall(json.dumps(reply).encode() + b"\0")
            while conn.recv(65536):
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        out = our_client(path)
    finally:
        listener.close()
    assert out.returncode == 1, out.stdout + out.stderr
    assert "org.varlink.certification.Test01" in out.stderr and '"bool":false' in out.stderr, out.stderr
