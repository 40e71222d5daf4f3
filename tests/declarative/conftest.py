"""Writing definition files for the declarative tests."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

WriteFile = Callable[..., Path]


@pytest.fixture
def write(tmp_path: Path) -> WriteFile:
    def write_file(text: str, name: str = "tool.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    return write_file


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
