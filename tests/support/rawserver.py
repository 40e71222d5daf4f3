"""A raw-socket server on 127.0.0.1 for replies http.server cannot make: dripped, cut, malformed.

Each connection reads whole requests (head and ``Content-Length`` body) and
counts them in ``received`` before the scripted reply runs, so a test knows
exactly how many requests reached the server; ``closed`` counts the connections
the server has closed, so a test can wait for a close instead of guessing a delay.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

# A reply gets the connection and the stop event; it returns True to keep the
# connection open for the next request (keep-alive), False to close it.
Reply = Callable[[socket.socket, threading.Event], bool]

OK_BODY: Final = b'{"title": "fine"}'
OK: Final = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(OK_BODY)).encode()
    + b"\r\n\r\n"
    + OK_BODY
)
_MAX_REQUEST: Final = 1 << 20


class RawServer:
    def __init__(self, replies: list[Reply], *, backlog: int = 16) -> None:
        """``replies[i]`` answers the i-th request; the last one answers all later ones."""
        self.replies = replies
        self.received = 0
        self.connections = 0
        self.closed = 0
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=backlog)
        self._listener.settimeout(0.05)
        self.origin = f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def address(self) -> tuple[str, int]:
        host, port = self._listener.getsockname()[:2]
        return host, port

    def serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            self.connections += 1
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        conn.settimeout(0.05)
        buffer = b""
        try:
            with conn, contextlib.suppress(OSError):
                while not self.stop.is_set():
                    request, buffer = _read_request(conn, buffer, self.stop)
                    if request is None:
                        return
                    with self._lock:
                        self.received += 1
                        reply = self.replies[min(self.received, len(self.replies)) - 1]
                    if not reply(conn, self.stop):
                        return
        finally:
            with self._lock:
                self.closed += 1


def _read_request(
    conn: socket.socket, buffer: bytes, stop: threading.Event
) -> tuple[bytes | None, bytes]:
    """One whole request (head and body) from ``conn``; None when the peer closed first."""
    while b"\r\n\r\n" not in buffer:
        if (data := _recv(conn, stop)) is None or len(buffer) > _MAX_REQUEST:
            return None, b""
        buffer += data
    head, _, rest = buffer.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        if (data := _recv(conn, stop)) is None:
            return None, b""
        rest += data
    return head + b"\r\n\r\n" + rest[:length], rest[length:]


def _recv(conn: socket.socket, stop: threading.Event) -> bytes | None:
    while not stop.is_set():
        try:
            data = conn.recv(65536)
        except TimeoutError:
            continue
        return data or None
    return None


@contextmanager
def serve(*replies: Reply) -> Iterator[RawServer]:
    server = RawServer(list(replies))
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop.set()
        thread.join(timeout=5)
        server._listener.close()


# -- replies ----------------------------------------------------------------------------------


def ok(conn: socket.socket, stop: threading.Event) -> bool:
    conn.sendall(OK)
    return True


def close_before_reply(conn: socket.socket, stop: threading.Event) -> bool:
    return False


def reset_before_reply(conn: socket.socket, stop: threading.Event) -> bool:
    # A zero linger time makes close() send RST instead of FIN.
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return False


def malformed_status_line(conn: socket.socket, stop: threading.Event) -> bool:
    conn.sendall(b"HTTP/1.1 two hundred OK\r\nContent-Length: 0\r\n\r\n")
    return False


def garbage_reply(conn: socket.socket, stop: threading.Event) -> bool:
    conn.sendall(b"\x00\xffnot http at all\r\n\r\n")
    return False


def close_mid_body(conn: socket.socket, stop: threading.Event) -> bool:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + OK_BODY[:5])
    return False


def silence(conn: socket.socket, stop: threading.Event) -> bool:
    stop.wait(30)
    return False


def drip(head: bytes, piece: bytes, pause: float) -> Reply:
    """``head`` at once, then ``piece`` every ``pause`` seconds, never finishing the reply."""

    def reply(conn: socket.socket, stop: threading.Event) -> bool:
        conn.sendall(head)
        for _ in range(1000):  # bounded: 1000 pauses outlast any test
            conn.sendall(piece)
            if stop.wait(pause):
                break
        return False

    return reply


def drip_status_line(pause: float) -> Reply:
    return drip(b"", b"H", pause)


def drip_headers(pause: float) -> Reply:
    return drip(b"HTTP/1.1 200 OK\r\nX-Drip: ", b"a", pause)


def drip_body(pause: float) -> Reply:
    return drip(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", b" ", pause)


def drip_chunked_body(pause: float) -> Reply:
    return drip(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"1\r\n \r\n", pause)


def close_after(seconds: float) -> Reply:
    """A keep-alive reply, then the server closes the idle connection after ``seconds``."""

    def reply(conn: socket.socket, stop: threading.Event) -> bool:
        conn.sendall(OK)
        stop.wait(seconds)
        return False

    return reply


def empty(status: bytes, header: bytes) -> Reply:
    """A keep-alive reply with no body: ``status`` line and one ``header`` line."""

    def reply(conn: socket.socket, stop: threading.Event) -> bool:
        conn.sendall(b"HTTP/1.1 " + status + b"\r\n" + header + b"\r\nContent-Length: 0\r\n\r\n")
        return True

    return reply


def redirect(location: str) -> Reply:
    return empty(b"307 Temporary Redirect", b"Location: " + location.encode())


def unavailable(retry_after: bytes) -> Reply:
    """A 503 whose ``Retry-After`` is ``retry_after``, byte for byte."""
    return empty(b"503 Service Unavailable", b"Retry-After: " + retry_after)


@contextmanager
def unaccepting() -> Iterator[RawServer]:
    """A listener that never accepts, its queue (backlog 0) filled by one connection:
    a connect to it never completes (Linux drops the SYN)."""
    server = RawServer([silence], backlog=0)
    with server._listener, socket.create_connection(server.address()):
        yield server
