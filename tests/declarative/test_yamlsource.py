"""yamlsource: located values, and the same values PyYAML's safe loader gives."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
import yaml
from hypothesis import assume, given
from hypothesis import strategies as st

from agentkit.declarative import yamlcomposer
from agentkit.declarative.yamlscalars import Loader
from agentkit.declarative.yamlsource import (
    MAX_DEPTH,
    MAX_NUMBER_CHARS,
    LocatedDict,
    SharedValues,
    locate,
    read_documents,
)

# Scalars as YAML writes them plain: numbers, booleans, nulls, dates, words.
PLAIN = st.one_of(
    st.sampled_from(
        [
            "",
            "~",
            "null",
            "Null",
            "true",
            "No",
            "yes",
            "on",
            ".inf",
            "-.NaN",
            "0x1F",
            "0o17",
            "1_000",
            "+1",
            "1e3",
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "1:30",
            "-190:20:30.15",
            "<<",
            "=",
        ]
    ),
    st.from_regex(r"[A-Za-z0-9._+-]{1,12}", fullmatch=True),
)


STR = "tag:yaml.org,2002:str"


@given(PLAIN)
def test_the_resolver_agrees_with_pyyaml_but_dates_and_base_60_stay_strings(value: str) -> None:
    loader = Loader("")
    try:
        theirs = yaml.SafeLoader.resolve(loader, yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
        if theirs.endswith(":timestamp") or (":" in value and theirs.endswith(("int", "float"))):
            theirs = STR
        assert loader.resolve(yaml.ScalarNode, value, (True, False)) == theirs
        assert loader.resolve(yaml.ScalarNode, value, (False, True)) == STR
    finally:
        loader.dispose()


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(alphabet="abc xyz-_:", max_size=8)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet="abcdef", min_size=1, max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(VALUES)
def test_documents_read_as_safe_load_reads_them(value: Any) -> None:
    text = yaml.safe_dump({"root": value})
    documents, problems = read_documents(text)
    assert problems == []
    assert documents[0][0] == yaml.safe_load(text)


def test_positions_point_at_values() -> None:
    (document, start), *_ = read_documents("name: a\nnested:\n  list:\n    - 1\n    - {k: v}\n")[0]
    assert start == (1, 1)
    assert isinstance(document, LocatedDict)
    assert locate(document, ("nested", "list", 1, "k"), start) == (5, 11)
    assert locate(document, ("nested", "missing"), start) == (3, 3)


def test_aliases_share_one_object() -> None:
    ((document, _),) = read_documents("a: &x [1, 2]\nb: *x\n")[0]
    assert document["a"] is document["b"]


def problem_messages(text: str) -> list[str]:
    return [f"{p.line}:{p.column}: {p.message}" for p in read_documents(text)[1]]


def test_a_problem_inside_an_anchor_is_reported_once_however_often_it_is_aliased() -> None:
    text = "a: &m {k: 1, k: 2}\nb: [" + ", ".join(["*m"] * 1000) + "]\n"
    assert problem_messages(text) == ["1:14: duplicate key 'k' (first given on line 1)"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a: &a [1, 2]\nb: [*a, *a]\n", None, id="within"),
        pytest.param("a: &a [1, 2]\nb: [*a, *a, *a]\n", "2:13", id="nodes"),
        pytest.param("a: &a abcdefghij\nb: [*a, *a]\n", "2:9", id="characters"),
        pytest.param("a: &a [&b xxxxxxxxxx]\nb: *b\nc: *a\n", "3:4", id="nested-anchor"),
    ],
)
def test_aliases_count_as_everything_they_repeat(
    monkeypatch: pytest.MonkeyPatch, text: str, expected: str | None
) -> None:
    monkeypatch.setattr(yamlcomposer, "MAX_EXPANDED_NODES", 13)
    monkeypatch.setattr(yamlcomposer, "MAX_EXPANDED_CHARS", 25)
    found = problem_messages(text)
    if expected is None:
        assert found == []
    else:
        (problem,) = found
        assert problem.startswith(f"{expected}: this document holds more than 13 values or 25")


def test_a_refused_document_does_not_stop_the_next() -> None:
    documents, problems = read_documents("a: *nowhere\n---\nname: ok\n")
    assert [document for document, _ in documents] == [{"name": "ok"}]
    assert [(p.line, p.column) for p in problems] == [(1, 4)]


def test_nesting_is_allowed_to_the_limit_and_refused_past_it() -> None:
    def nested(levels: int) -> str:
        return "[" * levels + "]" * levels

    assert problem_messages(nested(MAX_DEPTH)) == []
    (problem,) = problem_messages(nested(MAX_DEPTH + 1))
    assert (
        problem
        == f"1:{MAX_DEPTH + 1}: values are nested more than {MAX_DEPTH} levels deep; flatten the definition"
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("0x1F", 31, id="hex"),
        pytest.param("-0x10", -16, id="negative-hex"),
        pytest.param("0b101", 5, id="binary"),
        pytest.param("012", 10, id="octal"),
        pytest.param("1_000", 1000, id="underscores"),
        pytest.param("+1", 1, id="plus"),
        pytest.param("1.5e+3", 1500.0, id="exponent"),
        pytest.param("-.inf", float("-inf"), id="infinity"),
        pytest.param("1e3", "1e3", id="yaml-1.1-exponent-needs-a-sign"),
        pytest.param("1:30", "1:30", id="base-60"),
        pytest.param("-1:30:00.5", "-1:30:00.5", id="base-60-float"),
        pytest.param("2024-01-01", "2024-01-01", id="date"),
        pytest.param("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00", id="time"),
        pytest.param("9" * MAX_NUMBER_CHARS, int("9" * MAX_NUMBER_CHARS), id="longest-number"),
        pytest.param("! 12", "12", id="non-specific-tag"),
        pytest.param("!!str 12", "12", id="str-tag"),
        pytest.param("!!int '12'", 12, id="int-tag"),
        pytest.param("!!float 1", 1.0, id="float-tag"),
        pytest.param("!!bool yes", True, id="bool-tag"),
        pytest.param("!!null ''", None, id="null-tag"),
        pytest.param("!!seq [1]", [1], id="seq-tag"),
        pytest.param("!!map {a: 1}", {"a": 1}, id="map-tag"),
    ],
)
def test_scalars_read_as_json_values(text: str, value: Any) -> None:
    ((document, _),), problems = read_documents(f"v: {text}\n")
    assert problems == []
    assert document["v"] == value
    assert isinstance(document["v"], type(value))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("9" * (MAX_NUMBER_CHARS + 1), "an integer of 101 characters", id="int"),
        pytest.param("0." + "5" * MAX_NUMBER_CHARS, "a number of 102 characters", id="float"),
        pytest.param("!!int 1:30", "'1:30' is a YAML 1.1 base-60 number", id="base-60"),
        pytest.param("!!int 0xZZ", "'0xZZ' is not an integer", id="bad-int"),
        pytest.param("!!float abc", "'abc' is not a number", id="bad-float"),
        pytest.param("!!bool maybe", "'maybe' is not true or false", id="bad-bool"),
        pytest.param("!!binary aGk=", "the tag '!!binary' is not supported", id="binary"),
        pytest.param("!foo " + "x" * 1000, "the tag '!foo' is not supported", id="custom"),
        pytest.param("!" + "t" * 1000 + " x", "the tag '!tttttttt", id="long-tag"),
    ],
)
def test_scalars_that_are_not_json_values_are_located_problems(text: str, message: str) -> None:
    (problem,) = problem_messages(f"v: {text}\n")
    assert problem.startswith(f"1:4: {message}"), problem
    assert len(problem) < 300


PURE_PYTHON_CHECK = """
import json, sys, yaml
del yaml.CSafeLoader  # as on a system without libyaml
from agentkit.declarative.yamlscalars import _BaseLoader
from agentkit.declarative.yamlsource import read_documents
assert _BaseLoader is yaml.SafeLoader
print(json.dumps([[[p.line, p.column] for p in read_documents(t)[1]] for t in json.load(sys.stdin)]))
"""


def test_the_pure_python_parser_is_bounded_and_located_too() -> None:
    # Without libyaml the reader raises on construction, and nothing caps nesting
    # but ours. (PyYAML's pure-Python scanner is itself slow on deep flow nesting,
    # about 3 s for 2,000 levels, before any value is built: libyaml is not.)
    texts = ["[" * 500 + "]" * 500, "a: \x00\n", "- " * 100_000 + "x", "a: !!set {}\n"]
    result = subprocess.run(
        [sys.executable, "-c", PURE_PYTHON_CHECK],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(result.stdout) == [[[1, 65]], [[1, 4]], [[1, 129]], [[1, 4]]]


def test_a_plain_scalar_read_again_is_the_same_value_and_a_quoted_one_a_string() -> None:
    text = "a: true\nb: 'true'\nc: true\nd: '1'\ne: 1\nf: [1, '1', 1.5, null, x, x]\n"
    documents, problems = read_documents(text)
    assert problems == []
    assert documents[0][0] == yaml.safe_load(text)
    assert documents[0][0] == {
        "a": True,
        "b": "true",
        "c": True,
        "d": "1",
        "e": 1,
        "f": [1, "1", 1.5, None, "x", "x"],
    }


def test_a_scalar_with_a_problem_is_reported_each_time_it_is_written() -> None:
    long = "1" * (MAX_NUMBER_CHARS + 1)
    problems = problem_messages(f"a: {long}\nb: {long}\n")
    assert [problem.split(":")[0] for problem in problems] == ["1", "2"]


def test_files_read_with_one_shared_table_read_as_each_would_alone() -> None:
    shared = SharedValues()
    texts = [
        "a: true\nb: 1\nc: [x, '5', 1:30, <<]\n",
        "a: 'true'\nb: '1'\nc: [x, 5, 1:30, <<]\n<<: 2\nd: {true: 1, True: 2}\n",
        "- *x\n",
        "k: {a: 1, a: 2}\n",
    ]
    for text in texts:
        together, alone = read_documents(text, shared), read_documents(text)
        assert together == alone
        assert [d.positions for d, _ in together[0]] == [d.positions for d, _ in alone[0]]
    long = "1" * (MAX_NUMBER_CHARS + 1)
    for _ in range(2):
        (problem,) = read_documents(f"a: {long}\n", shared)[1]
        assert problem.message.startswith("an integer of 101 characters")


def test_a_shared_table_keeps_only_short_texts() -> None:
    shared = SharedValues()
    long_word = "w" * 200
    read_documents(f"a: {long_word}\nb: '{long_word}'\nc: short\n", shared)
    assert long_word not in shared.plain
    assert long_word not in shared.strings
    assert shared.plain["short"] == "short"


def plain(value: Any) -> bool:
    """True when every mapping and list in ``value`` is a plain ``dict`` or ``list``."""
    if isinstance(value, dict):
        return type(value) is dict and all(plain(item) for item in value.values())
    if isinstance(value, list):
        return type(value) is list and all(plain(item) for item in value)
    return True


@given(VALUES)
def test_documents_read_unlocated_are_the_located_ones_as_plain_values(value: Any) -> None:
    text = yaml.safe_dump({"root": value, "again": [value, {"k": value}]})
    unlocated, located = read_documents(text, located=False), read_documents(text)
    assert unlocated == located
    assert all(plain(document) for document, _ in unlocated[0])


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a: 1\nb: {k: 1, k: 2}\n", id="duplicate-key"),
        pytest.param("a: 1\n\nb: [1, {x: 1, x: 2}]\n---\nc: 2\n", id="duplicate-in-list"),
        pytest.param("a: &x 1\nb: &x 2\n", id="anchor-twice"),
        pytest.param("a: *nowhere\n---\nname: ok\n", id="undefined-alias"),
        pytest.param("a: !!binary aGk=\nb: [1, 2]: 3\n", id="tag-and-syntax"),
        pytest.param("a:\n  ? [1]\n  : 2\n", id="container-key"),
        pytest.param("a: 1:30\nb: <<\n<<: {c: 1}\n", id="base-60-and-merge"),
        pytest.param("- " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n", id="deep"),
    ],
)
def test_problems_read_unlocated_are_the_located_ones(text: str) -> None:
    unlocated, located = read_documents(text, located=False), read_documents(text)
    assert unlocated[1]
    assert unlocated == located
    assert [d.positions for d, _ in unlocated[0]] == [d.positions for d, _ in located[0]]


@given(st.one_of(PLAIN, st.from_regex(r"[A-Za-z][A-Za-z0-9 ._-]{0,80}", fullmatch=True)))
def test_a_plain_scalar_reads_the_same_inline_as_through_the_resolver(text: str) -> None:
    # An anchor sends a scalar the long way (_scalar and the resolver); without, the
    # reading loop decides inline. Both ways, first seen and seen before.
    text = text.strip()
    assume(text)  # an empty key is no plain scalar to compare
    shared = SharedValues()
    for _ in range(2):
        for written, with_anchor in (
            (f"a: {text}\n", f"a: &x {text}\n"),
            (f"{text}: 1\n", f"&x {text}: 1\n"),
        ):
            inline = read_documents(written, shared)
            anchored = read_documents(with_anchor)
            assert inline[0] == anchored[0]
            assert [p.message for p in inline[1]] == [p.message for p in anchored[1]]
