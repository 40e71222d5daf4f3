"""What went wrong with an HTTP exchange, in words, and how long a server asks us to wait.

The error texts of an HTTP tool's failures: what an attempt ran into (from
the innermost causes of a requests/urllib3 error), what a retry says, and the
``Retry-After`` a reply carries (digits or an HTTP date only). Also the body
reader that returns after each socket read, so the caller can check the
call's deadline between chunks.

A reply that breaks HTTP framing is described in words of our own
(``framing``): urllib3 and http.client quote the raw bytes they choke on,
which from a token endpoint may be a token, so where the bytes must not show
(``what_happened(quote=False)``) none of their text is used. A failure to
connect says when a proxy the environment names went unused
(``ignored_proxy``), as HTTP tools connect directly unless told otherwise.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from datetime import timezone
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import requests

__all__ = [
    "causes",
    "chunks",
    "connect_failure",
    "framing",
    "ignored_proxy",
    "reason",
    "retry_after_seconds",
    "retrying",
    "what_happened",
]

_CHUNK: Final = 64 * 1024


def chunks(response: requests.Response) -> Iterator[bytes]:
    """The decoded body, a socket read at a time.

    ``read1`` returns after one receive: a server trickling a byte at a time
    cannot keep a read blocked inside the read timeout while the call's deadline
    passes -- the caller checks the deadline between chunks.
    """
    import requests
    import urllib3

    raw = response.raw
    try:
        while chunk := raw.read1(_CHUNK, decode_content=True):
            yield chunk
    except urllib3.exceptions.ProtocolError as exc:
        raise requests.ConnectionError(exc) from exc
    except urllib3.exceptions.ReadTimeoutError as exc:
        raise requests.ReadTimeout(exc) from exc
    except urllib3.exceptions.DecodeError as exc:
        raise requests.ConnectionError(f"the body could not be decoded: {exc}") from exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        # Anything else breaking the body off (TLS errors included): the reply broke off.
        raise requests.ConnectionError(exc) from exc


def retry_after_seconds(value: str | None, *, now: float) -> float | None:
    """The wait a ``Retry-After`` value asks for, in seconds; None when it is not one.

    Only ASCII digits (delay-seconds) or an HTTP-date count; anything else
    (``1e3``, ``-1``, ``²``, a bad date) is ignored. A date in the past asks
    for no wait; a huge number is returned as is, for the caller to cap.
    """
    if value is None:
        return None
    value = value.strip(" \t")  # optional whitespace around a field value (RFC 9110)
    if value.isascii() and value.isdigit():
        # int() refuses over 4300 digits; any such wait is capped anyway.
        return float(value) if len(value) <= 12 else math.inf
    # Imported for an HTTP-date only: email.utils brings socket and more, which a
    # server loading its tools does not need.
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)  # an HTTP-date is always GMT
    try:
        return max(0.0, when.timestamp() - now)
    except (ValueError, OverflowError):
        return None


def what_happened(exc: Exception, *, replied: bool, read_timeout: float, quote: bool = True) -> str:
    """What an attempt that sent its request ran into, from the innermost causes of ``exc``.

    With ``quote`` the server's malformed bytes are quoted (escaped, cut) after the
    words; without it (a token endpoint's reply: the bytes may be a token) only
    these words are said, never urllib3's or http.client's, which quote them.
    """
    import http.client

    import requests
    import urllib3

    if isinstance(exc, requests.Timeout):
        waiting = "the rest of the reply" if replied else "a reply"
        return (
            f"timed out after {read_timeout} s waiting for {waiting} (timeout.read), the "
            "tool's own limit: raise timeout.read in its definition if the API is slow to answer"
        )
    for cause in causes(exc):
        if isinstance(cause, http.client.RemoteDisconnected):
            return "connection closed before a reply"
        if isinstance(cause, (ConnectionResetError, BrokenPipeError)):
            return "connection reset " + (
                "in the middle of the reply" if replied else "before a reply"
            )
        broken = framing(cause)
        if broken is not None:
            # ascii(): the server's bytes may hold line breaks or control characters.
            shown = f" ({type(cause).__name__}: {str(cause)[:80]!a})" if quote else ""
            return f"the reply broke HTTP framing: {broken}{shown}"
        if isinstance(cause, http.client.IncompleteRead):
            return "connection closed in the middle of the reply body"
        if isinstance(cause, urllib3.exceptions.DecodeError):
            shown = f" ({reason(exc)})" if quote else ""
            return f"the reply body does not decode as its Content-Encoding says{shown}"
    if not quote:
        innermost = list(causes(exc))[-1]
        return f"the reply broke off ({type(innermost).__name__}; its text is not shown)"
    if replied:
        return f"the reply broke off ({reason(exc)})"
    return f"no usable reply ({reason(exc)})"


def framing(error: BaseException) -> str | None:
    """How ``error`` says a reply broke HTTP/1.1's framing, in words quoting none of
    its bytes; None when it is not such an error."""
    import http.client

    import urllib3

    if isinstance(error, urllib3.exceptions.InvalidChunkLength):
        return "a bad chunk size in its chunked body"
    if isinstance(error, http.client.RemoteDisconnected):
        return None  # a connection closed, said as such
    if isinstance(error, http.client.BadStatusLine):
        line = error.args[0] if error.args else ""
        if isinstance(line, str) and line.startswith("HTTP/"):
            return "a malformed status line"
        return "no status line (the reply does not start with 'HTTP/')"
    if isinstance(error, http.client.LineTooLong):
        return "a status or header line over http.client's length limit"
    if isinstance(error, (urllib3.exceptions.InvalidHeader, urllib3.exceptions.HeaderParsingError)):
        return "a malformed header"
    if isinstance(error, http.client.IncompleteRead):
        return None  # a body cut short: not a framing error
    if isinstance(error, http.client.HTTPException):
        # UnknownProtocol, too many headers, and the like.
        return f"a malformed reply ({type(error).__name__})"
    return None


def connect_failure(
    exc: Exception, url: str, *, connect_timeout: float, proxy: str | None = None
) -> str | None:
    """What went wrong reaching ``url``'s host (or ``proxy``, when the request went
    through one), and what would fix it; None when ``exc`` is not a failure to
    connect (name resolution, TCP connect, TLS handshake). When the request went
    directly although the environment names a proxy for it, the words say that the
    proxy was not used."""
    from urllib.parse import urlsplit

    import requests

    parts = urlsplit(url)
    through_proxy = proxy is not None and isinstance(exc, requests.exceptions.ProxyError)
    if through_proxy:
        assert proxy is not None
        parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    words = _unreachable(exc, host, port, connect_timeout)
    if through_proxy:
        return f"through the proxy {host}:{port}: " + (words or _tunnel_refused(exc))
    if words is not None and proxy is None:
        words += ignored_proxy(url)
    return words


def _tunnel_refused(exc: Exception) -> str:
    """The proxy's answer to a ``CONNECT`` it refused (http.client: ``Tunnel connection
    failed: 403 Forbidden``), else urllib3's reason."""
    for cause in causes(exc):
        said = str(cause)
        if isinstance(cause, OSError) and said.startswith("Tunnel connection failed: "):
            answer = said.removeprefix("Tunnel connection failed: ")
            return f"the proxy refused to open a tunnel (CONNECT) to the API: {answer[:80]!a}"
    return f"the proxy did not pass the request on ({reason(exc)})"


def _unreachable(exc: Exception, host: str, port: int, connect_timeout: float) -> str | None:
    import socket
    import ssl

    import requests

    where = f"{host}:{port}"
    if isinstance(exc, requests.ConnectTimeout):
        return (
            f"connecting to {where} timed out after {connect_timeout} s (timeout.connect): "
            "check that this machine is online and the host is reachable from it (a "
            "firewall, a VPN), or raise timeout.connect in the tool's definition"
        )
    for cause in causes(exc):
        if isinstance(cause, socket.gaierror):
            return (
                f"the host name {host!r} (port {port}) could not be resolved "
                f"({_strerror(cause)}): check the host in the URL, and that this machine is "
                "online and can resolve names (DNS)"
            )
        if isinstance(cause, ConnectionRefusedError):
            return (
                f"the connection to {where} was refused: nothing listens on that port; "
                "check the port in the URL and that the server is running"
            )
        if isinstance(cause, ssl.SSLCertVerificationError):
            return (
                f"the TLS certificate of {where} failed verification "
                f"({cause.verify_message or cause.reason}, CERTIFICATE_VERIFY_FAILED): if "
                "the server's certificate comes from a private authority, name its CA file "
                "in ca_bundle; otherwise the server's certificate is wrong for this host"
            )
        if isinstance(cause, ssl.SSLError):
            return (
                f"the TLS handshake with {where} failed ({cause.reason or _strerror(cause)}): "
                "check that the port serves HTTPS; if it serves plain HTTP, the URL wants "
                "http://"
            )
        if isinstance(cause, OSError) and not isinstance(cause, TimeoutError) and cause.errno:
            return (
                f"could not connect to {where} ({_strerror(cause)}): check that this "
                "machine is online and the host in the URL is right"
            )
    return None


#: The variables requests (and curl) read a proxy from, per URL scheme, in the order
#: they win: the lower-case spelling first, as urllib reads them.
_PROXY_VARIABLES: Final = {
    "http": ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"),
    "https": ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"),
}


def ignored_proxy(url: str) -> str:
    """``"; HTTPS_PROXY is set but not used: ..."`` when the environment names a proxy
    for ``url`` (and ``NO_PROXY`` does not exempt its host) that a tool connecting
    directly did not use; else ``""``. Read only when a connection failed."""
    import os
    from urllib.parse import urlsplit

    from requests.utils import should_bypass_proxies

    names = _PROXY_VARIABLES.get(urlsplit(url).scheme, ())
    name = next((name for name in names if os.environ.get(name)), None)
    if name is None or should_bypass_proxies(url, no_proxy=None):
        return ""
    return (
        f"; {name} is set but not used: HTTP tools connect directly unless their "
        "definition (or its source) says 'proxy: environment' (or names a proxy URL)"
    )


def _strerror(error: OSError) -> str:
    return error.strerror or reason(error)


def causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the exceptions it wraps (args, ``reason``, cause, context), outermost first."""
    seen: list[BaseException] = []
    pending = [exc]
    while pending and len(seen) < 32:  # a wrapper chain is a few deep; a cycle is not followed
        cause = pending.pop(0)
        if any(cause is known for known in seen):
            continue
        seen.append(cause)
        yield cause
        inner = (*cause.args, getattr(cause, "reason", None), cause.__cause__, cause.__context__)
        pending.extend(item for item in inner if isinstance(item, BaseException))


def retrying(prepared: requests.PreparedRequest, why: str, attempt: int, attempts: int) -> str:
    """``GET https://api.example.com/x returned 503; attempt 2 of 3``: what a retry says."""
    return f"{prepared.method} {prepared.url} {why}; attempt {attempt + 1} of {attempts}"


# What urllib3 puts before its reasons: a connection's repr (``<...Connection object at
# 0x7f...>``, ``<...Connection(host='h', port=1) at 0x...>``) or ``...Connection(host=..,
# port=..): `` / ``...Pool(host=.., port=..): ``, its own words for the host and port
# the caller's message already names.
_CONNECTION_REPR: Final = re.compile(
    r"<[\w.]+(?: object|\([^)]*\)) at 0x[0-9a-fA-F]+>(?:, )?|\b\w*(?:Connection|Pool)\([^)]*\): "
)


def reason(exc: BaseException) -> str:
    """The innermost reason of a requests/urllib3 error, without class names or object reprs."""
    text = str(exc.args[0] if exc.args else exc)
    inner = getattr(exc.args[0], "reason", None) if exc.args else None
    if inner is not None:
        text = str(inner)
    text = _CONNECTION_REPR.sub("", text)
    if text.startswith("('") and text.endswith("')"):  # what was a (connection, reason) pair
        text = text[2:-2]
    return text or type(exc).__name__
