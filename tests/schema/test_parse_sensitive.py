"""``sensitive: true``: a parameter flag for the audit trail, which checking ignores."""

from __future__ import annotations

import json

import pytest

from agentkit.toolerrors import SchemaDefinitionError
from agentkit.toolschema import ToolSchema

NESTED = {
    "parameters": [
        {"name": "query", "type": "string"},
        {"name": "ssn", "type": "string", "required": False, "sensitive": True},
        {
            "name": "contact",
            "type": "dictionary",
            "required": False,
            "parameters": [{"name": "phone", "type": "string", "sensitive": True}],
        },
    ]
}


def test_the_flag_is_parsed_at_any_depth_and_written_back() -> None:
    schema = ToolSchema.from_dict(NESTED)
    flags = {parameter.name: parameter.sensitive for parameter in schema.parameters}
    assert flags == {"query": False, "ssn": True, "contact": False}
    contact = schema.parameters[2].parameters
    assert contact is not None
    assert contact.parameters[0].sensitive
    assert schema.to_dict() == NESTED
    assert ToolSchema.from_dict(schema.to_dict()) == schema


def test_the_flag_changes_no_check_and_stays_out_of_the_json_schema() -> None:
    schema = ToolSchema.from_dict(NESTED)
    plain = ToolSchema.from_dict(json.loads(json.dumps(NESTED).replace(', "sensitive": true', "")))
    assert plain != schema
    assert "sensitive" not in str(schema.to_json_schema())
    assert schema.to_json_schema() == plain.to_json_schema()
    assert (
        schema.check({"query": 1, "ssn": 2}).problems
        == plain.check({"query": 1, "ssn": 2}).problems
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(
            {"name": "x", "type": "string", "sensitive": "yes"},
            "parameters[0].sensitive: expected true or false, got 'yes'",
            id="string",
        ),
        pytest.param(
            {"name": "x", "type": "list", "items": {"type": "string", "sensitive": True}},
            "parameters[0].items.sensitive: unknown key 'sensitive'",
            id="list-element",
        ),
    ],
)
def test_a_bad_flag_is_refused_with_its_path(raw: dict[str, object], message: str) -> None:
    with pytest.raises(SchemaDefinitionError) as raised:
        ToolSchema.from_dict({"parameters": [raw]})
    assert message in str(raised.value)
