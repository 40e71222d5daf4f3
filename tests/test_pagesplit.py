"""The measure a budget counts: compact UTF-8 JSON, told quickly when well within."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit.pagesplit import fits, size_of

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8")),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=30,
)


@given(value=st.dictionaries(st.text(), JSON_VALUES), budget=st.integers(0, 2000))
def test_the_quick_measure_agrees_with_the_exact_one(value: dict[str, Any], budget: int) -> None:
    assert fits(value, budget) == (size_of(value) <= budget)


@pytest.mark.parametrize(
    "text",
    ['"' * 500, "\x01" * 500, "\\" * 500, "é" * 500, "\u200b" * 500, "🙂" * 500, "\x7f" * 500],
    ids=["quotes", "controls", "backslashes", "accents", "zero-width", "astral", "delete"],
)
def test_the_quick_measure_never_undercounts_the_worst_strings(text: str) -> None:
    value = {"text": text}
    exact = size_of(value)
    assert fits(value, exact)
    assert not fits(value, exact - 1)
