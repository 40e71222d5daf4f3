"""What a request must show before it reaches the tools over HTTP: a ``Host`` and an
``Origin`` the server answers to (``rebinding_refusal``, DNS-rebinding protection), and a
bearer token the server knows (``StaticTokens``, the SDK's ``TokenVerifier`` seam).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Callable, Iterable, Sequence
from typing import Final, final

from mcp.server.auth.provider import AccessToken

from agentkit.mcp.options import BearerToken, is_port, split_address

__all__ = ["ALL_TOOLS_SCOPE", "StaticTokens", "rebinding_refusal", "toolset_scope"]

_LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
_LOOPBACK_HOSTS: Final = tuple(f"{name}:*" for name in _LOOPBACK_NAMES)
_LOOPBACK_ORIGINS: Final = tuple(f"http://{name}:*" for name in _LOOPBACK_NAMES)


# -- DNS rebinding -------------------------------------------------------------------------------

# A parsed Host or Origin: (scheme, host, port). The scheme is "" for a Host header; the
# host is lowercase, without brackets; the port is None for the scheme's default (80 or
# 443, also for a Host header, whose scheme a proxy may have changed), "*" for any.
_Place = tuple[str, str, "int | str | None"]
_DEFAULT_PORTS: Final = {"": (80, 443), "http": (80,), "https": (443,)}


def _place(text: str, scheme: str = "") -> _Place | None:
    """``HOST[:PORT]`` (``[IPv6]``, ``:*``) as compared; ``None`` when it is no such thing."""
    try:
        host, port = split_address(text)
    except ValueError:
        return None
    allowed = ".-:" if text.startswith("[") else ".-"  # a colon only inside brackets
    if not host or not all(char.isascii() and (char.isalnum() or char in allowed) for char in host):
        return None
    if port is None or port == "*":
        return scheme, host.lower(), port
    if not is_port(port):  # digits only: '127.0.0.1:evil.com' is no port
        return None
    number = int(port)
    return scheme, host.lower(), None if number in _DEFAULT_PORTS[scheme] else number


def _origin_place(text: str) -> _Place | None:
    scheme, sep, rest = text.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        return None
    return _place(rest, scheme)


def _matches(given: _Place, allowed: _Place) -> bool:
    return given[:2] == allowed[:2] and allowed[2] in ("*", given[2])


@functools.lru_cache(maxsize=32)
def _allowed_places(
    texts: tuple[str, ...], parse: Callable[[str], _Place | None]
) -> tuple[_Place, ...]:
    """``texts`` parsed once per server, not once per request."""
    return tuple(place for text in texts if (place := parse(text)) is not None)


def _admitted(given: _Place | None, allowed: tuple[_Place, ...]) -> bool:
    return given is not None and any(_matches(given, place) for place in allowed)


def rebinding_refusal(
    host: str | None,
    origin: str | None,
    *,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
) -> tuple[int, str] | None:
    """DNS-rebinding protection for one request: ``None`` when its ``Host`` and
    ``Origin`` header values (``None`` when absent) may reach the tools, otherwise the
    status (421 for the Host, 403 for the Origin) and a one-line reason to answer with.

    The loopback names (any port) and ``allowed_hosts``/``allowed_origins`` (as
    ``--allowed-host``/``--allowed-origin`` take them) are allowed. Names compare
    case-insensitively, a default port (80, 443) is the same as none, ``:*`` allows
    any port, and a port must be digits. A request without ``Origin`` (not a browser's,
    or same-origin) passes that check.
    """
    hosts = _allowed_places((*_LOOPBACK_HOSTS, *allowed_hosts), _place)
    if not _admitted(_place(host) if host else None, hosts):
        return 421, (
            "Invalid Host header: only loopback names and the server's --allowed-host "
            "names are accepted; a server reached by another name needs --allowed-host NAME"
        )
    if not origin:
        return None
    origins = _allowed_places((*_LOOPBACK_ORIGINS, *allowed_origins), _origin_place)
    if not _admitted(_origin_place(origin), origins):
        return 403, (
            "Invalid Origin header: only loopback origins and the server's "
            "--allowed-origin origins are accepted"
        )
    return None


# -- auth ------------------------------------------------------------------------------------------


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


#: The scope a token needs to reach the whole registry, when toolsets are served too.
ALL_TOOLS_SCOPE: Final = "tools:all"


def toolset_scope(toolset: str) -> str:
    """The scope a token needs to reach toolset ``toolset`` (at ``/mcp/<toolset>``)."""
    return f"toolset:{toolset}"


@final
class StaticTokens:
    """A ``TokenVerifier`` (the SDK's auth seam) accepting a fixed set of bearer tokens.

    Tokens are compared as SHA-256 digests with ``hmac.compare_digest``, each against
    every known token, so neither the time taken nor an early exit tells a caller how
    close a guess came. An OAuth deployment passes the SDK a verifier of its own instead.

    Each accepted token carries scopes: a plain token (or a ``BearerToken`` without
    toolsets) ``ALL_TOOLS_SCOPE`` and ``toolset_scope`` of each of ``toolsets`` (the
    sets served); a ``BearerToken`` naming toolsets, only theirs. An endpoint requires
    its scope, so a token reaches what it names and nothing else.
    """

    def __init__(
        self, tokens: Sequence[str | BearerToken], *, toolsets: Iterable[str] = ()
    ) -> None:
        every = [ALL_TOOLS_SCOPE, *map(toolset_scope, toolsets)]
        self._known = tuple(
            (
                _digest(token if isinstance(token, str) else token.token),
                every
                if isinstance(token, str) or token.toolsets is None
                else sorted(map(toolset_scope, token.toolsets)),
            )
            for token in tokens
        )

    async def verify_token(self, token: str) -> AccessToken | None:
        offered = _digest(token)
        matched = -1
        for index, (known, _) in enumerate(self._known):
            if hmac.compare_digest(offered, known):
                matched = index
        if matched < 0:
            return None
        # The token itself stays out of the request's scope (and so out of anything
        # that logs it): the principal is the token's position in the list.
        scopes = list(self._known[matched][1])
        return AccessToken(token="[redacted]", client_id=f"token-{matched + 1}", scopes=scopes)
