"""``schema.parse.unchanging``: a nested definition met again is parsed once, and only
where the caller promised nothing changes; what has a problem is parsed each time."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agentkit import SchemaDefinitionError, ToolSchema
from agentkit.schema.parse import Built, unchanging


def nested(description: str = "who") -> dict[str, Any]:
    return {
        "name": "owner",
        "type": "dictionary",
        "description": description,
        "parameters": [
            {"name": "login", "type": "string"},
            {"name": "tags", "type": "list", "items": {"type": "string", "enum": ["a", "b"]}},
        ],
    }


def problems(definition: dict[str, Any]) -> list[str]:
    with pytest.raises(SchemaDefinitionError) as info:
        ToolSchema.from_dict(definition)
    return [f"{'.'.join(map(str, p.location))}: {p.message}" for p in info.value.problems]


def test_a_shared_definition_is_built_once_and_is_what_a_plain_parse_builds() -> None:
    owner = nested()
    first = {"parameters": [owner, {"name": "id", "type": "integer"}]}
    second = {"parameters": [{"name": "x", "type": "string"}, {**owner, "name": "author"}, owner]}
    built: Built = {}
    with unchanging(built):
        one = ToolSchema.from_dict(first)
        two = ToolSchema.from_dict(second)
    assert two.parameters[2] is one.parameters[0]  # the same object met again
    assert two.parameters[1] is not one.parameters[0]  # another object, built on its own
    assert one == ToolSchema.from_dict(first)
    assert two == ToolSchema.from_dict(second)
    assert any(raw is owner for raw, _ in built.values())  # kept alive: its id stays its own


def test_outside_the_context_nothing_is_kept() -> None:
    owner = nested()
    built: Built = {}
    with unchanging(built):
        ToolSchema.from_dict({"parameters": [owner]})
    kept = dict(built)
    ToolSchema.from_dict({"parameters": [owner]})
    assert built == kept


def test_a_definition_with_a_problem_is_parsed_again_where_it_is_met() -> None:
    """Its problems carry the location of each place it is met, so it is never kept."""
    broken = {"name": "bad", "type": "dictionary", "parameters": [{"name": "n", "type": "nope"}]}
    built: Built = {}
    with unchanging(built):
        once = problems({"parameters": [broken]})
        again = problems({"parameters": [{"name": "first", "type": "string"}, broken]})
    assert once == [
        "parameters.0.parameters.0.type: unsupported type 'nope'; expected one of: "
        "string, integer, float, boolean, list, dictionary"
    ]
    assert again == [once[0].replace("parameters.0.", "parameters.1.", 1)]
    assert not any(raw is broken for raw, _ in built.values())


def test_the_promise_holds_only_in_the_thread_that_made_it() -> None:
    owner = nested()
    built: Built = {}
    seen: list[int] = []

    def elsewhere() -> None:
        ToolSchema.from_dict({"parameters": [owner]})
        seen.append(len(built))

    with unchanging(built):
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join(timeout=30)
    assert seen == [0]
