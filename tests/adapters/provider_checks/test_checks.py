"""Each provider's checks: a corpus of schemas it refuses or changes, and their neighbours
it takes; then the same checks on the export agentkit makes for real tools."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from agentkit import Tool
from agentkit.adapters.export import export_tools
from agentkit.adapters.provider_checks import (
    PROVIDER_RULES,
    PROVIDERS,
    ProviderProblem,
    check_document,
    check_tools,
    parse_providers,
)
from agentkit.toolerrors import UsageError

CORPUS = Path(__file__).parent / "corpus"


def document(provider: str, schema: Any, *, name: str = "t", description: str = "d") -> Any:
    """``schema`` as the inputs of one tool in ``provider``'s exported shape."""
    if provider in ("openai", "openai-strict"):
        function = {"name": name, "description": description, "parameters": schema}
        return [{"type": "function", "function": {**function, "strict": provider != "openai"}}]
    if provider == "anthropic":
        return [{"name": name, "description": description, "input_schema": schema}]
    if provider == "gemini":
        entry = {"name": name, "description": description, "parametersJsonSchema": schema}
        return {"functionDeclarations": [entry]}
    return [{"name": name, "title": name, "description": description, "inputSchema": schema}]


def corpus() -> list[Any]:
    cases = []
    for path in sorted(CORPUS.glob("*.yaml")):
        provider = path.stem
        for case in yaml.safe_load(path.read_text()):
            cases.append(pytest.param(provider, case, id=f"{provider}-{case['id']}"))
    return cases


def found(problems: list[ProviderProblem]) -> set[tuple[str, str]]:
    return {(problem.severity, problem.path) for problem in problems}


def test_the_corpus_covers_every_provider() -> None:
    assert {path.stem for path in CORPUS.glob("*.yaml")} == set(PROVIDERS)


@pytest.mark.parametrize(("provider", "case"), corpus())
def test_corpus(provider: str, case: dict[str, Any]) -> None:
    problems = check_document(document(provider, case["schema"]), provider)
    expected = case["expect"]
    assert found(problems) == {(e["severity"], e["path"]) for e in expected}, problems
    for want in expected:
        (match,) = [p for p in problems if p.path == want["path"]]
        assert want["says"] in match.message
        assert match.provider == provider
        assert match.tool == "t"
        assert match.fix


def tool(name: str, schema: dict[str, Any] | None) -> Tool:
    """A tool named ``name`` with the inputs ``schema``, which answers nothing."""

    def execute(self: Tool, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
        return {}

    attributes = {"TOOL_NAME": name, "TOOL_DESCRIPTION": "A tool.", "INPUT_SCHEMA": schema}
    return cast(Tool, type(name.title(), (Tool,), {**attributes, "execute": execute})())


QUIET = tool("quiet", {"parameters": [{"name": "text", "type": "string"}]})
FLAT = tool(
    "flat",
    {
        "parameters": [
            {"name": "query", "type": "string"},
            {"name": "limit", "type": "integer", "required": False, "default": 10},
            {"name": "kinds", "type": "list", "items": "string", "required": False},
        ]
    },
)


# -- names, counts and descriptions: each way, for every provider -------------------------

NAMES = [
    pytest.param("openai", "a" * 64, True, id="openai-64"),
    pytest.param("openai", "a" * 65, False, id="openai-65"),
    pytest.param("openai-strict", "get.weather", False, id="openai-strict-dot"),
    pytest.param("anthropic", "get_weather-2", True, id="anthropic-dash"),
    pytest.param("anthropic", "get weather", False, id="anthropic-space"),
    pytest.param("anthropic", "a" * 65, False, id="anthropic-65"),
    pytest.param("gemini", "ns.get_weather:v2", True, id="gemini-dot-colon"),
    pytest.param("gemini", "2fast", False, id="gemini-digit-first"),
    pytest.param("gemini", "a" * 65, False, id="gemini-65"),
    pytest.param("mcp", "admin.tools.list", True, id="mcp-dot"),
    pytest.param("mcp", "a" * 128, True, id="mcp-128"),
    pytest.param("mcp", "a" * 129, False, id="mcp-129"),
    pytest.param("mcp", "user/profile", False, id="mcp-slash"),
]


@pytest.mark.parametrize(("provider", "name", "accepted"), NAMES)
def test_tool_names(provider: str, name: str, accepted: bool) -> None:
    schema = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    problems = check_document(document(provider, schema, name=name), provider)
    if accepted:
        assert problems == []
        return
    (problem,) = problems
    field = "function.name" if provider.startswith("openai") else "name"
    assert (problem.severity, problem.path, problem.tool) == ("error", field, name)
    assert problem.fix.startswith("rename it: ")


@pytest.mark.parametrize(
    ("provider", "severity"),
    [
        pytest.param("openai", "error", id="openai"),
        pytest.param("openai-strict", "error", id="openai-strict"),
        pytest.param("gemini", "warning", id="gemini"),
        pytest.param("anthropic", None, id="anthropic-no-limit"),
        pytest.param("mcp", None, id="mcp-no-limit"),
    ],
)
@pytest.mark.parametrize("count", [128, 129])
def test_tools_in_one_request(provider: str, severity: str | None, count: int) -> None:
    problems = check_tools([QUIET] * count, [provider])
    if count == 128 or severity is None:
        assert problems == []
        return
    (problem,) = problems
    assert (problem.severity, problem.tool, problem.path) == (severity, None, "tools")
    assert str(problem).startswith(f"{provider}: the tool set: tools: 129 tools; ")
    assert "at most 128" in problem.message


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("length", [1024, 1025, 20_000])
def test_description_length(provider: str, length: int) -> None:
    schema = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    problems = check_document(document(provider, schema, description="x" * length), provider)
    if length == 1024 or not provider.startswith("openai"):
        assert problems == []
        return
    (problem,) = problems
    assert (problem.severity, problem.path) == ("warning", "function.description")
    assert f"{length} characters" in problem.message


# -- the export agentkit makes ----------------------------------------------------------


def nested(depth: int) -> dict[str, Any]:
    """A dictionary parameter ``depth`` dictionaries deep."""
    param: dict[str, Any] = {"name": "leaf", "type": "string"}
    for level in range(depth):
        param = {"name": f"level{level}", "type": "dictionary", "parameters": [param]}
    return {"parameters": [param]}


SEARCH = tool(
    "search",
    {
        "parameters": [
            {"name": "query", "type": "string", "pattern": "[a-z]+"},
            {"name": "limit", "type": "integer", "required": False, "default": 10},
            {"name": "filters", "type": "dictionary", "required": False},
        ]
    },
)


def test_a_flat_tool_passes_every_provider_but_gemini_drops_its_default() -> None:
    problems = check_tools([FLAT], ["all"])
    assert [(p.provider, p.severity, p.path) for p in problems] == [
        ("gemini", "warning", "parametersJsonSchema.properties.limit.default")
    ]


def test_strict_export_is_checked_after_the_rewrite() -> None:
    # The optional `limit` is required and nullable once exported strict, its default
    # moved into the description: nothing left for strict mode to refuse.
    exported = export_tools([FLAT], "openai", strict=True).document
    assert exported[0]["function"]["strict"] is True
    assert check_document(exported, "openai-strict") == []


def test_a_free_form_dictionary_cannot_be_strict() -> None:
    problems = check_tools([SEARCH], ["openai-strict"])
    assert [(p.severity, p.path) for p in problems] == [
        ("warning", "function.parameters.properties.filters")
    ]
    assert "exported with strict: false" in problems[0].message
    assert "declare the dictionary's parameters" in problems[0].fix


def test_free_form_inputs_cannot_be_strict() -> None:
    (problem,) = check_tools([tool("anything", None)], ["openai-strict"])
    assert (problem.severity, problem.path) == ("warning", "function.parameters")
    assert check_tools([tool("anything", None)], ["openai"]) == []


def test_gemini_names_what_it_ignores_and_that_agentkit_still_checks_it() -> None:
    problems = check_tools([SEARCH], ["gemini"])
    by_path = {p.path: p for p in problems}
    assert set(by_path) == {
        "parametersJsonSchema.properties.query.pattern",
        "parametersJsonSchema.properties.limit.default",
    }
    assert (
        "agentkit still checks 'pattern'"
        in by_path["parametersJsonSchema.properties.query.pattern"].fix
    )


@pytest.mark.parametrize(
    ("depth", "refused"),
    [pytest.param(9, False, id="10-levels"), pytest.param(10, True, id="11-levels")],
)
def test_strict_nesting_depth(depth: int, refused: bool) -> None:
    # The root object is a level: `depth` dictionaries under it make depth + 1.
    problems = check_tools([tool("deep", nested(depth))], ["openai-strict", "openai"])
    if not refused:
        assert problems == []
        return
    (problem,) = problems
    assert (problem.provider, problem.severity) == ("openai-strict", "error")
    assert "nested 11 deep" in problem.message
    assert problem.path.startswith("function.parameters.properties.level9")


@pytest.mark.parametrize(
    ("values", "refused"),
    [pytest.param(1000, False, id="1000-values"), pytest.param(1001, True, id="1001-values")],
)
def test_strict_enum_values_in_all(values: int, refused: bool) -> None:
    schema = {
        "parameters": [
            {"name": "a", "type": "integer", "enum": list(range(500))},
            {"name": "b", "type": "integer", "enum": list(range(values - 500))},
        ]
    }
    problems = check_tools([tool("enums", schema)], ["openai-strict"])
    assert [p.message for p in problems] == (
        [f"{values} enum values in one schema; strict mode takes at most 1000"] if refused else []
    )


@pytest.mark.parametrize(
    ("width", "refused"),
    [pytest.param(3, False, id="251-short-values"), pytest.param(63, True, id="251-long-values")],
)
def test_strict_long_string_enum(width: int, refused: bool) -> None:
    # 251 values of 63 characters are 15,813 in all: over 15,000 in an enum of over 250.
    values = [f"{index:03d}".ljust(width, "x") for index in range(251)]
    schema = {"parameters": [{"name": "v", "type": "string", "enum": values}]}
    problems = check_tools([tool("choice", schema)], ["openai-strict"])
    assert [(p.severity, p.path) for p in problems] == (
        [("error", "function.parameters.properties.v.enum")] if refused else []
    )
    if refused:
        assert problems[0].message.startswith("251 string values of 15813 characters in all")


def test_strict_total_properties() -> None:
    many = [{"name": f"p{index}", "type": "string"} for index in range(5001)]
    (problem,) = check_tools([tool("wide", {"parameters": many})], ["openai-strict"])
    assert problem.message == "5001 object properties in one schema; strict mode takes at most 5000"
    assert check_tools([tool("wide", {"parameters": many[:5000]})], ["openai-strict"]) == []


class Renamed:
    """A tool as another framework may hand it over: no agentkit definition takes a dot."""

    name = "ns.renamed"
    description = "Renamed."
    input_schema = FLAT.input_schema
    output_schema = FLAT.output_schema
    annotations: dict[str, Any] = {}
    backend_kind = "python"


def test_a_refused_name_is_reported_and_the_rest_still_checked() -> None:
    problems = check_tools([cast(Tool, Renamed()), FLAT], ["openai", "gemini", "mcp"])
    assert [(p.provider, p.tool, p.path) for p in problems] == [
        ("openai", "ns.renamed", "function.name"),
        # Gemini and MCP take a dot: the tool is exported and checked there.
        ("gemini", "ns.renamed", "parametersJsonSchema.properties.limit.default"),
        ("gemini", "flat", "parametersJsonSchema.properties.limit.default"),
    ]
    text = str(problems[0])
    assert text.startswith("openai: tool 'ns.renamed': function.name: ")
    assert "fix: rename it: letters, digits, '_' and '-', 1 to 64" in text


# -- choosing providers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(["gemini"], ("gemini",), id="one"),
        pytest.param(["openai,mcp"], ("openai", "mcp"), id="comma"),
        pytest.param(["mcp", "openai", "mcp"], ("mcp", "openai"), id="repeated-once"),
        pytest.param(["all"], PROVIDERS, id="all"),
        pytest.param(["gemini,all"], ("gemini", *PROVIDERS[:3], "mcp"), id="all-after-one"),
        pytest.param([" openai , "], ("openai",), id="spaces-and-empty"),
    ],
)
def test_parse_providers(values: list[str], expected: tuple[str, ...]) -> None:
    assert parse_providers(values) == expected


def test_an_unknown_provider_names_the_choices() -> None:
    with pytest.raises(UsageError, match=r"unknown provider 'openai_strict' \(did you mean"):
        parse_providers(["openai_strict"])
    with pytest.raises(UsageError, match="choose from: openai-strict, openai, anthropic"):
        check_tools([FLAT], ["bedrock"])


@pytest.mark.parametrize("provider", ["all", "claude", "openai,mcp"])
def test_check_document_takes_one_provider(provider: str) -> None:
    with pytest.raises(UsageError, match=f"unknown provider '{provider}'"):
        check_document([], provider)


def test_every_rule_checks_its_own_export_format() -> None:
    for provider, rules in PROVIDER_RULES.items():
        exported = export_tools([FLAT], rules.export_format, strict=rules.strict)
        assert rules.entries(exported.document), provider
