"""Sources: one origin and its shared settings, merged into the tools that name it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import responses
from responses import matchers

from agentkit import DefinitionError, ToolExecutor, ToolRegistry, load_tools
from tests.declarative.conftest import WriteFile

SOURCE = """\
source: tracker
description: The issue tracker
base_url: https://tracker.example.com/api/v2/
credentials: [tracker-token]
auth: {bearer: tracker-token}
headers: {Accept: application/json, X-Client: agentkit}
query: {format: full}
timeout: {total: 20}
"""

TOOL = """\
name: get_item
version: 1.0.0
input_schema:
  parameters:
    - {name: id, type: string}
output_schema:
  parameters:
    - {name: title, type: string}
backend:
  http:
    source: tracker
    path: /items/{{ inputs.id }}
"""


def load(*paths: Path, **options: Any) -> dict[str, Any]:
    registry = ToolRegistry()
    load_tools(*paths, registry=registry, **options)
    return {tool.name: tool for tool in registry}


def problems(*paths: Path, **options: Any) -> list[str]:
    with pytest.raises(DefinitionError) as info:
        load_tools(*paths, **options)
    return [str(problem) for problem in info.value.problems]


def executor() -> ToolExecutor:
    return ToolExecutor(credentials={"tracker-token": "t0k-tracker", "other": "other-key"})


@responses.activate
def test_a_tool_takes_its_sources_origin_auth_headers_and_query(write: WriteFile) -> None:
    write(SOURCE, "source.yaml")
    write(TOOL)
    tool = load(write.folder)["get_item"]
    responses.get(
        "https://tracker.example.com/api/v2/items/a%2Fb",
        match=[
            matchers.query_param_matcher({"format": "full"}),
            matchers.header_matcher(
                {
                    "Authorization": "Bearer t0k-tracker",
                    "Accept": "application/json",
                    "X-Client": "agentkit",
                }
            ),
        ],
        json={"title": "T", "extra": 1},
    )
    result = executor().execute(tool, {"id": "a/b"})
    assert result.output == {"title": "T"}
    assert tool.credential_names == ("tracker-token",)
    assert tool.DEFINITION.backend.spec.total_timeout == 20


@responses.activate
def test_a_tools_keys_merge_over_the_sources(write: WriteFile) -> None:
    write(SOURCE, "source.yaml")
    text = TOOL + (
        "    headers: {accept: text/plain, X-Extra: '1'}\n"
        "    query: {format: short, page: '2'}\n"
        "    credentials_unused: 1\n"
    ).replace("    credentials_unused: 1\n", "    timeout: 3\n    auth: {bearer: other}\n")
    text = text.replace("name: get_item", "name: get_item\ncredentials: [other]")
    write(text)
    tool = load(write.folder)["get_item"]
    responses.get(
        "https://tracker.example.com/api/v2/items/1",
        match=[matchers.query_param_matcher({"format": "short", "page": "2"})],
        json={"title": "T"},
    )
    assert executor().execute(tool, {"id": "1"}).succeeded
    sent = responses.calls[0].request.headers
    # Header names merge case-insensitively: the tool's 'accept' replaced the source's.
    assert sent["Accept"] == "text/plain"
    assert [name for name in sent if name.lower() == "accept"] == ["accept"]
    assert sent["X-Client"] == "agentkit"
    assert sent["X-Extra"] == "1"
    assert sent["Authorization"] == "Bearer other-key"
    spec = tool.DEFINITION.backend.spec
    assert (spec.read_timeout, spec.total_timeout) == (3.0, 60.0)  # replaced, not merged
    assert tool.credential_names == ("other", "tracker-token")


def test_sources_load_from_any_file_and_any_order(write: WriteFile, tmp_path: Path) -> None:
    write(TOOL, "a/tool.yaml")
    write(SOURCE, "z/source.yaml")
    assert list(load(tmp_path)) == ["get_item"]


def test_a_source_and_its_tools_can_share_a_file(write: WriteFile) -> None:
    path = write(SOURCE + "---\n" + TOOL)
    assert list(load(path)) == ["get_item"]


def test_a_url_tool_keeps_working_beside_sources(write: WriteFile) -> None:
    write(SOURCE, "source.yaml")
    url_tool = TOOL.replace("source: tracker\n    path: ", "url: https://other.example.com")
    write(url_tool)
    spec = load(write.folder)["get_item"].DEFINITION.backend.spec
    assert spec.origin == "https://other.example.com"


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize(
    ("change", "needle", "message"),
    [
        pytest.param(
            ("source: tracker", "source: trackr"),
            "source: trackr",
            "unknown source 'trackr' (did you mean 'tracker'?)",
            id="unknown-with-hint",
        ),
        pytest.param(
            ("source: tracker", "source: tracker\n    url: https://a.example.com/x"),
            "url:",
            "give 'url' or 'source' with 'path', not both",
            id="url-and-source",
        ),
        pytest.param(
            ("path: /items/", "path: items/"),
            "path:",
            "'path' must be a string starting with '/'",
            id="relative-path",
        ),
        pytest.param(
            ("path: /items/{{ inputs.id }}", "path: //evil.example.com/{{ inputs.id }}"),
            "path:",
            "",
            id="protocol-relative-path-is-a-path",
        ),
    ],
)
def test_a_tools_use_of_a_source_is_located_at_both(
    write: WriteFile, tmp_path: Path, change: tuple[str, str], needle: str, message: str
) -> None:
    source = write(SOURCE, "source.yaml")
    tool = write(TOOL.replace(*change))
    if not message:  # "//host" after the base URL is a path on the source's own origin
        spec = load(tmp_path)["get_item"].DEFINITION.backend.spec
        assert spec.origin == "https://tracker.example.com"
        return
    (found,) = problems(tmp_path)
    assert found.startswith(f"{tool}:{line_of(tool, needle)}:")
    assert message in found
    if "unknown" not in message:
        assert f"{source}:1" in found


def test_path_without_a_source_is_a_problem(write: WriteFile) -> None:
    tool = write(TOOL.replace("source: tracker\n", ""))
    (found,) = problems(tool)
    assert "'path' goes with 'source'" in found


def test_no_source_at_all_says_what_a_source_is(write: WriteFile) -> None:
    (found,) = problems(write(TOOL))
    assert "unknown source 'tracker'; sources defined: none" in found


def test_a_duplicate_source_names_the_first(write: WriteFile, tmp_path: Path) -> None:
    first = write(SOURCE, "a.yaml")
    second = write(SOURCE, "b.yaml")
    (found,) = problems(tmp_path)
    assert found.startswith(f"{second}:1:")
    assert f"already defined at {first}:1" in found


def test_a_broken_source_is_reported_once_with_a_count_of_its_tools(
    write: WriteFile, tmp_path: Path
) -> None:
    source = write(SOURCE.replace("timeout: {total: 20}", "timeout: {total: -1}"), "s.yaml")
    write(TOOL)
    (found,) = problems(tmp_path)
    assert found.startswith(f"{source}:{line_of(source, 'timeout')}:")
    assert "expected a number of seconds above 0" in found
    assert found.endswith(
        "; and 1 problem that follows from it, in the tools that use source 'tracker'"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            ("base_url: https://tracker.example.com/api/v2/", "base_url: ftp://x"),
            "is not an http:// or https:// URL",
            id="scheme",
        ),
        pytest.param(
            (
                "base_url: https://tracker.example.com/api/v2/",
                "base_url: https://{{ inputs.host }}/",
            ),
            "templates may not reach a source's base_url",
            id="template",
        ),
        pytest.param(
            (
                "base_url: https://tracker.example.com/api/v2/",
                "base_url: https://a.example.com/?x=1",
            ),
            "has a query",
            id="query",
        ),
        pytest.param(
            ("base_url: https://tracker.example.com/api/v2/", "base_url: "),
            "missing 'base_url'",
            id="missing",
        ),
        pytest.param(
            ("auth: {bearer: tracker-token}", "auth: {bearer: nope}"),
            "credential 'nope' is used but not declared",
            id="undeclared-credential",
        ),
        pytest.param(
            ("X-Client: agentkit", "X-Client: '{{ inputs.x }}'"),
            "'inputs.x' is not a declared input",
            id="inputs-in-a-source",
        ),
        pytest.param(
            ("description: The issue tracker", "method: GET"),
            "unknown key 'method'",
            id="not-a-shared-key",
        ),
        pytest.param(("source: tracker", "source: 'a b'"), "invalid source name", id="name"),
    ],
)
def test_a_sources_own_problems_are_located_in_it(
    write: WriteFile, change: tuple[str, str], message: str
) -> None:
    source = write(SOURCE.replace(*change), "s.yaml")
    found = problems(source)
    assert any(message in problem and problem.startswith(f"{source}:") for problem in found), found


def test_path_templates_never_reach_the_origin(write: WriteFile) -> None:
    write(SOURCE, "source.yaml")
    for path in ("'{{ inputs.id }}/x'", "'@{{ inputs.id }}'"):
        text = TOOL.replace("path: /items/{{ inputs.id }}", f"path: {path}")
        write(text)
        found = problems(write.folder)
        assert any("'path' must be a string starting with '/'" in p for p in found)


@responses.activate
def test_a_path_argument_cannot_leave_the_sources_origin(write: WriteFile) -> None:
    write(SOURCE, "source.yaml")
    write(TOOL)
    tool = load(write.folder)["get_item"]
    responses.get(
        "https://tracker.example.com/api/v2/items/%2F%2Fevil.example.com%2Fx", json={"title": "t"}
    )
    assert executor().execute(tool, {"id": "//evil.example.com/x"}).succeeded


@responses.activate
def test_auth_none_switches_the_sources_auth_off_and_its_credential(write: WriteFile) -> None:
    write(SOURCE, "source.yaml")
    write(TOOL.replace("    source: tracker\n", "    source: tracker\n    auth: none\n"))
    tool = load(write.folder)["get_item"]
    responses.get(
        "https://tracker.example.com/api/v2/items/1",
        match=[matchers.query_param_matcher({"format": "full"})],
        json={"title": "T"},
    )
    # No credential set at all: the tool needs none, and sends none.
    result = ToolExecutor(credentials={}).execute(tool, {"id": "1"})
    assert result.succeeded, result.error
    assert "Authorization" not in responses.calls[0].request.headers
    assert responses.calls[0].request.headers["X-Client"] == "agentkit"
    assert tool.credential_names == ()


def test_auth_none_keeps_a_credential_the_sources_headers_use(write: WriteFile) -> None:
    source = SOURCE.replace(
        "headers: {Accept: application/json, X-Client: agentkit}",
        "headers: {X-Key: \"{{ credentials['tracker-token'] }}\"}",
    )
    write(source, "source.yaml")
    write(TOOL.replace("    source: tracker\n", "    source: tracker\n    auth: none\n"))
    assert load(write.folder)["get_item"].credential_names == ("tracker-token",)


def test_auth_none_on_a_tool_without_a_source_is_no_auth(write: WriteFile) -> None:
    write(
        TOOL.replace(
            "    source: tracker\n    path: ", "    auth: none\n    url: https://x.example/"
        )
    )
    assert load(write.folder)["get_item"].DEFINITION.backend.spec.auth is None


def test_another_word_for_auth_is_a_located_problem(write: WriteFile) -> None:
    write(SOURCE, "source.yaml")
    write(TOOL.replace("    source: tracker\n", "    source: tracker\n    auth: off\n"))
    [problem] = problems(write.folder)
    assert "backend.http.auth" in problem
    assert "expected none or one of {bearer: CRED}" in problem
