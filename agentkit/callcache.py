"""Caching the answers of read-only tools: ``cache: {ttl: 30s, scope: caller|shared}``.

A definition whose tool is read-only (``annotations: {read_only: true}``, which GET
implies) may keep its answers for ``ttl``. The key is a SHA-256 digest of the tool's
name and version, its validated inputs as canonical JSON (``sort_keys``), the
caller's name when ``scope`` is ``caller`` (the default), and the values of the
credentials the call was given. The credentials are always in it: a call made with
a per-user credential (``--credential-header``) is cached for that credential alone,
whatever ``scope`` says, so no user's answer is ever served to another. Nothing of
the inputs or the credentials is kept in clear: only the digest and the answer.

An answer is not kept when the upstream said ``Cache-Control: no-store``, nor, for a
shared cache, ``private``; a failed call is never kept. Answers live in the store
limits use (``agentkit.ratelimits.store()``): this process's memory (at most
``MAX_LOCAL_ENTRIES`` answers), or the Redis the replicas share, where a replica
serves an answer another one made. A hit is marked in the call's events
(``ToolEvent.cached``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, final

from agentkit.audit import note_cache_hit
from agentkit.callers import current_caller
from agentkit.ratelimits import parse_seconds, store
from agentkit.redaction import active_redactor

__all__ = ["MAX_TTL", "CacheSpec", "CachedAnswer", "CallCache", "parse_cache", "upstream_said"]

#: The longest an answer may be kept.
MAX_TTL: Final = 86400.0
_SCOPES: Final = ("caller", "shared")
#: The ``Cache-Control`` directives of the replies the running call received.
_SAID: ContextVar[set[str] | None] = ContextVar("agentkit_cache_control", default=None)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CacheSpec:
    ttl: float
    scope: str  # "caller" or "shared"


def parse_cache(
    raw: Any, *, read_only: bool
) -> tuple[CacheSpec | None, list[tuple[tuple[str, ...], str]]]:
    """Check a ``cache:`` mapping: the spec, or None and each problem as (keys, message)."""
    if not isinstance(raw, dict):
        return None, [((), "expected a mapping such as {ttl: 30s, scope: caller}")]
    problems: list[tuple[tuple[str, ...], str]] = [
        ((str(key),), f"unknown key '{key}'; 'cache' takes ttl, scope")
        for key in raw
        if key not in ("ttl", "scope")
    ]
    ttl = parse_seconds(raw.get("ttl"))
    if ttl is None or ttl > MAX_TTL:
        problems.append(
            (
                ("ttl",),
                "expected how long an answer is kept, a duration such as 30s or 5m (at most "
                f"1d), got {raw.get('ttl')!r}",
            )
        )
    scope = raw.get("scope", "caller")
    if scope not in _SCOPES:
        problems.append(
            (
                ("scope",),
                f"expected caller (each caller's answers apart, the default) or shared, got "
                f"{scope!r}",
            )
        )
    if not read_only:
        problems.append(
            (
                (),
                "only a read-only tool's answers may be cached: set annotations: "
                "{read_only: true} if calling it changes nothing, or remove 'cache'",
            )
        )
    if problems or ttl is None:
        return None, problems
    return CacheSpec(ttl=ttl, scope=str(scope)), []


def upstream_said(cache_control: str | None) -> None:
    """Note a reply's ``Cache-Control`` for the running call (no call running: nothing)."""
    said = _SAID.get()
    if said is None or not cache_control:
        return
    for directive in cache_control.split(","):
        said.add(directive.split("=", 1)[0].strip().lower())


@contextmanager
def watching() -> Iterator[set[str]]:
    """Collect the ``Cache-Control`` directives of the replies a call receives."""
    said: set[str] = set()
    token = _SAID.set(said)
    try:
        yield said
    finally:
        _SAID.reset(token)


@final
class CachedAnswer:
    """A kept answer, as a tool returns it: the executor checks ``structured`` against
    the output schema as any answer, and marks the call's events ``cached``."""

    __slots__ = ("structured",)

    def __init__(self, structured: dict[str, Any]) -> None:
        self.structured = structured


@final
class CallCache:
    """The cache of one tool's answers."""

    __slots__ = ("spec", "tool", "version")

    def __init__(self, tool: str, version: str, spec: CacheSpec) -> None:
        self.tool = tool
        self.version = version
        self.spec = spec

    def key(self, inputs: Mapping[str, Any], credentials: Mapping[str, str]) -> str:
        caller = current_caller().name if self.spec.scope == "caller" else ""
        canonical = json.dumps(
            [self.tool, self.version, inputs, caller, sorted(credentials.items())],
            sort_keys=True,
            separators=(",", ":"),
            default=repr,
        )
        return "cache:" + hashlib.sha256(canonical.encode()).hexdigest()

    def call(
        self,
        run: Callable[[], Any],
        inputs: Mapping[str, Any],
        credentials: Mapping[str, str],
    ) -> Any:
        """The kept answer, or ``run()``'s, kept when it may be."""
        key, kept = self.lookup(inputs, credentials)
        if kept is not None:
            return kept
        with watching() as said:
            answer = run()
        self.keep(key, answer, said)
        return answer

    def lookup(
        self, inputs: Mapping[str, Any], credentials: Mapping[str, str]
    ) -> tuple[str, CachedAnswer | None]:
        """The call's key, and its kept answer if there is one."""
        key = self.key(inputs, credentials)
        kept = store().cache_get(key)
        if kept is None:
            return key, None
        note_cache_hit()  # the audit trail marks the call a cache hit
        return key, CachedAnswer(structured=json.loads(kept))

    def keep(self, key: str, answer: Any, said: set[str]) -> None:
        """Keep ``answer`` under ``key`` unless the upstream ``said`` not to."""
        if type(answer) is not dict or not self._may_keep(said):
            return
        # The executor withholds an answer that holds a credential, after this runs:
        # such an answer is never kept, in clear, for a later call to be given.
        redactor = active_redactor()
        if redactor is not None and redactor.leak(answer) is not None:
            return
        try:
            text = json.dumps(answer, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError):
            return  # not JSON: the output check says what is wrong with it
        store().cache_set(key, text.encode(), self.spec.ttl)

    def _may_keep(self, said: set[str]) -> bool:
        if "no-store" in said:
            return False
        return not (self.spec.scope == "shared" and "private" in said)
