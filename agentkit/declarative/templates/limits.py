"""What one template render may spend: the size of every value it builds, its loops, its time.

The sandbox (``agentkit.declarative.templates.sandbox``) calls these checks from every
place a template can make a value grow -- operators, ``~``, literals, calls,
filters -- and from every loop iteration. Each check runs *before* the value is
built when the growth is unbounded (a separator repeated per item, a count
argument), and right after when the result can be at most a small constant
factor larger than inputs that were already checked.

Sizes are measured as a tree: a shared list counts once per reference, so a
list that holds the same big list twice weighs twice as much -- exactly what
printing it, comparing it or sending it as JSON would cost.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import chain
from typing import Any, Final

from agentkit.declarative.templates.base import MAX_OUTPUT_CHARS, TemplateRenderError

__all__ = [
    "MAX_INT_BITS",
    "MAX_LOOP_ITERATIONS",
    "MAX_RENDER_BUILT",
    "MAX_RENDER_SECONDS",
    "budget",
    "charge",
    "check_int",
    "check_size",
    "count_iteration",
    "materialize",
    "refuse_over",
    "tick",
    "weight",
]

#: Integers a template computes stay under this many bits (about 1,233 digits).
MAX_INT_BITS: Final = 4096
#: Loop iterations one render may run, all loops together.
MAX_LOOP_ITERATIONS: Final = 1_000_000
#: A render with no deadline of its own stops after this many seconds.
MAX_RENDER_SECONDS: Final = 5.0
#: Characters one render may build in all: many values each under the cap,
#: kept alive by many ``{% set %}`` statements, must not add up to gigabytes.
MAX_RENDER_BUILT: Final = 20 * MAX_OUTPUT_CHARS


@dataclass(slots=True)
class _Budget:
    deadline: float
    late: str  # the message when the deadline passes
    iterations: int = 0
    built: int = 0


_BUDGET: ContextVar[_Budget | None] = ContextVar("agentkit_template_budget", default=None)


@contextmanager
def budget(deadline: float | None) -> Iterator[None]:
    """Run a render under ``deadline`` (a ``time.monotonic()`` value, or None).

    Without a deadline the render still stops after ``MAX_RENDER_SECONDS``.
    """
    if deadline is None:
        spent = _Budget(
            time.monotonic() + MAX_RENDER_SECONDS,
            f"the template ran longer than the {MAX_RENDER_SECONDS:g}s rendering limit",
        )
    else:
        spent = _Budget(deadline, "the template exceeded the call's deadline")
    token = _BUDGET.set(spent)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def tick() -> None:
    """Raise when the running render is past its deadline (no render running: no-op)."""
    spent = _BUDGET.get()
    if spent is not None and time.monotonic() > spent.deadline:
        raise TemplateRenderError(spent.late)


def count_iteration() -> None:
    """One loop iteration: counted against ``MAX_LOOP_ITERATIONS`` and the deadline."""
    spent = _BUDGET.get()
    if spent is None:
        return
    spent.iterations += 1
    if spent.iterations > MAX_LOOP_ITERATIONS:
        raise TemplateRenderError(
            f"the template's loops ran over {MAX_LOOP_ITERATIONS} iterations in all"
        )
    if time.monotonic() > spent.deadline:
        raise TemplateRenderError(spent.late)


def weight(value: Any, *, per_level: int = 0, limit: int = MAX_OUTPUT_CHARS) -> int:
    """About how many characters ``value`` prints as; counting stops once over ``limit``.

    Strings count their length, numbers their digits, containers one per item
    plus their items, each reference again. ``per_level`` adds that many
    characters per item per nesting level (what JSON indentation costs).
    The walk is iterative: no nesting depth can overflow the stack.
    """
    total = 0
    stack: list[tuple[Iterable[Any], int]] = [((value,), 0)]
    while stack:
        entries, depth = stack.pop()
        indent = per_level * depth
        for entry in entries:
            total += 1 + indent
            # Concrete types first: an isinstance check against an ABC is slow.
            if isinstance(entry, (str, bytes)):
                total += len(entry)
            elif isinstance(entry, int):
                total += entry.bit_length() // 3
            elif entry is None or isinstance(entry, float):
                pass
            elif isinstance(entry, (list, tuple, set, frozenset)):
                stack.append((entry, depth + 1))
            elif isinstance(entry, (dict, Mapping)):
                stack.append((chain(entry.keys(), entry.values()), depth + 1))
            elif isinstance(entry, range):
                total += len(entry)
            if total > limit:
                return total
    return total


def refuse_over(size: int, what: str) -> None:
    """Refuse a value of ``size`` characters made by ``what``, when over the cap."""
    if size > MAX_OUTPUT_CHARS:
        raise TemplateRenderError(f"{what} would build a value over {MAX_OUTPUT_CHARS} characters")


def check_int(value: Any, what: str) -> None:
    """Refuse an integer over ``MAX_INT_BITS`` bits."""
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise TemplateRenderError(f"{what} would build a number over {MAX_INT_BITS} bits")


def charge(size: int, what: str) -> None:
    """Count ``size`` built characters against the render's ``MAX_RENDER_BUILT``."""
    spent = _BUDGET.get()
    if spent is None:
        return
    spent.built += size
    if spent.built > MAX_RENDER_BUILT:
        raise TemplateRenderError(
            f"{what} would take the characters the template built over {MAX_RENDER_BUILT} in all"
        )


def check_size(value: Any, what: str) -> Any:
    """``value``, a newly built one: refused when over the cap or a huge integer, then charged."""
    if isinstance(value, str):  # the common case, without a walk
        size = len(value)
    else:
        check_int(value, what)
        size = weight(value)
    refuse_over(size, what)
    charge(size, what)
    return value


def materialize(value: Any, what: str) -> Any:
    """A lazy iterator (``map``, ``select``, ...) as a list, refused once over the cap.

    Counting item by item stops a generator of big items before the list of
    them exists. Anything else is returned as it is.
    """
    # Builtin iterators and generators only: a ``loop`` object is an iterator
    # too, and consuming it here would rob the running for-loop of its items.
    if not isinstance(value, Iterator) or type(value).__module__ != "builtins":
        return value
    items = []
    total = 0
    for item in value:
        tick()
        total += weight(item)
        refuse_over(total, what)
        items.append(item)
    return items
