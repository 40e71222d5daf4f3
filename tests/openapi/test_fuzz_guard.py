"""Whatever `agentkit import openapi` writes, `agentkit validate --strict` accepts.

The descriptions in fixtures/openapi/fuzz are malformed or odd on purpose (the
December 2026 review's batch): each either imports into a folder that validates
without a warning, or is refused with exit 2; never a traceback, never a folder
`validate` rejects.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit import load_tools
from agentkit.cli import main
from agentkit.openapi import OpenAPIError, import_openapi

FUZZ = Path(__file__).parent.parent / "fixtures" / "openapi" / "fuzz"


def _status(argv: list[str]) -> int:
    """The exit status of the command: returned, or raised as ``SystemExit`` on an error."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.parametrize("spec", sorted(FUZZ.iterdir()), ids=lambda path: path.name)
def test_an_import_writes_only_what_validate_strict_accepts(
    tmp_path: Path, spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tools.d"
    status = _status(["import", "openapi", str(spec), "--source", "s", "--out", str(out)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert status in (0, 2), captured.err
    if status == 0:
        assert _status(["validate", "--strict", "--tools", str(out)]) == 0, capsys.readouterr()


def _document(path: str, operation: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": {
            path: {
                "get": {
                    "operationId": "odd",
                    "responses": {"200": {"description": "ok"}},
                    **operation,
                }
            },
            "/fine": {"get": {"operationId": "fine", "responses": {"200": {"description": "ok"}}}},
        },
        **extra,
    }


def _header(name: str) -> dict[str, Any]:
    return {
        "parameters": [
            {"name": name, "in": "header", "required": True, "schema": {"type": "string"}}
        ]
    }


@pytest.mark.parametrize(
    ("document", "field"),
    [
        (_document("/a", _header("X: y")), "backend.http.headers.X: y: invalid header name"),
        (
            _document("/a", _header("X-A\r\nX-B")),
            r"backend.http.headers.X-A\r\nX-B: invalid header name",
        ),
        (
            _document(
                "/a",
                {
                    "parameters": [
                        {
                            "name": "n",
                            "in": "query",
                            "schema": {"type": "number", "maximum": float("nan")},
                        }
                    ]
                },
            ),
            "input_schema.parameters[0].maximum: expected a finite number",
        ),
        (_document("a", {}), "backend.http.path: 'path' must be a string starting with '/'"),
        (
            _document(
                "/a",
                {"security": [{"k": []}]},
                components={
                    "securitySchemes": {"k": {"type": "apiKey", "in": "header", "name": "K\r\nX"}}
                },
            ),
            "backend.http.auth.api_key.name",
        ),
    ],
    ids=["header-colon", "header-crlf", "maximum-nan", "path-no-slash", "api-key-crlf"],
)
def test_an_operation_whose_definition_would_not_load_is_skipped_with_a_note(
    tmp_path: Path, document: dict[str, Any], field: str
) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(document), encoding="utf-8")
    report = import_openapi(spec, source="s", out=tmp_path / "out")
    [skipped] = report.skipped
    assert skipped.operation == "odd"
    assert str(skipped.problem).startswith("#/paths/")
    assert f"would write a definition that does not load: {field}" in str(skipped.problem)
    assert [cls().name for cls in load_tools(tmp_path / "out")] == ["fine"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"servers": [{"url": "gopher://127.0.0.1:9"}]}, "is not an http:// or"),
        ({"servers": [{"url": "http://127.0.0.1:9/a b"}]}, "no user info, spaces or braces"),
    ],
    ids=["scheme", "space"],
)
def test_a_source_that_would_not_load_refuses_the_import(
    tmp_path: Path, extra: dict[str, Any], message: str
) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(_document("/a", {}, **extra)), encoding="utf-8")
    with pytest.raises(
        OpenAPIError, match=f"would write a definition that does not load: base_url: .*{message}"
    ):
        import_openapi(spec, source="s", out=tmp_path / "out")
    assert not (tmp_path / "out").exists()
