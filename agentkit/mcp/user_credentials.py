"""Per-user credentials over HTTP: allow-listed request headers that carry a user's own
token for the calls of that request (``--credential-header X-GitHub-Token=github-token``),
asked before the server's own credentials and redacted like any credential. The
transport's ``Authorization`` header is never one of them: it is not passed to tools.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, final

from agentkit.credentials import CredentialsManager
from agentkit.toolerrors import CredentialError

__all__ = ["HeaderCredentials", "HeaderFirstCredentials"]

_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})
# A credential's value, or ``_SentTwice`` for a header the request repeated.
_REQUEST_CREDENTIALS: ContextVar[Mapping[str, Any]] = ContextVar(
    "agentkit_request_credentials", default=_EMPTY
)


@final
class HeaderCredentials:
    """A ``CredentialProvider`` of the values the current call's request headers carry.

    ``headers`` maps an allow-listed header name to the credential it holds. ``bound``
    makes one request's values current for the calls it runs (a context variable, so
    concurrent calls never see each other's). An empty value is no value; a header sent
    more than once is refused (a proxy that appends rather than replaces would let the
    client's own value through), and with ``required`` a missing one is too: ``refusal``
    says why, and ``HeaderFirstCredentials`` fails the call with it.
    """

    def __init__(self, headers: Mapping[str, str], *, required: bool = False) -> None:
        self._headers = {name.lower(): credential for name, credential in headers.items()}
        self._required = required
        self._by_credential: dict[str, list[str]] = {}
        for name, credential in self._headers.items():
            self._by_credential.setdefault(credential, []).append(name)

    def get(self, name: str) -> str | None:
        value = _REQUEST_CREDENTIALS.get().get(name)
        return value if isinstance(value, str) and value else None

    def describe(self, name: str) -> str:
        headers = self._by_credential.get(name)
        if not headers:
            return f"no request header (none is mapped to '{name}')"
        return "request header " + " or ".join(headers)

    def refusal(self, name: str) -> str | None:
        """Why credential ``name`` cannot be taken for this call, naming the header and
        never a value; ``None`` when the header (or, not required, a fallback) may serve."""
        given = _REQUEST_CREDENTIALS.get().get(name)
        if isinstance(given, _SentTwice):
            return (
                f"the request header {given.header} was sent {given.count} times; a call "
                "takes it from one header line, sent once"
            )
        if self._required and name in self._by_credential and not given:
            return (
                f"the request has no {self.describe(name)} (or it is empty), and the server "
                "requires it (--require-credential-headers); send the header with the call"
            )
        return None

    @contextlib.contextmanager
    def bound(self, ctx: Any) -> Iterator[None]:
        """The scope of one call: the values its HTTP request brought (none on stdio)."""
        request = getattr(ctx, "request", None)
        headers = getattr(request, "headers", None)
        values: dict[str, str | _SentTwice] = {}
        if headers is not None:
            for header, credential in self._headers.items():
                sent = _header_values(headers, header)
                if len(sent) > 1:
                    values[credential] = _SentTwice(header=header, count=len(sent))
                elif sent and sent[0].strip() and credential not in values:
                    values[credential] = sent[0].strip()
        token = _REQUEST_CREDENTIALS.set(MappingProxyType(values) if values else _EMPTY)
        try:
            yield
        finally:
            _REQUEST_CREDENTIALS.reset(token)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class _SentTwice:
    """A mapped header the request carries more than once (its values are not kept)."""

    header: str
    count: int


def _header_values(headers: Any, name: str) -> list[str]:
    getlist = getattr(headers, "getlist", None)
    if getlist is not None:
        return list(getlist(name))
    value = headers.get(name)
    return [] if value is None else [value]


@final
class HeaderFirstCredentials(CredentialsManager):
    """The server's credentials with ``headers`` asked first, and its refusals (a header
    sent twice; a required header missing) failing the call instead of falling back to
    the server's own value."""

    def __init__(self, headers: HeaderCredentials, fallback: CredentialsManager) -> None:
        super().__init__((headers, *fallback.providers))
        self._header_credentials = headers

    def get(self, name: str) -> str | None:
        if self._header_credentials.refusal(name) is not None:
            return None
        return super().get(name)

    def resolve(self, tool_name: str, names: Sequence[str]) -> dict[str, str]:
        for name in names:
            refused = self._header_credentials.refusal(name)
            if refused is not None:
                raise CredentialError(
                    tool_name,
                    name,
                    [self._header_credentials.describe(name)],
                    refused=refused,
                )
        return super().resolve(tool_name, names)
