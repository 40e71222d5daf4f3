"""``confirmtext``: what a confirmation shows of a call, through the module's own functions.

Confirmations as users meet them, and the properties over random text, are in
``test_context.py``, ``test_confirm_preview_accounting.py``,
``test_confirm_preview_recoverable.py`` and ``tests/mcp/test_confirm_preview.py``;
here the exact output of each function and the edges those leave out.
"""

from __future__ import annotations

import datetime
import json
import unicodedata
from typing import Any

import pytest

from agentkit.confirmtext import (
    MAX_ENTRIES,
    MAX_LINES,
    MAX_VALUE_CHARS,
    arguments_shown,
    invisible,
    redacted_text,
    shortened,
    visible,
)
from agentkit.redaction import Redactor, redacting
from tests.support.helpers import SECRET


def test_the_bounds_are_the_documented_ones() -> None:
    assert (MAX_VALUE_CHARS, MAX_ENTRIES, MAX_LINES) == (300, 20, 40)


# -- arguments_shown -----------------------------------------------------------------------------


def test_arguments_are_shown_as_indented_json_under_one_line() -> None:
    assert arguments_shown({"city": "Z\u00fcrich", "days": 3, "units": None}) == (
        "run with these arguments:\n"
        "{\n"
        '  "city": "Z\u00fcrich",\n'  # as written, not \u00fc
        '  "days": 3,\n'
        '  "units": null\n'
        "}"
    )


def test_no_arguments_are_shown_as_an_empty_object() -> None:
    assert arguments_shown({}) == "run with these arguments:\n{}"


def test_a_value_json_cannot_write_is_shown_as_its_text() -> None:
    shown = arguments_shown({"when": datetime.date(2026, 12, 6), "tags": ("a", "b")})
    assert json.loads(shown.partition("\n")[2]) == {"when": "2026-12-06", "tags": ["a", "b"]}


def test_arguments_shown_use_the_redact_given_for_what_they_cut() -> None:
    shown = arguments_shown({"memo": "a" * 400, "to": "b"}, redact=lambda text: text.upper())
    listed = json.loads(shown.partition("\n")[2])
    assert listed == {"memo": "A" * 300 + "\u2026 [100 more characters]", "to": "b"}


# -- shortened -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param("x" * 300, "x" * 300, id="at-the-limit-kept-whole"),
        pytest.param("x" * 301, "x" * 300 + "\u2026 [1 more characters]", id="one-over"),
        pytest.param(
            "x" * 2080, "x" * 300 + "\u2026 [1,780 more characters]", id="thousands-separated"
        ),
        pytest.param("\u00e9" * 301, "\u00e9" * 300 + "\u2026 [1 more characters]", id="unicode"),
        pytest.param("", "", id="empty"),
    ],
)
def test_a_string_is_cut_at_the_limit_saying_how_much_was_cut(value: str, shown: str) -> None:
    assert shortened(value) == shown


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(None, id="null"),
        pytest.param(True, id="true"),
        pytest.param(10**30, id="a-big-int"),
        pytest.param(2.5, id="float"),
    ],
)
def test_a_scalar_is_kept_as_it_is(value: Any) -> None:
    assert shortened(value) is value


def test_a_tuple_is_shown_as_a_list_and_other_values_as_their_text() -> None:
    assert shortened((1, "a")) == [1, "a"]
    assert shortened({"when": datetime.date(2026, 12, 6)}) == {"when": "2026-12-06"}
    assert shortened(b"x" * 400) == "b'" + "x" * 298 + "\u2026 [103 more characters]"


def test_a_list_at_the_bound_is_kept_whole_and_one_over_is_counted() -> None:
    assert shortened(list(range(MAX_ENTRIES))) == list(range(MAX_ENTRIES))
    assert shortened(list(range(MAX_ENTRIES + 1))) == [
        *range(MAX_ENTRIES),
        "\u2026 [1 more items]",
    ]


def test_a_nested_mapping_at_the_bound_is_kept_whole_and_one_over_is_counted() -> None:
    whole = {f"k{n}": n for n in range(MAX_ENTRIES)}
    assert shortened({"nested": whole}) == {"nested": whole}
    over = {f"k{n}": n for n in range(MAX_ENTRIES + 1)}
    assert shortened({"nested": over}) == {"nested": {**whole, "\u2026": "[1 more entries]"}}


def test_nested_values_are_cut_at_every_level() -> None:
    value = {"a": [{"b": ["y" * 400]}]}
    assert shortened(value, limit=5) == {"a": [{"b": ["yyyyy\u2026 [395 more characters]"]}]}


def test_keys_alike_once_shown_are_numbered_from_two() -> None:
    assert shortened({1: "number", "1": "text", "x" * 12: "a", "x" * 11 + "y": "b"}, limit=10) == {
        "1": "number",
        "1 [another key shown alike, #2]": "text",
        "xxxxxxxxxx\u2026 [2 more characters]": "a",
        "xxxxxxxxxx\u2026 [2 more characters] [another key shown alike, #2]": "b",
    }


def test_a_key_that_looks_like_a_note_does_not_take_an_entrys_place() -> None:
    shown = shortened({"1": "first", "1 [another key shown alike, #2]": "second", 1: "third"})
    assert sorted(shown.values()) == ["first", "second", "third"]
    assert shown["1 [another key shown alike, #3]"] == "third"


def test_only_what_is_cut_is_redacted_and_while_it_is_whole() -> None:
    seen: list[str] = []

    def redact(text: str) -> str:
        seen.append(text)
        return text.replace(SECRET, "***")

    short = f"k {SECRET}"
    long = "p" * 295 + SECRET + "q" * 10
    assert shortened([short, long], redact=redact) == [
        short,  # the confirmation itself is redacted whole, later
        "p" * 295 + "***" + "q" * 2 + "\u2026 [8 more characters]",
    ]
    assert seen == [long]


def test_a_text_redacted_within_the_limit_is_shown_whole() -> None:
    long = "p" * 290 + SECRET  # 309 characters; 293 once redacted
    assert shortened(long, redact=lambda text: text.replace(SECRET, "***")) == "p" * 290 + "***"


def test_the_active_redactor_redacts_by_default() -> None:
    with redacting(Redactor([SECRET])):
        assert shortened("p" * 298 + SECRET) == "p" * 298 + "**\u2026 [1 more characters]"
    outside = shortened("p" * 298 + SECRET)  # outside a call: nothing to redact
    assert outside == "p" * 298 + SECRET[:2] + f"\u2026 [{len(SECRET) - 2} more characters]"


# -- redacted_text -------------------------------------------------------------------------------


def test_redacted_text_is_the_text_itself_outside_a_call() -> None:
    text = f"token {SECRET}"
    assert redacted_text(text) is text


def test_redacted_text_uses_the_calls_redactor() -> None:
    with redacting(Redactor([SECRET])):
        assert redacted_text(f"token {SECRET}, again {SECRET}") == "token ***, again ***"
        assert redacted_text("") == ""


# -- invisible and visible -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "char",
    [
        pytest.param("\t", id="tab"),
        pytest.param("\r", id="carriage-return"),
        pytest.param("\u00a0", id="no-break-space"),
        pytest.param("\u3000", id="ideographic-space"),
        pytest.param("\u00ad", id="soft-hyphen"),
        pytest.param("\u2060", id="word-joiner"),
        pytest.param("\ufeff", id="byte-order-mark"),
        pytest.param("\ufe0f", id="variation-selector"),
        pytest.param("\U000e0100", id="variation-selector-supplement"),
        pytest.param("\u3164", id="hangul-filler"),
        pytest.param("\u2800", id="braille-blank"),
        pytest.param("\ue000", id="private-use"),
        pytest.param("\U0010fffd", id="supplementary-private-use"),
        pytest.param("\u0378", id="unassigned"),
        pytest.param("\ud800", id="lone-surrogate"),
        pytest.param("\u0301", id="combining-mark-alone"),
    ],
)
def test_a_character_that_could_hide_what_follows_is_invisible(char: str) -> None:
    assert invisible(char)


@pytest.mark.parametrize(
    "char",
    [
        pytest.param("\n", id="line-feed"),
        pytest.param(" ", id="space"),
        pytest.param("a", id="letter"),
        pytest.param("\u05e9", id="hebrew-letter"),
        pytest.param("\u4e2d", id="cjk"),
        pytest.param("\U0001f600", id="emoji"),
        pytest.param("\u2603", id="symbol"),
    ],
)
def test_a_character_drawn_as_itself_is_not_invisible(char: str) -> None:
    assert not invisible(char)


@pytest.mark.parametrize(
    ("after", "hidden"),
    [
        pytest.param("e", False, id="on-a-letter"),
        pytest.param("\u4e2d", False, id="on-cjk"),
        pytest.param("", True, id="on-nothing"),
        pytest.param(" ", True, id="on-a-space"),
        pytest.param("\t", True, id="on-a-tab"),
        pytest.param("\u200b", True, id="on-a-spelled-out-character"),
        pytest.param("\u3164", True, id="on-a-filler"),
    ],
)
def test_a_combining_mark_is_invisible_only_with_nothing_to_combine_with(
    after: str, hidden: bool
) -> None:
    assert invisible("\u0301", after=after) is hidden
    assert invisible("\u20dd", after=after) is hidden  # an enclosing mark (Me)


def test_visible_returns_printable_ascii_as_it_is() -> None:
    text = "plain ASCII, no tricks: ~!@#$%^&*()"
    assert visible(text) is text
    assert visible("") == ""


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param("line\nnext", "line\nnext", id="line-feed-kept"),
        pytest.param("a\u200b\u0301", "a\\u200b\\u0301", id="mark-after-a-spelled-character"),
        pytest.param("\u0301\u0302x", "\\u0301\\u0302x", id="marks-at-the-start"),
        pytest.param("e\u0323\u0302", "e\u0323\u0302", id="stacked-marks-on-a-letter"),
        pytest.param(" \u0301", " \\u0301", id="mark-on-a-space"),
        pytest.param("\u05e9\u05dc\u05d5\u05dd", "\u05e9\u05dc\u05d5\u05dd", id="rtl-letters"),
        pytest.param("\U0001f600!", "\U0001f600!", id="emoji"),
        pytest.param("\U0001f44d\U0001f3fd", "\U0001f44d\U0001f3fd", id="skin-tone"),
        pytest.param("\u2764\ufe0f", "\u2764\\ufe0f", id="emoji-presentation-selector"),
        pytest.param("\U000f0000", "\\U000f0000", id="astral-private-use-eight-digits"),
        pytest.param("a\u00a0b", "a\\u00a0b", id="no-break-space"),
    ],
)
def test_visible_spells_out_exactly_the_invisible(text: str, shown: str) -> None:
    assert visible(text) == shown


def test_visible_spells_every_hidden_category_in_lowercase_hex() -> None:
    for char in ("\u202e", "\u2028", "\x00", "\U000e007f"):
        spelled = visible(char)
        assert spelled[2:].lower() == spelled[2:]
        assert int(spelled[2:], 16) == ord(char)
        assert unicodedata.category(char) in {"Cf", "Zl", "Cc"}
