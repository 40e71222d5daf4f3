"""Exports, each against the shape its provider documents."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from agentkit import Tool, binary
from agentkit.adapters.export import (
    EXPORT_FORMATS,
    FORMATS,
    ExportError,
    ExportFormat,
    export_formats,
    export_tools,
    mcp_tool,
    register_format,
)
from agentkit.adapters.provider_checks import check_tools
from agentkit.cli import main
from agentkit.toolerrors import PluginError
from agentkit.toolschema import ToolSchema
from tests.support.plugins import example_plugin


class Search(Tool):
    TOOL_NAME = "search"
    TOOL_DESCRIPTION = "Search the catalogue"
    INPUT_SCHEMA = {
        "parameters": [
            {"name": "q", "type": "string", "description": "What to look for"},
            {"name": "limit", "type": "integer", "required": False, "default": 10},
            {"name": "sort", "type": "string", "required": False, "enum": ["new", "old"]},
            {"name": "tags", "type": "list", "required": False, "items": "string"},
            {
                "name": "filter",
                "type": "dictionary",
                "required": False,
                "parameters": [{"name": "lang", "type": "string"}],
            },
        ]
    }
    OUTPUT_SCHEMA = {"parameters": [{"name": "hits", "type": "list", "items": "string"}]}

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"hits": []}


class FreeForm(Search):
    TOOL_NAME = "free_form"
    INPUT_SCHEMA = {"parameters": [{"name": "options", "type": "dictionary"}]}


def test_openai_chat() -> None:
    (entry,) = export_tools([Search()], "openai").document
    assert entry["type"] == "function"
    function = entry["function"]
    assert set(function) == {"name", "description", "parameters", "strict"}
    assert function["strict"] is False
    assert function["parameters"]["required"] == ["q"]
    assert function["parameters"]["properties"]["tags"] == {
        "type": "array",
        "items": {"type": "string"},
    }


def test_openai_responses_is_flat() -> None:
    (entry,) = export_tools([Search()], "openai-responses").document
    assert set(entry) == {"type", "name", "description", "parameters", "strict"}


def test_openai_strict() -> None:
    exported = export_tools([Search()], "openai", strict=True)
    assert exported.warnings == []
    function = exported.document[0]["function"]
    parameters = function["parameters"]
    assert function["strict"] is True
    assert parameters["required"] == ["q", "limit", "sort", "tags", "filter"]
    assert parameters["additionalProperties"] is False
    limit = parameters["properties"]["limit"]
    assert limit == {"type": ["integer", "null"], "description": "Default: 10."}
    assert parameters["properties"]["sort"]["enum"] == ["new", "old", None]
    nested = parameters["properties"]["filter"]
    assert nested["type"] == ["object", "null"]
    assert nested["additionalProperties"] is False
    assert nested["required"] == ["lang"]
    assert parameters["properties"]["q"]["type"] == "string"


def test_strict_cannot_express_a_free_form_dictionary() -> None:
    exported = export_tools([FreeForm(), Search()], "openai", strict=True)
    assert exported.document[0]["function"]["strict"] is False
    assert exported.document[1]["function"]["strict"] is True
    (warning,) = exported.warnings
    assert "tool 'free_form': 'options' is a dictionary without declared parameters" in warning


@pytest.mark.parametrize(
    ("parameter", "path"),
    [
        pytest.param({"name": "ids", "type": "list"}, "ids", id="list"),
        pytest.param(
            {"name": "ids", "type": ["string", "list"], "required": False}, "ids", id="union-list"
        ),
        pytest.param(
            {
                "name": "filter",
                "type": "dictionary",
                "parameters": [{"name": "ids", "type": "list"}],
            },
            "filter.ids",
            id="nested",
        ),
        pytest.param(
            {"name": "rows", "type": "list", "items": {"type": "list"}},
            "rows[]",
            id="list-of-lists",
        ),
    ],
)
def test_strict_cannot_express_a_list_without_an_item_type(
    parameter: dict[str, Any], path: str
) -> None:
    # OpenAI refuses `items: {}` under strict: such a tool is exported non-strict, as a
    # free-form dictionary is, and the warning names the list.
    class Untyped(Search):
        TOOL_NAME = "untyped"
        INPUT_SCHEMA = {"parameters": [parameter]}

    exported = export_tools([Untyped(), Search()], "openai", strict=True)
    assert exported.document[0]["function"]["strict"] is False
    assert exported.document[1]["function"]["strict"] is True
    assert exported.warnings == [
        f"tool 'untyped': '{path}' is a list without an item type, which strict mode "
        "cannot express; exported with strict: false"
    ]


@pytest.mark.parametrize(
    ("parameter", "path"),
    [
        pytest.param({"name": "q", "type": ["string", "dictionary"]}, "q", id="union"),
        pytest.param(
            {"name": "q", "type": ["list", "dictionary"], "items": "string", "required": False},
            "q",
            id="union-with-a-typed-list",
        ),
        pytest.param(
            {
                "name": "filter",
                "type": "dictionary",
                "parameters": [{"name": "by", "type": ["integer", "dictionary"]}],
            },
            "filter.by",
            id="nested",
        ),
    ],
)
def test_strict_cannot_express_a_union_with_a_free_form_dictionary(
    parameter: dict[str, Any], path: str
) -> None:
    class Untyped(Search):
        TOOL_NAME = "untyped"
        INPUT_SCHEMA = {"parameters": [parameter]}

    exported = export_tools([Untyped()], "openai", strict=True)
    assert exported.document[0]["function"]["strict"] is False
    assert exported.warnings == [
        f"tool 'untyped': '{path}' is a dictionary without declared parameters, which strict "
        "mode cannot express; exported with strict: false"
    ]


def test_strict_takes_a_union_whose_dictionary_declares_its_parameters() -> None:
    class Lookup(Search):
        TOOL_NAME = "lookup"
        INPUT_SCHEMA = {
            "parameters": [
                {
                    "name": "who",
                    "type": ["string", "dictionary"],
                    "required": False,
                    "parameters": [
                        {"name": "login", "type": "string"},
                        {"name": "org", "type": "string", "required": False},
                    ],
                }
            ]
        }

    exported = export_tools([Lookup()], "openai", strict=True)
    function = exported.document[0]["function"]
    assert (function["strict"], exported.warnings) == (True, [])
    assert function["parameters"]["properties"]["who"] == {
        "anyOf": [
            {"type": "string"},
            {
                "type": "object",
                "properties": {"login": {"type": "string"}, "org": {"type": ["string", "null"]}},
                "required": ["login", "org"],
                "additionalProperties": False,
            },
            {"type": "null"},
        ]
    }


class Note(Search):
    TOOL_NAME = "note"
    INPUT_SCHEMA = {
        "parameters": [
            {"name": "text", "type": "string", "min_length": 1, "max_length": 280},
            {"name": "tag", "type": "string", "description": "A tag", "max_length": 1},
            {
                "name": "pin",
                "type": "string",
                "description": "Exactly 4 characters.",
                "min_length": 4,
                "max_length": 4,
            },
            {"name": "any", "type": "string", "min_length": 0},
        ]
    }


def test_lengths_export_as_min_length_and_max_length() -> None:
    (function,) = export_tools([Note()], "openai").document
    properties = function["function"]["parameters"]["properties"]
    assert properties["text"] == {"type": "string", "minLength": 1, "maxLength": 280}
    assert properties["any"] == {"type": "string", "minLength": 0}


def test_strict_says_lengths_in_words() -> None:
    # Not among the keywords strict mode documents: moved into the description, once.
    exported = export_tools([Note()], "openai", strict=True)
    function = exported.document[0]["function"]
    assert (function["strict"], exported.warnings) == (True, [])
    properties = function["parameters"]["properties"]
    assert properties["text"] == {"type": "string", "description": "1 to 280 characters."}
    assert properties["tag"] == {"type": "string", "description": "A tag. At most 1 character."}
    assert properties["pin"] == {"type": "string", "description": "Exactly 4 characters."}
    assert properties["any"] == {"type": "string"}
    assert check_tools([Note()], ["openai-strict"]) == []


def test_anthropic() -> None:
    (entry,) = export_tools([Search()], "anthropic").document
    assert set(entry) == {"name", "description", "input_schema"}
    assert entry["input_schema"]["type"] == "object"


class Exemplified(Search):
    TOOL_NAME = "exemplified"
    EXAMPLES = (
        {"name": "plain", "inputs": {"q": "jinja"}, "output": {"hits": []}},
        {"name": "sorted", "inputs": {"q": "x", "sort": "new"}, "output_includes": {"hits": []}},
        {"name": "empty", "inputs": {"q": ""}, "fails": "execution"},
        {"name": "bad", "inputs": {"q": 3}, "fails": "validation"},
    )


def test_anthropic_carries_the_inputs_of_the_examples_that_succeed() -> None:
    (entry,) = export_tools([Exemplified()], "anthropic").document
    assert entry["input_examples"] == [{"q": "jinja"}, {"q": "x", "sort": "new"}]


@pytest.mark.parametrize("name", [name for name in EXPORT_FORMATS if name != "anthropic"])
def test_no_other_format_carries_examples(name: str) -> None:
    document = export_tools([Exemplified()], name).document
    assert "jinja" not in json.dumps(document)


def test_mcp() -> None:
    (entry,) = export_tools([Search()], "mcp").document
    assert set(entry) == {
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
    }
    assert entry["outputSchema"]["properties"]["hits"] == {
        "type": "array",
        "items": {"type": "string"},
    }


def test_mcp_tool_writes_its_schemas_with_the_writer_given() -> None:
    class Picture(Tool):
        TOOL_NAME = "picture"
        OUTPUT_SCHEMA = binary.OUTPUT_SCHEMA

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            return binary.encode(b"\x89PNG", "image/png")

    written: list[ToolSchema] = []

    def writer(schema: ToolSchema) -> str:
        written.append(schema)
        return f"schema {len(written)}"

    search, picture = Search(), Picture()
    entry = mcp_tool(search, schema=writer)
    assert (entry["inputSchema"], entry["outputSchema"]) == ("schema 1", "schema 2")
    assert written == [search.input_schema, search.output_schema]
    assert list(entry) == list(mcp_tool(search))  # the same fields, in the same order
    # A binary output is content, not structured JSON: not written, not listed.
    assert "outputSchema" not in mcp_tool(picture, schema=writer)
    assert written[2:] == [picture.input_schema]


def test_mcp_hints_come_from_a_hand_written_tools_annotations() -> None:
    class Purge(Search):
        TOOL_NAME = "purge"
        TOOL_ANNOTATIONS = {"title": "Purge the catalogue", "destructive": True}

    (entry,) = export_tools([Purge()], "mcp").document
    assert entry["title"] == "Purge the catalogue"
    assert entry["annotations"] == {"title": "Purge the catalogue", "destructiveHint": True}


def test_gemini() -> None:
    document = export_tools([Search()], "gemini").document
    (declaration,) = document["functionDeclarations"]
    assert set(declaration) == {"name", "description", "parametersJsonSchema"}


def test_json_schema() -> None:
    (entry,) = export_tools([Search()], "json-schema").document
    assert entry["input_schema"]["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert entry["version"] == "1.0.0"


@pytest.mark.parametrize("format_name", FORMATS)
def test_every_list_has_items(format_name: str) -> None:
    text = str(export_tools([Search()], format_name).document)
    assert "'type': 'array'" in text
    assert "'type': 'array'}" not in text


def test_a_name_the_target_forbids_is_refused() -> None:
    class Dotted(Search):
        TOOL_NAME = "ok"

    tool = Dotted()
    object.__setattr__(type(tool).spec, "name", "has.dot")  # a name only MCP accepts
    with pytest.raises(ExportError, match=r"'has\.dot' cannot be exported as openai"):
        export_tools([tool], "openai")
    assert export_tools([tool], "mcp").document[0]["name"] == "has.dot"


def test_unknown_format() -> None:
    with pytest.raises(ExportError, match="unknown export format 'claude'"):
        export_tools([Search()], "claude")


# -- the table of formats ------------------------------------------------------------------------


def _upper(tools: Sequence[Tool], *, strict: bool, warnings: list[str]) -> Any:
    if strict:
        warnings.append("shouting is never strict")
    return [tool.name.upper() for tool in tools]


@pytest.fixture
def upper() -> Iterator[ExportFormat]:
    export_format = ExportFormat(
        name="upper",
        formatter=_upper,
        description="names, loudly",
        names=re.compile(r"[a-z_]+"),
        names_rule="lowercase letters and '_'",
        supports_strict=True,
    )
    register_format(export_format)
    yield export_format
    EXPORT_FORMATS.unregister("upper")


def test_the_built_in_formats_are_the_table() -> None:
    assert export_formats()[: len(FORMATS)] == FORMATS
    assert FORMATS == ("openai", "openai-responses", "anthropic", "mcp", "gemini", "json-schema")


def test_a_format_registered_in_code(upper: ExportFormat) -> None:
    assert "upper" in export_formats()
    exported = export_tools([Search()], "upper", strict=True)
    assert exported.document == ["SEARCH"]
    assert exported.warnings == ["shouting is never strict"]


def test_a_registered_formats_name_rule_is_enforced(upper: ExportFormat) -> None:
    with pytest.raises(ExportError, match="names must be lowercase letters and '_'"):
        export_tools([Search(), type("Dashed", (Search,), {"TOOL_NAME": "a-b"})()], "upper")


def test_a_taken_format_name_is_refused(upper: ExportFormat) -> None:
    with pytest.raises(PluginError, match="the name is taken by register_format"):
        register_format(upper)
    with pytest.raises(PluginError, match=r"agentkit.export_formats 'openai'.*the name is taken"):
        register_format(ExportFormat(name="openai", formatter=_upper, description="no"))


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        pytest.param("Upper", "'Upper' cannot name a format", id="uppercase"),
        pytest.param("two words", "'two words' cannot name a format", id="space"),
    ],
)
def test_a_format_name_must_be_a_word(name: str, problem: str) -> None:
    with pytest.raises(PluginError, match=problem):
        register_format(ExportFormat(name=name, formatter=_upper, description="x"))


def test_an_unknown_format_lists_the_table() -> None:
    with pytest.raises(
        ExportError, match="unknown export format 'openapi'; choose one of: openai,"
    ):
        export_tools([Search()], "openapi")


PING = """\
name: ping
version: 1.2.0
backend:
  http: {url: "https://api.example.com/ping"}
"""


def test_a_format_from_a_package_outside_agentkit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "ping.yaml").write_text(PING)
    with example_plugin():
        assert "names" in export_formats()
        assert export_tools([Search()], "names").document == {"tools": ["search 1.0.0"]}
        # The command offers it, from the same table.
        assert main(["export", "--format", "names", "--tools", str(tmp_path)]) == 0
        assert json.loads(capsys.readouterr().out) == {"tools": ["ping 1.2.0"]}
        with pytest.raises(SystemExit):
            main(["export", "--help"])
        assert "json-schema, names" in " ".join(capsys.readouterr().out.split())
    assert "names" not in export_formats()


def test_a_broken_format_entry_point_names_itself() -> None:
    with example_plugin(), pytest.raises(PluginError) as info:
        export_tools([Search()], "not-a-format")
    assert str(info.value) == (
        "agentkit.export_formats 'not-a-format' (entry point not-a-format = "
        "agentkit_example_plugin:EchoBackend from agentkit-example-plugin 0.1.0): "
        "expected an agentkit.adapters.export.ExportFormat, got type"
    )
