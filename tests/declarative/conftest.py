"""Writing definition files for the declarative tests."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import responses

from agentkit import DefinitionError, ToolExecutionError, ToolExecutor, ToolRegistry, load_tools
from tests.support import loopback


class WriteFile:
    """``write(text, name)`` writes a definition file under ``folder`` and returns its path."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __call__(self, text: str, name: str = "tool.yaml") -> Path:
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path


def load(path: Path) -> ToolRegistry:
    """The tools of ``path`` (a file or folder), in a registry of their own."""
    registry = ToolRegistry()
    load_tools(path, registry=registry)
    return registry


def problems(path: Path) -> list[str]:
    """The problems ``load_tools(path)`` reports, each as printed."""
    with pytest.raises(DefinitionError) as info:
        load_tools(path)
    return [str(problem) for problem in info.value.problems]


@pytest.fixture
def write(tmp_path: Path) -> WriteFile:
    return WriteFile(tmp_path)


@pytest.fixture
def oauth2_api() -> Iterator[str]:
    """An API on 127.0.0.1 whose ``/items/1`` answers ``{"seen": true}`` when it got an
    ``Authorization`` header (the OAuth2 tests' tool calls it)."""

    def behave(handler: loopback.Handler) -> None:
        handler.reply(200, {"seen": bool(handler.headers.get("Authorization"))})

    with loopback.serve({"/items/1": behave}) as origin:
        yield origin


HTTP_TOOL = """\
name: lookup
version: 1.0.0
description: Look a thing up.
credentials: [api-key]
input_schema:
  parameters:
    - {name: id, type: string}
    - {name: verbose, type: boolean, required: false}
output_schema:
  parameters:
    - {name: title, type: string}
backend:
  http:
    url: https://api.example.com/items/{{ inputs.id }}
    query: {verbose: "{{ inputs.verbose }}"}
    auth: {api_key: {credential: api-key, in: query, name: key}}
    output:
      title: "{{ response.json.title }}"
"""


def sent_path(tool: Any, arguments: dict[str, Any], executor: ToolExecutor | None = None) -> str:
    """Call ``tool`` (a ``responses`` mock answering) and return the path it sent, encoded."""
    assert (executor or ToolExecutor()).execute(tool, arguments).succeeded
    url = responses.calls[-1].request.url
    assert url is not None
    return urlsplit(url).path


def refused_before_sending(
    tool: Any, arguments: dict[str, Any], expected: str, executor: ToolExecutor | None = None
) -> str:
    """Call ``tool``: it must fail with ``expected`` in its error, nothing sent; the error."""
    result = (executor or ToolExecutor()).execute(tool, arguments, raise_on_failure=False)
    assert isinstance(result.error, ToolExecutionError)
    message = str(result.error)
    assert expected in message, message
    assert len(responses.calls) == 0
    return message


@pytest.fixture
def fresh_limits_store() -> Iterator[None]:
    """Limits and cached answers counted afresh for the test, in this process."""
    from agentkit.ratelimits import LocalStore, use_store

    before = use_store(LocalStore())
    yield
    use_store(before)
