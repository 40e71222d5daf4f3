"""Keeping credential values out of everything a call produces.

A secret can reach a message in many spellings. Rather than list whole
spellings, ``Redactor`` matches each *character* of a secret in every way text
commonly encodes it -- itself, percent-encoded (either case, even twice),
JSON/Python escaped (``\\u00e9``, ``\\/``, ``\\x41``, also escaped again),
an HTML character reference, ``+`` for a space -- so any mix of those is found.
Besides the secret itself it knows its base64: the whole encoding, and the
three alignment-shifted *cores* (the characters that depend on the secret's
bytes alone), which find the secret's base64 inside a longer base64 string
such as a basic-auth ``user:password`` pair.

The executor makes one redactor per call and makes it *active* while the tool
runs (``redacting``). A backend that sends a form it derived from a secret (a
header it built, a signature) registers it with ``redact_also``; from then on
every redactor that sees the call's output, errors, events and recordings
knows it. ``excerpt`` and ``Redactor.clean_exception`` are the two ways text
leaves a call: both redact the whole text first and cut afterwards.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any, Final, final

from agentkit.jsonvalues import MAX_DEPTH
from agentkit.toolerrors import RedactedError

__all__ = [
    "MASK",
    "Redactor",
    "activate",
    "active_redactor",
    "deactivate",
    "excerpt",
    "redact_also",
    "redacting",
]

MASK: Final = "***"

#: A base64 core shorter than this would match ordinary words; such a short
#: secret is still found as itself and as its whole base64 encoding.
MIN_BASE64_CORE: Final = 4
#: How many links of ``__cause__``/``__context__`` a cleaned exception keeps.
MAX_CHAIN: Final = 16
#: How deep ``redact_value`` walks: twice as deep as any value a call accepts
#: (``MAX_DEPTH``), and far below Python's recursion limit in any thread.
MAX_WALK: Final = 2 * MAX_DEPTH

# One backslash, or more when escaped text was escaped again (JSON inside JSON).
_BACKSLASHES: Final = r"\\{1,8}"
# Encoders leave these alone (RFC 3986 "unreserved"; JSON, Python and HTML too), so
# in a base64 form, and in a secret too long to be worth the pattern's size, they
# match only as themselves: a long token stays one literal run, cheap to compile
# and to match. In a shorter secret even they may be escaped (a hostile or
# over-eager encoder), and are matched so.
_PLAIN: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")
#: Secrets up to this long are found even with every character escaped.
MAX_FULLY_ESCAPED: Final = 256
#: The most characters one character of a secret takes in any spelling matched.
_WIDEST: Final = 32
_SHORT_ESCAPES: Final = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "'": "'",
    "\n": "n",
    "\r": "r",
    "\t": "t",
    "\b": "b",
    "\f": "f",
}
_HTML_NAMED: Final = {"&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos"}


@functools.lru_cache(maxsize=4096)
def _char(char: str, base64_alphabet: bool = False, escaped_plain: bool = True) -> str:
    """A regex matching ``char`` in any of the encodings text commonly gives it."""
    if char in _PLAIN and not escaped_plain:
        return re.escape(char)
    code = ord(char)
    options = []
    # Percent-encoding of each UTF-8 byte, either case, possibly encoded again (%252F).
    options.append("(?i:" + "".join(f"%(?:25)?{byte:02x}" for byte in _utf8(char)) + ")")
    if char == " ":
        options.append(r"\+")
    if code < 0x10000:
        options.append(f"(?i:{_BACKSLASHES}u{code:04x})")
    else:
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        options.append(f"(?i:{_BACKSLASHES}u{high:04x}{_BACKSLASHES}u{low:04x})")
        options.append(f"(?i:{_BACKSLASHES}U{code:08x})")
    if code < 0x100:
        options.append(f"(?i:{_BACKSLASHES}x{code:02x})")
    if char in _SHORT_ESCAPES:
        options.append(_BACKSLASHES + re.escape(_SHORT_ESCAPES[char]))
    options.append(f"(?i:&#x0{{0,4}}{code:x};)|&#0{{0,4}}{code};")
    if char in _HTML_NAMED:
        options.append(f"&{_HTML_NAMED[char]};")
    if base64_alphabet and char in "+/":
        options.append("-" if char == "+" else "_")  # the URL-safe alphabet
    # The character itself last: at an escaped backslash the escape must win, or half stays.
    options.append(re.escape(char))
    return "(?:" + "|".join(options) + ")"


def _utf8(text: str) -> bytes:
    """``text`` as the bytes it stands for, even with surrogates.

    ``os.environ`` gives bytes that are not UTF-8 as surrogates
    (``surrogateescape``): such a secret is sent as those bytes, so they are
    what its percent and base64 forms encode. Any other lone surrogate is
    encoded as itself (``surrogatepass``) rather than failing the call.
    """
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _base64_forms(secret: str) -> set[str]:
    """The secret's whole base64, and its three alignment-shifted cores.

    Inside a longer base64 string the secret's bytes start at offset 0, 1 or 2
    of a 3-byte group. Encoding it behind that many filler bytes and dropping
    the characters that mix filler (or what follows) with the secret leaves the
    characters that appear whatever surrounds it.
    """
    raw = _utf8(secret)
    forms = {base64.b64encode(raw).decode("ascii")}
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii").rstrip("=")
        if (shift + len(raw)) % 3:
            encoded = encoded[:-1]  # its last character mixes in what follows the secret
        core = encoded[(0, 2, 3)[shift] :]
        if len(core) >= MIN_BASE64_CORE:
            forms.add(core)
    return forms


@final
class _Compiled:
    """What redacting with one set of secrets needs, made once per set (see ``_compile``)."""

    __slots__ = ("pattern", "reach", "shortest")

    def __init__(self, pattern: re.Pattern[str], reach: int, shortest: int) -> None:
        self.pattern = pattern
        #: An upper bound on the length of any text the pattern replaces.
        self.reach = reach
        #: A lower bound on it: a shorter string holds no secret (the fast path).
        self.shortest = shortest


@functools.lru_cache(maxsize=256)
def _compile(secrets: frozenset[str]) -> _Compiled:
    """The pattern matching every spelling of ``secrets``, and its bounds, made once per set.

    A call with credentials builds a redactor (the executor does); without this
    cache every call paid for the pattern's compile. The cache keeps the values
    the credential providers already hold in memory, nothing more.
    """
    forms = {(secret, False) for secret in secrets}
    forms |= {(form, True) for secret in secrets for form in _base64_forms(secret)}
    # Longest first, so a secret's longer form wins over a shorter secret inside it.
    ordered = sorted(forms, key=lambda item: (-len(item[0]), item))
    pattern = re.compile("|".join(_form(form, b64) for form, b64 in ordered))
    # Each character of a form matches one character or more, never none.
    shortest = min(len(form) for form, _ in ordered)
    # Base64 is 4/3 of the secret's UTF-8, itself at most 4 bytes a character.
    reach = max(len(secret) * 6 * _WIDEST for secret in secrets)
    return _Compiled(pattern, reach, shortest)


def _form(form: str, base64_alphabet: bool) -> str:
    escaped_plain = not base64_alphabet and len(form) <= MAX_FULLY_ESCAPED
    return "".join(_char(char, base64_alphabet, escaped_plain) for char in form)


class Redactor:
    """Replaces every known spelling of the secrets it holds with ``***``.

    A redactor with no secrets returns text unchanged at the cost of one test.
    Text and values that hold no secret come back as the very same object,
    found by a search (no copy); a string shorter than the shortest spelling
    of any secret is not even searched.
    """

    __slots__ = ("_compiled", "_secrets")

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        known = frozenset(secrets)
        if "" in known:
            known = known - {""}  # nothing to hide
        self._secrets = known
        self._compiled = _compile(known) if known else None

    def add(self, *secrets: str) -> None:
        """Also redact ``secrets`` (empty strings are ignored: there is nothing to hide)."""
        new = {secret for secret in secrets if secret} - self._secrets
        if not new:
            return
        # One assignment of what readers use: a thread redacting meanwhile sees the
        # old pattern and bounds or the new ones, never a mix.
        self._secrets = self._secrets | new
        self._compiled = _compile(self._secrets)

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
        if compiled is None or len(text) < compiled.shortest:
            return text
        return compiled.pattern.sub(MASK, text)  # the same object when nothing matched

    def redact_value(self, value: Any) -> Any:
        """A JSON-like value with secrets redacted in every string, keys included.

        ``value`` itself when no string in it holds a secret (one search-only
        walk); else a copy. Containers nested more than ``MAX_WALK`` levels deep
        (far deeper than any value a call accepts) are replaced by ``***``
        unsearched: the walk never raises ``RecursionError``, and never lets
        through what it did not search.
        """
        compiled = self._compiled
        if compiled is None or not _holds_secret(compiled, value, 0):
            return value
        return _redacted_copy(compiled.pattern, value, 0)

    def redact_bytes(self, data: bytes) -> bytes:
        """``data`` with each secret's UTF-8 bytes replaced by ``b"***"``.

        For binary content (an image a tool made): masking corrupts the file, and
        that is the point -- a credential never leaves inside it. ``data`` itself
        when it holds none.
        """
        if self._compiled is None:
            return data
        # Longest first, so a secret's longer form wins over a shorter secret inside it.
        for secret in sorted(self._secrets, key=len, reverse=True):
            raw = _utf8(secret)
            if raw in data:
                data = data.replace(raw, MASK.encode())
        return data

    def contains_secret(self, text: str) -> bool:
        compiled = self._compiled
        return (
            compiled is not None
            and len(text) >= compiled.shortest
            and compiled.pattern.search(text) is not None
        )

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


def _holds_secret(compiled: _Compiled, value: Any, depth: int) -> bool:
    """Whether any string in ``value`` (keys included) matches: the search-only walk."""
    if isinstance(value, str):
        return len(value) >= compiled.shortest and compiled.pattern.search(value) is not None
    if isinstance(value, dict):
        # Past MAX_WALK: not searched, and the copy masks it.
        return (
            depth >= MAX_WALK
            or _any_holds_secret(compiled, value.keys(), depth)
            or _any_holds_secret(compiled, value.values(), depth)
        )
    if isinstance(value, (list, tuple)):
        return depth >= MAX_WALK or _any_holds_secret(compiled, value, depth)
    return False


def _any_holds_secret(compiled: _Compiled, items: Iterable[Any], depth: int) -> bool:
    # Strings and numbers are tested in this loop, not by a call each: for the
    # usual flat output the whole walk is three calls.
    search, shortest = compiled.pattern.search, compiled.shortest
    for item in items:
        if type(item) is str:
            if len(item) >= shortest and search(item) is not None:
                return True
        elif type(item) not in _NOT_SEARCHED and _holds_secret(compiled, item, depth + 1):
            return True
    return False


# What a search-only walk passes over without a call (a str subclass gets one).
_NOT_SEARCHED: Final = frozenset({int, float, bool, type(None)})


def _redacted_copy(pattern: re.Pattern[str], value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return pattern.sub(MASK, value)
    if isinstance(value, dict):
        if depth >= MAX_WALK:
            return MASK
        copy = {}
        for key, item in value.items():
            copy[_redacted_copy(pattern, key, depth + 1)] = _redacted_copy(pattern, item, depth + 1)
        return copy
    if isinstance(value, (list, tuple)):
        if depth >= MAX_WALK:
            return MASK
        items = [_redacted_copy(pattern, item, depth + 1) for item in value]
        return items if type(value) is list else type(value)(items)
    return value


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
