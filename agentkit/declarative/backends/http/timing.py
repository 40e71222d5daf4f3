"""``timeout:`` and ``retry:`` of an HTTP definition: finite seconds, bounded attempts."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final, final

from agentkit.declarative.problems import Location, Problems, check_keys
from agentkit.toolschema import is_integer, is_number

__all__ = [
    "DEFAULT_RETRY",
    "DEFAULT_TIMEOUTS",
    "Retry",
    "parse_retry",
    "parse_statuses",
    "parse_timeout",
]

DEFAULT_TIMEOUTS: Final = {"connect": 5.0, "read": 30.0, "total": 60.0}
DEFAULT_RETRY_STATUS: Final = (429, 502, 503, 504)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Retry:
    """``retry:``: how often, how long apart, on which statuses, and whether a POST may be."""

    attempts: int = 3
    backoff: float = 0.5
    on_status: frozenset[int] = frozenset(DEFAULT_RETRY_STATUS)
    max_wait: float = 10.0
    non_idempotent: bool = False


DEFAULT_RETRY: Final = Retry()  # a value: shared by every spec without 'retry:'


def _seconds(value: Any, *, zero: bool = False) -> bool:
    """A finite number of seconds above 0 (or 0 itself, with ``zero``): NaN and
    infinity would turn every deadline and wait comparison meaningless."""
    if not is_number(value):
        return False
    try:
        seconds = float(value)
    except OverflowError:  # an integer with hundreds of digits
        return False
    return math.isfinite(seconds) and (seconds > 0 or (zero and seconds == 0))


def parse_timeout(raw: Any, location: Location, problems: Problems) -> tuple[float, float, float]:
    if raw is None:
        return DEFAULT_TIMEOUTS["connect"], DEFAULT_TIMEOUTS["read"], DEFAULT_TIMEOUTS["total"]
    values = dict(DEFAULT_TIMEOUTS)
    if is_number(raw):
        if _seconds(raw):
            values["read"] = float(raw)
            values["total"] = max(values["total"], float(raw))
        else:
            problems.add(location, "expected a number of seconds above 0")
    elif check_keys(raw, ("connect", "read", "total"), location, problems, "timeout"):
        for key, value in raw.items():
            if key in values and not _seconds(value):
                problems.add((*location, key), "expected a number of seconds above 0")
            elif key in values:
                values[key] = float(value)
    return values["connect"], values["read"], values["total"]


def parse_retry(raw: Any, location: Location, problems: Problems) -> Retry:
    keys = ("attempts", "backoff", "on_status", "max_wait", "non_idempotent")
    if not check_keys(raw, keys, location, problems, "retry"):
        return Retry()
    attempts = raw.get("attempts", 3)
    if not is_integer(attempts) or not 1 <= attempts <= 10:
        problems.add((*location, "attempts"), "expected a whole number from 1 to 10")
        attempts = 3
    backoff = raw.get("backoff", 0.5)
    if not _seconds(backoff, zero=True):
        problems.add((*location, "backoff"), "expected a number of seconds, 0 or more")
        backoff = 0.5
    max_wait = raw.get("max_wait", 10.0)
    if not _seconds(max_wait, zero=True):
        problems.add((*location, "max_wait"), "expected a number of seconds, 0 or more")
        max_wait = 10.0
    on_status = parse_statuses(
        raw.get("on_status", list(DEFAULT_RETRY_STATUS)), (*location, "on_status"), problems
    )
    non_idempotent = raw.get("non_idempotent", False)
    if not isinstance(non_idempotent, bool):
        problems.add((*location, "non_idempotent"), "expected true or false")
        non_idempotent = False
    return Retry(
        attempts=attempts,
        backoff=float(backoff),
        on_status=on_status,
        max_wait=float(max_wait),
        non_idempotent=non_idempotent,
    )


def parse_statuses(raw: Any, location: Location, problems: Problems) -> frozenset[int]:
    if not isinstance(raw, list) or not all(
        is_integer(code) and 100 <= code <= 599 for code in raw
    ):
        problems.add(location, "expected a list of HTTP status codes (100-599)")
        return frozenset()
    return frozenset(raw)
