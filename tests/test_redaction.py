"""Redactor: every spelling of a secret becomes ***."""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit import Redactor
from agentkit.redaction import (
    MASK,
    MAX_WALK,
    MIN_SECRET_LENGTH,
    Leak,
    excerpt,
    redact_also,
    redacting,
)
from tests.support.leaks import SECRETS, case_variants, leaked, leaked_in_any_case, spellings

SECRET = 'p@ss w/rd+"q\\'


@pytest.mark.parametrize(
    "spelling",
    [
        SECRET,
        quote(SECRET, safe=""),
        quote_plus(SECRET),
        json.dumps(SECRET)[1:-1],
        repr(SECRET)[1:-1],
        base64.b64encode(SECRET.encode()).decode(),
    ],
    ids=["raw", "percent", "plus", "json", "repr", "base64"],
)
def test_each_spelling_is_redacted(spelling: str) -> None:
    assert Redactor([SECRET]).redact(f"before {spelling} after") == "before *** after"


def test_added_secrets_and_combined_forms() -> None:
    redactor = Redactor()
    assert not redactor
    redactor.add("user:pass")
    basic = base64.b64encode(b"user:pass").decode()
    assert redactor.redact(f"Authorization: Basic {basic}") == "Authorization: Basic ***"


def test_empty_secrets_are_ignored() -> None:
    assert Redactor([""]).redact("text") == "text"


def test_redact_value_walks_containers_and_never_rewrites_a_key() -> None:
    redactor = Redactor(["s3cret-value"])
    value = {"k": ["a s3cret-value", {"s3cret-value": 1, "kept": 2}], "n": 3}
    assert redactor.redact_value(value) == {"k": ["a ***", {"kept": 2}], "n": 3}


@settings(deadline=None)  # a new secret's pattern is compiled per example
@given(st.text(min_size=MIN_SECRET_LENGTH, max_size=30), st.text(max_size=40), st.text(max_size=40))
def test_no_spelling_survives(secret: str, before: str, after: str) -> None:
    redactor = Redactor([secret])
    for spelling in (secret, quote(secret, safe=""), json.dumps(secret)[1:-1]):
        assert spelling not in redactor.redact(before + spelling + after)


# -- every spelling, for secrets whose spellings differ ---------------------------------------


@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
def test_no_spelling_of_a_secret_survives(secret: str) -> None:
    redactor = Redactor([secret])
    for form in spellings(secret):
        assert leaked(redactor.redact(f"<{form}>"), [secret]) == [], form


@pytest.mark.parametrize(
    "escape",
    [
        pytest.param(lambda s: "".join(f"\\u{ord(c):04x}" for c in s), id="every-char-json-u"),
        pytest.param(lambda s: "".join(f"\\u{ord(c):04X}" for c in s), id="upper-json-u"),
        pytest.param(
            lambda s: re.sub("%..", lambda m: m[0].lower(), quote(s, safe="")),
            id="lowercase-percent",
        ),
        pytest.param(lambda s: "".join(f"%{b:02x}" for b in s.encode()), id="percent-every-byte"),
        pytest.param(lambda s: quote(quote(s, safe=""), safe=""), id="percent-twice"),
        pytest.param(lambda s: json.dumps(s)[1:-1].replace("/", "\\/"), id="json-slash"),
        pytest.param(lambda s: json.dumps(json.dumps(s))[3:-3], id="json-in-json"),
        pytest.param(lambda s: "".join(f"&#x{ord(c):x};" for c in s), id="html-hex"),
        pytest.param(lambda s: "".join(f"&#{ord(c)};" for c in s), id="html-decimal"),
    ],
)
@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
def test_escaped_spellings_are_redacted(secret: str, escape: Callable[[str], str]) -> None:
    assert Redactor([secret]).redact(f"a {escape(secret)} b") == "a *** b"


@settings(deadline=None)  # a new secret's pattern is compiled per example
@given(
    st.sampled_from(SECRETS),
    st.binary(max_size=7),
    st.binary(max_size=7),
    st.booleans(),
)
def test_a_secret_inside_a_longer_base64_string_is_redacted(
    secret: str, before: bytes, after: bytes, urlsafe: bool
) -> None:
    raw = secret.encode()
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    encoded = encode(before + raw + after).decode()
    redacted = Redactor([secret]).redact(encoded)
    assert MASK in redacted
    # All but the 2 characters at each edge that mix in the neighbours' bits are gone.
    assert len(redacted) <= len(encoded) - len(raw) * 4 // 3 + 4 + len(MASK)


def test_a_basic_auth_pair_is_redacted_whatever_the_user() -> None:
    password = SECRETS[1]
    redactor = Redactor([password])  # the password alone: the pair was never registered
    for user in ("a", "ab", "abc", "ann@example.com"):
        pair = base64.b64encode(f"{user}:{password}".encode()).decode()
        assert leaked(redactor.redact(f"Authorization: Basic {pair}"), [password]) == [], user


def test_a_long_secret_compiles_and_matches_quickly_enough_to_use() -> None:
    token = "eyJhbGciOi" + "x" * 4000 + "/+="
    redactor = Redactor([token])
    assert redactor.redact(f"Bearer {token}") == "Bearer ***"


# -- redact first, then cut ---------------------------------------------------------------------


@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
def test_an_excerpt_never_shows_part_of_a_secret(secret: str) -> None:
    redactor = Redactor([secret])
    for limit in (5, 20, 40):
        for start in range(limit + 1):
            text = "x" * start + json.dumps(secret)[1:-1] + "y" * 50
            shown = excerpt(text, limit, redactor)
            assert len(shown) <= limit
            assert secret[:3] not in shown.replace("x", "").replace("y", "")


def test_an_excerpt_uses_the_active_redactor() -> None:
    with redacting(Redactor(["hunter2-secret"])):
        assert excerpt("pw: hunter2-secret and more", 12) == "pw: *** a..."
    assert excerpt("pw: hunter2-secret and more", 12) == "pw: hunte..."


def test_redact_also_extends_only_the_running_call() -> None:
    redact_also("nothing-runs")  # no active redactor: nothing to do, no error
    redactor = Redactor(["base-secret"])
    with redacting(redactor):
        redact_also("derived-form")
    assert redactor.redact("base-secret derived-form nothing-runs") == "*** *** nothing-runs"
    assert "base" not in repr(redactor)


# -- the fast path: search first, copy only what holds a secret --------------------------------


def test_a_clean_value_comes_back_as_the_same_object() -> None:
    redactor = Redactor([SECRETS[0]])
    value = {"id": 7, "name": "a" * 200, "tags": ["x", ("y", 1.5)], "nested": {"ok": None}}
    assert redactor.redact_value(value) is value
    text = "nothing to hide here, " * 20
    assert redactor.redact(text) is text


@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
def test_a_value_holding_a_secret_anywhere_is_copied_redacted(secret: str) -> None:
    redactor = Redactor([secret])
    derived = base64.b64encode(f"user:{secret}".encode()).decode()
    value = {
        "clean": "ok",
        "deep": [[[{"k": ("t", f"Basic {derived}")}]]],
        quote(secret, safe=""): 1,
        "escaped": json.dumps(secret)[1:-1],
    }
    redacted = redactor.redact_value(value)
    assert redacted is not value
    assert leaked(repr(redacted), [secret]) == []
    assert redacted["clean"] == "ok"
    assert redacted["deep"][0][0][0]["k"][0] == "t"
    assert set(redacted) == {"clean", "deep", "escaped"}  # the key holding it left out
    assert value["escaped"] == json.dumps(secret)[1:-1]  # the original is left alone


@pytest.mark.parametrize(
    "secret",
    ["k" * 8, "ab" * 5, "abcdefghi", "a1b2c3d4e5f", "é" * 8, "ß" * 8, SECRETS[2]],
    ids=["8", "10", "9", "11", "é", "ß", "long"],
)
def test_skipping_short_strings_never_skips_a_spelling(secret: str) -> None:
    # A string shorter than any spelling is not searched. Each spelling alone must
    # be redacted exactly as it is inside a text long enough to be searched.
    redactor = Redactor([secret])
    pad = "\0" * 400
    for form in sorted(spellings(secret), key=len):
        searched = redactor.redact(pad + form + pad)[len(pad) : -len(pad)]
        assert redactor.redact(form) == searched, form
        assert redactor.redact_value([form]) == [searched], form
        assert redactor.contains_secret(form) == (searched != form), form
    assert redactor.redact(secret) == MASK


def test_a_value_nested_past_the_walk_limit_is_masked_not_searched() -> None:
    redactor = Redactor(["s3cret-value"])
    deep: Any = "s3cret-value"
    for _ in range(MAX_WALK + 50):
        deep = {"k": [deep]}
    redacted = redactor.redact_value(deep)  # no RecursionError
    assert "s3cret-value" not in repr(redacted)
    walked = redacted
    for _ in range(MAX_WALK // 2):
        walked = walked["k"][0]
    assert MASK in repr(walked)


def test_a_very_deep_value_never_raises() -> None:
    redactor = Redactor(["s3cret-value"])
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    assert redactor.redact_value(deep) is not deep
    assert redactor.redact_value([deep, "a s3cret-value"])[1] == "a ***"


_PAD = "\x01" * 400  # longer than any spelling below; no secret here holds \x01


def _searched(redactor: Redactor, value: Any) -> Any:
    """What redact_value must give: every string searched whole, however short; an
    entry whose key holds a secret left out."""
    if isinstance(value, str):
        return redactor.redact(_PAD + value + _PAD)[len(_PAD) : -len(_PAD)]
    if isinstance(value, dict):
        return {
            k: _searched(redactor, v)
            for k, v in value.items()
            if _searched(redactor, k) == k  # a match is never as short as MASK: it changes k
        }
    if isinstance(value, list):
        return [_searched(redactor, item) for item in value]
    return value


_SECRET_TEXT = st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="\x01"),
    min_size=MIN_SECRET_LENGTH,
    max_size=14,
)


@settings(deadline=None)  # a new secret's pattern is compiled per example
@given(_SECRET_TEXT, st.data())
def test_the_fast_path_redacts_exactly_what_a_full_search_does(secret: str, data: Any) -> None:
    redactor = Redactor([secret])
    piece = st.sampled_from(sorted(spellings(secret))) | st.text(max_size=6).filter(
        lambda text: "\x01" not in text
    )
    strings = st.lists(piece, max_size=3).map("".join)
    scalars = strings | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
    value = data.draw(
        st.recursive(
            scalars,
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(strings, inner, max_size=3),
            max_leaves=12,
        )
    )
    expected = _searched(redactor, value)
    redacted = redactor.redact_value(value)
    assert redacted == expected
    if expected == value and "*" not in repr(value):  # a secret of '*'s masks as itself
        assert redacted is value  # clean: the very same object, no copy


def test_a_secret_of_bytes_that_are_not_utf8_is_redacted_as_sent() -> None:
    # os.environ gives such bytes as surrogates; the wire carries the bytes.
    raw = b"tok\xff\xfeen-1234"
    secret = raw.decode("utf-8", "surrogateescape")
    redactor = Redactor([secret, "\ud800lone"])  # a lone surrogate: no crash either
    sent = base64.b64encode(b"user:" + raw).decode()
    assert MASK in redactor.redact(f"Basic {sent}")
    assert redactor.redact(f"Basic {base64.b64encode(raw).decode()}") == "Basic ***"
    assert redactor.redact(f"q={quote(raw)}") == "q=***"
    assert redactor.redact(f"v={secret}") == "v=***"


# -- a secret too short to keep out of text is not taken ---------------------------------------


@pytest.mark.parametrize("length", range(1, MIN_SECRET_LENGTH))
def test_a_secret_shorter_than_the_minimum_rewrites_nothing(length: int) -> None:
    secret = "sam-open-state"[:length]
    text = '{"state": "open, assigned to sam"} ' + secret
    redactor = Redactor([secret])
    redactor.add(secret.upper())
    with redacting(redactor):
        redact_also(secret)
    assert not redactor
    assert redactor.redact(text) is text
    assert redactor.redact_value({"state": text}) == {"state": text}
    assert redactor.leak({"state": text}) is None


def test_a_secret_of_the_minimum_length_is_taken() -> None:
    secret = "s" * MIN_SECRET_LENGTH
    assert Redactor([secret]).redact(f"a {secret} b") == "a *** b"
    assert Redactor([secret[1:]]).redact(f"a {secret} b") == f"a {secret} b"


# -- any letter case ----------------------------------------------------------------------------


@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
def test_a_secret_in_another_letter_case_is_redacted_in_every_spelling(secret: str) -> None:
    redactor = Redactor([secret])
    for variant in case_variants(secret):
        for form in spellings(variant):
            if form in _base64_of(variant):
                continue  # base64 is case-sensitive: another case is other bytes, not found
            shown = redactor.redact(f"<{form}>")
            assert leaked_in_any_case(shown, [secret]) == [], (variant, form)


def _base64_of(text: str) -> set[str]:
    raw = text.encode()
    return {base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode().rstrip("=")}


@settings(deadline=None)  # a new secret's pattern is compiled per example
@given(
    st.text(
        st.characters(whitelist_categories=["Lu", "Ll", "Lt", "Nd"]), min_size=MIN_SECRET_LENGTH
    ),
    st.lists(st.booleans(), min_size=40, max_size=40),
    st.sampled_from([str, json.dumps, lambda s: quote(s, safe=""), lambda s: html.escape(s)]),
)
def test_any_mix_of_letter_cases_is_found(
    secret: str, uppers: list[bool], spell: Callable[[str], str]
) -> None:
    mixed = "".join(
        char.upper() if upper else char.lower()
        for char, upper in zip(secret, uppers * 2, strict=False)
    )
    redactor = Redactor([secret])
    assert redactor.contains_secret(spell(mixed)), mixed
    assert leaked_in_any_case(redactor.redact(f"x {spell(mixed)} y"), [secret]) == []


@pytest.mark.parametrize(
    ("secret", "echoed"),
    [
        ("straße-token-1", "STRASSE-TOKEN-1"),  # one character, two in upper case
        ("ﬁle-secret-key", "FILE-SECRET-KEY"),  # a ligature
        ("İstanbul-key-9", "i̇stanbul-key-9"),  # İ lower-cased is two code points
        ("ΟΔΥΣΣΕΥΣ-key", "οδυσσευς-key"),  # final sigma
        ("ǅemal-secret", "ǆemal-secret"),  # a title-case letter
        ("kelvin-secret", "KELVIN-SECRET"),
    ],
)
def test_unicode_case_changes_are_found(secret: str, echoed: str) -> None:
    redactor = Redactor([secret])
    assert redactor.redact(f"upstream said: {echoed}.") == "upstream said: ***."
    assert redactor.redact(f"{json.dumps(echoed)}") == '"***"'
    assert redactor.redact(quote(echoed, safe="")) == MASK


def test_a_case_folded_secret_in_bytes_is_found() -> None:
    secret = "Grüße-Token-42"
    redactor = Redactor([secret])
    for variant in case_variants(secret):
        data = b"\x89PNG\x00" + variant.encode() + b"\xff"
        assert redactor.redact_bytes(data) == b"\x89PNG\x00***\xff", variant
        assert redactor.leak(data, "data") is not None, variant


# -- wrapped base64 ---------------------------------------------------------------------------

_BREAKS = {"LF": "\n", "CRLF": "\r\n", "JSON LF": "\\n", "JSON CRLF": "\\r\\n"}


def _wrapped(encoded: str, width: int, line_break: str) -> str:
    return line_break.join(encoded[i : i + width] for i in range(0, len(encoded), width))


def _unwrapped_leaks(text: str, secret: str) -> list[str]:
    """The secret's base64 cores found in ``text`` with every line break taken out."""
    joined = re.sub(r"\r?\n|\\r\\n|\\n", "", text)
    return leaked(joined, [secret])


@pytest.mark.parametrize("line_break", sorted(_BREAKS), ids=sorted(_BREAKS))
@pytest.mark.parametrize("width", [16, 17, 30, 64, 76, 100])
@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
def test_a_secret_in_wrapped_base64_is_found_wherever_a_break_falls(
    secret: str, width: int, line_break: str
) -> None:
    redactor = Redactor([secret])
    # Every alignment of the secret's bytes (3) and every place of the break in it.
    for before in range(0, 3 * width, 1 if width <= 30 else 7):
        raw = b"\x00\xff" * 40 + bytes(range(before % 256)) + secret.encode() + b"\xfe" * 40
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = "-----BEGIN DATA-----\n" + _wrapped(
                encode(raw).decode(), width, _BREAKS[line_break]
            )
            shown = redactor.redact(text)
            assert MASK in shown, before
            assert _unwrapped_leaks(shown, secret) == [], before
            assert shown.startswith("-----BEGIN DATA-----\n")
            assert redactor.contains_secret(text)
            assert redactor.leak({"pem": text}, "output") is not None


@settings(deadline=None)  # a new secret's pattern is compiled per example
@given(st.sampled_from(SECRETS), st.binary(max_size=150), st.binary(max_size=40), st.data())
def test_wrapped_base64_is_redacted_at_any_width_and_offset(
    secret: str, before: bytes, after: bytes, data: Any
) -> None:
    width = data.draw(st.integers(min_value=16, max_value=120))
    line_break = data.draw(st.sampled_from(sorted(_BREAKS.values())))
    encoded = base64.b64encode(before + secret.encode() + after).decode()
    text = _wrapped(encoded, width, line_break)
    assert _unwrapped_leaks(Redactor([secret]).redact(text), secret) == []


def test_lines_of_wrapped_base64_around_a_secret_are_kept() -> None:
    secret = SECRETS[3]
    filler = base64.b64encode(b"\x01" * 300).decode()
    secret_part = base64.b64encode(b"\x01\x01\x01" + secret.encode() + b"\x02\x02\x02").decode()
    text = _wrapped(filler + secret_part + filler, 64, "\r\n")
    shown = Redactor([secret]).redact(text)
    assert shown.startswith(text[:200])
    assert shown.endswith(text[-200:])
    assert len(shown) < len(text)


class _Shown:
    """An object a Python tool made, shown by its ``str`` and its ``repr``."""

    def __init__(self, text: str, *, in_repr: bool = False) -> None:
        self.text, self.in_repr = text, in_repr

    def __str__(self) -> str:
        return "shown" if self.in_repr else self.text

    def __repr__(self) -> str:
        return f"_Shown({self.text!r})" if self.in_repr else "_Shown()"


# Values that are not JSON, which no JSON walk enters: each is searched where it is shown.
NOT_JSON: dict[str, Callable[[str], Any]] = {
    "bytes": lambda secret: b"\x00" + secret.encode() + b"\xff",
    "bytes-upper": lambda secret: secret.upper().encode(),
    "bytearray": lambda secret: bytearray(secret.encode()),
    "memoryview": lambda secret: memoryview(secret.encode()),
    "set": lambda secret: {"x", secret},
    "frozenset": lambda secret: frozenset([quote(secret, safe="")]),
    "exception": lambda secret: ValueError(f"bad key {secret}"),
    "object-str": lambda secret: _Shown(f"ref {secret}"),
    "object-repr": lambda secret: _Shown(secret, in_repr=True),
}


@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
@pytest.mark.parametrize("kind", sorted(NOT_JSON), ids=sorted(NOT_JSON))
def test_a_secret_in_a_value_that_is_not_json_is_found_and_masked(kind: str, secret: str) -> None:
    redactor = Redactor(named={"api-key": secret})
    value = {"items": ["ok", {"held": NOT_JSON[kind](secret)}]}
    leak = redactor.leak(value, "output")
    assert leak == Leak(where="output.items[1].held", credentials=("api-key",))
    redacted = redactor.redact_value(value)
    assert redacted["items"][0] == "ok"
    shown = repr(redacted) + json.dumps(redacted, default=str)
    assert leaked_in_any_case(shown, [secret]) == []
    assert redactor.leak(redacted) is None


@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
@pytest.mark.parametrize(
    "make_key",
    [
        pytest.param(lambda secret: secret.encode(), id="bytes"),
        pytest.param(lambda secret: ("k", secret), id="tuple"),
        pytest.param(lambda secret: _Shown(secret, in_repr=True), id="object"),
    ],
)
def test_a_key_that_is_not_text_and_holds_a_secret_is_found_and_left_out(
    make_key: Callable[[str], Any], secret: str
) -> None:
    redactor = Redactor(named={"api-key": secret})
    value = {"labels": {"ok": 1, make_key(secret): 2}}
    leak = redactor.leak(value, "output")
    assert leak == Leak(where="a key of output.labels", credentials=("api-key",))
    redacted = redactor.redact_value(value)
    assert redacted == {"labels": {"ok": 1}}


def test_a_value_that_is_not_json_and_holds_no_secret_is_left_as_it_is() -> None:
    redactor = Redactor([SECRETS[0]])
    held = [b"bytes", {"a", "b"}, ValueError("fine"), _Shown("fine")]
    value = {"items": held}
    assert redactor.leak(value, "output") is None
    assert redactor.redact_value(value) is value


# -- where an answer holds a secret ------------------------------------------------------------


def test_a_leak_names_the_place_never_the_value() -> None:
    secret = SECRETS[0]
    redactor = Redactor(named={"api-key": secret, "other": SECRETS[1]})
    value = {"a": 1, "items": [{"x": "ok"}, {"name": f"got {secret.upper()}"}]}
    leak = redactor.leak(value, "output")
    assert leak is not None
    assert leak.where == "output.items[1].name"
    assert leak.credentials == ("api-key",)
    assert leaked_in_any_case(repr(leak), [secret]) == []
    keyed = redactor.leak({"labels": {f"k-{secret}": 1}}, "output")
    assert keyed is not None
    assert keyed.where == "a key of output.labels"
    assert redactor.leak({"clean": ["nothing", {"here": 1}]}, "output") is None


def test_a_leak_of_a_derived_form_names_every_credential_of_the_redactor() -> None:
    redactor = Redactor(named={"user": "ann.user@example.test", "token": SECRETS[3]})
    with redacting(redactor):
        redact_also("sig-" + SECRETS[3][::-1])
    leak = redactor.leak(["x", "header sig-" + SECRETS[3][::-1]], "output")
    assert leak is not None
    assert leak.where == "output[1]"
    assert leak.credentials == ("token", "user")


class _Unshowable:
    """A key a Python tool may use whose ``str`` and ``repr`` raise."""

    def __str__(self) -> str:
        raise ValueError("no")

    def __repr__(self) -> str:
        raise ValueError("no")

    def __hash__(self) -> int:
        return 1


def test_a_key_that_cannot_be_shown_is_named_as_such_where_a_secret_is_found() -> None:
    token = "A1b2C3d4e5F6g7H8"
    leak = Redactor(named={"k": token}).leak({_Unshowable(): token}, "output")
    assert leak is not None
    assert leak.where == "output.<_Unshowable that cannot be shown>"


def test_a_named_tuple_holding_a_secret_is_redacted_as_a_named_tuple() -> None:
    import collections

    Pair = collections.namedtuple("Pair", "first second")
    token = "A1b2C3d4e5F6g7H8"
    redacted = Redactor(named={"k": token}).redact_value({"pair": Pair(token, 1)})
    assert redacted == {"pair": Pair("***", 1)}
    assert type(redacted["pair"]) is Pair


def test_a_released_memoryview_is_passed_over() -> None:
    token = "A1b2C3d4e5F6g7H8"
    view = memoryview(token.encode())
    view.release()
    redactor = Redactor(named={"k": token})
    assert redactor.leak({"view": view}, "output") is None
    assert redactor.redact_value({"view": view})["view"] is view
