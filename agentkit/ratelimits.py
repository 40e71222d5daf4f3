"""Limits on calls: requests per interval per caller and in total, concurrent calls per
caller, and pauses an upstream asked for with a 429.

A definition, a source or a toolset declares them (``limits:``); the loader checks
the YAML (``parse_limits``) and gives each tool that has any a ``Limiter`` made of
every rule that applies to it. A call runs through ``Limiter.admit``: each rule is
checked for the current caller (``agentkit.callers.current_caller``) in one step of
the store, and the call is refused with a ``LimitedError`` -- before anything is
sent -- when one would be exceeded. A tool without limits has no limiter and pays
nothing.

Windows are sliding-window logs: a call is admitted when fewer than ``requests``
calls were admitted in the ``per`` seconds before it, so no ``per`` seconds ever hold
more than ``requests`` admitted calls -- exactly, with no burst at a window's edge.
A refused call is not counted. Every check of a call is made and recorded at once
(under a lock here, in one Lua script in Redis): a call refused by one rule uses up
none of the others.

Concurrent calls are leases: taken when a call is admitted, given back when it
ends. In a shared store a lease also expires after ``lease_seconds`` (default 10
minutes), so a replica that died mid-call does not hold its slots for ever.

The store is the process's (``use_store``); ``LocalStore`` by default, which holds
for one process only. ``agentkit.ratelimits_redis.RedisStore`` shares limits between
replicas.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, Protocol, final

from agentkit.audit import note_limited
from agentkit.callers import current_caller
from agentkit.toolerrors import LimitedError

__all__ = [
    "DEFAULT_MAX_PAUSE",
    "LEASE_SECONDS",
    "MAX_LOCAL_ENTRIES",
    "Admission",
    "Limiter",
    "Limits",
    "LocalStore",
    "Rate",
    "Store",
    "parse_limits",
    "parse_seconds",
    "store",
    "use_store",
]

#: The longest a 429's ``Retry-After`` pauses a source unless it says ``max_pause``.
DEFAULT_MAX_PAUSE: Final = 600.0
#: The most answers ``LocalStore`` keeps for ``agentkit.callcache``.
MAX_LOCAL_ENTRIES: Final = 10_000
#: How long a shared store keeps a concurrency lease whose call never gave it back.
LEASE_SECONDS: Final = 600.0
_MAX_REQUESTS: Final = 1_000_000
_MAX_CONCURRENT: Final = 10_000
_MAX_PER: Final = 7 * 86400.0
_DURATION: Final = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNIT: Final = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_NAMED: Final = {1.0: "second", 60.0: "minute", 3600.0: "hour", 86400.0: "day"}
_RULE_KEYS: Final = ("requests", "per", "concurrent")
_KEYS: Final = ("per_caller", "total")
_SOURCE_KEYS: Final = (*_KEYS, "max_pause")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Rate:
    """At most ``requests`` calls in any ``per`` seconds."""

    requests: int
    per: float

    def describe(self) -> str:
        named = _NAMED.get(self.per)
        return f"{self.requests} per {named}" if named else f"{self.requests} per {self.per:g} s"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """The limits one definition, source or toolset declares.

    ``owner`` names it in messages (``tool 'get_issue'``), ``key`` in the store
    (``tool:get_issue``), ``where`` is its ``file:line``.
    """

    owner: str
    key: str
    where: str = ""
    per_caller: Rate | None = None
    total: Rate | None = None
    concurrent: int | None = None
    #: A source's calls pause after a 429 with ``Retry-After``, for at most this long.
    max_pause: float | None = None


def parse_seconds(raw: Any) -> float | None:
    """``30s``, ``1m``, ``1.5h``, ``1d``, ``500ms``, or a number of seconds; None if not one."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        seconds = float(raw)
    elif isinstance(raw, str) and (match := _DURATION.fullmatch(raw.strip())):
        seconds = float(match.group(1)) * _UNIT[match.group(2)]
    else:
        return None
    return seconds if math.isfinite(seconds) and seconds > 0 else None


def parse_limits(
    raw: Any, *, owner: str, key: str, where: str, source: bool = False
) -> tuple[Limits | None, list[tuple[tuple[str, ...], str]]]:
    """Check a ``limits:`` mapping: the limits, or None and each problem as (keys, message),
    the keys below ``limits``. A source may also give ``max_pause``."""
    problems: list[tuple[tuple[str, ...], str]] = []
    allowed = _SOURCE_KEYS if source else _KEYS
    example = (
        "{per_caller: {requests: 10, per: 1m, concurrent: 2}, total: {requests: 100, per: 1m}}"
    )
    if not isinstance(raw, dict):
        return None, [((), f"expected a mapping such as {example}")]
    if not raw and not source:
        # Empty, it limits nothing while a reader takes the tool for limited. (A source's
        # empty limits still say something: honour the upstream's 429s.)
        return None, [((), f"limits nothing: give {' or '.join(allowed)}, such as {example}")]
    for name in raw:
        if name not in allowed:
            problems.append(
                ((str(name),), f"unknown key '{name}'; a limits mapping takes {', '.join(allowed)}")
            )
    per_caller, concurrent = _rule(raw.get("per_caller"), "per_caller", problems, True)
    total, _ = _rule(raw.get("total"), "total", problems, False)
    max_pause: float | None = None
    if source:
        max_pause = DEFAULT_MAX_PAUSE
        if "max_pause" in raw:
            max_pause = parse_seconds(raw["max_pause"])
            if max_pause is None or max_pause > 86400:
                problems.append(
                    (
                        ("max_pause",),
                        "expected a duration up to 1d such as 10m: the longest a 429's "
                        f"Retry-After pauses the source's calls, got {raw['max_pause']!r}",
                    )
                )
    if problems:
        return None, problems
    limits = Limits(
        owner=owner,
        key=key,
        where=where,
        per_caller=per_caller,
        total=total,
        concurrent=concurrent,
        max_pause=max_pause,
    )
    return limits, problems


def _rule(
    raw: Any, name: str, problems: list[tuple[tuple[str, ...], str]], concurrent: bool
) -> tuple[Rate | None, int | None]:
    if raw is None:
        return None, None
    keys = _RULE_KEYS if concurrent else _RULE_KEYS[:2]
    example = "{requests: 10, per: 1m" + (", concurrent: 2}" if concurrent else "}")
    if not isinstance(raw, dict) or not raw:
        problems.append(((name,), f"expected a mapping such as {example}"))
        return None, None
    for key in raw:
        if key not in keys:
            problems.append(
                ((name, str(key)), f"unknown key '{key}'; '{name}' takes {', '.join(keys)}")
            )
    requests, per, most = raw.get("requests"), raw.get("per"), raw.get("concurrent")
    rate: Rate | None = None
    if requests is not None or per is not None:
        if type(requests) is not int or not 1 <= requests <= _MAX_REQUESTS:
            problems.append(
                (
                    (name, "requests"),
                    f"expected a whole number of calls from 1 to {_MAX_REQUESTS} (with 'per'), "
                    f"got {requests!r}",
                )
            )
        seconds = parse_seconds(per)
        if seconds is None or seconds > _MAX_PER:
            problems.append(
                (
                    (name, "per"),
                    "expected the interval as a duration such as 30s, 1m, 1h or 1d (at most 7d), "
                    f"got {per!r}",
                )
            )
        elif type(requests) is int and 1 <= requests <= _MAX_REQUESTS:
            rate = Rate(requests=requests, per=seconds)
    if most is not None and (type(most) is not int or not 1 <= most <= _MAX_CONCURRENT):
        problems.append(
            (
                (name, "concurrent"),
                f"expected a whole number of calls from 1 to {_MAX_CONCURRENT} that one caller "
                f"may run at once, got {most!r}",
            )
        )
        most = None
    return rate, most


# -- stores ---------------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Admission:
    """What a store answered: admitted (``refused`` is -1) or the index of the first check
    that refused and the seconds until it would pass."""

    refused: int
    retry_after: float = 0.0


_ADMITTED: Final = Admission(refused=-1)


class Store(Protocol):
    """Where limits are counted: one process's memory, or a server the replicas share."""

    def acquire(
        self,
        windows: Sequence[tuple[str, int, float]],
        leases: Sequence[tuple[str, int]],
        pause: str | None,
        lease_id: str,
    ) -> Admission:
        """Admit one call, atomically: ``pause`` (a key) is not paused, each window
        (key, requests, per) has room, and each lease (key, most) has a slot; then
        record the call in every window and take ``lease_id`` in every lease. Refused:
        nothing recorded. Indices: the windows, then the leases, then the pause."""

    def release(self, leases: Sequence[str], lease_id: str) -> None:
        """Give back ``lease_id`` in each of ``leases``."""

    def pause(self, key: str, seconds: float) -> None:
        """Refuse calls checking ``key`` for ``seconds`` (a longer pause set already stays)."""

    def cache_get(self, key: str) -> bytes | None:
        """The answer kept under ``key`` (``agentkit.callcache``), or None."""

    def cache_set(self, key: str, value: bytes, ttl: float) -> None:
        """Keep ``value`` under ``key`` for ``ttl`` seconds."""


@final
class LocalStore:
    """Limits in this process's memory: right for one process, not for replicas."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._windows: dict[str, deque[float]] = {}
        self._leases: dict[str, set[str]] = {}
        self._paused: dict[str, float] = {}
        self._kept: dict[str, tuple[float, bytes]] = {}

    def acquire(
        self,
        windows: Sequence[tuple[str, int, float]],
        leases: Sequence[tuple[str, int]],
        pause: str | None,
        lease_id: str,
    ) -> Admission:
        with self._lock:
            now = self._clock()
            if pause is not None:
                until = self._paused.get(pause, 0.0)
                if until > now:
                    return Admission(refused=len(windows) + len(leases), retry_after=until - now)
            logs = []
            for index, (key, requests, per) in enumerate(windows):
                log = self._windows.get(key)
                if log is None:
                    log = self._windows[key] = deque()
                while log and log[0] <= now - per:
                    log.popleft()
                if len(log) >= requests:
                    return Admission(
                        refused=index, retry_after=log[len(log) - requests] + per - now
                    )
                logs.append(log)
            held = []
            for index, (key, most) in enumerate(leases, len(windows)):
                taken = self._leases.setdefault(key, set())
                if len(taken) >= most:
                    return Admission(refused=index, retry_after=1.0)
                held.append(taken)
            for log in logs:
                log.append(now)
            for taken in held:
                taken.add(lease_id)
            return _ADMITTED

    def release(self, leases: Sequence[str], lease_id: str) -> None:
        with self._lock:
            for key in leases:
                self._leases.get(key, set()).discard(lease_id)

    def pause(self, key: str, seconds: float) -> None:
        with self._lock:
            until = self._clock() + seconds
            if until > self._paused.get(key, 0.0):
                self._paused[key] = until

    def cache_get(self, key: str) -> bytes | None:
        with self._lock:
            kept = self._kept.get(key)
            if kept is None:
                return None
            if kept[0] <= self._clock():
                del self._kept[key]
                return None
            return kept[1]

    def cache_set(self, key: str, value: bytes, ttl: float) -> None:
        with self._lock:
            now = self._clock()
            if len(self._kept) >= MAX_LOCAL_ENTRIES:
                # Expired answers go first; if none has, the oldest kept goes.
                for old in [k for k, (until, _) in self._kept.items() if until <= now]:
                    del self._kept[old]
                if len(self._kept) >= MAX_LOCAL_ENTRIES:
                    del self._kept[next(iter(self._kept))]
            self._kept.pop(key, None)
            self._kept[key] = (now + ttl, value)


_STORE: list[Store] = [LocalStore()]

# Lease and entry ids: unique across replicas (a random prefix per process, drawn
# again in a forked child) and cheap (a counter).
_PREFIX = [os.urandom(8).hex()]
_NUMBERS = itertools.count()


def _new_process() -> None:
    _PREFIX[0] = os.urandom(8).hex()


if hasattr(os, "register_at_fork"):  # POSIX only
    os.register_at_fork(after_in_child=_new_process)


def use_store(chosen: Store) -> Store:
    """Count every limit of this process in ``chosen`` from now on; returns the one before."""
    before = _STORE[0]
    _STORE[0] = chosen
    return before


def store() -> Store:
    """The store limits are counted in."""
    return _STORE[0]


# -- the limiter ----------------------------------------------------------------------------


@final
class Limiter:
    """The rules that apply to one tool, checked for the current caller on each call."""

    __slots__ = ("_pause_key", "_rules", "max_pause", "tool")

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self._rules: dict[str, Limits] = {}
        self._pause_key: str | None = None
        self.max_pause = DEFAULT_MAX_PAUSE

    def add(self, limits: Limits) -> None:
        """Apply ``limits`` too (the same ``key`` again replaces the earlier rules)."""
        self._rules[limits.key] = limits
        if limits.max_pause is not None:
            self._pause_key = f"{limits.key}:paused"
            self.max_pause = limits.max_pause

    @property
    def rules(self) -> Mapping[str, Limits]:
        return self._rules

    @contextmanager
    def admit(self) -> Iterator[None]:
        """Run the block as one admitted call of the current caller, or raise
        ``LimitedError``; a 429 with ``Retry-After`` raised from it pauses the source."""
        caller = current_caller().name
        windows: list[tuple[str, int, float]] = []
        leases: list[tuple[str, int]] = []
        told: list[tuple[Limits, str, Rate | int]] = []
        for rule in self._rules.values():
            if rule.per_caller is not None:
                rate = rule.per_caller
                windows.append((f"{rule.key}:caller:{caller}", rate.requests, rate.per))
                told.append((rule, "per_caller", rate))
            if rule.total is not None:
                windows.append((f"{rule.key}:total", rule.total.requests, rule.total.per))
                told.append((rule, "total", rule.total))
        for rule in self._rules.values():
            if rule.concurrent is not None:
                leases.append((f"{rule.key}:concurrent:{caller}", rule.concurrent))
                told.append((rule, "concurrent", rule.concurrent))
        lease_id = f"{_PREFIX[0]}{next(_NUMBERS)}"
        admission = store().acquire(windows, leases, self._pause_key, lease_id)
        if admission.refused >= 0:
            note_limited()  # the audit trail's outcome: limited, nothing sent
            raise self._refusal(admission, told)
        try:
            yield
        except Exception as exc:
            self._paused_by(exc)
            raise
        finally:
            if leases:
                store().release([key for key, _ in leases], lease_id)

    def _refusal(
        self, admission: Admission, told: list[tuple[Limits, str, Rate | int]]
    ) -> LimitedError:
        wait = max(1, math.ceil(admission.retry_after))
        if admission.refused >= len(told):
            rule = next(rule for rule in self._rules.values() if rule.max_pause is not None)
            return LimitedError(
                f"the upstream of {rule.owner} answered 429 Too Many Requests: its calls are "
                f"paused for every caller; nothing was sent; retry after {wait} s",
                scope="paused",
                retry_after=float(wait),
            )
        rule, scope, limit = told[admission.refused]
        this = "this tool" if rule.key == f"tool:{self.tool}" else rule.owner
        if isinstance(limit, int):
            text = (
                f"limit of {limit} concurrent call{'s' if limit != 1 else ''} per caller for "
                f"{this}; nothing was sent; retry after one of your calls ends (about {wait} s)"
            )
        else:
            whom = "per caller" if scope == "per_caller" else "in total, for all callers,"
            text = (
                f"limit of {limit.describe()} {whom} for {this}; nothing was sent; "
                f"retry after {wait} s"
            )
        return LimitedError(text, scope=scope, retry_after=float(wait))

    def _paused_by(self, exc: BaseException) -> None:
        """A 429 with ``Retry-After`` from the upstream pauses the source (if it has limits)."""
        if self._pause_key is None:
            return
        seen: BaseException | None = exc
        for _ in range(8):  # the cause chain, bounded
            if seen is None:
                return
            asked = getattr(seen, "retry_after", None)
            if getattr(seen, "status", None) == 429 and isinstance(asked, float) and asked > 0:
                store().pause(self._pause_key, min(asked, self.max_pause))
                return
            seen = seen.__cause__
