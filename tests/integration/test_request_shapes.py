"""Request shapes against httpbin's /anything, which echoes what it was sent:
repeated form and query fields, a literal query string, a path of several segments."""

from __future__ import annotations

from agentkit import ToolExecutor
from tests.integration.conftest import MakeTool

ECHO = """\
name: echo
version: 1.0.0
input_schema:
  parameters:
    - {{name: labels, type: list, items: string}}
    - {{name: path, type: string}}
output_schema:
  parameters:
    - {{name: form, type: dictionary}}
    - {{name: args, type: dictionary}}
    - {{name: url, type: string}}
backend:
  http:
    method: POST
    url: {origin}/anything/{{{{ inputs.path | segments }}}}?per_page=2&state=open
    query: {{label: "{{{{ inputs.labels }}}}"}}
    form: {{label: ["{{{{ inputs.labels }}}}", fixed], title: one}}
    output:
      form: "{{{{ response.json.form }}}}"
      args: "{{{{ response.json.args }}}}"
      url: "{{{{ response.json.url }}}}"
"""


def test_form_and_query_lists_a_query_string_and_segments(
    make_tool: MakeTool, httpbin_url: str
) -> None:
    tool = make_tool(ECHO.format(origin=httpbin_url))
    result = ToolExecutor().execute(
        tool, {"labels": ["bug", "good first issue"], "path": "docs/read me.md"}
    )
    output = result.output
    assert output is not None
    assert output["form"] == {"label": ["bug", "good first issue", "fixed"], "title": "one"}
    assert output["args"] == {
        "per_page": "2",
        "state": "open",
        "label": ["bug", "good first issue"],
    }
    assert output["url"].startswith(f"{httpbin_url}/anything/docs/read%20me.md?")
