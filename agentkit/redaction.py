"""Keeping credential values out of everything a call produces.

A ``Redactor`` replaces every spelling of the secrets it holds -- itself in any
letter case, percent-, JSON-, HTML-escaped, its base64 even wrapped in lines --
with ``***``; ``secretpatterns`` builds the pattern that finds them. A secret
shorter than ``MIN_SECRET_LENGTH`` is not taken (see there).

The executor makes one redactor per call and makes it *active* while the tool
runs (``redacting``). A backend that sends a form it derived from a secret (a
header it built, a signature) registers it with ``redact_also``; from then on
every redactor that sees the call's errors, events and recordings knows it, and
the call's answer is checked for it (``Redactor.leak``). ``excerpt`` and
``Redactor.clean_exception`` are the two ways text leaves a call: both redact
the whole text first and cut afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Any, Final, final

from agentkit.jsonvalues import MAX_DEPTH
from agentkit.problem import format_location
from agentkit.secretpatterns import (
    MASK,
    MIN_SECRET_LENGTH,
    CompiledSecrets,
    compile_secrets,
)
from agentkit.toolerrors import RedactedError

__all__ = [
    "MASK",
    "MIN_SECRET_LENGTH",
    "Leak",
    "Redactor",
    "activate",
    "active_redactor",
    "deactivate",
    "excerpt",
    "redact_also",
    "redacting",
]

#: How many links of ``__cause__``/``__context__`` a cleaned exception keeps.
MAX_CHAIN: Final = 16
#: How deep ``redact_value`` walks: twice as deep as any value a call accepts
#: (``MAX_DEPTH``), and far below Python's recursion limit in any thread.
MAX_WALK: Final = 2 * MAX_DEPTH


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Leak:
    """Where a value holds a secret, said without the secret.

    ``where`` is the place: ``output.items[2].name``, ``a key of output.labels``,
    ``content[1].text``. ``credentials`` names the credentials whose values were
    found there; when only a form derived from them was found (``redact_also``),
    every credential the redactor was given by name; ``()`` when it was given none.
    """

    where: str
    credentials: tuple[str, ...]


class Redactor:
    """Replaces every known spelling of the secrets it holds with ``***``.

    ``secrets`` are values to hide; ``named`` maps credential names to values
    (those are hidden too, and a ``Leak`` names them). A secret shorter than
    ``MIN_SECRET_LENGTH`` is not taken (see there). A redactor with no secrets
    returns text unchanged at the cost of one test. Text and values that hold no
    secret come back as the very same object, found by a search (no copy); a
    string shorter than the shortest spelling of any secret is not even searched.
    """

    __slots__ = ("_compiled", "_named", "_secrets")

    def __init__(
        self, secrets: Iterable[str] = (), *, named: Mapping[str, str] | None = None
    ) -> None:
        # Made for every call with credentials: nothing more is worked out here than
        # the set (its pattern is cached), the names only once a leak is found. A
        # copy of them: the executor's mapping is the tool's to change.
        if named:
            self._named = dict(named)
            known = frozenset(self._named.values())
            if secrets != ():
                known = known.union(secrets)
        else:
            self._named = {}
            known = frozenset(secrets)
        for secret in known:
            if len(secret) < MIN_SECRET_LENGTH:  # rare: filtered only then
                known = frozenset(secret for secret in known if len(secret) >= MIN_SECRET_LENGTH)
                break
        self._secrets = known
        self._compiled = compile_secrets(known) if known else None

    def add(self, *secrets: str) -> None:
        """Also redact ``secrets`` (those shorter than ``MIN_SECRET_LENGTH`` are not taken)."""
        new = {secret for secret in secrets if len(secret) >= MIN_SECRET_LENGTH} - self._secrets
        if not new:
            return
        # One assignment of what readers use: a thread redacting meanwhile sees the
        # old pattern and bounds or the new ones, never a mix.
        self._secrets = self._secrets | new
        self._compiled = compile_secrets(self._secrets)

    @property
    def reach(self) -> int:
        """An upper bound on the length of any text this redactor replaces."""
        compiled = self._compiled
        return compiled.reach if compiled is not None else 0

    def __bool__(self) -> bool:
        return self._compiled is not None

    def __repr__(self) -> str:
        return f"Redactor(<{len(self._secrets)} secret(s)>)"  # never the values

    def redact(self, text: str) -> str:
        """``text`` with every spelling of every secret replaced by ``***``.

        ``text`` itself when it holds none.
        """
        compiled = self._compiled
        if compiled is None:
            return text
        return compiled.sub(text)

    def redact_value(self, value: Any) -> Any:
        """A JSON-like value with secrets redacted in every string.

        Keys are never rewritten (two keys redacted alike would merge): an entry
        whose key holds a secret is left out of the copy. ``value`` itself when
        no string in it holds a secret (one search-only walk); else a copy.
        Containers nested more than ``MAX_WALK`` levels deep (far deeper than any
        value a call accepts) are replaced by ``***`` unsearched: the walk never
        raises ``RecursionError``, and never lets through what it did not search.
        """
        compiled = self._compiled
        if compiled is None or not _holds_secret(compiled, value, 0):
            return value
        return _redacted_copy(compiled, value, 0)

    def redact_bytes(self, data: bytes) -> bytes:
        """``data`` with each secret's UTF-8 bytes, in any letter case, replaced by ``b"***"``.

        For binary content (an image a tool made): masking corrupts the file, and
        that is the point -- a credential never leaves inside it. ``data`` itself
        when it holds none.
        """
        compiled = self._compiled
        if compiled is None:
            return data
        return compiled.binary.sub(MASK.encode(), data)

    def contains_secret(self, text: str) -> bool:
        compiled = self._compiled
        return compiled is not None and compiled.search(text)

    def leak(self, value: Any, where: str = "") -> Leak | None:
        """Where ``value`` first holds a secret, or ``None``: the check of a call's answer.

        ``value`` is a JSON-like value (keys are searched too), text, or bytes (searched
        for each secret's UTF-8 bytes in any letter case). ``where`` names the value
        itself (``output``); the leak's place is given from there. Nothing of the
        secret is in the ``Leak``.
        """
        compiled = self._compiled
        if compiled is None:
            return None
        if type(value) is dict:  # the usual answer: the fast walk, no location kept
            if not _any_holds_secret(compiled, value.keys(), 0) and not _any_holds_secret(
                compiled, value.values(), 0
            ):
                return None
        elif isinstance(value, (bytes, bytearray, memoryview)):
            found = compiled.binary.search(bytes(value))
            return None if found is None else self._leak(where, found[0])
        elif not _holds_secret(compiled, value, 0):
            return None
        found_at = _find(compiled, value, (), 0)
        if found_at is None:
            return None
        location, in_key, text = found_at
        place = format_location((where, *location) if where else location)
        if in_key:
            place = f"a key of {place}" if place else "a key"
        return self._leak(place, text)

    def _leak(self, where: str, found: str | bytes) -> Leak:
        # Which credentials: each alone searched in what held the match (the failure
        # path only, so its patterns may be made now).
        named = []
        for name, value in self._named.items():
            if len(value) < MIN_SECRET_LENGTH:
                continue
            alone = compile_secrets(frozenset([value]))
            if alone.binary.search(found) if isinstance(found, bytes) else alone.search(found):
                named.append(name)
        return Leak(where=where, credentials=tuple(sorted(named or self._named)))

    def clean_exception(self, error: BaseException) -> BaseException:
        """A copy of ``error`` and its chain that carries no secret this redactor knows.

        Each copy keeps its type, its traceback and a redacted message; its
        ``args`` hold only redacted strings, numbers and cleaned exceptions, and
        of its attributes only the plain ones (redacted strings, numbers) and
        cleaned exceptions. An
        exception that cannot be rebuilt that way becomes a ``RedactedError``
        naming the original type. ``__cause__`` and ``__context__`` are cleaned
        the same way, ``MAX_CHAIN`` links deep; cycles are kept as cycles.
        """
        if self._compiled is None:
            return error
        return _Cleaner(self).clean(error, 0)


def _holds_secret(compiled: CompiledSecrets, value: Any, depth: int) -> bool:
    """Whether any string in ``value`` (keys included) matches: the search-only walk."""
    if isinstance(value, str):
        return compiled.search(value)
    if isinstance(value, dict):
        # Past MAX_WALK: not searched, and the copy masks it.
        return (
            depth >= MAX_WALK
            or _any_holds_secret(compiled, value.keys(), depth)
            or _any_holds_secret(compiled, value.values(), depth)
        )
    if isinstance(value, (list, tuple)):
        return depth >= MAX_WALK or _any_holds_secret(compiled, value, depth)
    return type(value) not in _NOT_SEARCHED and _shown_with_secret(compiled, value) is not None


def _any_holds_secret(compiled: CompiledSecrets, items: Iterable[Any], depth: int) -> bool:
    # Strings and numbers are tested in this loop, not by a call each: for the
    # usual flat output the whole walk is three calls.
    # The pattern's own search first (a C call); the wrapped-base64 reading only for
    # a string with a line break in it.
    search, shortest, wrapped = compiled.pattern.search, compiled.shortest, compiled.search
    for item in items:
        if type(item) is str:
            if len(item) >= shortest and (
                search(item) is not None or (("\n" in item or "\\n" in item) and wrapped(item))
            ):
                return True
        elif type(item) not in _NOT_SEARCHED and _holds_secret(compiled, item, depth + 1):
            return True
    return False


# What a search-only walk passes over without a call (a str subclass gets one).
_NOT_SEARCHED: Final = frozenset({int, float, bool, type(None)})
_BYTES: Final = (bytes, bytearray, memoryview)


def _shown_with_secret(compiled: CompiledSecrets, value: Any) -> str | bytes | None:
    """Where a value that is no JSON (bytes, a set, an exception, a Python tool's own
    object) shows a secret: its bytes (``binary``), its ``str`` (what ``json.dumps(...,
    default=str)`` writes) or its ``repr`` (what a log of its container writes); the
    text or bytes that hold it, or ``None``. A number (an ``int`` or ``float`` subclass
    too: an enum, a NumPy float) is not searched, as the plain ones are not."""
    if isinstance(value, (int, float)):
        return None
    shows: tuple[Any, ...] = (str, repr)
    if isinstance(value, _BYTES):
        try:
            data = bytes(value)
        except ValueError:  # a released memoryview: nothing left to show
            return None
        if compiled.binary.search(data) is not None:
            return data
        shows = (repr,)  # bytes' str is their repr: the escapes, searched once
    for show in shows:
        text = _safe_str(value, show)
        if compiled.search(text):
            return text
    return None


def _masked_object(compiled: CompiledSecrets, value: Any) -> Any:
    """``value`` (no JSON) itself when it shows no secret, else its ``repr`` redacted:
    only its redacted text travels on, as for an exception's argument."""
    if _shown_with_secret(compiled, value) is None:
        return value
    if isinstance(value, _BYTES):
        try:
            value = compiled.binary.sub(MASK.encode(), bytes(value))
        except ValueError:  # released meanwhile
            return MASK
    return compiled.sub(_safe_str(value, repr))


def _find(
    compiled: CompiledSecrets, value: Any, location: tuple[str | int, ...], depth: int
) -> tuple[tuple[str | int, ...], bool, str | bytes] | None:
    """The first string of ``value`` holding a secret: its location, whether it is a
    key, and the string (a value that is no JSON: what shows it). A key is searched
    before its value, so a location names only keys that hold none. Past ``MAX_WALK``
    a container counts as holding one."""
    if isinstance(value, str):
        return (location, False, value) if compiled.search(value) else None
    if isinstance(value, dict):
        if depth >= MAX_WALK:
            return location, False, ""
        for key, item in value.items():
            if _holds_secret(compiled, key, depth + 1):
                return location, True, _key_text(compiled, key)
            named = key if isinstance(key, str) else _safe_str(key)  # str() may raise
            found = _find(compiled, item, (*location, named), depth + 1)
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        if depth >= MAX_WALK:
            return location, False, ""
        for index, item in enumerate(value):
            found = _find(compiled, item, (*location, index), depth + 1)
            if found is not None:
                return found
    elif type(value) not in _NOT_SEARCHED:
        shown = _shown_with_secret(compiled, value)
        if shown is not None:
            return location, False, shown
    return None


def _key_text(compiled: CompiledSecrets, key: Any) -> str | bytes:
    """What shows the secret in a key that holds one: the key itself, or what shows a
    key that is no text (bytes, a tuple, an object)."""
    if isinstance(key, str):
        return key
    return _shown_with_secret(compiled, key) or _safe_str(key, repr)


def _redacted_copy(compiled: CompiledSecrets, value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return compiled.sub(value)
    if isinstance(value, dict):
        if depth >= MAX_WALK:
            return MASK
        return {
            key: _redacted_copy(compiled, item, depth + 1)
            for key, item in value.items()
            if not _holds_secret(compiled, key, depth + 1)  # left out, never rewritten
        }
    if isinstance(value, (list, tuple)):
        if depth >= MAX_WALK:
            return MASK
        items = [_redacted_copy(compiled, item, depth + 1) for item in value]
        if type(value) is list:
            return items
        return _same_kind(value, items)
    return value if type(value) in _NOT_SEARCHED else _masked_object(compiled, value)


def _same_kind(value: list[Any] | tuple[Any, ...], items: list[Any]) -> Any:
    """``items`` as a container of ``value``'s type where it can be made from them (a
    tuple, a list or tuple subclass, a named tuple through ``_make``); else a tuple."""
    make = getattr(type(value), "_make", None)  # a named tuple takes its fields so
    try:
        return make(items) if callable(make) else type(value)(items)
    except Exception:  # a subclass whose constructor takes other arguments
        return tuple(items) if isinstance(value, tuple) else items


class _Cleaner:
    """One exception chain's copy: the memo keeps shared links and cycles intact."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._done: dict[int, BaseException] = {}

    def clean(self, error: BaseException, depth: int) -> BaseException:
        done = self._done.get(id(error))
        if done is not None:
            return done
        copy = self._copy(error, depth)
        self._done[id(error)] = copy
        if depth < MAX_CHAIN:
            if error.__cause__ is not None:
                copy.__cause__ = self.clean(error.__cause__, depth + 1)
            if error.__context__ is not None:
                copy.__context__ = self.clean(error.__context__, depth + 1)
        copy.__suppress_context__ = error.__suppress_context__
        notes = getattr(error, "__notes__", None)
        if isinstance(notes, list):
            copy.__notes__ = [self._redactor.redact(_safe_str(note)) for note in notes]  # type: ignore[attr-defined]
        return copy.with_traceback(error.__traceback__)

    def _copy(self, error: BaseException, depth: int) -> BaseException:
        kind = type(error)
        message = self._redactor.redact(_safe_str(error))
        args = tuple(self._arg(arg, depth) for arg in error.args)
        for build in (_by_constructor, _by_new):
            try:
                copy = build(kind, args)
                if type(copy) is not kind:
                    continue  # OSError's constructor picks a subclass by errno, for example
                self._copy_attributes(error, copy, depth)
                # str() may raise here (it did for the original): that too means the stand-in.
                if str(copy) == message and not self._redactor.contains_secret(repr(copy)):
                    return copy
            except Exception:
                continue
        return RedactedError(f"{kind.__module__}.{kind.__qualname__}", message)

    def _arg(self, value: Any, depth: int) -> Any:
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str):
            return self._redactor.redact(value)
        if isinstance(value, bytes):
            text = value.decode("utf-8", "surrogateescape")
            return self._redactor.redact(text).encode("utf-8", "surrogateescape")
        if isinstance(value, BaseException):
            return self.clean(value, depth + 1)
        if isinstance(value, (list, tuple)):
            return type(value)(self._arg(item, depth) for item in value)
        # Any other object (a request, a response) may hold a secret where no
        # repr shows it: only its redacted text travels on.
        return self._redactor.redact(_safe_str(value, repr))

    def _copy_attributes(self, error: BaseException, copy: BaseException, depth: int) -> None:
        for name, value in getattr(error, "__dict__", {}).items():
            if name.startswith("__"):
                continue
            if value is None or isinstance(value, (bool, int, float)):
                setattr(copy, name, value)
            elif isinstance(value, str):
                setattr(copy, name, self._redactor.redact(value))
            elif isinstance(value, BaseException) and depth < MAX_CHAIN:
                setattr(copy, name, self.clean(value, depth + 1))  # a wrapped error's cause


def _by_constructor(kind: type[BaseException], args: tuple[Any, ...]) -> BaseException:
    return kind(*args)


def _by_new(kind: type[BaseException], args: tuple[Any, ...]) -> BaseException:
    # Without __init__: for constructors whose parameters are not their args.
    copy = kind.__new__(kind, *args)
    copy.args = args
    return copy


def _safe_str(value: object, show: Any = str) -> str:
    try:
        return str(show(value))
    except Exception:
        return f"<{type(value).__name__} that cannot be shown>"


# -- the call's redactor --------------------------------------------------------------------------

_ACTIVE: ContextVar[Redactor | None] = ContextVar("agentkit_redactor", default=None)


def active_redactor() -> Redactor | None:
    """The redactor of the tool call running in this context, if any."""
    return _ACTIVE.get()


@contextmanager
def redacting(redactor: Redactor) -> Iterator[Redactor]:
    """Make ``redactor`` the active one for the block."""
    token = _ACTIVE.set(redactor)
    try:
        yield redactor
    finally:
        _ACTIVE.reset(token)


#: ``activate(redactor)`` makes ``redactor`` the active one until
#: ``deactivate(token)`` with the token it returns: ``redacting`` without the
#: ``with`` block, for the executor's hot path. The context variable's own
#: ``set`` and ``reset``, not functions around them: a context manager's protocol
#: costs several times as much, a Python function around each about 40 ns more.
#: Always pair them in a ``finally``.
activate: Final[Callable[[Redactor], Token[Redactor | None]]] = _ACTIVE.set
deactivate: Final[Callable[[Token[Redactor | None]], None]] = _ACTIVE.reset


def redact_also(*forms: str) -> None:
    """Tell the running call's redactor about ``forms`` derived from a secret.

    A backend or tool that sends something it computed from a credential (a
    ``user:password`` pair, a signed token, a header it assembled) calls this
    before sending, so the call's output, errors, events and recordings never
    show it. Outside a call (no active redactor) this does nothing.
    """
    redactor = _ACTIVE.get()
    if redactor is not None:
        redactor.add(*forms)


def excerpt(text: str, limit: int, redactor: Redactor | None = None) -> str:
    """``text`` redacted first, then cut to ``limit`` characters (``...`` marks a cut).

    In this order a secret that straddles the cut, or is longer than the
    excerpt, is still whole when it is matched. ``redactor`` defaults to the
    active one.
    """
    redactor = redactor if redactor is not None else _ACTIVE.get()
    if redactor:
        # A secret starting before the cut ends within `reach` of it: redacting
        # this much is as good as redacting a body of any size.
        text = redactor.redact(text[: limit + redactor.reach])
    if len(text) > limit:
        text = text[: max(limit - 3, 0)] + "..."
    return text
