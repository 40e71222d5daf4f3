"""``${VAR}``: configuration substituted at load time, located when missing, never a template."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import responses

from agentkit import DefinitionError, ToolExecutor, ToolRegistry, load_tools
from agentkit.declarative.environment import Environment
from tests.declarative.conftest import WriteFile

SOURCE = """\
source: api
base_url: ${API_URL:-https://api.example.com}/v1
headers: {X-Team: "${TEAM}", X-Literal: "$${NOT_A_VAR}"}
query: {region: "${REGION:-eu}"}
"""

TOOL = """\
name: lookup
version: 1.0.0
input_schema:
  parameters:
    - {name: id, type: string}
    - {name: size, type: integer, required: false, default: "${PAGE_SIZE:-10}"}
    - {name: mode, type: string, required: false, default: "${MODE:-fast}"}
output_schema:
  parameters:
    - {name: title, type: string}
backend:
  http:
    source: api
    path: /items/{{ inputs.id }}
    query: {size: "{{ inputs.size }}", lang: "${LANG_CODE:-en}"}
"""


def load(folder: Path, **options: Any) -> Any:
    registry = ToolRegistry()
    load_tools(folder, registry=registry, **options)
    (tool,) = list(registry)
    return tool


def problems(folder: Path, **options: Any) -> list[str]:
    with pytest.raises(DefinitionError) as info:
        load_tools(folder, **options)
    return [str(problem) for problem in info.value.problems]


@pytest.fixture
def folder(write: WriteFile) -> Path:
    write(SOURCE, "source.yaml")
    write(TOOL)
    return write.folder


@responses.activate
def test_values_come_from_the_environment_with_defaults(folder: Path) -> None:
    tool = load(folder, environ={"API_URL": "http://127.0.0.1:9", "TEAM": "core"})
    responses.get("http://127.0.0.1:9/v1/items/7", json={"title": "T"})
    assert ToolExecutor().execute(tool, {"id": "7"}).succeeded
    request = responses.calls[0].request
    assert request.headers["X-Team"] == "core"
    assert request.headers["X-Literal"] == "${NOT_A_VAR}"  # $${ is a literal ${
    assert request.url == "http://127.0.0.1:9/v1/items/7?region=eu&size=10&lang=en"
    assert tool.input_schema["size"].default == 10  # an integer parameter's default is one
    assert tool.input_schema["mode"].default == "fast"


def test_an_env_file_wins_over_the_environment(folder: Path, tmp_path: Path) -> None:
    env_file = tmp_path / "staging.env"
    env_file.write_text("# staging\nexport API_URL=https://staging.example.com\nTEAM='qa'\n")
    tool = load(folder, env_file=env_file, environ={"API_URL": "https://prod.example.com"})
    definition = tool.DEFINITION
    assert definition.backend.spec.origin == "https://staging.example.com"
    used = {s.variable: s for s in definition.http_source.substitutions}
    assert used["API_URL"].origin == f"env file {env_file}"
    assert used["TEAM"].value == "qa"
    assert used["REGION"].origin == "default"
    assert {s.variable for s in definition.substitutions} == {"PAGE_SIZE", "MODE", "LANG_CODE"}


def test_a_missing_variable_is_a_located_problem_naming_it(folder: Path) -> None:
    (found,) = problems(folder, environ={})
    source = folder / "source.yaml"
    assert found.endswith(
        "; and 1 problem that follows from it, in the tools that use source 'api'"
    )
    assert found.startswith(f"{source}:3:")
    assert "environment variable 'TEAM' is not set and has no default" in found
    assert "${TEAM:-default}" in found


def test_an_empty_variable_takes_the_default(folder: Path) -> None:
    tool = load(folder, environ={"TEAM": "x", "API_URL": ""})
    assert tool.DEFINITION.backend.spec.origin == "https://api.example.com"


@responses.activate
def test_a_substituted_value_is_never_a_template(folder: Path) -> None:
    environ = {"TEAM": "{{ credentials.secret }}", "LANG_CODE": "{% for x in y %}"}
    tool = load(folder, environ=environ)
    responses.get("https://api.example.com/v1/items/1", json={"title": "T"})
    assert ToolExecutor().execute(tool, {"id": "1"}).succeeded
    request = responses.calls[0].request
    assert request.headers["X-Team"] == "{{ credentials.secret }}"
    assert "lang=%7B%25+for+x+in+y+%25%7D" in str(request.url)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param("${TEAM}-{{ inputs.id }}", "cannot mix ${VAR}", id="mixed-with-template"),
        pytest.param("${TEAM", "'${' starts no variable reference", id="unclosed"),
        pytest.param("${1TEAM}", "'${' starts no variable reference", id="bad-name"),
    ],
)
def test_a_malformed_reference_is_a_located_problem(
    write: WriteFile, value: str, message: str
) -> None:
    write(SOURCE, "source.yaml")
    tool = write(TOOL.replace('lang: "${LANG_CODE:-en}"', f"lang: '{value}'"))
    found = problems(write.folder, environ={"TEAM": "x"})
    assert any(p.startswith(f"{tool}:15:") and message in p for p in found), found


def test_a_template_may_still_hold_dollar_signs(write: WriteFile) -> None:
    write(SOURCE, "source.yaml")
    write(TOOL.replace('lang: "${LANG_CODE:-en}"', "lang: '${{ inputs.id }}'"))
    tool = load(write.folder, environ={"TEAM": "x"})
    assert tool.name == "lookup"


def test_a_substituted_default_is_checked_as_its_type(write: WriteFile) -> None:
    write(SOURCE, "source.yaml")
    write(TOOL)
    found = problems(write.folder, environ={"TEAM": "x", "PAGE_SIZE": "ten"})
    assert any("parameters[1].default" in p and "invalid default" in p for p in found), found


NESTED = """\
    - name: filters
      type: dictionary
      required: false
      parameters:
        - {name: limit, type: integer, required: false, default: "${PAGE_SIZE:-10}"}
        - name: tags
          type: list
          required: false
          items: {type: string}
          default: ["${MODE}"]
"""


def test_defaults_nested_in_a_dictionary_are_substituted_and_the_document_kept(
    write: WriteFile,
) -> None:
    write(SOURCE, "source.yaml")
    write(TOOL.replace("output_schema:", NESTED + "output_schema:"))
    tool = load(write.folder, environ={"TEAM": "x", "PAGE_SIZE": "25"})
    filters = tool.input_schema["filters"].parameters
    assert filters is not None
    assert filters["limit"].default == 25
    assert filters["tags"].default == ["${MODE}"]  # only a string default is substituted
    (written,) = [
        p for p in tool.definition.raw["input_schema"]["parameters"] if p["name"] == "filters"
    ]
    assert written["parameters"][0]["default"] == "${PAGE_SIZE:-10}"


def test_variables_reach_only_the_documented_places(write: WriteFile) -> None:
    write(SOURCE, "source.yaml")
    text = TOOL.replace("name: lookup\n", "name: lookup\ndescription: ${TEAM}\n")
    write(text)
    tool = load(write.folder, environ={"TEAM": "x"})
    assert tool.description == "${TEAM}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("no equals sign\n", "expected NAME=value", id="malformed"),
        pytest.param(None, "Cannot read env file", id="missing"),
    ],
)
def test_a_bad_env_file_is_a_definition_error_naming_it(
    tmp_path: Path, text: str | None, message: str
) -> None:
    env_file = tmp_path / "x.env"
    if text is not None:
        env_file.write_text("SECRET=do-not-show\n" + text)
    with pytest.raises(DefinitionError, match=message) as info:
        Environment.load(env_file, {})
    assert str(env_file) in str(info.value)
    assert "do-not-show" not in str(info.value)


@responses.activate
def test_an_argument_naming_a_variable_is_sent_as_it_is(folder: Path) -> None:
    tool = load(folder, environ={"TEAM": "core", "SECRET_CONFIG": "do-not-leak"})
    responses.get("https://api.example.com/v1/items/%24%7BSECRET_CONFIG%7D", json={"title": "T"})
    assert ToolExecutor().execute(tool, {"id": "${SECRET_CONFIG}"}).succeeded
    url = str(responses.calls[0].request.url)
    assert "/items/%24%7BSECRET_CONFIG%7D?" in url
    assert "do-not-leak" not in url


@pytest.mark.parametrize(
    ("team", "message"),
    [
        pytest.param("a\r\nX-Injected: 1", "holds a line break or NUL", id="crlf"),
        pytest.param("a\x00b", "holds a line break or NUL", id="nul"),
    ],
)
def test_a_substituted_header_that_cannot_be_sent_is_a_load_problem(
    folder: Path, team: str, message: str
) -> None:
    found = problems(folder, environ={"TEAM": team})
    assert any(message in p and "X-Team" in p for p in found), found
    assert not any("X-Injected" in p for p in found)


def test_a_nested_reference_is_refused(write: WriteFile) -> None:
    write(SOURCE.replace("${REGION:-eu}", "${REGION:-${OTHER}}"), "source.yaml")
    write(TOOL)
    found = problems(write.folder, environ={"TEAM": "x"})
    assert any("'${' starts no variable reference" in p for p in found), found
