"""Sending under one absolute deadline, and knowing whether a request left.

requests and urllib3 bound each socket operation, never a whole call: a server
that drips a header byte just inside the read timeout holds a call for hours,
and their exceptions do not say reliably whether the request reached the
server. The connections made here record both facts themselves:

- ``Exchange.expired``: the call's deadline passed. A watchdog timer shuts
  down the socket the call is using at the deadline, so whatever read or write
  is in progress (request body, status line, headers, body) returns at once.
- ``Exchange.never_left``: this attempt dialled a connection and failed
  before handing a request byte to a socket (a refused or timed-out connect),
  so the server provably never saw it. After a byte left, the server may have
  processed the request; with a session not made here nothing is known, and
  the request counts as maybe sent.

``DeadlineAdapter`` is the requests adapter whose pools make such connections,
with urllib3's own retries off, so nothing is resent behind the caller's back.

This module imports requests and urllib3; import it where a request is made.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from types import TracebackType
from typing import Any, Final, final

from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.util.retry import Retry

__all__ = ["DeadlineAdapter", "Exchange"]

# Guards which exchange owns a connection: the watchdog must never shut down a
# connection that went back to the pool and now serves another call.
_ownership: Final = threading.Lock()
_current = threading.local()


@final
class Exchange:
    """One call's sending: its deadline, the watchdog, and what each attempt did.

    Use as a context manager around every attempt of one call, on the calling
    thread; ``begin_attempt()`` before each attempt.
    """

    __slots__ = (
        "_closed",
        "_connections",
        "_previous",
        "_timer",
        "deadline",
        "dialled",
        "expired",
        "sent",
    )
    _connections: list[_TrackedConnection]

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.expired = False  # the watchdog fired
        self.dialled = False  # a connection of ours tried to connect in this attempt
        self.sent = False  # a request byte went to a socket in this attempt
        self._closed = False
        self._connections = []
        self._previous: Exchange | None = None
        wait = min(max(0.0, deadline - time.monotonic()), threading.TIMEOUT_MAX)
        self._timer = threading.Timer(wait, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Exchange:
        self._previous = _running()
        _current.exchange = self
        self._timer.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._timer.cancel()
        with _ownership:
            self._closed = True
            for connection in self._connections:
                if connection.exchange is self:
                    connection.exchange = None
        _current.exchange = self._previous

    def begin_attempt(self) -> None:
        self.dialled = self.sent = False

    @property
    def never_left(self) -> bool:
        return self.dialled and not self.sent

    @property
    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    @property
    def timed_out(self) -> bool:
        return self.expired or self.remaining <= 0

    def _claim(self, connection: _TrackedConnection) -> None:
        with _ownership:
            if connection.exchange is not self:
                connection.exchange = self
                self._connections.append(connection)
            self.sent = True

    def _expire(self) -> None:
        with _ownership:
            if self._closed:
                return
            self.expired = True
            for connection in self._connections:
                sock = connection.sock
                if connection.exchange is self and sock is not None:
                    # socket.socket's own shutdown, not SSLSocket's, which would
                    # also drop the TLS state under the thread still using it.
                    with contextlib.suppress(OSError):
                        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _running() -> Exchange | None:
    exchange: Exchange | None = getattr(_current, "exchange", None)
    return exchange


class _TrackedConnection(HTTPConnection):
    """Marks the running exchange as sent before its first byte goes out."""

    exchange: Exchange | None = None

    def connect(self) -> None:
        exchange = _running()
        if exchange is not None:
            exchange.dialled = True
        super().connect()

    def send(self, data: Any) -> None:
        if self.sock is None:
            # Connect first: a connect failure must leave the exchange unsent.
            self.connect()
        exchange = _running()
        if exchange is not None:
            exchange._claim(self)
        super().send(data)


class _TrackedHTTPSConnection(_TrackedConnection, HTTPSConnection):
    pass


class _ReleasingPool(HTTPConnectionPool):
    """Takes a connection back from its exchange before another call can take it."""

    ConnectionCls = _TrackedConnection

    def _put_conn(self, conn: Any) -> None:
        if isinstance(conn, _TrackedConnection):
            with _ownership:
                conn.exchange = None
        super()._put_conn(conn)


class _ReleasingHTTPSPool(_ReleasingPool, HTTPSConnectionPool):
    ConnectionCls = _TrackedHTTPSConnection


class DeadlineAdapter(HTTPAdapter):
    """requests' adapter with tracked connections and urllib3's retries off."""

    def __init__(self) -> None:
        # requests' default, spelled out: urllib3 must never resend a request
        # (a stale keep-alive connection included); the backend decides.
        super().__init__(max_retries=Retry(total=0, read=False, redirect=False))

    def init_poolmanager(
        self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any
    ) -> None:
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": _ReleasingPool,
            "https": _ReleasingHTTPSPool,
        }
