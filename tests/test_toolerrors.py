"""The error hierarchy: fields first, one message built from them."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import agentkit
from agentkit import (
    AgentKitError,
    CredentialError,
    DefinitionError,
    Problem,
    SchemaDefinitionError,
    SemanticError,
    ToolExecutionError,
    ToolValidationError,
    toolerrors,
)
from agentkit.toolerrors import OpenAPIError, UnexpressibleOperation, UnknownToolError


@pytest.mark.parametrize(
    "error_type",
    [
        SemanticError,
        SchemaDefinitionError,
        DefinitionError,
        CredentialError,
        ToolValidationError,
        ToolExecutionError,
    ],
)
def test_every_error_is_an_agentkit_error(error_type: type[Exception]) -> None:
    assert issubclass(error_type, AgentKitError)


def test_validation_error_fields_and_message() -> None:
    error = ToolValidationError("fetch_weather", "output", ["Missing required parameter: 'temp'"])
    assert error.tool_name == "fetch_weather"
    assert error.direction == "output"
    assert error.errors == ["Missing required parameter: 'temp'"]
    assert str(error) == (
        "Tool 'fetch_weather' returned invalid output:\n  - Missing required parameter: 'temp'"
    )
    error.errors.append("changed")
    assert len(error.errors) == 1


def test_execution_error_keeps_its_cause() -> None:
    cause = ConnectionError("refused")
    error = ToolExecutionError("fetch_weather", cause)
    assert error.tool_name == "fetch_weather"
    assert error.cause is cause
    assert error.__cause__ is cause
    assert str(error) == "Tool 'fetch_weather' failed: ConnectionError: refused"


def test_execution_error_with_an_empty_cause_message() -> None:
    assert str(ToolExecutionError("t", TimeoutError())) == "Tool 't' failed: TimeoutError"


def test_credential_error_names_every_place_and_no_value() -> None:
    error = CredentialError("t", "api-key", ["environment variable API_KEY", "secrets file .env"])
    assert error.credential == "api-key"
    assert str(error) == (
        "Tool 't' needs credential 'api-key', which was not found. Looked in: environment "
        "variable API_KEY; secrets file .env. Provide it in one of those places."
    )


def test_definition_problems_render_file_line_column() -> None:
    problems = [
        Problem(
            file="tools.d/a.yaml",
            line=3,
            column=5,
            path="backend.http.url",
            message="template in the origin",
        ),
        Problem(file="tools.d/b.yaml", message="file is empty"),
    ]
    error = DefinitionError(problems)
    assert error.problems == tuple(problems)
    assert str(error) == (
        "2 problems in tool definitions:\n"
        "  tools.d/a.yaml:3:5: backend.http.url: template in the origin\n"
        "  tools.d/b.yaml: file is empty"
    )


def test_schema_definition_error_with_owner() -> None:
    error = SchemaDefinitionError([Problem(location=("parameters", 0), message="missing 'name'")])
    assert str(error.with_owner("Tool 'x' INPUT_SCHEMA")) == (
        "Tool 'x' INPUT_SCHEMA is invalid:\n  - parameters[0]: missing 'name'"
    )


# -- one problem type ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("problem", "shown"),
    [
        pytest.param(Problem(message="file is empty"), "file is empty", id="message-only"),
        pytest.param(
            Problem(path="filters.tags[2]", message="expected 'string'"),
            "filters.tags[2]: expected 'string'",
            id="parameter-path",
        ),
        pytest.param(
            Problem(file="a.yaml", line=3, column=5, path="name", message="taken"),
            "a.yaml:3:5: name: taken",
            id="file-line-column-path",
        ),
        pytest.param(
            Problem(file="a.yaml", line=3, message="taken"),
            "a.yaml:3:1: taken",
            id="unknown-column-is-the-first",
        ),
        pytest.param(
            Problem(file="a.yaml", column=7, message="unreadable"),
            "a.yaml: unreadable",
            id="no-line-no-column",
        ),
        pytest.param(
            Problem(line=2, column=4, message="YAML syntax error"),
            "2:4: YAML syntax error",
            id="line-without-file",
        ),
        pytest.param(
            Problem(path="#/paths/~1pets/get", message="no responses"),
            "#/paths/~1pets/get: no responses",
            id="pointer",
        ),
        pytest.param(
            Problem(file="api.yaml", path="#/paths/~1pets/get", message="no responses"),
            "api.yaml#/paths/~1pets/get: no responses",
            id="pointer-is-a-fragment-of-its-file",
        ),
        pytest.param(
            Problem(location=("parameters", 1, "default"), message="expected an integer"),
            "parameters[1].default: expected an integer",
            id="location",
        ),
    ],
)
def test_a_problem_renders_its_parts_one_way(problem: Problem, shown: str) -> None:
    assert str(problem) == shown


def test_a_location_gives_the_path_and_cannot_disagree_with_it() -> None:
    problem = Problem(location=("input_schema", 2, "type"), message="unknown type")
    assert problem.path == "input_schema[2].type"
    assert problem == Problem(
        location=("input_schema", 2, "type"), path="input_schema[2].type", message="unknown type"
    )
    with pytest.raises(ValueError, match=r"path 'a\.b' and location .* disagree"):
        Problem(location=("a", "c"), path="a.b", message="m")


def test_a_problem_is_frozen_and_keyword_only() -> None:
    problem = Problem(path="x", message="m")
    with pytest.raises(AttributeError):
        problem.path = "y"  # type: ignore[misc]  # the point: it is frozen
    with pytest.raises(TypeError):
        Problem("x", "m")  # type: ignore[call-arg]  # the point: keywords only


@pytest.mark.parametrize(
    ("make", "expected", "fix"),
    [
        pytest.param(
            lambda: toolerrors.SchemaProblem(location=("parameters", 0), message="missing 'name'"),
            Problem(location=("parameters", 0), message="missing 'name'"),
            r"Problem\(location=\.\.\., message=\.\.\.\)",
            id="SchemaProblem",
        ),
        pytest.param(
            lambda: agentkit.DefinitionProblem(
                path="a.yaml", line=3, column=5, field="name", message="taken"
            ),
            Problem(file="a.yaml", line=3, column=5, path="name", message="taken"),
            r"its path= is file=, its field= is path=",
            id="DefinitionProblem",
        ),
        pytest.param(
            lambda: toolerrors.DescriptionProblem(pointer="#/paths", message="empty"),
            Problem(path="#/paths", message="empty"),
            r"pointer= is path=",
            id="DescriptionProblem",
        ),
    ],
)
def test_the_old_problem_types_make_a_problem_and_say_what_to_use(
    make: object, expected: Problem, fix: str
) -> None:
    assert callable(make)
    with pytest.warns(DeprecationWarning, match=fix) as warned:
        made = make()
    assert "deprecated" in str(warned[0].message)
    assert "agentkit.Problem(" in str(warned[0].message)
    assert warned[0].filename == __file__  # the caller's line, not agentkit's
    assert type(made) is Problem
    assert made == expected
    assert str(made) == str(expected)


def test_every_problem_is_an_instance_of_the_old_names() -> None:
    # Code that tells problems apart with isinstance keeps working for a release.
    problem = Problem(message="m")
    assert isinstance(problem, toolerrors.SchemaProblem)
    assert isinstance(problem, toolerrors.DefinitionProblem)
    assert isinstance(problem, toolerrors.DescriptionProblem)
    assert not isinstance("m", toolerrors.DefinitionProblem)


@pytest.mark.parametrize("old", ["field", "pointer"])
def test_the_old_attribute_names_read_the_path_with_a_warning(old: str) -> None:
    problem = Problem(file="a.yaml", path="input_schema[0].name", message="m")
    with pytest.warns(DeprecationWarning, match=rf"Problem\.{old} .* use Problem\.path"):
        assert getattr(problem, old) == "input_schema[0].name"


def test_an_openapi_error_locates_each_problem_in_its_file() -> None:
    error = OpenAPIError(
        "api.yaml",
        [
            Problem(path="#/openapi", message="expected 3.0 or 3.1"),
            Problem(path="#/paths", message="no operations"),
        ],
    )
    assert str(error) == (
        "cannot import api.yaml:\n"
        "  api.yaml#/openapi: expected 3.0 or 3.1\n"
        "  api.yaml#/paths: no operations"
    )
    assert [str(problem) for problem in error.problems] == [
        "#/openapi: expected 3.0 or 3.1",
        "#/paths: no operations",
    ]
    skipped = UnexpressibleOperation(Problem(path="#/paths/~1a/get", message="no body"))
    assert str(skipped) == "#/paths/~1a/get: no body"


def test_a_validation_error_shows_the_chapter_strings_and_keeps_the_paths() -> None:
    problem = Problem(path="days", message="Parameter 'days': expected type 'integer', got 'str'")
    error = ToolValidationError(
        "forecast", "input", [problem, "Missing required parameter: 'city'"]
    )
    assert error.errors == [
        "Parameter 'days': expected type 'integer', got 'str'",
        "Missing required parameter: 'city'",
    ]
    assert error.problems == (problem, Problem(message="Missing required parameter: 'city'"))
    assert str(error) == (
        "Tool 'forecast' received invalid input:\n"
        "  - Parameter 'days': expected type 'integer', got 'str'\n"
        "  - Missing required parameter: 'city'"
    )


def test_exit_codes_separate_user_mistakes_from_failed_calls() -> None:
    assert SemanticError.exit_code == 2
    assert DefinitionError.exit_code == 2
    assert ToolExecutionError.exit_code == 1


# -- one error tree ------------------------------------------------------------------------------


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in the package, found by importing each module."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(agentkit.__path__, "agentkit."):
        if info.name == "agentkit.__main__":
            continue  # running it is the command line
        if info.name == "agentkit.mcp_http":
            continue  # deprecated: hands on names of agentkit.mcp, with a warning, defines none
        try:
            module = importlib.import_module(info.name)
        except ImportError as exc:  # a module of an extra that is not installed
            pytest.skip(f"{info.name} needs an extra: {exc}")
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == module.__name__:
                found[f"{module.__name__}.{value.__qualname__}"] = value
    return found


def test_the_walk_finds_the_exceptions_of_every_layer() -> None:
    # Guards the test below against walking nothing.
    names = {cls.__name__ for cls in _exception_classes().values()}
    assert {"AgentKitError", "HttpCallError", "OAuth2Error", "UsageError", "_Refused"} <= names


def test_every_exception_in_the_package_derives_from_agentkit_error() -> None:
    strays = sorted(
        name for name, cls in _exception_classes().items() if not issubclass(cls, AgentKitError)
    )
    assert strays == []


ERROR_MODULES = {
    "agentkit.errorbase",
    "agentkit.definitionerrors",
    "agentkit.backenderrors",
    "agentkit.servingerrors",
    "agentkit.toolerrors",
}


def test_every_public_exception_is_an_error_module_s_importable_from_toolerrors() -> None:
    doc = toolerrors.__doc__ or ""
    for name, cls in _exception_classes().items():
        if cls.__name__.startswith("_"):
            continue
        assert cls.__module__ in ERROR_MODULES, f"{name} is defined outside the error modules"
        assert cls.__name__ in toolerrors.__all__, f"{name} is not exported by toolerrors"
        assert getattr(toolerrors, cls.__name__) is cls, name
        assert f" {cls.__name__} " in doc, f"{cls.__name__} is not drawn in the tree"


def test_each_error_module_exports_exactly_what_it_defines() -> None:
    for module_name in ERROR_MODULES - {"agentkit.toolerrors"}:
        module = importlib.import_module(module_name)
        defined = {
            name
            for name, value in vars(module).items()
            if isinstance(value, type)
            and value.__module__ == module_name
            and not name.startswith("_")
        }
        assert set(module.__all__) == defined, module_name
        assert set(module.__all__) <= set(toolerrors.__all__), module_name


@pytest.mark.parametrize(
    ("module", "name"),
    [
        pytest.param("agentkit.cli", "UsageError", id="cli"),
        pytest.param("agentkit.adapters.export", "ExportError", id="export"),
        pytest.param("agentkit.recording", "ReplayMissError", id="recording"),
        pytest.param("agentkit.declarative.backends.http.backend", "HttpCallError", id="http"),
        pytest.param("agentkit.declarative.backends.http.oauth2", "OAuth2Error", id="oauth2"),
        pytest.param("agentkit.declarative.templates", "TemplateRenderError", id="templates"),
    ],
)
def test_old_import_paths_still_work(module: str, name: str) -> None:
    assert getattr(importlib.import_module(module), name) is getattr(toolerrors, name)


# -- one unknown-tool error ----------------------------------------------------------------------


def test_unknown_tool_error_is_a_semantic_error_and_a_key_error() -> None:
    error = UnknownToolError("fetch_wether", ["text_stats", "fetch_weather"])
    assert isinstance(error, SemanticError)
    assert isinstance(error, KeyError)
    assert error.suggestion == "fetch_weather"
    assert error.known == ("fetch_weather", "text_stats")
    # KeyError would quote its message; this one reads as a sentence.
    assert str(error) == (
        "Unknown tool: 'fetch_wether' (did you mean 'fetch_weather'?). "
        "Available tools: fetch_weather, text_stats."
    )


@pytest.mark.parametrize(
    ("known", "listed"),
    [
        pytest.param([], "Available tools: none", id="none"),
        pytest.param([f"t{i:02}" for i in range(25)], "t18, t19 and 5 more", id="capped"),
    ],
)
def test_unknown_tool_error_lists_the_known_names_bounded(known: list[str], listed: str) -> None:
    assert str(UnknownToolError("zzz", known)).endswith(f"{listed}.")


def test_unknown_tool_error_cuts_a_huge_name() -> None:
    message = str(UnknownToolError("x" * 10_000, ["a"]))
    assert len(message) < 200


# -- the tree as drawn ---------------------------------------------------------------------------

_DRAWN = re.compile(r"^    (?P<lead>(?:│   |    )*)(?:├── |└── )?(?P<name>[A-Z]\w+) ")


def _drawn_parents() -> dict[str, str]:
    """Each class drawn in ``toolerrors``' docstring, with the class drawn above it."""
    parents: dict[str, str] = {}
    stack: list[str] = []
    for line in (toolerrors.__doc__ or "").splitlines():
        match = _DRAWN.match(line)
        if match is None or not hasattr(toolerrors, match["name"]):
            continue
        depth = len(match["lead"]) // 4 + (0 if line.startswith("    AgentKitError") else 1)
        del stack[depth:]
        if stack:
            parents[match["name"]] = stack[-1]
        stack.append(match["name"])
    return parents


def test_the_tree_is_drawn_as_the_classes_derive() -> None:
    parents = _drawn_parents()
    assert {"CallError", "BackendError", "ServingError", "MissingValue"} <= set(parents)
    for name, parent in parents.items():
        cls = getattr(toolerrors, name)
        assert getattr(toolerrors, parent) in cls.__bases__, f"{name} is drawn under {parent}"


@pytest.mark.parametrize(
    ("base", "members"),
    [
        pytest.param(
            "CallError",
            ["ToolValidationError", "CredentialError", "ToolExecutionError", "ReplayMissError"],
            id="a-failed-call",
        ),
        pytest.param(
            "BackendError",
            ["HttpCallError", "OAuth2Error", "PaginationError", "MultipartError", "MissingValue"],
            id="a-backends-failure",
        ),
        pytest.param("ServingError", ["Busy", "CallInterrupted"], id="a-serving-error"),
    ],
)
def test_a_caller_can_catch_a_kind_of_failure_at_once(base: str, members: list[str]) -> None:
    assert base in agentkit.__all__
    for member in members:
        assert issubclass(getattr(toolerrors, member), getattr(agentkit, base)), member
