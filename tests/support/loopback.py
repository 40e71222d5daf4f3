"""A real HTTP server on 127.0.0.1 for fault tests: each path scripts a behaviour."""

from __future__ import annotations

import contextlib
import gzip
import json
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final, TypeVar

Behaviour = Callable[["Handler"], None]


class Handler(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True  # else every keep-alive reply waits on a delayed ACK
    protocol_version = "HTTP/1.1"
    behaviours: dict[str, Behaviour] = {}
    hits: dict[str, int] = {}

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _dispatch(self) -> None:
        path = self.path.split("?")[0]
        self.hits[path] = self.hits.get(path, 0) + 1
        length = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(length) if length else b""
        self.behaviours.get(path, not_found)(self)

    def _serve(self) -> None:
        # The client may hang up on purpose: a deadline or size-cap test.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._dispatch()

    do_GET = do_POST = do_PUT = _serve

    def reply(
        self, status: int, payload: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload if payload is not None else {}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def not_found(handler: Handler) -> None:
    handler.reply(404, {"error": "no such path"})


def ok(payload: Any) -> Behaviour:
    return lambda handler: handler.reply(200, payload)


def fail_then_ok(
    times: int, status: int, payload: Any, headers: dict[str, str] | None = None
) -> Behaviour:
    def behave(handler: Handler) -> None:
        path = handler.path.split("?")[0]
        if handler.hits[path] <= times:
            handler.reply(status, {"error": "try later"}, headers)
        else:
            handler.reply(200, payload)

    return behave


def slow(seconds: float, payload: Any) -> Behaviour:
    def behave(handler: Handler) -> None:
        time.sleep(seconds)
        handler.reply(200, payload)

    return behave


def trickle(pieces: int, pause: float) -> Behaviour:
    """Headers at once, then the body a byte at a time: each read is quick, the whole is not."""

    def behave(handler: Handler) -> None:
        body = b'{"title": "' + b"x" * pieces + b'"}'
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        for i in range(len(body)):
            handler.wfile.write(body[i : i + 1])
            handler.wfile.flush()
            time.sleep(pause)

    return behave


def gzip_bomb(decoded_bytes: int) -> Behaviour:
    packed = gzip.compress(b'{"title": "' + b"a" * decoded_bytes + b'"}')

    def behave(handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(packed)))
        handler.end_headers()
        handler.wfile.write(packed)

    return behave


def redirect(location: str, status: int = 302) -> Behaviour:
    def behave(handler: Handler) -> None:
        handler.send_response(status)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return behave


@contextmanager
def serve(behaviours: dict[str, Behaviour]) -> Iterator[str]:
    """Serve ``behaviours`` on a free loopback port; yields the origin."""
    handler = type("ScriptedHandler", (Handler,), {"behaviours": behaviours, "hits": {}})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    with running(server):
        yield f"http://127.0.0.1:{server.server_address[1]}"


_Server = TypeVar("_Server", bound=socketserver.BaseServer)


@contextmanager
def running(server: _Server) -> Iterator[_Server]:
    """Run ``server`` on a thread for the block (yields it); shut it down and close it after."""
    # A short poll interval: shutdown() waits up to one interval, once per server.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


#: What ``forward_proxy`` answers: for a token request, a token; for an API call, ``ok``.
PROXY_REPLY: Final = {"access_token": "via-proxy", "token_type": "bearer", "ok": True}


class Forwarded:
    """What a loopback forward proxy saw: each request's method, target and headers."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.lock = threading.Lock()

    @property
    def targets(self) -> list[str]:
        with self.lock:
            return [target for _, target, _ in self.requests]


@contextmanager
def forward_proxy(
    status: int = 200, *, echo_headers: bool = False
) -> Iterator[tuple[str, Forwarded]]:
    """A forward proxy on a free loopback port that answers every request itself (it
    forwards nothing): ``status`` and ``PROXY_REPLY`` (a token reply and an API reply in
    one), or with ``echo_headers`` a JSON object of the headers it got; a ``CONNECT`` (a
    tunnel to an https:// API) gets 403. Yields its URL and what it saw."""
    seen = Forwarded()

    class ProxyHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            with seen.lock:
                seen.requests.append((self.command, self.path, dict(self.headers)))
            if self.command == "CONNECT":
                self.send_response(403, "Tunnels Refused")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            payload = dict(self.headers) if echo_headers else PROXY_REPLY
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_CONNECT = _answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), ProxyHandler)
    server.daemon_threads = True
    with running(server):
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
