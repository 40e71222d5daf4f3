"""The error hierarchy: fields first, one message built from them."""

from __future__ import annotations

import pytest

from agentkit import (
    AgentKitError,
    CredentialError,
    DefinitionError,
    DefinitionProblem,
    SchemaDefinitionError,
    SemanticError,
    ToolExecutionError,
    ToolValidationError,
)
from agentkit.toolerrors import SchemaProblem


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
        DefinitionProblem("tools.d/a.yaml", 3, 5, "backend.http.url", "template in the origin"),
        DefinitionProblem("tools.d/b.yaml", 0, 0, "", "file is empty"),
    ]
    error = DefinitionError(problems)
    assert error.problems == tuple(problems)
    assert str(error) == (
        "2 problems in tool definitions:\n"
        "  tools.d/a.yaml:3:5: backend.http.url: template in the origin\n"
        "  tools.d/b.yaml: file is empty"
    )


def test_schema_definition_error_with_owner() -> None:
    error = SchemaDefinitionError([SchemaProblem(("parameters", 0), "missing 'name'")])
    assert str(error.with_owner("Tool 'x' INPUT_SCHEMA")) == (
        "Tool 'x' INPUT_SCHEMA is invalid:\n  - parameters[0]: missing 'name'"
    )


def test_exit_codes_separate_user_mistakes_from_failed_calls() -> None:
    assert SemanticError.exit_code == 2
    assert DefinitionError.exit_code == 2
    assert ToolExecutionError.exit_code == 1
