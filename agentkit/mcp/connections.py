"""The connections of ``agentkit serve --http``: request deadlines and a connection cap.

uvicorn bounds the idle time between requests (``timeout_keep_alive``) but not
the time a client takes to send a request: a connection that sends one header
byte a second, or a complete head and then its body a byte a second, is kept
forever, before any authentication, and each holds a file descriptor.
``guarded_protocol`` wraps uvicorn's own HTTP protocol class (passed as its
``http=`` option; the server stays uvicorn's) with three rules:

- **Head deadline.** From the moment a connection opens, and from the first
  byte of each later request, the request's head (request line and headers)
  must be complete within ``header_timeout`` seconds, else the connection gets
  ``408`` and is closed.
- **Body deadline.** From the moment a request's head is complete, its body
  must be complete within ``body_timeout`` seconds, else the connection gets
  ``408`` (or, if an answer has begun, is cut) and is closed. The answer is not
  timed here (a call is bounded by ``--call-timeout``).
- **Connection cap.** A connection beyond ``max_connections`` open ones gets
  ``503`` with ``Retry-After: 1`` and is closed at once, so it holds its file
  descriptor only for that moment. ``default_max_connections`` sizes the cap
  from the open-file limit, which ``raise_open_file_limit`` first raises to its
  hard limit, and ``accept_backlog`` the listening backlog (how many asyncio
  accepts at once), so the process never runs out of descriptors for its tools.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import Any, ClassVar, Final

from agentkit.toolerrors import UsageError

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_IDLE_TIMEOUT",
    "MAX_DEFAULT_CONNECTIONS",
    "accept_backlog",
    "check_body_timeout",
    "check_limits",
    "default_max_connections",
    "guarded_protocol",
    "raise_open_file_limit",
    "reserved_descriptors",
]

logger = logging.getLogger("agentkit.serve")

#: Seconds a client has to send a request's head; a real client sends it at once.
DEFAULT_HEADER_TIMEOUT: Final = 10.0
#: Seconds a client has to send a request's body once its head came: the default
#: --max-request-bytes (4 MiB) at about 1 Mbit/s.
DEFAULT_BODY_TIMEOUT: Final = 30.0
#: Seconds an idle keep-alive connection is kept between requests (uvicorn's default).
DEFAULT_IDLE_TIMEOUT: Final = 5
#: The default cap when the open-file limit is high: far more than MCP clients need.
MAX_DEFAULT_CONNECTIONS: Final = 4096
#: The longest timeout an option takes: a day.
_MAX_SECONDS: Final = 86400.0
#: uvicorn's listening backlog when descriptors are plenty (its default is 2,048).
_MAX_BACKLOG: Final = 128
#: How often the "too many connections" warning is logged at most, in seconds.
_WARN_EVERY: Final = 60.0

_REFUSAL: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 21\r\n\r\n"
    b"too many connections\n"
)


def _timed_out(part: str) -> bytes:
    """The answer to a request whose ``part`` (head, body) is late."""
    text = f"the request {part} came too late".encode()
    return (
        b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n"
        b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s"
        % (len(text), text)
    )


_HEAD_TIMED_OUT: Final = _timed_out("head")
_BODY_TIMED_OUT: Final = _timed_out("body")


def raise_open_file_limit() -> int | None:
    """Raise this process's soft open-file limit to its hard limit; the limit now in force.

    ``None`` where there is no such limit to read (no ``resource`` module: Windows).
    A hard limit the system will not grant as a soft one (macOS's unlimited) is
    left as it was.
    """
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return None if soft == resource.RLIM_INFINITY else soft


def reserved_descriptors(limit: int) -> int:
    """The descriptors kept for everything but client connections (tools' sockets, files)."""
    return max(64, limit // 4)


def default_max_connections(limit: int | None) -> int:
    """The cap for an open-file ``limit``: what the reserve leaves, at most 4,096."""
    if limit is None:
        return MAX_DEFAULT_CONNECTIONS
    return max(1, min(limit - reserved_descriptors(limit), MAX_DEFAULT_CONNECTIONS))


def accept_backlog(limit: int | None) -> int:
    """How many connections the listening socket queues, and asyncio accepts at a time.

    asyncio accepts up to the backlog in one go before any of them is seen by the
    protocol (and refused past the cap): a quarter of the reserve, so a burst of
    connections never takes the descriptors the reserve keeps.
    """
    if limit is None:
        return _MAX_BACKLOG
    return max(8, min(_MAX_BACKLOG, reserved_descriptors(limit) // 4))


def check_limits(
    header_timeout: float | None, idle_timeout: int | None, max_connections: int | None
) -> tuple[float, int, int]:
    """The options checked, defaults filled in: (header timeout, idle timeout, cap).

    Raises the open-file limit (``raise_open_file_limit``) to size and check the
    cap. Raises ``UsageError`` naming the option, the value and the range.
    """
    header = _seconds("--header-timeout", header_timeout, DEFAULT_HEADER_TIMEOUT)
    idle = DEFAULT_IDLE_TIMEOUT if idle_timeout is None else idle_timeout
    if not 1 <= idle <= _MAX_SECONDS:
        raise UsageError(
            f"--idle-timeout takes a whole number of seconds from 1 to {_MAX_SECONDS:.0f}, "
            f"got {idle_timeout}"
        )
    limit = raise_open_file_limit()
    if max_connections is None:
        return header, idle, default_max_connections(limit)
    most = None if limit is None else limit - reserved_descriptors(limit)
    if max_connections < 1 or (most is not None and max_connections > most):
        within = "" if most is None else f" and at most {most}"
        why = (
            ""
            if limit is None
            else f" (the open-file limit is {limit}; {reserved_descriptors(limit)} are kept "
            "for the tools; raise it with ulimit -n for more)"
        )
        raise UsageError(
            f"--max-connections takes a whole number from 1{within}, got {max_connections}{why}"
        )
    return header, idle, max_connections


def check_body_timeout(body_timeout: float | None) -> float:
    """``--body-timeout`` checked, its default filled in; ``UsageError`` out of range."""
    return _seconds("--body-timeout", body_timeout, DEFAULT_BODY_TIMEOUT)


def _seconds(option: str, given: float | None, default: float) -> float:
    seconds = default if given is None else given
    if not (math.isfinite(seconds) and 0 < seconds <= _MAX_SECONDS):
        raise UsageError(
            f"{option} takes a number of seconds above 0 and at most {_MAX_SECONDS:.0f}, "
            f"got {given}"
        )
    return seconds


class _Guard(asyncio.Protocol):
    """The head and body deadlines and the cap, mixed into uvicorn's HTTP protocol class.

    It reads what both of uvicorn's HTTP protocols keep: ``connections`` (the
    server's open connections), ``transport`` and ``cycle`` (the request being
    answered, made once its head is read: ``more_body`` until its body is all read,
    ``response_started`` and ``response_complete`` as it is answered).
    """

    header_timeout: ClassVar[float]
    body_timeout: ClassVar[float]
    max_connections: ClassVar[int]
    _warned: ClassVar[float] = -math.inf

    connections: set[Any]
    transport: asyncio.Transport
    cycle: Any
    _head_timer: asyncio.TimerHandle | None
    _body_timer: asyncio.TimerHandle | None
    _timed_body: Any  # the request whose body ``_body_timer`` times

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._head_timer = self._body_timer = self._timed_body = None
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            self._refuse()
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._head_timer is None and self._awaiting_head():
            self._arm()  # the first byte of a later request
        super().data_received(data)
        if not self._awaiting_head():
            self._disarm()
        self._time_body()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._stop_body_timer()
        super().connection_lost(exc)

    def _awaiting_head(self) -> bool:
        cycle = self.cycle
        return cycle is None or bool(cycle.response_complete)

    def _arm(self) -> None:
        self._disarm()
        loop = asyncio.get_running_loop()
        self._head_timer = loop.call_later(self.header_timeout, self._head_overdue)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_overdue(self) -> None:
        self._head_timer = None
        if self._awaiting_head() and not self.transport.is_closing():
            self.transport.write(_HEAD_TIMED_OUT)
            self.transport.close()

    def _reading_body(self) -> Any:
        """The request whose body is still coming, None when there is none."""
        cycle = self.cycle
        if cycle is None or cycle.response_complete or not cycle.more_body:
            return None
        return cycle

    def _time_body(self) -> None:
        """Start the body deadline when a request's head was just read (its body still
        to come), stop it once the body is whole or the request answered."""
        reading = self._reading_body()
        if reading is None:
            self._stop_body_timer()
        elif reading is not self._timed_body:
            self._stop_body_timer()
            self._timed_body = reading
            loop = asyncio.get_running_loop()
            self._body_timer = loop.call_later(self.body_timeout, self._body_overdue)

    def _stop_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
        self._body_timer = self._timed_body = None

    def _body_overdue(self) -> None:
        reading = self._reading_body()
        late = reading is not None and reading is self._timed_body
        self._body_timer = self._timed_body = None
        if not late or self.transport.is_closing():
            return
        if not reading.response_started:  # else a 408 would land inside the answer
            self.transport.write(_BODY_TIMED_OUT)
        self.transport.close()  # the app reading the body hears the client left

    def _refuse(self) -> None:
        now = time.monotonic()
        if now - _Guard._warned >= _WARN_EVERY:
            _Guard._warned = now
            logger.warning(
                "refusing connections past --max-connections %d with 503 (logged once a minute)",
                self.max_connections,
            )
        self.transport.write(_REFUSAL)
        self.transport.close()


def guarded_protocol(
    base: type[asyncio.Protocol],
    *,
    header_timeout: float,
    max_connections: int,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class ``base`` with the head and body deadlines and the cap."""
    return type(
        f"Guarded{base.__name__}",
        (_Guard, base),
        {
            "header_timeout": header_timeout,
            "body_timeout": body_timeout,
            "max_connections": max_connections,
        },
    )
