"""The tool chapter's code runs unchanged (book chapter 3, "Tool Design").

Every Python block of the chapter is either a *reader's example* (the
``FetchWeatherTool``, the strict-mode and result-mode snippets), which is run
exactly as printed, or an *excerpt of the library* (``Tool``, ``ToolSchema``,
``validate`` ...), whose signatures and constants agentkit must match and whose
``validate`` serves as the oracle for ours.

The blocks are read from ``../shared/chapter-3-tool-design.md`` beside the
repository (or ``$AGENTKIT_CHAPTER``); literal copies below keep the tests
running where the chapter is absent, and a test checks the copies still match
the chapter when it is there. Where agentkit is deliberately stricter than the
chapter, the tests at the end pin the difference (docs/chapter.md says why).
"""

from __future__ import annotations

import abc
import inspect
import os
import re
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentkit import (
    AgentKitError,
    SchemaDefinitionError,
    SemanticError,
    Tool,
    ToolExecutionError,
    ToolExecutor,
    ToolRegistry,
    ToolResult,
    ToolSchema,
    ToolValidationError,
)
from agentkit.adapters.export import export_tools
from agentkit.toolschema import FREE_FORM

SECRET = "wk-7f3a9c1e55b2"

# -- the chapter's blocks -------------------------------------------------------------------------

FETCH_WEATHER_TOOL = """\
class FetchWeatherTool(Tool):

    TOOL_NAME = "fetch_weather"
    TOOL_DESCRIPTION = "Look up the current weather for a city."
    TOOL_VERSION = "1.0.0"

    INPUT_SCHEMA = {
        "parameters": [
            {"name": "city", "type": "string", "required": True,
             "description": "City name (e.g., 'San Francisco')"},
            {"name": "country", "type": "string", "required": False,
             "default": "US",
             "description": "ISO country code"},
            {"name": "units", "type": "string", "required": False,
             "default": "imperial",
             "description": "'imperial' (Fahrenheit) or 'metric' (Celsius)"},
        ]
    }

    OUTPUT_SCHEMA = {
        "parameters": [
            {"name": "city", "type": "string", "required": True},
            {"name": "country", "type": "string", "required": True},
            {"name": "temperature", "type": "float", "required": True},
            {"name": "units", "type": "string", "required": True},
            {"name": "conditions", "type": "string", "required": True},
        ]
    }

    def __init__(self):
        super().__init__(credential_names=["weather-api-key"])
        return

    def execute(self, inputs: dict, credentials: dict = None) -> dict:
        api_key = credentials["weather-api-key"]
        # ... call the weather API with the resolved key ...
        # ... parse the response into the OUTPUT_SCHEMA shape ...
        return {
            "city": inputs["city"],
            "country": inputs["country"],
            "temperature": 72.0,
            "units": inputs["units"],
            "conditions": "sunny",
        }
"""

STRICT_MODE = """\
try:
    result = executor.execute(tool, inputs)
except ToolValidationError as ex:
    # Bad input — log, retry, escalate.
    ...
except ToolExecutionError as ex:
    # Tool broke — log, retry, escalate.
    ...
"""

RESULT_MODE = """\
result = executor.execute(tool, inputs, raise_on_failure=False)

if result.status == ToolResult.STATUS_FAILURE:
    # The agent can pass the failure back to the LLM as
    # a "tool failed" message and let the LLM decide.
    self._llm_send_tool_failure(tool.name, str(result.error))
elif result.status == ToolResult.STATUS_SUCCESS:
    self._llm_send_tool_result(tool.name, result.output)
"""

TOOL_EXCERPT = '''\
class Tool(abc.ABC):
    """
        Abstract base class for all tools.  Subclasses define
        tool behavior by implementing the execute method and
        declaring schemas via class-level constants.
    """

    TOOL_NAME: str = None
    TOOL_DESCRIPTION: str = ""
    TOOL_VERSION: str = "1.0.0"
    INPUT_SCHEMA: dict = None
    OUTPUT_SCHEMA: dict = None

    def __init__(self, tags: dict = None,
                 credential_names: list = None) -> None:
        self._name = self.TOOL_NAME
        self._description = self.TOOL_DESCRIPTION
        self._version = self.TOOL_VERSION
        self._input_schema = None
        self._output_schema = None
        # ... tags + credential_names initialisation ...

        if self._name is None:
            errmsg = "A Tool name is required.  Set TOOL_NAME on the class."
            raise SemanticError(errmsg)

        if self.INPUT_SCHEMA is not None:
            try:
                self._input_schema = ToolSchema.from_dict(schema_data=self.INPUT_SCHEMA)
            except Exception as schema_err:
                errmsg_lines = [
                    "Invalid INPUT_SCHEMA on tool '{}'.".format(self._name),
                    "Schema validation detail: {}".format(str(schema_err)),
                ]
                errmsg = os.linesep.join(errmsg_lines)
                raise SemanticError(errmsg) from schema_err
        # ... similar OUTPUT_SCHEMA validation ...

        return

    @abc.abstractmethod
    def execute(self, inputs: dict, credentials: dict = None) -> dict:
        """
            Executes the tool with the given validated inputs.
        """
        ...
'''

TOOLSCHEMA_EXCERPT = '''\
class ToolSchema:
    """
        Declarative schema definition for tool input or output
        parameters.  Supports type constraints, required/optional
        marking, defaults, and validation.
    """

    SUPPORTED_TYPES = {"string", "integer", "float", "boolean", "list", "dictionary"}

    TYPE_MAP = {
        "string": str,
        "integer": int,
        "float": float,
        "boolean": bool,
        "list": list,
        "dictionary": dict,
    }

    def __init__(self, parameters: list = None) -> None:
        if parameters is not None:
            self._parameters = list(parameters)
        else:
            self._parameters = []
        return
'''

VALIDATE_EXCERPT = '''\
def validate(self, values: dict) -> list:
    """
        Validates a dictionary of values against this schema.

        Checks for missing required parameters, applies default
        values, and verifies type constraints.

        :returns: A list of validation error strings.  Empty list
                  if all values are valid.
    """
    errors = []
    for param_def in self._parameters:
        param_name = param_def["name"]
        param_type = param_def["type"]
        is_required = param_def.get("required", True)

        has_value = param_name in values
        if has_value is False:
            if is_required is True:
                errmsg = "Missing required parameter: '{}'".format(param_name)
                errors.append(errmsg)
            else:
                has_default = "default" in param_def
                if has_default is True:
                    default_value = param_def["default"]
                    values[param_name] = default_value
        else:
            provided_value = values[param_name]
            expected_python_type = self.TYPE_MAP[param_type]
            is_correct_type = isinstance(provided_value, expected_python_type)
            if is_correct_type is False:
                actual_type_name = type(provided_value).__name__
                errmsg = "Parameter '{}': expected type '{}', got '{}'".format(
                    param_name, param_type, actual_type_name
                )
                errors.append(errmsg)

    return errors
'''

REGISTRY_EXCERPT = '''\
class ToolRegistry:
    """
        Registry tracking available Tool instances for an Agent.
        Provides lookup by name, tags, and enumeration.
    """

    def register(self, tool: Tool) -> None:
        tool_name = tool.name
        is_duplicate = tool_name in self._tools
        if is_duplicate is True:
            errmsg_lines = [
                "Duplicate tool registration attempted.",
                "  Tool name: '{}'".format(tool_name),
            ]
            errmsg = os.linesep.join(errmsg_lines)
            raise SemanticError(errmsg)
        self._tools[tool_name] = tool
        return

    def lookup(self, tool_name: str) -> Tool:
        rtnval = self._tools.get(tool_name, None)
        return rtnval

    def lookup_by_tags(self, **tags: str) -> list:
        # ... tag-matching logic ...
'''

VALIDATION_ERROR_EXCERPT = '''\
class ToolValidationError(AgentKitError):
    """
        Raised when input or output validation against a
        ToolSchema fails.

        :param tool_name: The name of the tool that failed validation.
        :param direction: The validation direction, "input" or "output".
        :param errors: A list of validation error strings.
    """

    def __init__(self, tool_name: str, direction: str, errors: List[str]) -> None:
        self._tool_name = tool_name
        self._direction = direction
        self._errors = list(errors)
        errmsg = self._format_message()
        super().__init__(errmsg)
        return
'''

EXECUTION_ERROR_EXCERPT = '''\
class ToolExecutionError(AgentKitError):
    """
        Raised when a Tool's execute method encounters a
        runtime error.

        :param tool_name: The name of the tool that failed execution.
        :param cause: The original exception that caused the failure.
    """

    def __init__(self, tool_name: str, cause: Exception) -> None:
        self._tool_name = tool_name
        self._cause = cause
        errmsg = self._format_message()
        super().__init__(errmsg, cause=cause)
        return
'''

TOOLRESULT_EXCERPT = '''\
class ToolResult:
    """
        Immutable result of a single tool execution.
    """

    STATUS_SUCCESS = "success"
    STATUS_FAILURE = "failure"

    def __init__(self, tool_name: str, status: str,
                 output: dict = None,
                 duration: float = 0.0,
                 error: Exception = None) -> None:
        self._tool_name = tool_name
        self._status = status
        self._output = output
        self._duration = duration
        self._error = error
        return
'''

#: Every Python block of the chapter, in order: (key, literal copy, runnable example?).
BLOCKS: tuple[tuple[str, str, bool], ...] = (
    ("tool", TOOL_EXCERPT, False),
    ("fetch_weather", FETCH_WEATHER_TOOL, True),
    ("toolschema", TOOLSCHEMA_EXCERPT, False),
    ("validate", VALIDATE_EXCERPT, False),
    ("registry", REGISTRY_EXCERPT, False),
    ("validation_error", VALIDATION_ERROR_EXCERPT, False),
    ("execution_error", EXECUTION_ERROR_EXCERPT, False),
    ("toolresult", TOOLRESULT_EXCERPT, False),
    ("strict_mode", STRICT_MODE, True),
    ("result_mode", RESULT_MODE, True),
)

_REPO = Path(__file__).resolve().parent.parent
_FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _chapter_path() -> Path | None:
    candidates = [_REPO.parent / "shared" / "chapter-3-tool-design.md"]
    if os.environ.get("AGENTKIT_CHAPTER"):
        candidates.insert(0, Path(os.environ["AGENTKIT_CHAPTER"]))
    return next((path for path in candidates if path.is_file()), None)


def _chapter_blocks() -> dict[str, str]:
    path = _chapter_path()
    if path is None:
        pytest.skip(
            "the chapter is not beside the repository (../shared/chapter-3-tool-design.md; "
            "or set AGENTKIT_CHAPTER); the literal copies in this file still run"
        )
    found = _FENCE.findall(path.read_text(encoding="utf-8"))
    assert len(found) == len(BLOCKS), (
        f"{path} has {len(found)} Python blocks, this test knows {len(BLOCKS)}: "
        "classify the new block in BLOCKS"
    )
    return {key: text for (key, _, _), text in zip(BLOCKS, found, strict=True)}


@pytest.fixture(params=["literal", "chapter"])
def block(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """The chapter's block by key: from the literal copies, or read from the chapter."""
    if request.param == "literal":
        copies = {key: text for key, text, _ in BLOCKS}
        return copies.__getitem__
    return _chapter_blocks().__getitem__


def test_the_literal_copies_match_the_chapter() -> None:
    chapter = _chapter_blocks()
    for key, text, _ in BLOCKS:
        assert chapter[key] == text, f"the chapter's '{key}' block changed; update the copy"


def _run(source: str, **names: Any) -> dict[str, Any]:
    """Run a chapter block as the reader would, with agentkit's names imported."""
    namespace: dict[str, Any] = {
        "__name__": "chapter_examples",
        "abc": abc,
        "os": os,
        "List": typing.List,  # noqa: UP006  # the chapter's spelling
        "AgentKitError": AgentKitError,
        "SemanticError": SemanticError,
        "Tool": Tool,
        "ToolSchema": ToolSchema,
        "ToolExecutor": ToolExecutor,
        "ToolRegistry": ToolRegistry,
        "ToolResult": ToolResult,
        "ToolValidationError": ToolValidationError,
        "ToolExecutionError": ToolExecutionError,
        **names,
    }
    exec(compile(source, "<chapter 3>", "exec"), namespace)
    return namespace


def _weather_tool(block: Callable[[str], str]) -> Tool:
    tool: Tool = _run(block("fetch_weather"))["FetchWeatherTool"]()
    return tool


# -- the reader's examples, run as printed ---------------------------------------------------------

WEATHER_OUTPUT = {
    "city": "San Francisco",
    "country": "US",
    "temperature": 72.0,
    "units": "imperial",
    "conditions": "sunny",
}


def test_fetch_weather_tool_runs_through_the_executor(block: Callable[[str], str]) -> None:
    tool = _weather_tool(block)
    assert tool.name == "fetch_weather"
    assert tool.credential_names == ("weather-api-key",)
    executor = ToolExecutor(credentials={"weather-api-key": SECRET})
    result = executor.execute(tool, {"city": "San Francisco"})
    assert result.status == ToolResult.STATUS_SUCCESS
    assert result.output == WEATHER_OUTPUT


def test_fetch_weather_tool_receives_its_credential_by_name(block: Callable[[str], str]) -> None:
    weather = type(_weather_tool(block))
    seen: list[Mapping[str, str]] = []

    class Spy(weather):  # type: ignore[valid-type,misc]  # a class made by exec
        def execute(self, inputs: dict[str, Any], credentials: Any = None) -> dict[str, Any]:
            seen.append(dict(credentials))
            return super().execute(inputs, credentials)  # type: ignore[no-any-return]

    ToolExecutor(credentials={"weather-api-key": SECRET, "other": "x"}).execute(
        Spy(), {"city": "Oslo"}
    )
    assert seen == [{"weather-api-key": SECRET}]


def test_fetch_weather_tool_without_its_credential_fails_naming_it(
    block: Callable[[str], str],
) -> None:
    with pytest.raises(ToolExecutionError, match=r"needs credential 'weather-api-key'"):
        ToolExecutor(credentials={}).execute(_weather_tool(block), {"city": "Oslo"})


class _Broken(Tool):
    TOOL_NAME = "broken"
    INPUT_SCHEMA = None
    CREDENTIAL_NAMES = ("weather-api-key",)  # so the executor knows the secret to redact

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        raise ConnectionError(f"weather API refused key {SECRET}")


def _instrumented(snippet: str) -> str:
    """The snippet with each handler's ``...`` replaced by a record of what it caught."""
    return snippet.replace("    ...", "    caught.append(ex)")


@pytest.mark.parametrize(
    ("tool_kind", "inputs", "caught_type"),
    [
        pytest.param("weather", {"city": "Oslo"}, None, id="success"),
        pytest.param("weather", {}, ToolValidationError, id="missing-city"),
        pytest.param("weather", {"city": 5}, ToolValidationError, id="wrong-type"),
        pytest.param("broken", {"any": 1}, ToolExecutionError, id="tool-raises"),
    ],
)
def test_strict_mode_snippet(
    block: Callable[[str], str],
    tool_kind: str,
    inputs: dict[str, Any],
    caught_type: type[Exception] | None,
) -> None:
    tool = _weather_tool(block) if tool_kind == "weather" else _Broken()
    executor = ToolExecutor(credentials={"weather-api-key": SECRET})
    names = {"executor": executor, "tool": tool, "inputs": inputs}
    as_printed = _run(block("strict_mode"), **names)  # must not raise
    caught: list[Exception] = []
    _run(_instrumented(block("strict_mode")), caught=caught, **names)
    if caught_type is None:
        assert as_printed["result"].output == {**WEATHER_OUTPUT, "city": "Oslo"}
        assert caught == []
    else:
        assert "result" not in as_printed
        assert [type(error) for error in caught] == [caught_type]
        assert SECRET not in str(caught[0])


class _Agent:
    """The ``self`` of the result-mode snippet: an agent talking to its LLM."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Any]] = []

    def _llm_send_tool_failure(self, name: str, message: str) -> None:
        self.sent.append(("failure", name, message))

    def _llm_send_tool_result(self, name: str, output: Any) -> None:
        self.sent.append(("result", name, output))


@pytest.mark.parametrize(
    ("tool_kind", "inputs", "expected"),
    [
        pytest.param("weather", {"city": "Oslo"}, "result", id="success"),
        pytest.param(
            "weather",
            {"city": None},
            "Parameter 'city': expected type 'string', got 'NoneType'",
            id="none-for-required",
        ),
        pytest.param("weather", {"town": "Oslo"}, "Unknown parameter: 'town'", id="unknown"),
        pytest.param("broken", {}, "ConnectionError: weather API refused key", id="tool-raises"),
    ],
)
def test_result_mode_snippet(
    block: Callable[[str], str], tool_kind: str, inputs: dict[str, Any], expected: str
) -> None:
    tool = _weather_tool(block) if tool_kind == "weather" else _Broken()
    agent = _Agent()
    _run(
        block("result_mode"),
        executor=ToolExecutor(credentials={"weather-api-key": SECRET}),
        tool=tool,
        inputs=inputs,
        self=agent,
    )
    [(kind, name, payload)] = agent.sent
    assert name == tool.name
    if expected == "result":
        assert (kind, payload) == ("result", {**WEATHER_OUTPUT, "city": "Oslo"})
    else:
        assert kind == "failure"
        assert expected in payload
        assert SECRET not in payload


# -- the library excerpts: agentkit has the chapter's names, signatures and constants --------------


def _parameters(function: Callable[..., Any]) -> list[tuple[str, Any, bool]]:
    return [
        (p.name, p.kind, p.default is not inspect.Parameter.empty)
        for p in inspect.signature(function).parameters.values()
    ]


def _signatures(block: Callable[[str], str]) -> list[tuple[str, Any, Any]]:
    """(what, the chapter's function, agentkit's) for every signature an excerpt shows."""
    tool = _run(block("tool"))["Tool"]
    schema = _run(block("toolschema"))["ToolSchema"]
    validate = _run(block("validate"))["validate"]
    validation = _run(block("validation_error"))["ToolValidationError"]
    execution = _run(block("execution_error"))["ToolExecutionError"]
    result = _run(block("toolresult"))["ToolResult"]
    return [
        ("Tool.__init__", tool.__init__, Tool.__init__),
        ("Tool.execute", tool.execute, Tool.execute),
        ("ToolSchema.__init__", schema.__init__, ToolSchema.__init__),
        ("ToolSchema.validate", validate, ToolSchema.validate),
        ("ToolValidationError.__init__", validation.__init__, ToolValidationError.__init__),
        ("ToolExecutionError.__init__", execution.__init__, ToolExecutionError.__init__),
        ("ToolResult.__init__", result.__init__, ToolResult.__init__),
    ]


def test_every_signature_the_chapter_shows_is_agentkits(block: Callable[[str], str]) -> None:
    for what, chapter, ours in _signatures(block):
        theirs, mine = _parameters(chapter), _parameters(ours)
        if what == "Tool.execute":
            # The executor always passes credentials, so the base needs no default
            # (a subclass may still declare the chapter's `credentials: dict = None`).
            theirs = [(name, kind, False) for name, kind, _ in theirs]
        assert mine[: len(theirs)] == theirs, what
        # Anything agentkit adds is an optional keyword, so the chapter's calls still work.
        assert all(
            kind is inspect.Parameter.KEYWORD_ONLY and has_default
            for _, kind, has_default in mine[len(theirs) :]
        ), what


def test_registry_signatures() -> None:
    assert _parameters(ToolRegistry.register)[:2] == [
        ("self", inspect.Parameter.POSITIONAL_OR_KEYWORD, False),
        ("tool", inspect.Parameter.POSITIONAL_OR_KEYWORD, False),
    ]
    assert _parameters(ToolRegistry.lookup) == [
        ("self", inspect.Parameter.POSITIONAL_OR_KEYWORD, False),
        ("tool_name", inspect.Parameter.POSITIONAL_OR_KEYWORD, False),
    ]
    assert _parameters(ToolRegistry.lookup_by_tags)[1][1] is inspect.Parameter.VAR_KEYWORD


def test_schema_and_result_constants_are_the_chapters(block: Callable[[str], str]) -> None:
    schema = _run(block("toolschema"))["ToolSchema"]
    assert ToolSchema.SUPPORTED_TYPES == schema.SUPPORTED_TYPES
    assert dict(ToolSchema.TYPE_MAP) == schema.TYPE_MAP
    result = _run(block("toolresult"))["ToolResult"]
    assert ToolResult.STATUS_SUCCESS == result.STATUS_SUCCESS
    assert ToolResult.STATUS_FAILURE == result.STATUS_FAILURE


# `validate` as the chapter prints it is the oracle: wherever the chapter and
# agentkit agree on what is valid, they must return the same strings and leave
# the same dictionary behind.
ORACLE_PARAMETERS: list[dict[str, Any]] = [
    {"name": "city", "type": "string", "required": True},
    {"name": "days", "type": "integer", "required": False, "default": 3},
    {"name": "scale", "type": "float", "required": False},
    {"name": "detailed", "type": "boolean", "required": False, "default": False},
    {"name": "fields", "type": "list", "required": False},
    {"name": "filters", "type": "dictionary", "required": False},
]


@pytest.mark.parametrize(
    "values",
    [
        pytest.param({"city": "Oslo"}, id="defaults-applied"),
        pytest.param({}, id="missing-required"),
        pytest.param({"city": 5}, id="wrong-type"),
        pytest.param({"city": "Oslo", "days": "3"}, id="str-for-integer"),
        pytest.param({"city": b"Oslo", "days": 2.5, "detailed": "yes"}, id="three-wrong"),
        pytest.param({"days": [1], "fields": {}, "filters": []}, id="containers-swapped"),
        pytest.param(
            {"city": "Oslo", "days": 7, "scale": 1.5, "detailed": True, "fields": ["a"]},
            id="all-given",
        ),
        pytest.param({"city": "Oslo", "filters": {"kind": "rain"}}, id="dictionary"),
    ],
)
def test_validate_agrees_with_the_chapters(
    block: Callable[[str], str], values: dict[str, Any]
) -> None:
    chapter_validate = _run(block("validate"))["validate"]
    chapter_schema = SimpleNamespace(_parameters=ORACLE_PARAMETERS, TYPE_MAP=ToolSchema.TYPE_MAP)
    theirs = dict(values)
    expected = chapter_validate(chapter_schema, theirs)
    ours = dict(values)
    assert ToolSchema(parameters=ORACLE_PARAMETERS).validate(ours) == expected
    assert ours == theirs  # defaults applied in place, as the chapter's


def test_validate_mutates_in_place_and_returns_a_list() -> None:
    schema = ToolSchema.from_dict(schema_data={"parameters": ORACLE_PARAMETERS})
    values: dict[str, Any] = {"city": "Oslo"}
    errors = schema.validate(values)
    assert errors == []
    assert values == {"city": "Oslo", "days": 3, "detailed": False}


# -- the constructs the chapter shows, in its spelling ----------------------------------------------


@pytest.mark.parametrize(
    "parameters",
    [
        pytest.param(ORACLE_PARAMETERS, id="list-of-dicts"),
        pytest.param(tuple(ORACLE_PARAMETERS), id="tuple-of-dicts"),
        pytest.param(iter(ORACLE_PARAMETERS), id="iterator"),
        pytest.param(
            [*ToolSchema.from_dict({"parameters": ORACLE_PARAMETERS[:3]}), *ORACLE_PARAMETERS[3:]],
            id="parameters-and-dicts",
        ),
    ],
)
def test_toolschema_takes_the_definition_dicts(parameters: Any) -> None:
    assert ToolSchema(parameters=parameters) == ToolSchema.from_dict(
        schema_data={"parameters": ORACLE_PARAMETERS}
    )


def test_toolschema_of_none_has_no_parameters() -> None:
    schema = ToolSchema(parameters=None)
    assert len(schema) == 0
    assert schema == ToolSchema.from_dict({"parameters": []})
    assert not schema.free_form


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        pytest.param(
            [{"name": "city", "type": "text"}],
            r"parameters\[0\]\.type: unsupported type 'text' \(did you mean 'string'\?\)",
            id="bad-type",
        ),
        pytest.param(
            [{"name": "a", "type": "string"}, {"name": "a", "type": "integer"}],
            r"parameters\[1\]\.name: duplicate parameter name 'a'",
            id="duplicate",
        ),
        pytest.param(["city"], r"parameters\[0\]: expected a mapping", id="bare-name"),
        pytest.param("city", r"parameters: expected a list of parameters, got 'city'", id="str"),
        pytest.param(
            {"parameters": []}, r"expected a list of parameters, got a mapping", id="whole-schema"
        ),
        pytest.param(
            [{"name": "n", "type": "integer", "default": 1}],
            r"parameters\[0\]\.default: a required parameter cannot have a default",
            id="required-default",
        ),
    ],
)
def test_toolschema_refuses_bad_dicts_with_their_location(parameters: Any, message: str) -> None:
    with pytest.raises(SchemaDefinitionError, match=message):
        ToolSchema(parameters=parameters)


def test_registry_register_lookup_and_tags(block: Callable[[str], str]) -> None:
    weather_class = type(_weather_tool(block))

    class TaggedWeather(weather_class):  # type: ignore[valid-type,misc]  # a class made by exec
        def __init__(self, **tags: str) -> None:
            Tool.__init__(self, tags=tags, credential_names=["weather-api-key"])

    registry = ToolRegistry()
    weather = TaggedWeather(domain="weather", cost="free")
    registry.register(weather)
    assert registry.lookup(tool_name="fetch_weather") is weather
    assert registry.lookup("fetch_weather") is weather
    assert registry.lookup(tool_name="missing") is None
    assert registry.lookup_by_tags(domain="weather") == [weather]
    assert registry.lookup_by_tags(domain="weather", cost="free") == [weather]
    assert registry.lookup_by_tags(domain="weather", cost="paid") == []
    assert registry.lookup_by_tags() == [weather]


def test_a_duplicate_registration_opens_with_the_chapters_sentence(
    block: Callable[[str], str],
) -> None:
    registry = ToolRegistry([_weather_tool(block)])
    with pytest.raises(SemanticError) as info:
        registry.register(_weather_tool(block))
    message = str(info.value)
    assert message.startswith("Duplicate tool registration attempted.")
    assert "'fetch_weather'" in message
    # Both definitions are named, so the reader can tell which two collided.
    assert message.count("chapter_examples.FetchWeatherTool") == 2


def test_the_exceptions_constructors() -> None:
    validation = ToolValidationError(
        "fetch_weather", "input", ["Missing required parameter: 'city'"]
    )
    assert (validation.tool_name, validation.direction) == ("fetch_weather", "input")
    assert validation.errors == ["Missing required parameter: 'city'"]
    assert "Missing required parameter: 'city'" in str(validation)
    cause = TimeoutError("the weather API did not answer")
    execution = ToolExecutionError("fetch_weather", cause)
    assert execution.cause is cause
    assert execution.__cause__ is cause
    assert "TimeoutError: the weather API did not answer" in str(execution)


@pytest.mark.parametrize(
    "error_type", [AgentKitError, SemanticError], ids=["AgentKitError", "SemanticError"]
)
def test_agentkit_error_takes_a_cause(error_type: type[AgentKitError]) -> None:
    cause = KeyError("city")
    error = error_type("the lookup failed", cause=cause)
    assert str(error) == "the lookup failed"
    assert error.__cause__ is cause
    assert error.__suppress_context__  # shown as the direct cause, as `raise ... from`
    with pytest.raises(error_type) as info:
        raise error
    assert info.value.__cause__ is cause
    assert error_type("no cause").__cause__ is None


def test_toolresult_positional_and_constants() -> None:
    error = ToolExecutionError("fetch_weather", TimeoutError("slow"))
    result = ToolResult("fetch_weather", ToolResult.STATUS_FAILURE, None, 0.25, error)
    assert (result.tool_name, result.status, result.output, result.duration, result.error) == (
        "fetch_weather",
        "failure",
        None,
        0.25,
        error,
    )
    assert ToolResult("t", ToolResult.STATUS_SUCCESS, {"a": 1}).succeeded
    with pytest.raises(AttributeError, match="immutable"):
        result.status = ToolResult.STATUS_SUCCESS  # type: ignore[misc]  # mypy knows it too


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param(("t", {"a": 1}), id="output-for-status"),
        pytest.param(("t", "ok"), id="unknown-status"),
        pytest.param(("t", "SUCCESS"), id="wrong-case"),
        pytest.param(("t", None), id="none"),
    ],
)
def test_toolresult_refuses_a_status_that_is_not_one_of_the_two(arguments: tuple[Any, ...]) -> None:
    with pytest.raises(SemanticError, match=r"ToolResult for tool 't': status must be"):
        ToolResult(*arguments)


# -- Tool: instance-level tags and credential names ------------------------------------------------


class Lookup(Tool):
    TOOL_NAME = "lookup"
    TOOL_TAGS = {"domain": "search", "cost": "free"}
    CREDENTIAL_NAMES = ("search-key",)
    INPUT_SCHEMA = None
    OUTPUT_SCHEMA = None

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"credentials": sorted(credentials)}


CREDENTIALS = {"search-key": "search-7a1c", "maps-key": "maps-93bd7", "geo-key": "geo-52ef3"}


@pytest.mark.parametrize(
    ("arguments", "tags", "names"),
    [
        pytest.param({}, {"domain": "search", "cost": "free"}, ("search-key",), id="class-only"),
        pytest.param(
            {"tags": {"cost": "paid", "team": "maps"}},
            {"domain": "search", "cost": "paid", "team": "maps"},
            ("search-key",),
            id="tags-override-per-key",
        ),
        pytest.param(
            {"credential_names": ["maps-key", "geo-key"]},
            {"domain": "search", "cost": "free"},
            ("search-key", "maps-key", "geo-key"),
            id="names-added",
        ),
        pytest.param(
            {"credential_names": ("search-key",)},
            {"domain": "search", "cost": "free"},
            ("search-key",),
            id="name-in-both-kept-once",
        ),
        pytest.param(
            {"tags": {}, "credential_names": []},
            {"domain": "search", "cost": "free"},
            ("search-key",),
            id="empty",
        ),
    ],
)
def test_instance_tags_and_credential_names(
    arguments: dict[str, Any], tags: dict[str, str], names: tuple[str, ...]
) -> None:
    tool = Lookup(**arguments)
    assert tool.tags == tags
    assert tool.credential_names == names
    result = ToolExecutor(credentials=CREDENTIALS).execute(tool, {})
    assert result.output == {"credentials": sorted(names)}
    registry = ToolRegistry([tool])
    assert registry.lookup_by_tags(**tags) == [tool]


def test_instances_of_one_class_keep_their_own_values() -> None:
    maps, geo = Lookup(credential_names=["maps-key"]), Lookup(credential_names=["geo-key"])
    executor = ToolExecutor(credentials=CREDENTIALS)
    assert executor.execute(maps, {}).output == {"credentials": ["maps-key", "search-key"]}
    assert executor.execute(geo, {}).output == {"credentials": ["geo-key", "search-key"]}
    assert Lookup().credential_names == ("search-key",)  # the class is untouched


def test_instance_values_are_resolved_at_construction_not_per_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tool = Lookup(credential_names=["maps-key"], tags={"team": "maps"})

    def per_call(self: Tool) -> Any:
        raise AssertionError("the executor computed a tool's declaration during a call")

    for attribute in ("credential_names", "tags", "name", "input_schema", "output_schema"):
        monkeypatch.setattr(Tool, attribute, property(per_call))
    result = ToolExecutor(credentials=CREDENTIALS).execute(tool, {})
    assert result.output == {"credentials": ["maps-key", "search-key"]}


def test_calling_init_again_starts_from_the_class() -> None:
    tool = Lookup(credential_names=["maps-key"])
    Tool.__init__(tool, credential_names=["geo-key"])
    assert tool.credential_names == ("search-key", "geo-key")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param(
            {"credential_names": "maps-key"},
            r"credential_names must be a list of credential names, got 'maps-key' "
            r"\(write \['maps-key'\]\)",
            id="names-str",
        ),
        pytest.param(
            {"credential_names": {"maps-key"}}, "credential_names must be a list", id="names-set"
        ),
        pytest.param(
            {"credential_names": ["a", "a"]}, "credential_names lists a credential twice", id="dup"
        ),
        pytest.param(
            {"credential_names": ["a", ""]}, "credential_names must hold non-empty", id="empty"
        ),
        pytest.param({"credential_names": [1]}, "credential_names must hold non-empty", id="int"),
        pytest.param({"tags": {"a": 1}}, "tags must map strings to strings", id="tag-value"),
        pytest.param({"tags": ["a"]}, "tags must map strings to strings", id="tags-list"),
        pytest.param({"tags": "a=b"}, "tags must map strings to strings", id="tags-str"),
    ],
)
def test_bad_instance_arguments_are_refused_naming_the_tool(
    arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(SemanticError, match=message) as info:
        Lookup(**arguments)
    assert str(info.value).startswith(
        "Tool 'lookup' (tests.test_chapter.Lookup): invalid Tool.__init__() arguments:"
    )


# -- Tool: the chapter's class attribute `credential_names = [...]` ---------------------------------


def _tool_class(namespace: dict[str, Any], base: type[Tool] = Tool) -> type[Tool]:
    def execute(self: Tool, inputs: dict[str, Any], credentials: Any = None) -> dict[str, Any]:
        return {"credentials": sorted(credentials)}

    body = {"TOOL_NAME": "declared", "OUTPUT_SCHEMA": None, "execute": execute, **namespace}
    return type("Declared", (base,), body)


@pytest.mark.parametrize(
    ("namespace", "names", "tags"),
    [
        pytest.param({"credential_names": ["maps-key"]}, ("maps-key",), {}, id="names-list"),
        pytest.param({"credential_names": ("a", "b")}, ("a", "b"), {}, id="names-tuple"),
        pytest.param({"tags": {"domain": "maps"}}, (), {"domain": "maps"}, id="tags"),
        pytest.param(
            {"credential_names": ["k"], "TOOL_TAGS": {"x": "y"}}, ("k",), {"x": "y"}, id="mixed"
        ),
    ],
)
def test_lowercase_class_declarations_are_used(
    namespace: dict[str, Any], names: tuple[str, ...], tags: dict[str, str]
) -> None:
    cls = _tool_class(namespace)
    tool = cls()
    assert tool.credential_names == names
    assert tool.tags == tags
    assert names == cls.CREDENTIAL_NAMES
    values = {"maps-key": "maps-93bd7", "a": "a-4410-59", "b": "b-8812-37", "k": "k-1207-81"}
    result = ToolExecutor(credentials=values).execute(tool, {})
    assert result.output == {"credentials": sorted(names)}


def test_a_lowercase_declaration_is_inherited() -> None:
    base = type("Base", (Tool,), {"credential_names": ["maps-key"]})
    child = _tool_class({}, base=base)
    assert child().credential_names == ("maps-key",)
    assert child(credential_names=["geo-key"]).credential_names == ("maps-key", "geo-key")


@pytest.mark.parametrize(
    ("namespace", "message"),
    [
        pytest.param(
            {"credential_names": "maps-key"},
            r"is invalid:\n  - credential_names must be a list of credential names",
            id="names-str",
        ),
        pytest.param(
            {"credential_names": ["k", "k"]}, "credential_names lists a credential twice", id="dup"
        ),
        pytest.param({"tags": {"a": 1}}, "tags must map strings to strings", id="tags"),
        pytest.param(
            {"credential_names": ["a"], "CREDENTIAL_NAMES": ["a"]},
            "declares both credential_names and CREDENTIAL_NAMES; keep one",
            id="both-names",
        ),
        pytest.param(
            {"tags": {"a": "b"}, "TOOL_TAGS": {"a": "b"}},
            "declares both tags and TOOL_TAGS",
            id="both-tags",
        ),
        pytest.param(
            {"credential_names": property(lambda self: ["k"])},
            r"overrides 'credential_names'.*CREDENTIAL_NAMES = \.\.\. on the class or pass "
            r"credential_names= to Tool.__init__\(\)",
            id="names-property",
        ),
        pytest.param(
            {"tags": property(lambda self: {"a": "b"})}, "overrides 'tags'", id="tags-property"
        ),
        pytest.param({"name": "other"}, r"overrides 'name'.*TOOL_NAME = \.\.\.", id="name"),
        pytest.param(
            {"description": "text"}, r"overrides 'description'.*TOOL_DESCRIPTION", id="description"
        ),
        pytest.param({"version": "2.0.0"}, r"overrides 'version'.*TOOL_VERSION", id="version"),
        pytest.param(
            {"input_schema": {"parameters": []}},
            r"overrides 'input_schema'.*INPUT_SCHEMA",
            id="input-schema",
        ),
        pytest.param(
            {"output_schema": None}, r"overrides 'output_schema'.*OUTPUT_SCHEMA", id="output"
        ),
        pytest.param({"source": "here"}, r"overrides 'source'.*SOURCE", id="source"),
    ],
)
def test_a_declaration_the_executor_would_ignore_is_refused(
    namespace: dict[str, Any], message: str
) -> None:
    with pytest.raises(SemanticError, match=message) as info:
        _tool_class(namespace)
    assert "tests.test_chapter.Declared" in str(info.value)


def test_an_abstract_base_is_checked_too() -> None:
    with pytest.raises(SemanticError, match="overrides 'name'"):
        type("Base", (Tool,), {"name": "x"})


# -- Tool: no schema ------------------------------------------------------------------------------


class Anything(Tool):
    TOOL_NAME = "anything"
    INPUT_SCHEMA = None
    OUTPUT_SCHEMA = None

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"echo": inputs, "n": len(inputs)}


@pytest.mark.parametrize(
    "inputs",
    [
        pytest.param({}, id="empty"),
        pytest.param({"city": "Oslo", "days": True, "x": None}, id="anything"),
        pytest.param({"nested": {"a": [1, {"b": 2}]}}, id="nested"),
    ],
)
def test_a_tool_without_schemas_takes_any_inputs(inputs: dict[Any, Any]) -> None:
    before = dict(inputs)
    result = ToolExecutor(credentials={}).execute(Anything(), inputs)
    assert result.output == {"echo": before, "n": len(before)}
    assert result.output is not None
    assert result.output["echo"] is not inputs  # the tool got a copy
    assert inputs == before


@pytest.mark.parametrize(
    ("inputs", "problem"),
    [
        pytest.param(
            {1: "non-string key"},
            "Parameter 'echo': expected a dictionary with string keys, got a key of type 'int'",
            id="int-key",
        ),
        pytest.param(
            {"raw": b"bytes"},
            "Parameter 'echo.raw': expected a JSON value (a string, number, boolean, null, "
            "list or dictionary), got 'bytes'",
            id="bytes",
        ),
    ],
)
def test_a_tool_without_schemas_takes_any_inputs_and_answers_json(
    inputs: dict[Any, Any], problem: str
) -> None:
    """Stricter than the chapter (docs/chapter.md): what a tool answers is sent as JSON,
    so its answer is refused where JSON has no form for a value, schema or none."""
    seen: list[dict[Any, Any]] = []

    class Echoes(Anything):
        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            seen.append(inputs)
            return super().execute(inputs, credentials)

    with pytest.raises(ToolValidationError) as info:
        ToolExecutor(credentials={}).execute(Echoes(), inputs)
    assert seen == [inputs]  # taken as given
    assert info.value.direction == "output"
    [found] = info.value.problems
    assert found.message.startswith(problem)


@pytest.mark.parametrize(
    "returned",
    [
        pytest.param(None, id="none"),
        pytest.param([1, 2], id="list"),
        pytest.param("text", id="str"),
    ],
)
def test_a_tool_without_an_output_schema_must_still_return_a_dictionary(returned: Any) -> None:
    class Loose(Tool):
        TOOL_NAME = "loose"
        OUTPUT_SCHEMA = None

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> Any:
            return returned

    with pytest.raises(ToolValidationError, match="Expected the tool to return a dictionary"):
        ToolExecutor(credentials={}).execute(Loose(), {})


def test_a_tool_without_schemas_still_refuses_non_mappings() -> None:
    with pytest.raises(ToolValidationError, match="Expected a mapping"):
        ToolExecutor(credentials={}).execute(Anything(), ["city"])  # type: ignore[arg-type]


def test_one_schema_none_the_other_checked() -> None:
    class HalfChecked(Tool):
        TOOL_NAME = "half"
        INPUT_SCHEMA = None
        OUTPUT_SCHEMA = {"parameters": [{"name": "n", "type": "integer"}]}

        def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
            return {"n": len(inputs)}

    executor = ToolExecutor(credentials={})
    assert executor.execute(HalfChecked(), {"a": 1, "b": 2}).output == {"n": 2}


def test_a_tool_without_schemas_exports_a_free_form_object() -> None:
    tool = Anything()
    assert tool.input_schema is FREE_FORM
    assert tool.input_schema.free_form
    assert tool.input_schema.to_json_schema() == {"type": "object"}
    [entry] = export_tools([tool], "anthropic").document
    assert entry["input_schema"] == {"type": "object"}
    strict = export_tools([tool], "openai", strict=True)
    assert strict.document[0]["function"]["strict"] is False
    assert any("without declared parameters" in warning for warning in strict.warnings)


def test_free_form_is_not_the_empty_schema() -> None:
    assert ToolSchema() != FREE_FORM
    assert FREE_FORM.validate({"anything": 1}) == []
    assert ToolSchema().validate({"anything": 1}) == ["Unknown parameter: 'anything'"]
    with pytest.raises(SemanticError, match=r"free-form schema .* has no definition form"):
        FREE_FORM.to_dict()


# -- Tool: an invalid schema names the tool and the schema, and keeps the cause ---------------------


class _Exploding(Mapping[str, Any]):
    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("the schema store is offline")

    def __iter__(self) -> Any:
        return iter(["parameters"])

    def __len__(self) -> int:
        return 1


@pytest.mark.parametrize("constant", ["INPUT_SCHEMA", "OUTPUT_SCHEMA"])
@pytest.mark.parametrize(
    ("definition", "problem"),
    [
        pytest.param(
            {"parameters": [{"name": "city", "type": "text"}]},
            "parameters[0].type: unsupported type 'text'",
            id="bad-type",
        ),
        pytest.param({"params": []}, "params: unknown key 'params'", id="unknown-key"),
        pytest.param([{"name": "city"}], "expected a mapping with a 'parameters' list", id="list"),
        pytest.param(
            _Exploding(), "could not be read: RuntimeError: the schema store", id="raises"
        ),
    ],
)
def test_an_invalid_schema_names_the_tool_and_keeps_the_cause(
    constant: str, definition: Any, problem: str
) -> None:
    with pytest.raises(SemanticError) as info:
        type("Broken", (Tool,), {"TOOL_NAME": "broken", constant: definition})
    message = str(info.value)
    assert message.startswith(f"Tool 'broken' (tests.test_chapter.Broken) {constant} is invalid:")
    assert problem in message
    cause = info.value.__cause__
    assert cause is not None
    if isinstance(definition, _Exploding):
        assert isinstance(cause, RuntimeError)
    else:
        assert isinstance(cause, SchemaDefinitionError)
        assert problem in str(cause)


# -- where agentkit is deliberately stricter than the chapter (docs/chapter.md) --------------------

STRICT = ToolSchema.from_dict({"parameters": ORACLE_PARAMETERS})


@pytest.mark.parametrize(
    ("values", "errors", "after"),
    [
        pytest.param(
            {"city": "Oslo", "town": "Oslo"},
            ["Unknown parameter: 'town'"],
            None,
            id="unknown-refused",
        ),
        pytest.param(
            {"city": "Oslo", "cty": "x"},
            ["Unknown parameter: 'cty' (did you mean 'city'?)"],
            None,
            id="typo-hinted",
        ),
        pytest.param(
            {"city": "Oslo", "days": True},
            ["Parameter 'days': expected type 'integer', got 'bool'"],
            None,
            id="bool-is-not-an-integer",
        ),
        pytest.param(
            {"city": "Oslo", "scale": 2},
            [],
            {"city": "Oslo", "days": 3, "scale": 2.0, "detailed": False},
            id="float-takes-an-integer",
        ),
        pytest.param(
            {"city": "Oslo", "days": None},
            [],
            {"city": "Oslo", "days": 3, "detailed": False},
            id="none-is-absent",
        ),
        pytest.param(
            {"city": None},
            ["Parameter 'city': expected type 'string', got 'NoneType'"],
            None,
            id="none-for-required-is-a-wrong-type",
        ),
    ],
)
def test_deliberate_strictness(
    values: dict[str, Any], errors: list[str], after: dict[str, Any] | None
) -> None:
    given = dict(values)
    assert STRICT.validate(given) == errors
    if after is not None:
        assert given == after
        assert type(given.get("scale", 0.0)) is float


def test_schemas_are_checked_when_the_class_is_defined_not_constructed() -> None:
    with pytest.raises(SemanticError, match="INPUT_SCHEMA is invalid"):

        class Early(Tool):  # no instance is ever made
            TOOL_NAME = "early"
            INPUT_SCHEMA = {"parameters": [{"name": "n", "type": "int"}]}
