"""`agentkit serve --http` against slow and numerous connections, with real sockets on 127.0.0.1.

A connection must finish its request head within ``--header-timeout`` and then its
body within ``--body-timeout`` (408, then closed), an idle keep-alive connection is
closed after ``--idle-timeout``, and connections past ``--max-connections`` get 503
at once: so a flood of connections that dribble their headers or their bodies a
byte a second never stops a normal client for longer than those deadlines, and
never runs the process out of file descriptors (the servers here run with a small
open-file limit, so running out would be quick).
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agentkit.cli import main
from tests.support.serving import INITIALIZE, Served, post, serving

pytest.importorskip("uvicorn")
resource = pytest.importorskip("resource")

from agentkit.mcp.connections import default_max_connections, reserved_descriptors  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
#: The server's open-file limit (soft and hard): its cap is 256 - 64 = 192 connections.
FD_LIMIT = 256
CAP = default_max_connections(FD_LIMIT)
HEADER_TIMEOUT = 8.0
HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
#: A whole request head, then the first byte of a body that would be 100,000 bytes long.
BODY = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{"
)
#: The same, with a chunked body: chunks of one byte.
CHUNKED = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"1\r\n{\r\n"
)


def _small_fd_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


def _server(
    *args: str,
    limit: Callable[[], None] | None = _small_fd_limit,
    env: dict[str, str] | None = None,
) -> contextlib.AbstractContextManager[Served]:
    return serving(["--tools", str(ROOT / "tools.d"), *args], preexec_fn=limit, env=env)


class Dribbler:
    """Connections that send ``start`` (by default the start of a request head), then
    ``drip`` once a second, and never finish the request."""

    def __init__(self, port: int, start: bytes = HEAD, drip: bytes = b"x") -> None:
        self.port = port
        self.start = start
        self.drip = drip
        self.sockets: list[socket.socket] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._dribble, daemon=True)

    def open(self, count: int) -> None:
        """``count`` connections, opened a few at a time: a connect the server's short
        listening queue drops is retried by the kernel a second later, not one by one."""

        def one(_: int) -> socket.socket:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
            sock.sendall(self.start)
            return sock

        with ThreadPoolExecutor(max_workers=32) as pool:
            self.sockets += pool.map(one, range(count))

    def _dribble(self) -> None:
        end = time.monotonic() + 120  # bounded, whatever the test does
        while not self.done.wait(1.0) and time.monotonic() < end:
            for sock in self.sockets:
                with contextlib.suppress(OSError):
                    sock.send(self.drip)

    def __enter__(self) -> Dribbler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join(timeout=10)
        for sock in self.sockets:
            sock.close()


def _answer(sock: socket.socket, seconds: float) -> bytes:
    """What the server sends until it closes the connection, within ``seconds``."""
    sock.settimeout(seconds)
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(4096):
            data += chunk
    return data


def _answered(sockets: list[socket.socket]) -> list[socket.socket]:
    """The sockets the server has answered or closed (without waiting)."""
    poller = select.poll()
    for sock in sockets:
        poller.register(sock, select.POLLIN)
    ready = {fd for fd, _ in poller.poll(0)}
    return [sock for sock in sockets if sock.fileno() in ready]


def _initialize(served: Served, seconds: float = 10.0) -> tuple[int, float]:
    started = time.monotonic()
    status, _, _ = post(served.url, INITIALIZE, {})
    elapsed = time.monotonic() - started
    assert elapsed < seconds
    return status, elapsed


def test_slow_heads_past_the_open_file_limit_never_lock_out_a_normal_client() -> None:
    count = FD_LIMIT + 44  # more than the process could ever hold open
    with _server("--header-timeout", str(HEADER_TIMEOUT)) as served:
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        with Dribbler(port) as slow:
            started = time.monotonic()
            slow.open(count)
            assert time.monotonic() - started < HEADER_TIMEOUT - 1
            # Past the cap: 503 and closed at once, not held.
            time.sleep(0.5)
            refused = _answered(slow.sockets)
            assert len(refused) == count - CAP
            for sock in refused:
                answer = _answer(sock, 1.0)
                assert answer.startswith(b"HTTP/1.1 503 "), answer
                assert b"Retry-After: 1" in answer
            # While the cap is full a normal client is refused at once, not kept waiting.
            with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
                assert _answer(client, 2.0).startswith(b"HTTP/1.1 503 ")
            # The slow ones are closed at the head deadline, with 408.
            for sock in (sock for sock in slow.sockets if sock not in refused):
                answer = _answer(sock, HEADER_TIMEOUT + 5.0)
                assert answer.startswith(b"HTTP/1.1 408 "), answer
            closed_after = time.monotonic() - started
            assert HEADER_TIMEOUT - 0.5 < closed_after < HEADER_TIMEOUT + 5.0
            # And a normal client is served again.
            assert _initialize(served, seconds=5.0)[0] == 200
        assert "Too many open files" not in served.stderr
        assert "refusing connections past --max-connections" in served.stderr


def test_a_normal_client_is_answered_at_once_while_slow_heads_dribble() -> None:
    with _server() as served:  # the default header timeout: 10 s
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        with Dribbler(port) as slow:
            slow.open(50)
            for _ in range(3):
                status, _ = _initialize(served, seconds=2.0)
                assert status == 200
            time.sleep(2.5)  # a few bytes dribbled: still open, still within the deadline
            for sock in slow.sockets:
                sock.setblocking(False)
                with pytest.raises(BlockingIOError):
                    sock.recv(1)


BODY_TIMEOUT = 12.0


def test_slow_bodies_past_the_open_file_limit_never_lock_out_a_normal_client() -> None:
    count = FD_LIMIT + 44
    # A short head deadline: a whole head is past it, only the body deadline applies.
    args = ("--body-timeout", str(BODY_TIMEOUT), "--header-timeout", "2")
    with _server(*args) as served:
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        with Dribbler(port, start=BODY, drip=b" ") as slow:
            started = time.monotonic()
            slow.open(count)
            opened = time.monotonic()
            assert opened - started < BODY_TIMEOUT - 5
            time.sleep(0.5)
            # Past the cap: 503 and closed at once (as for slow heads), not held.
            refused = _answered(slow.sockets)
            assert len(refused) == count - CAP
            with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
                assert _answer(client, 2.0).startswith(b"HTTP/1.1 503 ")
            # Past every head deadline, before any body deadline: none is answered yet...
            time.sleep(max(0.0, opened + 2.5 - time.monotonic()))
            held = [sock for sock in slow.sockets if sock not in refused]
            assert time.monotonic() - started < BODY_TIMEOUT
            assert _answered(held) == []
            # ...and each is closed at its body deadline, with 408.
            for sock in held:
                answer = _answer(sock, BODY_TIMEOUT + 5.0)
                assert answer.startswith(b"HTTP/1.1 408 "), answer
                assert answer.endswith(b"the request body came too late")
            assert time.monotonic() - started > BODY_TIMEOUT - 0.5
            assert time.monotonic() - opened < BODY_TIMEOUT + 5.0
            assert _initialize(served, seconds=5.0)[0] == 200
        assert "Too many open files" not in served.stderr


@pytest.mark.parametrize(
    ("start", "drip"),
    [
        pytest.param(BODY, b" ", id="content-length-dripped"),
        pytest.param(CHUNKED, b"1\r\n \r\n", id="chunked-dripped"),
        pytest.param(BODY, b"", id="no-body-after-the-head"),
        pytest.param(BODY[:-1], b"", id="head-only"),
        pytest.param(CHUNKED, b"", id="chunked-stalled"),
    ],
)
def test_a_request_body_must_be_whole_within_the_body_timeout(start: bytes, drip: bytes) -> None:
    with _server("--body-timeout", "1", limit=None) as served:
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        with Dribbler(port, start=start, drip=drip) as slow:
            slow.open(1)
            started = time.monotonic()
            answer = _answer(slow.sockets[0], 8.0)
            assert answer == (
                b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n"
                b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 30\r\n\r\n"
                b"the request body came too late"
            )
            assert 0.5 < time.monotonic() - started < 6.0
            assert _initialize(served, seconds=5.0)[0] == 200


def test_a_body_sent_in_pieces_within_the_deadline_is_answered() -> None:
    body = json.dumps(INITIALIZE).encode()
    with _server("--body-timeout", "6", limit=None) as served:
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(_initialize_head(body))
            third = len(body) // 3
            for piece in (body[:third], body[third : 2 * third], body[2 * third :]):
                time.sleep(0.5)
                sock.sendall(piece)
            assert _reply_head(sock).startswith(b"HTTP/1.1 200 ")


def test_each_request_on_a_kept_alive_connection_has_its_own_body_deadline() -> None:
    with _server("--body-timeout", "1", "--idle-timeout", "30", limit=None) as served:
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            time.sleep(1.5)  # past one body deadline: the first request is not timed from it
            assert _raw_exchange(sock).startswith(b"HTTP/1.1 200 ")
            time.sleep(1.5)
            assert _raw_exchange(sock).startswith(b"HTTP/1.1 200 ")
            sock.sendall(BODY)
            assert _answer(sock, 8.0).startswith(b"HTTP/1.1 408 ")


def test_a_refused_request_does_not_keep_its_connection_by_dripping_the_body() -> None:
    # 401 before the body is read: the bytes dripped after it are no request head.
    args = ("--auth-token-env", "TOKEN", "--body-timeout", "60", "--header-timeout", "1")
    with _server(*args, limit=None, env={"TOKEN": "t0ken-0123456789abcdef"}) as served:
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        with Dribbler(port, start=BODY, drip=b" ") as slow:
            slow.open(1)
            started = time.monotonic()
            answer = _answer(slow.sockets[0], 10.0)
            assert answer.startswith(b"HTTP/1.1 401 "), answer
            assert time.monotonic() - started < 8.0


def _initialize_head(body: bytes) -> bytes:
    """The head of an initialize request whose body is ``body``."""
    return (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
    )


def _raw_exchange(sock: socket.socket) -> bytes:
    body = json.dumps(INITIALIZE).encode()
    sock.sendall(_initialize_head(body) + body)
    return _reply_head(sock)


def _reply_head(sock: socket.socket) -> bytes:
    """The head of the reply to the request sent on ``sock``, once the reply is whole."""
    sock.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096)
    head, _, rest = data.partition(b"\r\n\r\n")
    lengths = [line for line in head.lower().split(b"\r\n") if line.startswith(b"content-length")]
    # Whole once its length is read, or (chunked) once the last chunk came.
    while (
        (len(rest) < int(lengths[0].split(b":")[1])) if lengths else not rest.endswith(b"0\r\n\r\n")
    ):
        rest += sock.recv(4096)
    return head


@pytest.mark.parametrize(
    ("then", "timeout", "answer"),
    [
        pytest.param(b"", "--idle-timeout", b"", id="idle-after-a-request"),
        pytest.param(HEAD, "--header-timeout", b"HTTP/1.1 408 ", id="slow-second-head"),
    ],
)
def test_a_kept_alive_connection_is_bounded_between_requests(
    then: bytes, timeout: str, answer: bytes
) -> None:
    with _server(timeout, "1", limit=None) as served:
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            assert _raw_exchange(sock).startswith(b"HTTP/1.1 200 ")
            started = time.monotonic()
            if then:
                sock.sendall(then)
            assert _answer(sock, 8.0).startswith(answer)
            assert 0.5 < time.monotonic() - started < 6.0


def test_a_connection_that_sends_nothing_is_closed_at_the_head_deadline() -> None:
    with _server("--header-timeout", "1", limit=None) as served:
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            started = time.monotonic()
            assert _answer(sock, 8.0).startswith(b"HTTP/1.1 408 ")
            assert 0.5 < time.monotonic() - started < 6.0


def _exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)


def test_the_cap_follows_the_open_file_limit() -> None:
    assert reserved_descriptors(1024) == 256
    assert default_max_connections(1024) == 768
    assert default_max_connections(256) == 192
    assert default_max_connections(1_048_576) == 4096
    assert default_max_connections(None) == 4096


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        pytest.param(
            "--header-timeout", "0", "--header-timeout takes a number of seconds", id="header-0"
        ),
        pytest.param(
            "--header-timeout", "-1", "above 0 and at most 86400, got -1.0", id="header-negative"
        ),
        pytest.param("--header-timeout", "nan", "got nan", id="header-nan"),
        pytest.param("--header-timeout", "inf", "got inf", id="header-inf"),
        pytest.param("--header-timeout", "1e9", "at most 86400", id="header-huge"),
        pytest.param(
            "--idle-timeout",
            "0",
            "--idle-timeout takes a whole number of seconds from 1",
            id="idle-0",
        ),
        pytest.param("--idle-timeout", "86401", "from 1 to 86400, got 86401", id="idle-huge"),
        pytest.param(
            "--body-timeout", "0", "--body-timeout takes a number of seconds", id="body-0"
        ),
        pytest.param("--body-timeout", "-2", "above 0 and at most 86400, got -2.0", id="body-neg"),
        pytest.param("--body-timeout", "nan", "got nan", id="body-nan"),
        pytest.param("--body-timeout", "inf", "got inf", id="body-inf"),
        pytest.param("--body-timeout", "1e9", "at most 86400", id="body-huge"),
        pytest.param(
            "--max-connections", "0", "--max-connections takes a whole number from 1", id="cap-0"
        ),
        pytest.param("--max-connections", "-5", "got -5", id="cap-negative"),
        pytest.param(
            "--max-connections",
            "999999999",
            "raise it with ulimit -n for more",
            id="cap-past-fd-limit",
        ),
    ],
)
def test_an_out_of_range_option_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], option: str, value: str, message: str
) -> None:
    argv = ["serve", "--http", "127.0.0.1:0", "--tools", str(ROOT / "tools.d"), option, value]
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "option", ["--header-timeout", "--body-timeout", "--idle-timeout", "--max-connections"]
)
def test_the_connection_options_need_http(capsys: pytest.CaptureFixture[str], option: str) -> None:
    assert _exit_code(["serve", "--tools", str(ROOT / "tools.d"), option, "5"]) == 2
    assert f"{option} only applies with --http" in capsys.readouterr().err
