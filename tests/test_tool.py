"""Tool: the class constants, their checks, and the read-only properties."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentkit import SemanticError, Tool, ToolSchema, ToolSpec


class Echo(Tool):
    TOOL_NAME = "echo"
    TOOL_DESCRIPTION = "Repeat the text."
    TOOL_VERSION = "2.1.0"
    TOOL_TAGS = {"kind": "test"}
    CREDENTIAL_NAMES = ("echo-key",)
    INPUT_SCHEMA = {"parameters": [{"name": "text", "type": "string"}]}
    OUTPUT_SCHEMA = {"parameters": [{"name": "text", "type": "string"}]}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"text": inputs["text"]}


def test_properties_come_from_the_class_constants() -> None:
    tool = Echo()
    assert tool.name == "echo"
    assert tool.description == "Repeat the text."
    assert tool.version == "2.1.0"
    assert tool.tags == {"kind": "test"}
    assert tool.credential_names == ("echo-key",)
    assert isinstance(tool.input_schema, ToolSchema)
    assert tool.input_schema.names == ("text",)
    assert tool.output_schema.names == ("text",)
    assert tool.source == "tests.test_tool.Echo"


@pytest.mark.parametrize(
    "attribute",
    [
        "name",
        "description",
        "version",
        "input_schema",
        "output_schema",
        "tags",
        "credential_names",
        "annotations",
        "backend_kind",
        "definition",
    ],
)
def test_properties_are_read_only(attribute: str) -> None:
    with pytest.raises(AttributeError):
        setattr(Echo(), attribute, "x")


def test_tags_are_a_copy() -> None:
    tool = Echo()
    tool.tags["kind"] = "changed"
    assert tool.tags == {"kind": "test"}


def test_a_tool_without_a_name_fails_at_instantiation() -> None:
    class Nameless(Tool):
        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            return {}

    with pytest.raises(SemanticError) as info:
        Nameless()
    assert str(info.value) == "A Tool name is required.  Set TOOL_NAME on the class."


def test_a_tool_without_execute_fails_at_instantiation() -> None:
    class Lazy(Tool):
        TOOL_NAME = "lazy"

    with pytest.raises(SemanticError, match=r"Tool 'lazy' \(.*Lazy\) does not implement execute"):
        Lazy()


def test_an_invalid_schema_fails_when_the_class_is_defined() -> None:
    with pytest.raises(SemanticError) as info:

        class Broken(Tool):
            TOOL_NAME = "broken"
            INPUT_SCHEMA = {"parameters": [{"name": "city", "type": "text"}]}

    message = str(info.value)
    assert message.startswith("Tool 'broken' (tests.test_tool.")
    assert "INPUT_SCHEMA is invalid:" in message
    assert "parameters[0].type: unsupported type 'text' (did you mean 'string'?)" in message


def test_an_invalid_output_schema_names_the_output_schema() -> None:
    with pytest.raises(SemanticError, match="OUTPUT_SCHEMA is invalid"):

        class Broken(Tool):
            TOOL_NAME = "broken"
            OUTPUT_SCHEMA = {"parameters": [{"type": "string"}]}


@pytest.mark.parametrize(
    ("constants", "message"),
    [
        pytest.param({"TOOL_NAME": "has space"}, "TOOL_NAME 'has space' is invalid", id="name"),
        pytest.param({"TOOL_NAME": "x" * 65}, "at most 64 characters", id="long-name"),
        pytest.param({"TOOL_VERSION": ""}, "TOOL_VERSION must be a non-empty string", id="version"),
        pytest.param({"TOOL_TAGS": {"a": 1}}, "TOOL_TAGS must map strings to strings", id="tags"),
        pytest.param(
            {"CREDENTIAL_NAMES": "key"}, "CREDENTIAL_NAMES must be a list", id="creds-str"
        ),
        pytest.param({"CREDENTIAL_NAMES": ("a", "a")}, "lists a credential twice", id="creds-dup"),
        pytest.param(
            {"TOOL_DESCRIPTION": 3}, "TOOL_DESCRIPTION must be a string", id="description"
        ),
        pytest.param(
            {"TOOL_ANNOTATIONS": {"readonly": True}},
            r"TOOL_ANNOTATIONS has an unknown key 'readonly' \(did you mean 'read_only'\?\)",
            id="annotations-key",
        ),
        pytest.param(
            {"TOOL_ANNOTATIONS": {"read_only": "yes"}},
            r"TOOL_ANNOTATIONS\['read_only'\] must be true or false, got 'yes'",
            id="annotations-value",
        ),
        pytest.param(
            {"TOOL_ANNOTATIONS": {"title": 1}},
            r"TOOL_ANNOTATIONS\['title'\] must be a string",
            id="annotations-title",
        ),
        pytest.param(
            {"TOOL_ANNOTATIONS": ["read_only"]},
            "TOOL_ANNOTATIONS must be a mapping",
            id="annotations-list",
        ),
        pytest.param({"BACKEND_KIND": ""}, "BACKEND_KIND must be a non-empty string", id="kind"),
    ],
)
def test_class_constants_are_checked(constants: dict[str, Any], message: str) -> None:
    namespace: dict[str, Any] = {"TOOL_NAME": "ok", **constants}
    with pytest.raises(SemanticError, match=message):
        type("Bad", (Tool,), namespace)


def test_a_subclass_inherits_and_may_override() -> None:
    class Loud(Echo):
        TOOL_NAME = "loud"

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            return {"text": inputs["text"].upper()}

    assert Loud().name == "loud"
    assert Loud().input_schema == Echo().input_schema
    assert repr(Loud()) == "<Loud loud 2.1.0>"


def test_a_hand_written_tool_has_no_annotations_no_definition_and_the_class_kind() -> None:
    tool = Echo()
    assert tool.annotations == {}
    assert tool.backend_kind == "class"
    assert tool.definition is None


def test_annotations_and_backend_kind_are_declared_on_the_class() -> None:
    class Delete(Echo):
        TOOL_NAME = "delete"
        TOOL_ANNOTATIONS = {"title": "Delete a thing", "destructive": True}
        BACKEND_KIND = "queue"

    tool = Delete()
    assert tool.annotations == {"title": "Delete a thing", "destructive": True}
    assert tool.backend_kind == "queue"
    tool.annotations["destructive"] = False  # a copy: the declaration stays
    assert tool.annotations["destructive"] is True


@pytest.mark.parametrize(
    ("attribute", "constant"),
    [
        pytest.param("annotations", "TOOL_ANNOTATIONS", id="annotations"),
        pytest.param("backend_kind", "BACKEND_KIND", id="backend-kind"),
        pytest.param("definition", "DEFINITION", id="definition"),
    ],
)
def test_overriding_an_adapter_property_is_refused(attribute: str, constant: str) -> None:
    with pytest.raises(SemanticError, match=f"overrides '{attribute}'.*declare it as {constant}"):
        type("Sly", (Echo,), {"TOOL_NAME": "sly", attribute: property(lambda self: {})})


# -- the checked declaration: tool.spec ----------------------------------------------------------


def test_the_spec_is_the_checked_declaration_the_executor_reads() -> None:
    tool = Echo(tags={"team": "a"}, credential_names=["extra"])
    spec = tool.spec
    assert type(spec) is ToolSpec
    assert (spec.name, spec.version, spec.description) == ("echo", "2.1.0", "Repeat the text.")
    assert (spec.is_async, spec.backend_kind, spec.source) == (False, "class", tool.source)
    assert (spec.input_schema, spec.output_schema) == (tool.input_schema, tool.output_schema)
    assert dict(spec.tags) == {"kind": "test", "team": "a"}
    assert spec.credential_names == ("echo-key", "extra")
    # The instance's values went to a copy: the class's declaration is as written.
    assert Echo.spec is not None
    assert Echo.spec.credential_names == ("echo-key",)
    assert Echo().spec is Echo.spec


@pytest.mark.parametrize("field", ToolSpec.__slots__)
def test_the_spec_is_immutable(field: str) -> None:
    with pytest.raises(AttributeError, match=f"ToolSpec is immutable; cannot set '{field}'"):
        setattr(Echo().spec, field, "x")


def test_an_abstract_base_has_no_spec() -> None:
    class Base(Tool):
        pass

    assert Base.spec is None


def test_a_class_that_defines_spec_is_refused() -> None:
    with pytest.raises(SemanticError, match=r"defines 'spec', the name Tool keeps .* another name"):
        type("Sly", (Echo,), {"TOOL_NAME": "sly", "spec": {"openapi": "3.1.0"}})
