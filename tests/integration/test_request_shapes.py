"""Request shapes against httpbin's /anything, which echoes what it was sent:
repeated form and query fields, a literal query string, a path of several segments."""

from __future__ import annotations

import base64

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


UPLOAD = """\
name: upload
version: 1.0.0
input_schema:
  parameters:
    - {{name: image, type: string}}
    - {{name: notes, type: string}}
output_schema:
  parameters:
    - {{name: form, type: dictionary}}
    - {{name: files, type: dictionary}}
    - {{name: content_type, type: string}}
backend:
  http:
    method: POST
    url: {origin}/anything
    multipart:
      fields: {{title: Screenshot, labels: [bug, ui]}}
      files:
        image: {{content: "{{{{ inputs.image }}}}", encoding: base64, filename: shot.png, content_type: image/png}}
        notes: {{content: "{{{{ inputs.notes }}}}"}}
    output:
      form: "{{{{ response.json.form }}}}"
      files: "{{{{ response.json.files }}}}"
      content_type: "{{{{ response.json.headers['Content-Type'] }}}}"
"""


def test_a_multipart_upload_of_a_binary_and_a_text_file(
    make_tool: MakeTool, httpbin_url: str
) -> None:
    image = bytes(range(256)) * 4
    encoded = base64.b64encode(image).decode()
    result = ToolExecutor().execute(
        make_tool(UPLOAD.format(origin=httpbin_url)), {"image": encoded, "notes": "héllo"}
    )
    output = result.output
    assert output is not None
    assert output["form"] == {"title": "Screenshot", "labels": ["bug", "ui"]}
    # httpbin echoes a file it cannot show as text as a data: URL of its bytes.
    assert output["files"] == {"image": f"data:image/png;base64,{encoded}", "notes": "héllo"}
    assert output["content_type"].startswith("multipart/form-data; boundary=")
