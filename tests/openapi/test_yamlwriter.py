"""``yamlwriter.Writer``: the text libyaml's emitter writes, value by value.

Each case is written by the writer and by PyYAML with libyaml's emitter and the
import's options (``emit.OPTIONS``), and the two texts must be the same.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit.openapi.emit import OPTIONS, dump, libyaml_dump
from agentkit.openapi.yamlwriter import Writer

pytestmark = pytest.mark.skipif(
    not hasattr(yaml, "CSafeDumper"), reason="the reference is libyaml's emitter"
)


def libyaml(document: Any) -> str:
    text: str = yaml.dump(document, Dumper=yaml.CSafeDumper, **OPTIONS)
    return text


LONG = "a word " * 40
CASES = [
    pytest.param({"name": "get_issue", "n": 1, "ok": True, "none": None}, id="flat"),
    pytest.param(
        {"strings": ["true", "yes", "~", "null", "", "1", "0x1f", "1:30", "1e3"]}, id="typed"
    ),
    pytest.param(
        {"x": ["a: b", "- x", "# c", "a #b", "a# b", "{{ inputs.id }}", "*a", "&a"]},
        id="indicators",
    ),
    pytest.param(
        {"x": ["?", "? a", "?a", ":", ": a", ":a", "-", "- a", "-a", "--- a", "...a"]}, id="leading"
    ),
    pytest.param(
        {"x": ["a,b", "a[b]", "a{b}", "a:b", "a: b", "a:", "it's", 'say "hi"']}, id="inside"
    ),
    pytest.param(
        {"x": [" lead", "trail ", "tab\there", "x\ny", "x\n\ny", "\nx", "x\n", "x \ny"]},
        id="spaces-breaks",
    ),
    pytest.param(
        {"x": ["x\n y", "\r", "\x85", "\u2028a", "a\u2029", "\x00", "\x07\x1b\x7f"]},
        id="breaks-controls",
    ),
    pytest.param(
        {"x": ["é", "\xa0", "\ufeff", "\ufffe", "\U0001f6a7 road", "\ue000", "\\"]}, id="unicode"
    ),
    pytest.param(
        {"floats": [1.5, -0.0, 1e20, 1e-7, float("inf"), float("-inf"), float("nan")]}, id="floats"
    ),
    pytest.param({"z": 0.0, "n": -0.0, "list": [-0.0, 0.0, 0, False]}, id="zeros"),
    pytest.param({"ints": [0, -1, 10**30], 404: "code", 5: {"a": 1}}, id="integer-keys"),
    pytest.param({"empty": {}, "none": [], "deep": [[1], {"x": {}}, [[]], [{}]]}, id="empty"),
    pytest.param({"plain": LONG, "quoted": LONG + ": x", "double": LONG + "\t"}, id="long"),
    pytest.param(
        {"map": {"description": LONG, "name": "n", "other": LONG + ", more"}}, id="long-in-mapping"
    ),
    pytest.param(
        {"list": [LONG, LONG + "#", {"k": LONG}], "spaces": "a  " * 60 + "b"}, id="long-items"
    ),
    pytest.param(
        {"k" * 129: 1, "é" * 65: 2, "é" * 64: 3, "line\nbreak": [1, 2]},
        id="long-and-multiline-keys",
    ),
    pytest.param(
        {"a": {"k" * 130: {"b": [1]}}, "f": {"x\ny": 1, "y": 2}}, id="complex-keys-nested"
    ),
    pytest.param(
        {"q": "'" * 70 + " " + "'" * 70, "w": "x " + "y" * 130}, id="quotes-and-one-long-word"
    ),
    pytest.param([{"a": 1}, "b", [1, [2, [3]]]], id="top-level-list"),
    pytest.param({"a": [[{"b": [[{"c": "d"}]]}]]}, id="lists-in-lists"),
    pytest.param(
        {"q": {"x": "{{ inputs.x }} " * 30, "y": ["{% if a %}" + LONG + "{% endif %}"]}},
        id="long-templates",
    ),
]


@pytest.mark.parametrize("document", CASES)
def test_the_writer_writes_what_libyaml_writes(document: Any) -> None:
    assert Writer().dump(document) == libyaml(document)
    assert dump(document) == libyaml(document)


_TEXT = st.text(
    alphabet=st.sampled_from(
        [*"ab -:#?,[]{}&*!|>'\"%@`.\t\n\r\\0", "\x85", "\u2028", "é", "\U0001f6a7", "\x00"]
    ),
    max_size=12,
) | st.builds(
    lambda word, count: (word + " ") * count,
    st.sampled_from(["ab", "a:", "'x", "#"]),
    st.integers(0, 80),
)
_SCALARS = _TEXT | st.integers(-(10**20), 10**20) | st.booleans() | st.none() | st.floats()
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(_TEXT | st.integers(0, 600), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_TEXT, _VALUES, min_size=1, max_size=5))
def test_any_document_of_plain_values_is_written_as_libyaml_writes_it(document: Any) -> None:
    assert Writer().dump(document) == libyaml(document)


def test_a_value_shared_in_and_between_documents_is_written_out_each_time() -> None:
    """A collection met again is written from its kept text, and that text is what
    writing it out again gives, wherever it is met."""
    params = [
        {"name": "id", "type": "string", "description": LONG},
        {"name": "n", "type": "integer"},
    ]
    nested = {"type": "dictionary", "parameters": params}
    documents = [
        {"a": nested, "b": [nested, {"x": nested}], "c": params, "d": [params, [params]]},
        {"deeper": {"still": [nested, params]}, "same": nested},
        {"list": [[nested]], "again": nested},
    ]
    writer = Writer()
    for document in documents:
        text = writer.dump(document)
        assert text == libyaml_dump(document)
        assert "&" not in text
        assert "*" not in text
    assert writer.replayed > 0


def test_a_value_of_another_type_is_left_to_pyyaml() -> None:
    document = {"when": datetime.date(2024, 1, 31), "name": "x"}
    assert Writer().dump(document) is None
    assert dump(document) == libyaml_dump(document)
    assert dump(document) == libyaml(document)
