"""The import's fast writers: YAML as PyYAML's safe dumper writes it, the lock file a line per operation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.openapi import import_openapi
from agentkit.openapi.emit import OPTIONS, dump

TRACKER = Path(__file__).resolve().parents[2] / "examples" / "openapi" / "tracker.yaml"

_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

DOCUMENTS = [
    pytest.param({"name": "get_issue", "version": "1.0.0", "n": 1, "ok": True}, id="flat"),
    pytest.param(
        {"input_schema": {"parameters": [{"name": "id", "type": "integer", "minimum": 1}]}},
        id="nested-flow",
    ),
    pytest.param(
        {"strings": ["true", "yes", "~", "null", "", "1", "0x1f", "1:30", "2020-01-01", "1e3"]},
        id="strings-that-look-like-other-types",
    ),
    pytest.param(
        {"text": ["a: b", "- x", "# c", "{{ inputs.id }}", "x\ny", "tab\there", "é", "\u2028"]},
        id="strings-that-need-quotes",
    ),
    pytest.param({"floats": [1.5, -0.0, 1e20, float("inf"), float("-inf")]}, id="floats"),
    pytest.param({"empty": {}, "none": [], "null": None, "deep": [[1], {"x": {}}]}, id="empty"),
    pytest.param({"long": "word " * 60}, id="folded"),
    pytest.param([{"a": 1}, "b"], id="top-level-list"),
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_dump_writes_what_the_safe_dumper_writes(document: Any) -> None:
    text = dump(document)
    assert text == yaml.dump(document, Dumper=_DUMPER, **OPTIONS)
    assert yaml.safe_load(text) == document


def test_collections_are_written_in_block_style_and_no_string_is_folded() -> None:
    template = "{{ inputs.owner }}/" * 12 + '{{ response.json | map(attribute="title") | list }}'
    description = "The account owner of the repository, " * 5 + "not case sensitive."
    document = {
        "input_schema": {
            "parameters": [
                {"name": "owner", "type": "string", "description": description},
                {"name": "state", "type": "string", "enum": ["open", "closed"]},
            ]
        },
        "backend": {"http": {"path": template, "query": {}, "output": {"all": template}}},
        "examples": [],
    }
    assert dump(document) == (
        "input_schema:\n"
        "  parameters:\n"
        "  - name: owner\n"
        "    type: string\n"
        f"    description: {description}\n"
        "  - name: state\n"
        "    type: string\n"
        "    enum:\n"
        "    - open\n"
        "    - closed\n"
        "backend:\n"
        "  http:\n"
        f"    path: '{template}'\n"
        "    query: {}\n"
        "    output:\n"
        f"      all: '{template}'\n"
        "examples: []\n"
    )
    assert len(template) > 2 * 120
    assert len(description) > 120


def test_values_shared_in_the_document_are_written_out_not_aliased() -> None:
    shared = {"name": "id", "type": "string"}
    text = dump({"a": [shared], "b": [shared]})
    assert "&" not in text
    assert "*" not in text
    assert yaml.safe_load(text) == {"a": [shared], "b": [shared]}


def test_the_lock_file_has_a_line_per_operation_and_reads_back(tmp_path: Path) -> None:
    spec = TRACKER
    import_openapi(spec, source="tracker", out=tmp_path, check=False)
    text = (tmp_path / "tracker.openapi-lock.json").read_text(encoding="utf-8")
    data = json.loads(text)
    operations = [line for line in text.splitlines() if line.startswith('  "')]
    assert len(operations) == len(data["operations"]) > 1
    assert [json.loads("{" + line.rstrip(",") + "}") for line in operations] == [
        {key: value} for key, value in data["operations"].items()
    ]
