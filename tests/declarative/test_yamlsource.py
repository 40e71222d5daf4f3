"""yamlsource: located values, and the same values PyYAML's safe loader gives."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from agentkit.declarative.yamlsource import LocatedDict, _Loader, locate, read_documents

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
    loader = _Loader("")
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
