"""A source whose origin comes from the environment, against json-server (a real REST server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.cli import main

SOURCE = """\
source: tracker
description: The json-server tracker
base_url: ${TRACKER_URL:-https://tracker.invalid}
query: {_sort: id}
headers: {X-Team: "${TEAM:-core}"}
timeout: {total: 10}
"""
TOOLS = """\
name: list_posts
version: 1.0.0
input_schema:
  parameters:
    - {name: author, type: string, required: false}
    - {name: limit, type: integer, required: false, default: "${PAGE_SIZE:-2}"}
output_schema:
  parameters: [{name: titles, type: list, items: string}]
backend:
  http:
    source: tracker
    path: /posts
    query: {author: "{{ inputs.author }}", _limit: "{{ inputs.limit }}"}
    output: {titles: "{{ response.json | map(attribute='title') | list }}"}
---
name: get_post
version: 1.0.0
input_schema:
  parameters: [{name: id, type: integer}]
output_schema:
  parameters: [{name: title, type: string}, {name: author, type: string}]
backend:
  http: {source: tracker, path: "/posts/{{ inputs.id }}"}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "tracker.yaml").write_text(SOURCE)
    (folder / "posts.yaml").write_text(TOOLS)
    return folder


def test_the_environment_points_a_source_at_json_server(folder: Path, json_server: str) -> None:
    registry = ToolRegistry()
    load_tools(folder, registry=registry, environ={"TRACKER_URL": json_server})
    run = ToolExecutor()
    listed = run.execute(registry["list_posts"], {"author": "maintainers"})
    assert listed.output == {"titles": ["agentkit", "YAML tools"]}
    limited = run.execute(registry["list_posts"], {})  # ${PAGE_SIZE:-2} as the default limit
    assert limited.output == {"titles": ["json-server", "agentkit"]}
    assert run.execute(registry["get_post"], {"id": 3}).output == {
        "title": "YAML tools",
        "author": "maintainers",
    }


def test_an_env_file_wins_over_the_environment(
    folder: Path, tmp_path: Path, json_server: str
) -> None:
    env_file = tmp_path / "local.env"
    env_file.write_text(f"TRACKER_URL={json_server}\nPAGE_SIZE=1\n")
    registry = ToolRegistry()
    closed = "http://127.0.0.1:9"  # nothing listens there
    load_tools(folder, registry=registry, env_file=env_file, environ={"TRACKER_URL": closed})
    listed = ToolExecutor().execute(registry["list_posts"], {})
    assert listed.output == {"titles": ["json-server"]}


def test_without_an_override_the_default_origin_is_kept(folder: Path) -> None:
    registry = ToolRegistry()
    load_tools(folder, registry=registry, environ={})
    definition = registry["get_post"].definition
    assert definition is not None
    assert definition.loaded_with()["http_source"]["base_url"] == "https://tracker.invalid"


def test_the_cli_calls_through_an_env_file(
    folder: Path, tmp_path: Path, json_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    env_file = tmp_path / "local.env"
    env_file.write_text(f"TRACKER_URL={json_server}\n")
    argv = ["call", "get_post", "id=1", "--tools", str(folder), "--env-file", str(env_file)]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["output"] == {"title": "json-server", "author": "typicode"}
