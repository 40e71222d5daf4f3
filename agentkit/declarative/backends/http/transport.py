"""Sending under one absolute deadline, and knowing whether a request left.

requests and urllib3 bound each socket operation, never a whole call: a server
that drips a header byte just inside the read timeout holds a call for hours,
and their exceptions do not say reliably whether the request reached the
server. The connections made here record both facts themselves:

- The deadline: while an ``Exchange`` runs on a thread, every send and every
  receive on that thread's connections gets as its socket timeout the smaller
  of urllib3's per-operation timeout and the time left, set again before each
  operation. So whatever is in progress (request body, status line, headers,
  plain or chunked body, however slowly dripped) times out at the deadline,
  and urllib3 then closes the connection. No thread is started: the budget is
  carried by the socket operations themselves.
- ``Exchange.never_left``: this attempt dialled a connection and failed
  before handing a request byte to a socket (a refused or timed-out connect,
  a proxy that refused the tunnel: its ``CONNECT`` is part of connecting), so
  the server provably never saw it. After a byte left, the server may have
  processed the request; with a session not made here nothing is known, and
  the request counts as maybe sent.

- Log lines: urllib3's log records pass a filter that redacts the running
  call's secrets from them; while an exchange whose reply is itself secret (a
  token endpoint's: ``Exchange(secret_reply=True)``) runs on the thread, an
  exception in a record (urllib3 logs a header it cannot parse with the
  unparsed bytes) is replaced by its type's name, and no traceback is kept.

``DeadlineAdapter`` is the requests adapter whose pools make such connections,
with urllib3's own retries off, so nothing is resent behind the caller's back;
``new_session`` is a session sending through it, reading nothing from the
environment per request (no ``.netrc``, no proxy lookup: ``trust_env`` off).
Its proxies are decided once, when it is made (``proxies``): none by default,
the one a definition names, or with ``proxy: environment`` the ones the
standard variables name for the tool's own URLs.

This module imports requests and urllib3; import it where a request is made.
"""

from __future__ import annotations

import http.client
import io
import logging
import socket
import threading
import time
from types import TracebackType
from typing import Any, Final, final

import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.util.retry import Retry

from agentkit.declarative.backends.http.url import DIRECT, ENVIRONMENT, authority, authority_problem
from agentkit.redaction import active_redactor

__all__ = [
    "DeadlineAdapter",
    "Exchange",
    "new_session",
    "proxies",
    "proxy_secrets",
]

_current = threading.local()


@final
class Exchange:
    """One call's sending: its deadline, and what each attempt did.

    Use as a context manager around every attempt of one call, on the calling
    thread; ``begin_attempt()`` before each attempt. Exchanges nest: the
    innermost one bounds the socket operations of its thread.
    """

    __slots__ = ("_previous", "deadline", "dialled", "secret_reply", "sent")

    def __init__(self, deadline: float, *, secret_reply: bool = False) -> None:
        self.deadline = deadline
        #: The reply may be a secret as a whole (a token endpoint's): no log record
        #: made while it runs keeps an exception's text, which may quote it.
        self.secret_reply = secret_reply
        self.dialled = False  # a connection of ours tried to connect in this attempt
        self.sent = False  # a request byte went to a socket in this attempt
        self._previous: Exchange | None = None

    def __enter__(self) -> Exchange:
        self._previous = _running()
        _current.exchange = self
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
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
        """The deadline has passed."""
        return self.remaining <= 0


def _running() -> Exchange | None:
    exchange: Exchange | None = getattr(_current, "exchange", None)
    return exchange


def _bound(sock: socket.socket, timeout: float | None) -> None:
    """Give ``sock``'s next operation ``timeout``, capped at the running exchange's time left.

    Raises ``TimeoutError`` (what a socket raises when it times out) once the
    deadline has passed: a timeout of 0 would make the socket non-blocking.
    """
    exchange = _running()
    if exchange is not None:
        remaining = exchange.remaining
        if remaining <= 0:
            raise TimeoutError("the call's deadline passed")
        timeout = remaining if timeout is None else min(timeout, remaining)
    sock.settimeout(timeout)


class _LogFilter(logging.Filter):
    """Keeps the running call's secrets, and a secret reply's bytes, out of urllib3's logs."""

    def filter(self, record: logging.LogRecord) -> bool:
        exchange = _running()
        if exchange is not None and exchange.secret_reply:
            _without_exceptions(record)
        redactor = active_redactor()
        if redactor:
            message = record.getMessage()
            cleaned = redactor.redact(message)
            if cleaned != message:
                record.msg, record.args = cleaned, ()
        return True


def _without_exceptions(record: logging.LogRecord) -> None:
    """``record`` with each exception it would print replaced by its type's name."""
    args = record.args
    if isinstance(args, tuple):
        record.args = tuple(
            f"<{type(arg).__name__}: not shown, it may quote the reply>"
            if isinstance(arg, BaseException)
            else arg
            for arg in args
        )
    if isinstance(record.msg, BaseException):
        record.msg = f"<{type(record.msg).__name__}: not shown, it may quote the reply>"
    record.exc_info = record.exc_text = record.stack_info = None


_FILTER: Final = _LogFilter()
for _name in (
    "urllib3.connectionpool",
    "urllib3.connection",
    "urllib3.response",
    "urllib3.util.retry",
):
    logging.getLogger(_name).addFilter(_FILTER)


class _BoundedReader(io.RawIOBase):
    """A response's socket reader that bounds each receive by the running deadline."""

    def __init__(self, raw: io.RawIOBase, sock: socket.socket) -> None:
        super().__init__()
        self._raw = raw  # the socket's own reader: it keeps the socket's reference count
        self._sock = sock
        self._timeout = sock.gettimeout()  # urllib3's read timeout, set just before

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        _bound(self._sock, self._timeout)
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _BoundedResponse(http.client.HTTPResponse):
    """http.client's response, reading through ``_BoundedReader``."""

    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        self.fp = io.BufferedReader(_BoundedReader(self.fp.detach(), sock))


class _TrackedConnection(HTTPConnection):
    """Marks the running exchange as dialled and sent, and bounds every send by its deadline."""

    response_class = _BoundedResponse
    #: Inside ``connect``: what is sent then (a proxy's CONNECT) is not the request.
    _connecting = False

    def connect(self) -> None:
        exchange = _running()
        if exchange is not None:
            exchange.dialled = True
        self._connecting = True
        try:
            super().connect()
        finally:
            self._connecting = False

    def send(self, data: Any) -> None:
        if self.sock is None:
            # Connect first: a connect failure must leave the exchange unsent.
            self.connect()
        exchange = _running()
        if exchange is not None and not self._connecting:
            exchange.sent = True
        _bound(self.sock, self.timeout)
        super().send(data)


class _TrackedHTTPSConnection(_TrackedConnection, HTTPSConnection):
    pass


class _TrackedPool(HTTPConnectionPool):
    ConnectionCls = _TrackedConnection


class _TrackedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _TrackedHTTPSConnection


#: Idle keep-alive connections a tool keeps to each host: as many as the calls a server
#: runs at once by default (``agentkit serve --max-calls``), so that calls in flight
#: together all keep their connections for the next ones. requests keeps 10: past
#: that, each call opened a connection of its own and threw it away. Only connections
#: a call has used are kept; a call past this many still runs, on a connection of its own.
KEPT_CONNECTIONS: Final = 64


class DeadlineAdapter(HTTPAdapter):
    """requests' adapter with tracked connections, urllib3's retries off, and room for
    ``KEPT_CONNECTIONS`` idle connections a host."""

    def __init__(self) -> None:
        # requests' default, spelled out: urllib3 must never resend a request
        # (a stale keep-alive connection included); the backend decides.
        super().__init__(
            pool_maxsize=KEPT_CONNECTIONS,
            max_retries=Retry(total=0, read=False, redirect=False),
        )

    def init_poolmanager(
        self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any
    ) -> None:
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        # Through a proxy too (an https:// API tunnelled by CONNECT included), every
        # socket operation is bounded by the deadline and tracked.
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        manager.pool_classes_by_scheme = _POOLS
        return manager


_POOLS: Final = {"http": _TrackedPool, "https": _TrackedHTTPSPool}


def new_session(*, verify: bool | str, proxies: dict[str, str]) -> requests.Session:
    """A session whose requests go through ``DeadlineAdapter``, with ``proxies`` only."""
    session = requests.Session()
    # No .netrc and no proxy lookup on each request: what the environment says is
    # read once, by ``proxies``, and only when the definition asks for it.
    session.trust_env = False
    session.verify = verify  # an OAuth2 token request's too
    session.proxies = proxies
    for prefix in ("http://", "https://"):
        session.mount(prefix, DeadlineAdapter())
    return session


def proxies(setting: str, urls: tuple[str, ...]) -> dict[str, str]:
    """requests' ``proxies`` for a session that sends to ``urls`` only (an API's origin,
    its token URL), for ``proxy:`` ``setting``: ``{}`` for ``DIRECT``; the proxy URL for
    every scheme when one is named; for ``ENVIRONMENT``, per URL's host, the proxy that
    HTTP_PROXY, HTTPS_PROXY or ALL_PROXY names (either case) unless NO_PROXY exempts
    the host. Raises ``ValueError``, in words that never show a password, for a
    variable that names no usable proxy."""
    if setting == DIRECT:
        return {}
    if setting != ENVIRONMENT:
        return {"http": setting, "https": setting}
    from urllib.parse import urlsplit

    from requests.utils import get_environ_proxies

    found: dict[str, str] = {}
    for url in urls:
        parts = urlsplit(url)
        named = get_environ_proxies(url, no_proxy=None)  # {} when NO_PROXY exempts the host
        proxy = named.get(parts.scheme) or named.get("all")
        if not proxy:
            continue
        if "://" not in proxy:
            proxy = f"http://{proxy}"  # as requests reads a bare host:port
        scheme = proxy.partition("://")[0].lower()
        if scheme not in ("http", "https"):
            raise ValueError(
                f"the environment's proxy for {parts.scheme}:// URLs is a {scheme}:// proxy; "
                "only http:// and https:// proxies are supported"
            )
        # Its user info is allowed (and secret): only the host and port are checked.
        where = f"the environment's proxy for {parts.scheme}:// URLs, whose URL"
        problem = authority_problem(authority(proxy).rpartition("@")[2], where)
        if problem is not None:
            raise ValueError(problem)
        found[f"{parts.scheme}://{parts.hostname}"] = proxy
    return found


def proxy_secrets(proxies: dict[str, str]) -> tuple[str, ...]:
    """The passwords (and ``user:password`` pairs) in ``proxies``' URLs: secrets to redact."""
    from urllib.parse import unquote, urlsplit

    secrets: list[str] = []
    for proxy in proxies.values():
        parts = urlsplit(proxy)  # checked by ``proxies``: a scheme, a valid host and port
        if parts.password:
            user, password = unquote(parts.username or ""), unquote(parts.password)
            secrets += [parts.password, password, f"{user}:{password}"]
    return tuple(dict.fromkeys(secrets))
