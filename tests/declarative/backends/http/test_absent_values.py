"""What an HTTP tool leaves out of its request: a header that renders empty, and a
nested JSON object whose every field is absent."""

from __future__ import annotations

import json
from typing import Any

import pytest
import responses

from agentkit import ToolExecutor, ToolRegistry, load_tools
from tests.declarative.conftest import WriteFile

TOOL = """\
name: absent
version: 1.0.0
input_schema:
  parameters:
    - {{name: q, type: string, required: false}}
    - {{name: state, type: string, required: false}}
    - {{name: label, type: string, required: false}}
output_schema:
  parameters:
    - {{name: ok, type: boolean}}
backend:
  http:
    method: POST
    url: https://api.example.com/items
{http}
    output:
      ok: "{{{{ response.json.ok }}}}"
"""


def call(
    write: WriteFile, http: str, inputs: dict[str, Any], environ: dict[str, str] | None = None
) -> responses.Call:
    registry = ToolRegistry()
    load_tools(write(TOOL.format(http=http)), registry=registry, environ=environ or {})
    responses.add(responses.POST, "https://api.example.com/items", json={"ok": True})
    tool = registry.lookup("absent")
    assert tool is not None
    result = ToolExecutor().execute(tool, inputs)
    assert result.output == {"ok": True}
    (sent,) = responses.calls
    return sent


# -- headers ------------------------------------------------------------------------------------

HEADERS = """\
    headers:
      X-Tenant: "${TENANT:-}"
      X-Query: "{{ inputs.q }}"
      X-Fixed: kept
"""


@pytest.mark.parametrize(
    ("environ", "inputs", "expected"),
    [
        pytest.param({}, {}, {"X-Fixed": "kept"}, id="unset-variable-and-absent-input"),
        pytest.param(
            {"TENANT": "acme"},
            {"q": "shoes"},
            {"X-Tenant": "acme", "X-Query": "shoes", "X-Fixed": "kept"},
            id="both-given",
        ),
        pytest.param({"TENANT": ""}, {"q": ""}, {"X-Fixed": "kept"}, id="both-empty"),
    ],
)
@responses.activate
def test_a_header_that_renders_empty_is_left_out(
    write: WriteFile, environ: dict[str, str], inputs: dict[str, Any], expected: dict[str, str]
) -> None:
    sent = call(write, HEADERS, inputs, environ)
    ours = {name: sent.request.headers[name] for name in ("X-Tenant", "X-Query", "X-Fixed")
            if name in sent.request.headers}  # fmt: skip
    assert ours == expected


# -- JSON bodies --------------------------------------------------------------------------------

BODY = """\
    json:
      q: "{{ inputs.q }}"
      filter:
        state: "{{ inputs.state }}"
        labels: {name: "{{ inputs.label }}"}
      pairs: [{state: "{{ inputs.state }}"}, "{{ inputs.q }}"]
      empty: {}
"""


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        pytest.param(
            {"q": "x", "state": "open", "label": "bug"},
            {
                "q": "x",
                "filter": {"state": "open", "labels": {"name": "bug"}},
                "pairs": [{"state": "open"}, "x"],
                "empty": {},
            },
            id="all-given",
        ),
        pytest.param(
            {"q": "x", "state": "open"},
            {"q": "x", "filter": {"state": "open"}, "pairs": [{"state": "open"}, "x"], "empty": {}},
            id="innermost-object-absent",
        ),
        pytest.param(
            {"q": "x"},
            # filter's fields all absent: filter itself is left out, labels with it; a
            # list keeps its item's position as {}; a mapping written empty stays.
            {"q": "x", "pairs": [{}, "x"], "empty": {}},
            id="nested-objects-absent",
        ),
    ],
)
@responses.activate
def test_a_nested_object_whose_fields_are_all_absent_is_left_out(
    write: WriteFile, inputs: dict[str, Any], expected: dict[str, Any]
) -> None:
    sent = call(write, BODY, inputs)
    assert json.loads(sent.request.body or b"") == expected


@responses.activate
def test_a_body_whose_fields_are_all_absent_is_sent_as_an_empty_object(write: WriteFile) -> None:
    sent = call(write, '    json: {filter: {state: "{{ inputs.state }}"}}\n', {})
    assert sent.request.headers["Content-Type"] == "application/json"
    assert json.loads(sent.request.body or b"") == {}
