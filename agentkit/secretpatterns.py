"""The pattern that finds a set of secrets in every spelling: what a ``Redactor`` runs.

A secret can reach a message in many spellings. Rather than list whole
spellings, the pattern matches each *character* of a secret in every way text
commonly encodes it -- itself in any letter case, percent-encoded (either case,
even twice), JSON/Python escaped (``\\u00e9``, ``\\/``, ``\\x41``, also escaped
again), an HTML character reference, ``+`` for a space -- so any mix of those is
found. Besides the secret itself it knows its base64: the whole encoding, and
the three alignment-shifted *cores* (the characters that depend on the secret's
bytes alone), which find the secret's base64 inside a longer base64 string such
as a basic-auth ``user:password`` pair -- also when that string is wrapped in
lines (MIME, PEM) and a line break falls inside the secret.

A secret shorter than ``MIN_SECRET_LENGTH`` is not taken: that short a value
turns up by chance in ordinary text, and masking it would rewrite words. The
credential providers refuse such a credential (``CredentialsManager.resolve``).
"""

from __future__ import annotations

import base64
import bisect
import functools
import itertools
import re
from collections.abc import Iterable, Iterator
from typing import Final, final

__all__ = [
    "MASK",
    "MAX_FULLY_ESCAPED",
    "MIN_BASE64_CORE",
    "MIN_SECRET_LENGTH",
    "MIN_WRAP_WIDTH",
    "CompiledSecrets",
    "compile_secrets",
]

MASK: Final = "***"

#: The fewest characters a secret needs to be kept out of text. A value of N
#: letters and digits, compared regardless of case (36 symbols), turns up by
#: chance at a given place of a text with probability 36**-N: in 100 KB, about
#: once in 17 texts for 4 characters, once in 22,000 for 6, once in 28 million
#: for 8. Shorter secrets are refused where credentials are resolved, and not
#: taken by a redactor (their forms, such as a length a template rendered from a
#: credential, neither). Eight is also the least any password policy accepts.
MIN_SECRET_LENGTH: Final = 8
#: A base64 core shorter than this would match ordinary words; such a short
#: secret is still found as itself and as its whole base64 encoding.
MIN_BASE64_CORE: Final = 4
#: A line of wrapped base64 this long or longer, followed by a line break, is
#: read as joined to the next line. MIME writes 76 characters, PEM 64.
MIN_WRAP_WIDTH: Final = 16
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
#: The most characters one character of a secret takes in any spelling matched:
#: an escape of each character of its longest letter-case form (``ﬃ`` is ``FFI``).
_WIDEST: Final = 3 * 32
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

# A line break in wrapped base64: CRLF or LF, as such or JSON-escaped.
_LINE_BREAKS: Final = ("\r\n", "\n", "\\r\\n", "\\n")
_BREAKS: Final = re.compile("|".join(map(re.escape, _LINE_BREAKS)))
_BASE64_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_BASE64_CHAR: Final = "[A-Za-z0-9+/_-]"
# The end of a line break after a line of base64 MIN_WRAP_WIDTH long or more,
# plain and JSON-escaped: each starts with a literal, which the search skips to.
_WRAP_POINTS: Final = tuple(
    re.compile(
        f"{re.escape(end)}(?:"
        + "|".join(
            f"(?<={_BASE64_CHAR}{{{MIN_WRAP_WIDTH}}}{re.escape(line_break)})"
            for line_break in _LINE_BREAKS
            if line_break.endswith(end)
        )
        + ")"
    )
    for end in ("\n", "\\n")
)
# Two or more lines of base64 characters, each but the last MIN_WRAP_WIDTH long or more.
_WRAPPED: Final = re.compile(
    rf"(?:{_BASE64_CHAR}{{{MIN_WRAP_WIDTH},}}(?:{_BREAKS.pattern}))+{_BASE64_CHAR}+=*"
)


def _wrapped_blocks(text: str, span: int) -> Iterator[re.Match[str]]:
    """The blocks of wrapped base64 in ``text``, found from their line breaks.

    A block is read from at most ``span`` characters before its first break: a
    secret's base64 that straddles the break starts no further back.
    """
    points = _WRAP_POINTS if "\\n" in text else _WRAP_POINTS[:1]
    position = 0
    while found := [point for point in (p.search(text, position) for p in points) if point]:
        end = min(point.start() for point in found)
        low = max(position, end - span)
        line = text[low:end].removesuffix("\r").removesuffix("\\r")
        block = _WRAPPED.match(text, low + len(line.rstrip(_BASE64_ALPHABET)))
        if block is None:  # the break is not followed by base64
            position = end + 1
            continue
        yield block
        position = block.end()


@functools.lru_cache(maxsize=4096)
def _cases(char: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What letter case makes of ``char``: the single characters (itself first), and the
    longer strings (``ß`` is ``SS`` upper-cased), one per case-insensitive spelling.

    The closure of ``lower``, ``upper``, ``casefold`` and ``title``: what an upstream
    that changes the case of a secret it echoes can make of it.
    """
    single: list[str] = [char]
    longer: dict[str, str] = {}
    pending = [char]
    while pending:
        for changed in _case_changes(pending.pop()):
            if len(changed) > 1:
                longer.setdefault(changed.casefold(), changed)
            elif changed not in single:
                single.append(changed)
                pending.append(changed)
    return tuple(single), tuple(longer[key] for key in sorted(longer))


def _case_changes(char: str) -> tuple[str, ...]:
    # After a letter, at the end of a word: lower-case Σ is ς there (the one change
    # that depends on the neighbours).
    return (char.lower(), char.upper(), char.casefold(), char.title(), ("A" + char).lower()[1:])


def _escapes(chars: Iterable[str]) -> list[tuple[str, str]]:
    """The escaped spellings of any of ``chars`` (not the characters themselves), as
    ``(first character, regex of the rest)``: one per kind of escape (``%``, ``\\``, ``&``).
    """
    percent, backslash, html = [], [], []
    for char in chars:
        code = ord(char)
        # Percent-encoding of each UTF-8 byte, possibly encoded again (%252F).
        first, *rest = _utf8(char)
        percent.append(f"{first:02x}" + "".join(f"%(?:25)?{byte:02x}" for byte in rest))
        if code < 0x10000:
            backslash.append(f"u{code:04x}")
        else:
            high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
            backslash += [f"u{high:04x}{_BACKSLASHES}u{low:04x}", f"U{code:08x}"]
        if code < 0x100:
            backslash.append(f"x{code:02x}")
        if char in _SHORT_ESCAPES:
            backslash.append(re.escape(_SHORT_ESCAPES[char]))
        html += [f"#x0{{0,4}}{code:x};", f"#0{{0,4}}{code};"]
        if char in _HTML_NAMED:
            html.append(f"{_HTML_NAMED[char]};")
    # Hexadecimal digits in either case (and the escapes' letters: harmless). One
    # backslash, or more when escaped text was escaped again (JSON inside JSON).
    return [
        ("%", f"(?i:(?:25)?(?:{'|'.join(dict.fromkeys(percent))}))"),
        ("\\", f"(?i:\\\\{{0,7}}(?:{'|'.join(dict.fromkeys(backslash))}))"),
        ("&", f"(?i:{'|'.join(dict.fromkeys(html))})"),
    ]


@functools.lru_cache(maxsize=4096)
def _options(char: str, base64_alphabet: bool, escaped_plain: bool) -> tuple[tuple[str, str], ...]:
    """``char`` in each of the encodings text commonly gives it, as ``(first character,
    regex of the rest)``: the first character of a spelling is always one character.

    Outside base64, in any letter case too (``_cases``): each case of the character
    as itself and escaped, and a longer case form (``SS`` for ``ß``) spelled
    character by character.
    """
    if base64_alphabet:  # base64 is case-sensitive: another case is other bytes
        if char in _PLAIN:
            return ((char, ""),)
        options = _escapes(char)
        if char in "+/":
            options.append(("-" if char == "+" else "_", ""))  # the URL-safe alphabet
        return (*options, (char, ""))
    single, longer = _cases(char)
    if char in _PLAIN and not escaped_plain:
        return tuple((each, "") for each in single)
    options = _escapes(single)
    if char == " ":
        options.append(("+", ""))
    for spelled in longer:
        rest = "".join(_char(part, False, escaped_plain) for part in spelled[1:])
        options.extend(
            (first, tail + rest) for first, tail in _options(spelled[0], False, escaped_plain)
        )
    # The character itself last: at an escaped backslash the escape must win, or half stays.
    return (*options, *((each, "") for each in single))


@functools.lru_cache(maxsize=4096)
def _char(char: str, base64_alphabet: bool = False, escaped_plain: bool = True) -> str:
    """A regex matching ``char`` in any of the encodings text commonly gives it."""
    options = _options(char, base64_alphabet, escaped_plain)
    return "(?:" + "|".join(re.escape(first) + rest for first, rest in options) + ")"


def _started(char: str, base64_alphabet: bool, escaped_plain: bool) -> tuple[set[str], str]:
    """``char`` as the first character of a match: the characters a spelling of it
    starts with, and a regex that, right after one of them, completes the spelling.

    The one copy of the pattern's top (see ``compile_secrets``): the completion looks back
    at the character just read to tell which spelling it began.
    """
    options = _options(char, base64_alphabet, escaped_plain)
    completions = "|".join(f"(?<={re.escape(first)}){rest}" for first, rest in options)
    return {first for first, _ in options}, f"(?:{completions})"


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
class CompiledSecrets:
    """What redacting with one set of secrets needs, made once per set (see ``compile_secrets``)."""

    __slots__ = ("_binary", "pattern", "reach", "secrets", "shortest", "span")

    def __init__(
        self,
        secrets: frozenset[str],
        pattern: re.Pattern[str],
        *,
        reach: int,
        shortest: int,
        span: int,
    ) -> None:
        self.secrets = secrets
        self.pattern = pattern
        #: The longest base64 form: how far back of a line break a wrapped one starts.
        self.span = span
        #: An upper bound on the length of any text the pattern replaces.
        self.reach = reach
        #: A lower bound on it: a shorter string holds no secret (the fast path).
        self.shortest = shortest
        self._binary: re.Pattern[bytes] | None = None

    @property
    def binary(self) -> re.Pattern[bytes]:
        """The secrets' UTF-8 bytes in any letter case: made when binary content is seen."""
        if self._binary is None:
            self._binary = _binary_pattern(self.secrets)
        return self._binary

    def search(self, text: str) -> bool:
        """Whether ``text`` holds a spelling of a secret, a wrapped base64 one included."""
        if len(text) < self.shortest:
            return False
        if self.pattern.search(text) is not None:
            return True
        return _has_breaks(text) and any(
            self.pattern.search(_BREAKS.sub("", block[0])) is not None
            for block in _wrapped_blocks(text, self.span)
        )

    def sub(self, text: str) -> str:
        """``text`` with every spelling of a secret replaced by ``MASK``; ``text`` itself
        when it holds none."""
        if len(text) < self.shortest:
            return text
        text = self.pattern.sub(MASK, text)  # the same object when nothing matched
        return _unwrapped_sub(self, text) if _has_breaks(text) else text


def _has_breaks(text: str) -> bool:
    return "\n" in text or "\\n" in text


def _unwrapped_sub(compiled: CompiledSecrets, text: str) -> str:
    """``text`` with each secret found in a wrapped base64 block, read with its line
    breaks taken out, masked: from the start of the match to its end, breaks and all."""
    pieces: list[str] = []
    done = 0
    for block in _wrapped_blocks(text, compiled.span):
        joined = _BREAKS.sub("", block[0])
        matches = [match.span() for match in compiled.pattern.finditer(joined)]
        if not matches:
            continue
        lines = _Lines(block)
        for start, end in matches:
            first, last = lines.position(start), lines.position(end - 1) + 1
            if first >= done:
                pieces += [text[done:first], MASK]
                done = last
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


@final
class _Lines:
    """Where each line of a wrapped block starts: in the block joined, and in the text."""

    __slots__ = ("joined_starts", "starts")

    def __init__(self, block: re.Match[str]) -> None:
        breaks = [found.span() for found in _BREAKS.finditer(block.string, *block.span())]
        removed = itertools.accumulate((end - start for start, end in breaks), initial=0)
        self.starts = [block.start(), *(end for _, end in breaks)]
        self.joined_starts = [0]
        self.joined_starts += (
            # removed has one more entry than breaks: after the last one
            start - block.start() - before
            for (start, _), before in zip(breaks, removed, strict=False)
        )

    def position(self, offset: int) -> int:
        """Where the character at ``offset`` of the joined block is in the text."""
        line = bisect.bisect_right(self.joined_starts, offset) - 1
        return self.starts[line] + offset - self.joined_starts[line]


@functools.lru_cache(maxsize=256)
def compile_secrets(secrets: frozenset[str]) -> CompiledSecrets:
    """The pattern matching every spelling of ``secrets``, and its bounds, made once per set.

    A call with credentials builds a redactor (the executor does); without this
    cache every call paid for the pattern's compile. The cache keeps the values
    the credential providers already hold in memory, nothing more.
    """
    forms = {(secret, False) for secret in secrets}
    forms |= {(form, True) for secret in secrets for form in _base64_forms(secret)}
    # Longest first, so a secret's longer form wins over a shorter secret inside it.
    ordered = sorted(forms, key=lambda item: (-len(item[0]), item))
    # The pattern starts with the set of every character a match can start with:
    # the regex engine scans a text for those before it tries anything, so the
    # places that start no spelling (most of them) are passed over at C speed.
    # Each form then goes on from its first character read (see _started).
    starts: set[str] = set()
    alternatives = []
    for form, base64_alphabet in ordered:
        escaped_plain = not base64_alphabet and len(form) <= MAX_FULLY_ESCAPED
        first, completion = _started(form[0], base64_alphabet, escaped_plain)
        starts |= first
        alternatives.append(
            _fast_start(form, base64_alphabet, escaped_plain)
            or completion + _spelled(form[1:], base64_alphabet, escaped_plain)
        )
    start = "".join(sorted(starts))
    pattern = re.compile(f"[{re.escape(start)}](?:{'|'.join(alternatives)})")
    # Each character of a form matches one character or more, never none.
    shortest = min(len(form) for form, _ in ordered)
    # Base64 is 4/3 of the secret's UTF-8, itself at most 4 bytes a character; a
    # wrapped line adds at most one break of a few characters to every 16.
    reach = max(len(secret) * 6 * _WIDEST for secret in secrets)
    span = max(len(form) for form, b64 in ordered if b64) + MIN_WRAP_WIDTH
    return CompiledSecrets(secrets, pattern, reach=reach, shortest=shortest, span=span)


def _fast_start(form: str, base64_alphabet: bool, escaped_plain: bool) -> str | None:
    """A form whose first two characters are spelled only as themselves (a base64
    form, a long token), as the pattern's top goes on after its first character:
    the second one first, a test the engine makes before it enters the alternative,
    then a look back at both. ``None`` for any other form."""
    if len(form) < 2:
        return None
    first, second = (_options(char, base64_alphabet, escaped_plain) for char in form[:2])
    if any(tail for _, tail in (*first, *second)):
        return None
    firsts, seconds = (_one_of(first for first, _ in options) for options in (first, second))
    rest = _spelled(form[2:], base64_alphabet, escaped_plain)
    return f"{seconds}(?<={firsts}{seconds}){rest}"


def _one_of(chars: Iterable[str]) -> str:
    listed = "".join(sorted(set(chars)))
    return re.escape(listed) if len(listed) == 1 else f"[{re.escape(listed)}]"


def _spelled(text: str, base64_alphabet: bool, escaped_plain: bool) -> str:
    """The regex of ``text``: each character in any spelling (see ``_char``)."""
    if escaped_plain:
        return "".join(_char(char) for char in text)
    # Runs of plain characters as one literal (in any case, outside base64): a long
    # token compiles and matches as a few runs, not as one group per character.
    parts: list[str] = []
    run: list[str] = []
    for char in text:
        if char in _PLAIN:
            run.append(char)
            continue
        if run:
            parts.append(_run("".join(run), base64_alphabet))
            run = []
        parts.append(_char(char, base64_alphabet, False))
    if run:
        parts.append(_run("".join(run), base64_alphabet))
    return "".join(parts)


def _run(text: str, base64_alphabet: bool) -> str:
    return re.escape(text) if base64_alphabet else f"(?i:{re.escape(text)})"


def _binary_pattern(secrets: frozenset[str]) -> re.Pattern[bytes]:
    """The secrets' UTF-8 bytes, each character in any of its letter cases."""
    return re.compile(
        b"|".join(_binary_form(secret) for secret in sorted(secrets, key=lambda s: (-len(s), s)))
    )


def _binary_form(secret: str) -> bytes:
    parts: list[bytes] = []
    run: list[str] = []
    for char in secret:
        if char in _PLAIN:  # ASCII: IGNORECASE on bytes is ASCII's case, which is theirs
            run.append(char)
            continue
        if run:
            parts.append(b"(?i:" + re.escape("".join(run).encode("ascii")) + b")")
            run = []
        parts.append(_binary_char(char))
    if run:
        parts.append(b"(?i:" + re.escape("".join(run).encode("ascii")) + b")")
    return b"".join(parts)


@functools.lru_cache(maxsize=4096)
def _binary_char(char: str) -> bytes:
    """The UTF-8 bytes of ``char`` in each of its letter cases (``_cases``)."""
    single, longer = _cases(char)
    spellings = [re.escape(_utf8(each)) for each in single]
    spellings += [b"".join(map(_binary_char, spelled)) for spelled in longer]
    return b"(?:" + b"|".join(spellings) + b")"
