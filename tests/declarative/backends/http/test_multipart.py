"""``multipart:`` bodies: text fields and files (text or base64), bounded, nothing sent when bad."""

from __future__ import annotations

import base64
from email.message import Message
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import pytest
import responses

from agentkit import DefinitionError, ToolExecutionError, ToolExecutor, ToolRegistry, load_tools
from tests.declarative.conftest import WriteFile

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
SECRET = "mp-s3cret/with+odd=chars"

TOOL = """\
name: upload
version: 1.0.0
credentials: [api-key]
input_schema:
  parameters:
    - {{name: title, type: string, required: false}}
    - {{name: labels, type: list, items: string, required: false}}
    - {{name: image, type: string, required: false}}
    - {{name: notes, type: string, required: false}}
    - {{name: name, type: string, required: false}}
    - {{name: kind, type: string, required: false}}
output_schema:
  parameters:
    - {{name: ok, type: boolean}}
backend:
  http:
    method: POST
    url: https://api.example.com/upload
{body}
"""

BODY = """\
    multipart:
      fields: {title: "{{ inputs.title }}", labels: ["{{ inputs.labels }}", fixed]}
      files:
        image:
          content: "{{ inputs.image }}"
          encoding: base64
          filename: "{{ inputs.name }}"
          content_type: "{{ inputs.kind }}"
        notes:
          content: "{{ inputs.notes }}"
      max_bytes: 2000"""


def tool_from(write: WriteFile, body: str = BODY) -> Any:
    registry = ToolRegistry()
    load_tools(write(TOOL.format(body=body)), registry=registry)
    (tool,) = list(registry)
    return tool


def run(tool: Any, arguments: dict[str, Any]) -> Any:
    executor = ToolExecutor(credentials={"api-key": SECRET})
    return executor.execute(tool, arguments, raise_on_failure=False)


def sent_parts() -> list[Message]:
    request = responses.calls[0].request
    body = request.body if isinstance(request.body, bytes) else str(request.body).encode()
    head = f"Content-Type: {request.headers['Content-Type']}\r\n\r\n".encode()
    message = BytesParser().parsebytes(head + body)
    assert message.is_multipart()
    parts = message.get_payload()
    assert isinstance(parts, list)
    return [part for part in parts if isinstance(part, Message)]


def described(part: Message) -> tuple[str | None, str | None, str | None, bytes]:
    payload = part.get_payload(decode=True)
    assert isinstance(payload, bytes)
    content_type = part["Content-Type"]
    name = part.get_param("name", header="content-disposition")
    assert name is None or isinstance(name, str)
    return name, part.get_filename(), str(content_type) if content_type else None, payload


@responses.activate
def test_fields_lists_and_files_are_sent_as_multipart_form_data(write: WriteFile) -> None:
    responses.post("https://api.example.com/upload", json={"ok": True})
    result = run(
        tool_from(write),
        {
            "title": "A bug",
            "labels": ["bug", "ui"],
            "image": base64.b64encode(PNG).decode(),
            "name": "shot.png",
            "kind": "image/png",
            "notes": "héllo\nworld",
        },
    )
    assert result.output == {"ok": True}
    assert (
        responses.calls[0]
        .request.headers["Content-Type"]
        .startswith("multipart/form-data; boundary=")
    )
    assert [described(part) for part in sent_parts()] == [
        ("title", None, None, b"A bug"),
        ("labels", None, None, b"bug"),
        ("labels", None, None, b"ui"),
        ("labels", None, None, b"fixed"),
        ("image", "shot.png", "image/png", PNG),
        ("notes", "notes", "text/plain; charset=utf-8", "héllo\nworld".encode()),
    ]


@responses.activate
def test_defaults_and_null_parts(write: WriteFile) -> None:
    responses.post("https://api.example.com/upload", json={"ok": True})
    # Wrapped base64 is accepted; a null file and null fields are left out.
    wrapped = "\n".join(base64.encodebytes(PNG).decode().split())
    assert run(tool_from(write), {"image": wrapped}).succeeded
    assert [described(part) for part in sent_parts()] == [
        ("labels", None, None, b"fixed"),
        ("image", "image", "application/octet-stream", PNG),
    ]


@pytest.mark.parametrize(
    ("body", "arguments", "expected"),
    [
        pytest.param(
            BODY,
            {"image": "not base64!"},
            "multipart file 'image': the content is not valid base64 (the value is not shown)",
            id="bad-base64",
        ),
        pytest.param(
            BODY,
            {"image": base64.b64encode(b"x" * 3000).decode()},
            "multipart file 'image': the multipart body would be over max_bytes",
            id="base64-over",
        ),
        pytest.param(
            BODY,
            {"notes": "x" * 2001},
            "multipart file 'notes': the multipart body would be over max_bytes (2000 bytes)",
            id="text-over",
        ),
        pytest.param(
            BODY,
            {"notes": "é" * 1500},
            "the multipart body would be over max_bytes (2000 bytes); nothing was sent",
            id="utf8-bytes-counted",
        ),
        pytest.param(
            BODY,
            {"title": "t" * 2001},
            "the multipart body would be over max_bytes (2000 bytes)",
            id="fields-over",
        ),
        pytest.param(
            BODY,
            {"image": "AAAA", "kind": "text/plain\r\nX-Evil: 1"},
            "multipart file 'image': content_type would contain a line break or NUL",
            id="media-type-crlf",
        ),
        pytest.param(
            BODY,
            {"image": "AAAA", "kind": "not a type"},
            "multipart file 'image': content_type is not a media type such as 'image/png'",
            id="media-type",
        ),
        pytest.param(
            BODY,
            {"image": "AAAA", "name": "a\r\nb.png"},
            "multipart file 'image': filename would contain a line break or NUL",
            id="filename-crlf",
        ),
        pytest.param(
            BODY.replace('"{{ inputs.title }}"', "null").replace(
                '["{{ inputs.labels }}", fixed]', "null"
            ),
            {},
            "every multipart field and file rendered null: nothing to send",
            id="nothing",
        ),
        pytest.param(
            BODY.replace('content: "{{ inputs.notes }}"', 'content: "{{ [1] }}"'),
            {},
            "multipart file 'notes': the content must render text, got list",
            id="content-not-text",
        ),
    ],
)
@responses.activate
def test_a_bad_part_fails_the_call_before_anything_is_sent(
    write: WriteFile, body: str, arguments: dict[str, Any], expected: str
) -> None:
    result = run(tool_from(write, body), arguments)
    assert isinstance(result.error, ToolExecutionError)
    assert expected in str(result.error)
    assert "Evil" not in str(result.error)
    assert len(responses.calls) == 0


@responses.activate
def test_a_quote_in_a_file_name_is_escaped_not_injected(write: WriteFile) -> None:
    responses.post("https://api.example.com/upload", json={"ok": True})
    assert run(tool_from(write), {"image": "AAAA", "name": 'a"; name="x'}).succeeded
    request_body = responses.calls[0].request.body
    assert isinstance(request_body, bytes)
    assert b'filename="a%22; name=%22x"' in request_body


@responses.activate
def test_a_file_made_from_a_credential_is_redacted_from_errors(write: WriteFile) -> None:
    responses.post("https://api.example.com/upload", status=500, body=f"echo: {SECRET}")
    body = BODY.replace('"{{ inputs.notes }}"', "\"{{ credentials['api-key'] }}\"")
    result = run(tool_from(write, body), {})
    assert "returned 500" in str(result.error)
    assert SECRET not in str(result.error)


# -- load time -----------------------------------------------------------------------------------


def load_problems(write: WriteFile, body: str) -> list[str]:
    path: Path = write(TOOL.format(body=body))
    with pytest.raises(DefinitionError) as info:
        load_tools(path)
    return [str(problem).split(": ", 1)[1] for problem in info.value.problems]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            "    multipart: {fields: {a: b}}\n    content_type: multipart/mixed",
            "backend.http.content_type: 'content_type' does not go with 'multipart'",
            id="content-type",
        ),
        pytest.param(
            "    multipart: {fields: {a: b}}\n    form: {a: b}",
            "backend.http.multipart: give one body: 'form' or 'multipart', not both",
            id="two-bodies",
        ),
        pytest.param(
            "    multipart: {}",
            "backend.http.multipart: a multipart body needs 'fields', 'files' or both",
            id="empty",
        ),
        pytest.param(
            "    multipart: {files: {f: {content: x, encodng: base64}}}",
            "backend.http.multipart.files.f.encodng: unknown key 'encodng' "
            "(did you mean 'encoding'?)",
            id="file-key",
        ),
        pytest.param(
            "    multipart: {files: {f: {filename: a.txt}}}",
            "backend.http.multipart.files.f: a file needs 'content'",
            id="no-content",
        ),
        pytest.param(
            "    multipart: {files: {f: {content: x, encoding: hex}}}",
            "backend.http.multipart.files.f.encoding: expected 'text' (UTF-8) or 'base64'",
            id="encoding",
        ),
        pytest.param(
            "    multipart: {files: {f: {content: x, content_type: png}}}",
            "backend.http.multipart.files.f.content_type: 'png' is not a media type",
            id="literal-media-type",
        ),
        pytest.param(
            '    multipart: {files: {f: {content: "{{ inputs.imag }}"}}}',
            "backend.http.multipart.files.f.content: 'inputs.imag' is not a declared input "
            "(did you mean 'inputs.image'?)",
            id="unknown-input",
        ),
        pytest.param(
            '    multipart: {fields: {a: ["{{ inputs.titl }}"]}}',
            "backend.http.multipart.fields.a[0]: 'inputs.titl' is not a declared input",
            id="field-input",
        ),
        pytest.param(
            "    multipart: {fields: {a: b}, max_bytes: 0}",
            "backend.http.multipart.max_bytes: expected a whole number of bytes from 1 to",
            id="max-bytes",
        ),
    ],
)
def test_multipart_problems_are_located(write: WriteFile, body: str, expected: str) -> None:
    found = load_problems(write, body)
    assert any(problem.startswith(expected) for problem in found), found
