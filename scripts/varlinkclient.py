"""The one raw Varlink client of the integration tests and scripts/scenario.py: NUL-terminated
JSON messages over a Unix socket, exactly as sent (malformed ones too). Standard library only,
so that scripts and clients run as another user (with the system python) can use it.

For typed calls on a well-formed connection the tests use the `varlink` package instead."""
import json
import socket
import time


class Connection:
    """One connection; `call` for a reply, `send`/`receive` for streams and raw bytes."""

    def __init__(self, path, timeout=10.0):
        self.timeout = timeout
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""

    def send(self, message):
        """Sends a dict (as one NUL-terminated message) or bytes (as they are)."""
        self.sock.sendall(message if isinstance(message, bytes) else json.dumps(message).encode() + b"\0")

    def receive(self, timeout=None):
        """The next message as a dict. Raises TimeoutError after `timeout` (default: the
        connection's), EOFError if the peer closed first."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while b"\0" not in self.buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no reply")
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise TimeoutError("no reply") from None
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, parameters=None, /, more=False, **kwargs):
        """Calls `method` with `parameters` (a dict, or keyword arguments); returns the (first)
        reply, {"parameters": …} or {"error": …, "parameters": …}."""
        message = {"method": method, "parameters": {**(parameters or {}), **kwargs}}
        if more:
            message["more"] = True
        self.send(message)
        return self.receive()

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()


def raw_call(path, message, read_replies=1, timeout=5.0):
    """Sends one message (dict or raw bytes) on a new connection and reads up to `read_replies`
    replies (fewer if the daemon closes the connection first)."""
    with Connection(path, timeout) as c:
        c.send(message)
        replies = []
        while len(replies) < read_replies:
            try:
                replies.append(c.receive())
            except EOFError:
                break
        return replies


def call(path, method, parameters=None, **kwargs):
    """One call on a new connection; returns the reply (parameters or error) as sent."""
    with Connection(path) as c:
        return c.call(method, parameters, **kwargs)
