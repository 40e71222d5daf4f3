"""Writing definition files for the declarative tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest


class WriteFile:
    """``write(text, name)`` writes a definition file under ``folder`` and returns its path."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __call__(self, text: str, name: str = "tool.yaml") -> Path:
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path


@pytest.fixture
def write(tmp_path: Path) -> WriteFile:
    return WriteFile(tmp_path)


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
