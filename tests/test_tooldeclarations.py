"""``tooldeclarations``: what a ``Tool`` class declares, checked one declaration at a time.

Each check returns the value read (read-only) and appends what is wrong to a list of
problems; ``refuse`` raises them together. The class-level messages, as a tool's
author meets them, are in ``test_tool.py`` and ``test_chapter.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from agentkit.paging import CONTINUATION
from agentkit.tooldeclarations import (
    ANNOTATION_KEYS,
    adopt_lowercase_declarations,
    check_annotations,
    check_credential_names,
    check_tags,
    compile_schema,
    refuse,
    with_continuation,
)
from agentkit.toolerrors import SchemaDefinitionError, SemanticError
from agentkit.toolschema import FREE_FORM, ToolSchema

CITY = {"parameters": [{"name": "city", "type": "string"}]}


# -- with_continuation ---------------------------------------------------------------------------


def test_a_paged_tool_takes_an_optional_sensitive_continuation_last() -> None:
    problems: list[str] = []
    schema = with_continuation(ToolSchema.from_dict(CITY), problems)
    assert problems == []
    assert schema.names == ("city", CONTINUATION)
    taken = schema[CONTINUATION]
    assert taken.type == "string"
    assert taken.required is False
    assert taken.sensitive is True  # whoever holds it may read the rest of the answer
    assert "next page" in taken.description
    assert schema.check({"city": "Oslo", CONTINUATION: "c1"}).problems == ()
    assert schema.check({"city": "Oslo"}).problems == ()


def test_a_free_form_schema_is_left_as_it_is() -> None:
    problems: list[str] = []
    assert with_continuation(FREE_FORM, problems) is FREE_FORM
    assert problems == []


def test_a_schema_declaring_the_continuation_itself_is_told_to_rename_it() -> None:
    declared = ToolSchema.from_dict(
        {"parameters": [{"name": CONTINUATION, "type": "integer", "required": False}]}
    )
    problems: list[str] = []
    assert with_continuation(declared, problems) is declared
    assert problems == [
        "INPUT_SCHEMA declares 'continuation', the argument a tool with MAX_OUTPUT takes "
        "to fetch the next page of an answer: rename the parameter"
    ]


def test_an_empty_schema_takes_only_the_continuation() -> None:
    schema = with_continuation(ToolSchema([]), [])
    assert schema.names == (CONTINUATION,)


# -- refuse --------------------------------------------------------------------------------------


def test_refuse_raises_nothing_without_problems() -> None:
    refuse("Tool 'x' is invalid", [])


def test_refuse_lists_every_problem_under_its_subject() -> None:
    with pytest.raises(SemanticError) as info:
        refuse("Tool 'x' (m.X) is invalid", ["first thing", "second thing"])
    assert str(info.value) == "Tool 'x' (m.X) is invalid:\n  - first thing\n  - second thing"


# -- compile_schema ------------------------------------------------------------------------------


def test_no_schema_is_free_form_and_a_compiled_one_is_kept() -> None:
    assert compile_schema(None, "Tool 'x' INPUT_SCHEMA") is FREE_FORM
    compiled = ToolSchema.from_dict(CITY)
    assert compile_schema(compiled, "Tool 'x' INPUT_SCHEMA") is compiled
    assert compile_schema(CITY, "Tool 'x' INPUT_SCHEMA").names == ("city",)


def test_a_wrong_schema_is_attributed_to_its_owner_with_every_problem() -> None:
    definition = {
        "parameters": [{"name": "city", "type": "strng"}, {"name": "days", "type": "int"}]
    }
    with pytest.raises(SchemaDefinitionError) as info:
        compile_schema(definition, "Tool 'weather' (m.Weather) INPUT_SCHEMA")
    error = info.value
    assert error.owner == "Tool 'weather' (m.Weather) INPUT_SCHEMA"
    assert [problem.path for problem in error.problems] == [
        "parameters[0].type",
        "parameters[1].type",
    ]
    assert str(error).startswith("Tool 'weather' (m.Weather) INPUT_SCHEMA is invalid:\n  - ")
    assert "(did you mean 'string'?)" in str(error)
    assert "(did you mean 'integer'?)" in str(error)
    assert isinstance(error.__cause__, SchemaDefinitionError)  # the unattributed original


class _Unreadable(Mapping[str, Any]):
    """A definition object that fails while it is read."""

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        raise OSError("the schema store is offline")

    def __len__(self) -> int:
        return 1


def test_a_definition_that_fails_to_be_read_is_a_schema_problem_naming_the_cause() -> None:
    with pytest.raises(SchemaDefinitionError) as info:
        compile_schema(_Unreadable(), "Tool 'x' OUTPUT_SCHEMA")
    assert str(info.value) == (
        "Tool 'x' OUTPUT_SCHEMA is invalid:\n"
        "  - could not be read: OSError: the schema store is offline"
    )
    assert isinstance(info.value.__cause__, OSError)


# -- check_tags ----------------------------------------------------------------------------------


def test_tags_are_a_read_only_copy() -> None:
    given = {"domain": "maps", "\u00e9quipe": "g\u00e9o"}
    problems: list[str] = []
    tags = check_tags(given, problems, "TOOL_TAGS")
    assert problems == []
    assert tags == given
    given["domain"] = "changed"  # the caller's dict changes; the tool's tags do not
    assert tags["domain"] == "maps"
    with pytest.raises(TypeError):
        tags["domain"] = "x"  # type: ignore[index]


@pytest.mark.parametrize(
    ("tags", "shown"),
    [
        pytest.param({"a": 1}, "{'a': 1}", id="a-number-value"),
        pytest.param({1: "a"}, "{1: 'a'}", id="a-number-key"),
        pytest.param(["a"], "['a']", id="a-list"),
        pytest.param("a=b", "'a=b'", id="a-string"),
        pytest.param(None, "None", id="none"),
    ],
)
def test_tags_that_are_no_mapping_of_strings_are_a_problem(tags: Any, shown: str) -> None:
    problems: list[str] = []
    assert check_tags(tags, problems, "tags") == {}
    assert problems == [f"tags must map strings to strings, got {shown}"]


def test_a_long_value_in_a_problem_is_cut_at_80_characters() -> None:
    problems: list[str] = []
    check_tags({"k": ["v" * 500]}, problems, "TOOL_TAGS")
    [problem] = problems
    shown = problem.removeprefix("TOOL_TAGS must map strings to strings, got ")
    assert shown == repr({"k": ["v" * 500]})[:77] + "..."
    assert len(shown) == 80


# -- check_credential_names ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "names",
    [
        pytest.param(["maps-key", "geo-key"], id="list"),
        pytest.param(("maps-key", "geo-key"), id="tuple"),
    ],
)
def test_credential_names_are_read_as_a_tuple_in_order(names: Any) -> None:
    problems: list[str] = []
    assert check_credential_names(names, problems, "CREDENTIAL_NAMES") == ("maps-key", "geo-key")
    assert problems == []


def test_no_credential_names_are_an_empty_tuple() -> None:
    problems: list[str] = []
    assert check_credential_names([], problems, "CREDENTIAL_NAMES") == ()
    assert problems == []


@pytest.mark.parametrize(
    ("names", "problem"),
    [
        pytest.param(
            "maps-key",
            "CREDENTIAL_NAMES must be a list of credential names, got 'maps-key' "
            "(write ['maps-key'])",
            id="a-string-says-how-to-write-it",
        ),
        pytest.param(
            b"maps-key",
            "CREDENTIAL_NAMES must be a list of credential names, got b'maps-key'",
            id="bytes",
        ),
        pytest.param(
            {"maps-key": "v"},
            "CREDENTIAL_NAMES must be a list of credential names, got {'maps-key': 'v'}",
            id="a-mapping",
        ),
        pytest.param(
            None, "CREDENTIAL_NAMES must be a list of credential names, got None", id="none"
        ),
        pytest.param(
            ["a", None],
            "CREDENTIAL_NAMES must hold non-empty strings, got ['a', None]",
            id="none-inside",
        ),
        pytest.param(
            ["a", ""], "CREDENTIAL_NAMES must hold non-empty strings, got ['a', '']", id="empty"
        ),
    ],
)
def test_wrong_credential_names_are_a_problem_and_read_as_none(names: Any, problem: str) -> None:
    problems: list[str] = []
    assert check_credential_names(names, problems, "CREDENTIAL_NAMES") == ()
    assert problems == [problem]


def test_a_credential_named_twice_is_a_problem_naming_the_list() -> None:
    problems: list[str] = []
    check_credential_names(["a", "b", "a"], problems, "credential_names")
    assert problems == ["credential_names lists a credential twice: ['a', 'b', 'a']"]


# -- check_annotations ---------------------------------------------------------------------------


def test_every_annotation_key_is_taken_and_kept_read_only() -> None:
    given = {
        "title": "Weather \u2600",
        "read_only": True,
        "destructive": False,
        "idempotent": True,
        "open_world": False,
    }
    assert tuple(given) == ANNOTATION_KEYS
    problems: list[str] = []
    annotations = check_annotations(given, problems)
    assert problems == []
    assert annotations == given
    given["read_only"] = False
    assert annotations["read_only"] is True
    with pytest.raises(TypeError):
        annotations["title"] = "x"  # type: ignore[index]


def test_every_wrong_annotation_is_a_problem_of_its_own() -> None:
    problems: list[str] = []
    check_annotations(
        {"readOnly": True, "title": None, "idempotent": "yes", "destructive": 1, 7: True},
        problems,
    )
    keys = "the keys are: title, read_only, destructive, idempotent, open_world"
    assert problems == [
        f"TOOL_ANNOTATIONS has an unknown key 'readOnly' (did you mean 'read_only'?); {keys}",
        "TOOL_ANNOTATIONS['title'] must be a string, got None",
        "TOOL_ANNOTATIONS['idempotent'] must be true or false, got 'yes'",
        "TOOL_ANNOTATIONS['destructive'] must be true or false, got 1",
        f"TOOL_ANNOTATIONS has an unknown key 7; {keys}",
    ]


@pytest.mark.parametrize("annotations", [["read_only"], "read_only", None])
def test_annotations_that_are_no_mapping_are_a_problem(annotations: Any) -> None:
    problems: list[str] = []
    assert check_annotations(annotations, problems) == {}
    assert problems == [f"TOOL_ANNOTATIONS must be a mapping, got {annotations!r}"]


# -- adopt_lowercase_declarations ----------------------------------------------------------------


def _bare(namespace: dict[str, Any]) -> type[object]:
    """A class as ``adopt_lowercase_declarations`` sees it (no ``Tool`` base runs it first)."""
    return type("Declared", (), {"__module__": "tools.weather", **namespace})


def test_a_class_declaring_none_of_them_is_left_as_it_is() -> None:
    cls = _bare({"TOOL_NAME": "x", "helper": "kept"})
    before = dict(cls.__dict__)
    adopt_lowercase_declarations(cls)
    assert dict(cls.__dict__) == before


def test_lowercase_tags_and_names_become_the_constants_and_leave_the_class() -> None:
    cls = _bare({"tags": {"domain": "maps"}, "credential_names": ["maps-key"]})
    adopt_lowercase_declarations(cls)
    assert cls.__dict__["TOOL_TAGS"] == {"domain": "maps"}
    assert cls.__dict__["CREDENTIAL_NAMES"] == ("maps-key",)
    assert "tags" not in cls.__dict__
    assert "credential_names" not in cls.__dict__


@pytest.mark.parametrize(
    ("attribute", "constant"),
    [
        pytest.param("source", "SOURCE", id="source"),
        pytest.param("definition", "DEFINITION", id="definition"),
        pytest.param("backend_kind", "BACKEND_KIND", id="backend-kind"),
        pytest.param("input_schema", "INPUT_SCHEMA", id="input-schema"),
    ],
)
def test_overriding_what_the_executor_reads_names_the_constant_to_declare(
    attribute: str, constant: str
) -> None:
    cls = _bare({attribute: "anything"})
    with pytest.raises(SemanticError) as info:
        adopt_lowercase_declarations(cls)
    assert str(info.value) == (
        f"Tool class tools.weather.Declared overrides '{attribute}', which the executor and "
        f"the registry do not read from the tool object; declare it as {constant} = ... "
        "on the class"
    )


def test_a_method_in_place_of_tags_is_refused_with_both_ways_to_declare_them() -> None:
    def tags(self: object) -> dict[str, str]:
        return {"a": "b"}

    with pytest.raises(SemanticError, match=r"declare it as TOOL_TAGS = \.\.\. on the class or "):
        adopt_lowercase_declarations(_bare({"tags": tags}))


def test_every_problem_of_a_lowercase_declaration_is_listed_under_the_class() -> None:
    cls = _bare({"credential_names": ["k", "k"]})
    with pytest.raises(SemanticError) as info:
        adopt_lowercase_declarations(cls)
    assert str(info.value) == (
        "Tool class tools.weather.Declared is invalid:\n"
        "  - credential_names lists a credential twice: ['k', 'k']"
    )
