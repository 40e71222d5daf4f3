"""Answers sized for a context: a tool's ``max_output``, pages and continuations.

A tool that declares a budget (``MAX_OUTPUT = {"bytes": 20000}``, or a definition's
``max_output:``) gives an answer over it as pages. What a page guarantees:

- it is a whole answer that passes the tool's output schema (every page is checked
  before the first is given; when one would not pass, the answer is given whole);
- it serializes (compact JSON, UTF-8) within the budget, unless what cannot be cut
  (the fields that stay whole, or one list item) is itself over it;
- the answer's largest lists and strings, reached through objects, are cut, largest
  first, until what stays whole takes at most half the budget; every other field is
  the same on every page. Concatenating each cut field across the pages, in order,
  gives the whole answer back: nothing is dropped, nothing added, no marker is
  written into a value (``Page.parts`` says what each page holds);
- a list is cut between items, never inside one; a string at a code point, never
  one whose schema has an ``enum`` or a ``pattern`` (a part would not pass);
- the rest waits in a bounded store (``PageStore``), bound to the tool and to the
  caller (``caller_scope``), for a ``continuation`` argument to fetch it: the tool
  is not run again.

An answer under the budget is not touched: the same object, no page.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, final

from agentkit.callers import current_caller
from agentkit.pagesplit import PagePart, fits, page_answer, size_of
from agentkit.toolerrors import ContinuationError, SemanticError

if TYPE_CHECKING:
    from agentkit.toolschema import ToolSchema

__all__ = [
    "BYTES_PER_TOKEN",
    "CONTINUATION",
    "DEFAULT_STORE",
    "TOKEN_BYTES",
    "ContinuationError",
    "Page",
    "PagePart",
    "PageStore",
    "caller_scope",
    "continuation_of",
    "fits",
    "max_output_bytes",
    "page_answer",
    "paged",
    "size_of",
]

#: The argument a paged tool takes to fetch the next page of an answer.
CONTINUATION: Final = "continuation"
#: The budget's estimate of a token: ``{"tokens": N}`` is ``N * BYTES_PER_TOKEN`` bytes.
BYTES_PER_TOKEN: Final = 4
#: The smallest and largest budget a tool may declare, in bytes.
MIN_BYTES: Final = 256
MAX_BYTES: Final = 64 * 1024 * 1024
#: Random bytes in a continuation: not guessable, not enumerable.
TOKEN_BYTES: Final = 24

_caller: ContextVar[str] = ContextVar("agentkit_paging_caller", default="")


def _whose() -> str:
    """Whose the pages made now are: the connection ``caller_scope`` names, and the
    caller the server knows (``agentkit.callers``; anonymous without auth)."""
    caller = current_caller()
    return f"{_caller.get()}|{caller.via}:{caller.name}"


@contextmanager
def caller_scope(caller: str) -> Iterator[None]:
    """Pages made inside this block are for ``caller`` only (an MCP session, a user).

    A continuation given to one caller is unknown to every other: a server sets this
    around each call, so one client cannot read the pages of another's answer.
    """
    token = _caller.set(caller)
    try:
        yield
    finally:
        _caller.reset(token)


def max_output_bytes(declared: Any) -> tuple[int | None, str | None]:
    """The budget ``declared`` (``{"bytes": N}`` or ``{"tokens": N}``) in bytes, and
    what is wrong with it; (None, None) when nothing is declared."""
    if declared is None:
        return None, None
    wanted = (
        f"expected {{bytes: N}} or {{tokens: N}} (a token is estimated as {BYTES_PER_TOKEN} "
        f"bytes), from {MIN_BYTES} to {MAX_BYTES} bytes"
    )
    if not isinstance(declared, Mapping) or len(declared) != 1:
        return None, f"{wanted}, got {_shown(declared)}"
    ((unit, amount),) = declared.items()
    if unit not in ("bytes", "tokens"):
        return None, f"{wanted}; {_shown(unit)} is not a unit"
    if type(amount) is not int:
        return None, f"{wanted}; {unit} must be a whole number, got {_shown(amount)}"
    budget = amount * BYTES_PER_TOKEN if unit == "tokens" else amount
    if not MIN_BYTES <= budget <= MAX_BYTES:
        return None, f"{wanted}, got {amount} {unit} ({budget} bytes)"
    return budget, None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def continuation_of(inputs: Any) -> Any:
    """The continuation in a call's ``inputs``; None when the call asks for no page."""
    if type(inputs) is dict or isinstance(inputs, Mapping):
        return inputs.get(CONTINUATION)
    return None


# -- the page, as the caller and the model see it --------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Page:
    """Which page of an answer a result holds, and how to get the next.

    ``continuation`` is None on the last page. ``remaining_bytes`` counts the pages
    after this one; ``budget`` is the tool's ``max_output`` in bytes.
    """

    tool: str
    number: int
    pages: int
    continuation: str | None
    remaining_bytes: int
    budget: int
    parts: tuple[PagePart, ...]
    #: How long a continuation is kept after its last use, in seconds.
    ttl: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "page": self.number,
            "pages": self.pages,
            "continuation": self.continuation,
            "remaining_bytes": self.remaining_bytes,
            "max_output_bytes": self.budget,
            "parts": [part.to_dict() for part in self.parts],
        }

    def note(self) -> str:
        """The page as the model reads it beside the answer: what it holds, what is left,
        and the call that fetches the next page."""
        held = "; ".join(_held(part) for part in self.parts)
        head = (
            f"[agentkit] This answer is page {self.number} of {self.pages}, cut to fit the "
            f"answer budget of tool '{self.tool}' ({self.budget} bytes): {held}."
        )
        if self.number == self.pages:
            return f"{head} This is the last page."
        if self.continuation is None:
            return (
                f"{head} The other {self.remaining_bytes} bytes were more than this server "
                f"keeps, so they cannot be fetched: call '{self.tool}' again asking for less."
            )
        call = json.dumps({CONTINUATION: self.continuation})
        return (
            f"{head} {self.remaining_bytes} bytes remain. For the next page, call "
            f"'{self.tool}' again with the arguments {call} (any others are ignored: the "
            f"tool is not run again; the continuation expires {self.ttl:g} s after its "
            "last use)."
        )


def _held(part: PagePart) -> str:
    if not part.count:
        return f"'{part.path}' holds none of its {part.total} {part.unit} here"
    last = part.offset + part.count
    left = part.total - last
    return f"'{part.path}' holds {part.unit} {part.offset + 1}-{last} of {part.total}" + (
        f" ({left} more to come)" if left else ""
    )


# -- cutting an answer into pages ------------------------------------------------------------


def paged(
    tool: str, output: dict[str, Any], schema: ToolSchema, budget: int, store: PageStore
) -> tuple[dict[str, Any], Page | None]:
    """``output`` as it is when it fits ``budget`` (no page), else its first page and the
    ``Page`` saying so, the rest kept in ``store``. An answer that cannot be cut so that
    every page passes ``schema`` is given whole."""
    try:
        if fits(output, budget):
            return output, None
        planned = page_answer(output, schema.to_json_schema(), budget)
    except (TypeError, ValueError):  # no JSON (step 4 refuses it; paged alone, kept whole)
        return output, None
    if planned is None:
        return output, None
    pages, parts, sizes = planned
    if any(schema.check(page).problems for page in pages):
        return output, None
    return pages[0], store.keep(tool, budget, pages, parts, sizes)


# -- where the rest waits --------------------------------------------------------------------


class _Kept:
    """The pages of one answer, whose they are, and until when (plain slots: cheaper to
    define than a dataclass, which start-up would pay for)."""

    __slots__ = ("budget", "bytes", "caller", "expires", "pages", "parts", "sizes", "tool")

    def __init__(
        self,
        tool: str,
        caller: str,
        budget: int,
        pages: list[dict[str, Any]],
        parts: list[tuple[PagePart, ...]],
        sizes: list[int],
        expires: float,
    ) -> None:
        self.tool = tool
        self.caller = caller
        self.budget = budget
        self.pages = pages
        self.parts = parts
        self.sizes = sizes
        self.bytes = sum(sizes[1:])
        self.expires = expires


class PageStore:
    """The pages of answers given in part, kept in this process for their continuations.

    Bounded: at most ``max_answers`` answers and ``max_bytes`` bytes of pages (the
    least recently used go first), each kept ``ttl`` seconds after its last use. A
    continuation is a ``secrets.token_urlsafe`` key and a page number, bound to the
    tool and to the caller (``caller_scope``) it was given to: unknown to any other.
    Behind several replicas, a continuation made by one is unknown to the others.
    """

    def __init__(
        self,
        *,
        max_answers: int = 256,
        max_bytes: int = 64 * 1024 * 1024,
        ttl: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for option, value in (("max_answers", max_answers), ("max_bytes", max_bytes)):
            if type(value) is not int or value < 1:
                raise SemanticError(
                    f"PageStore({option}=...) must be a positive integer, got {value!r}"
                )
        if not isinstance(ttl, (int, float)) or isinstance(ttl, bool) or not 0 < ttl < 1e9:
            raise SemanticError(
                f"PageStore(ttl=...) must be a positive number of seconds, got {ttl!r}"
            )
        self.max_answers = max_answers
        self.max_bytes = max_bytes
        self.ttl = ttl
        self._clock = clock
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    def keep(
        self,
        tool: str,
        budget: int,
        pages: list[dict[str, Any]],
        parts: list[tuple[PagePart, ...]],
        sizes: list[int],
    ) -> Page:
        """Keep the pages after the first for the current caller; the first's ``Page``.

        Pages more than the store may hold are not kept: the first page says it is
        one of several, with no continuation."""
        rest = sum(sizes[1:])
        key = None
        if rest <= self.max_bytes:
            import secrets  # here: start-up (the CLI's) need not load it

            key = secrets.token_urlsafe(TOKEN_BYTES)
            kept = _Kept(tool, _whose(), budget, pages, parts, sizes, self._clock() + self.ttl)
            with self._lock:
                self._expire()
                while self._kept and (
                    len(self._kept) >= self.max_answers or self._bytes + rest > self.max_bytes
                ):
                    _, gone = self._kept.popitem(last=False)
                    self._bytes -= gone.bytes
                self._kept[key] = kept
                self._bytes += rest
        return self._page(tool, key, 1, budget, parts, sizes)

    def take(self, tool: str, continuation: Any) -> tuple[dict[str, Any], Page]:
        """The page ``continuation`` names, for ``tool`` and the current caller.

        Raises ``ContinuationError`` when it is malformed, unknown, expired, another
        caller's, or another tool's."""
        if not isinstance(continuation, str):
            raise ContinuationError(
                f"expected the continuation string a page of '{tool}' gave, got "
                f"{type(continuation).__name__}"
            )
        key, _, number_text = continuation.rpartition(".")
        number = int(number_text) if number_text.isdigit() and len(number_text) < 8 else 0
        with self._lock:
            self._expire()
            kept = self._kept.get(key)
            if kept is None or kept.caller != _whose() or not 2 <= number <= len(kept.pages):
                raise ContinuationError(_unknown(tool, self.ttl))
            if kept.tool != tool:
                raise ContinuationError(
                    f"this continuation is of an answer of tool '{kept.tool}': call "
                    f"'{kept.tool}' with it"
                )
            kept.expires = self._clock() + self.ttl
            self._kept.move_to_end(key)
        page = self._page(tool, key, number, kept.budget, kept.parts, kept.sizes)
        return kept.pages[number - 1], page

    def _page(
        self,
        tool: str,
        key: str | None,
        number: int,
        budget: int,
        parts: list[tuple[PagePart, ...]],
        sizes: list[int],
    ) -> Page:
        last = number == len(sizes)
        return Page(
            tool=tool,
            number=number,
            pages=len(sizes),
            continuation=f"{key}.{number + 1}" if key is not None and not last else None,
            remaining_bytes=sum(sizes[number:]),
            budget=budget,
            parts=parts[number - 1],
            ttl=self.ttl,
        )

    def _expire(self) -> None:
        now = self._clock()
        for key in [key for key, kept in self._kept.items() if kept.expires <= now]:
            self._bytes -= self._kept.pop(key).bytes


def _unknown(tool: str, ttl: float) -> str:
    return (
        f"this continuation is unknown or has expired (a continuation is kept {ttl:g} s "
        "after its last use, by the server process that gave it, for the client it was "
        f"given to); call '{tool}' again with its original arguments, without "
        "'continuation', to get the answer afresh"
    )


#: The store every executor uses unless given its own: one per process, so that a
#: continuation outlives the executor a dispatch made for one turn.
DEFAULT_STORE: Final = PageStore()
