"""A real OAuth2 token endpoint on 127.0.0.1 that counts its requests, for the OAuth2 tests."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from tests.support import loopback
from tests.support.helpers import WAIT_SECONDS


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    delay: float = 0.0
    #: When given, the reply waits until the test sets it (at most WAIT_SECONDS):
    #: a request held in flight for as long as the test needs, not for a guess.
    hold: threading.Event | None = None


def token_reply(token: str, **fields: Any) -> Reply:
    return Reply(
        body=json.dumps({"access_token": token, "token_type": "Bearer", **fields}).encode()
    )


@dataclass
class Seen:
    headers: dict[str, str]
    form: dict[str, str]


@dataclass
class TokenEndpoint:
    """Answers each POST with ``script(number)``; records every request it saw."""

    url: str = ""
    script: Callable[[int], Reply] = lambda n: token_reply(f"token-{n}", expires_in=3600)
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def count(self) -> int:
        with self.lock:
            return len(self.seen)

    def issue(self, *tokens: str, **fields: Any) -> None:
        """Reply with ``tokens`` in turn (the last one from then on)."""
        self.script = lambda n: token_reply(tokens[min(n, len(tokens)) - 1], **fields)


@contextmanager
def serving() -> Iterator[TokenEndpoint]:
    """A token endpoint on a free loopback port for the block."""
    state = TokenEndpoint()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode()
            form = {name: values[0] for name, values in parse_qs(raw).items()}
            with state.lock:
                state.seen.append(Seen(dict(self.headers.items()), form))
                number = len(state.seen)
            reply = state.script(number)
            time.sleep(reply.delay)
            if reply.hold is not None:
                reply.hold.wait(WAIT_SECONDS)
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            # The client may give up on purpose (a deadline test).
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(reply.body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/oauth/token"
    with loopback.running(server):
        yield state
