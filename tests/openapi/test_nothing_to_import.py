"""An import that would write no tool is an error: exit 2, the file, where, why, the fix.

A source file alone is no import: a description without ``paths``, with empty or
null ``paths``, or whose every selected operation is left out says so, and
nothing is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkit.cli import main
from agentkit.openapi import OpenAPIError, Selection, import_openapi
from agentkit.openapi.update import update_openapi
from tests.openapi.test_import import OK, write_spec

INFO = {"title": "T", "version": "1"}
FIX = "an import needs at least one operation under 'paths'"


def _openapi(**extra: Any) -> dict[str, Any]:
    return {"openapi": "3.0.3", "info": INFO, **extra}


def _swagger(**extra: Any) -> dict[str, Any]:
    return {"swagger": "2.0", "info": INFO, "host": "api.example.com", **extra}


def _run(tmp_path: Path, document: dict[str, Any], *options: str) -> tuple[int, str, Path]:
    spec = write_spec(tmp_path, document)
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exited:
        main(["import", "openapi", str(spec), "--source", "api", "--out", str(out), *options])
    code = exited.value.code
    assert isinstance(code, int)
    return code, str(spec), out


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (_openapi(), f"#/paths: missing 'paths': the description defines no operation; {FIX}"),
        (
            {**_openapi(webhooks={"new": {"post": {"responses": OK}}}), "openapi": "3.1.0"},
            "#/paths: missing 'paths': the description defines no operation ('webhooks' are "
            "calls the API makes, not tools)",
        ),
        (
            _openapi(paths={}),
            f"#/paths: 'paths' is empty: the description defines no operation; {FIX}",
        ),
        (_openapi(paths=None), "#/paths: expected a mapping of paths to their operations"),
        (_openapi(paths=[]), "#/paths: expected a mapping of paths to their operations"),
        (
            _openapi(paths={"/a": {"parameters": []}, "/b": {"summary": "s"}}),
            "#/paths: none of the 2 path(s) has an operation (get, put, post, delete, options, "
            f"head, patch, trace); {FIX}",
        ),
        (
            _openapi(paths={"/a": {"$ref": "#/components/pathItems/A"}}),
            "#/paths: none of the 1 path(s) has an operation (get, put, post, delete, options, "
            "head, patch, trace) (1 given by a path item $ref, which is not followed)",
        ),
        (_swagger(), f"#/paths: missing 'paths': the description defines no operation; {FIX}"),
        (_swagger(paths={}), "#/paths: 'paths' is empty: the description defines no operation"),
        (_swagger(paths=None), "#/paths: expected a mapping of paths to their operations"),
        (
            _openapi(paths={"x-internal": {"get": {"responses": OK}}, "x-n": 1}),
            "#/paths: 'paths' is empty but for x- extensions: the description defines no "
            f"operation; {FIX}",
        ),
        (
            _swagger(paths={"x-internal": {"post": {"responses": OK}}}),
            "#/paths: 'paths' is empty but for x- extensions: the description defines no operation",
        ),
        (
            _openapi(paths={"/a": {"parameters": []}, "x-internal": {"get": {"responses": OK}}}),
            "#/paths: none of the 1 path(s) has an operation (get, put, post, delete, options, "
            f"head, patch, trace); {FIX}",
        ),
    ],
    ids=[
        "missing",
        "webhooks-only",
        "empty",
        "null",
        "a-list",
        "no-operation",
        "path-item-ref",
        "swagger-missing",
        "swagger-empty",
        "swagger-null",
        "only-extensions",
        "swagger-only-extensions",
        "extension-beside-a-path",
    ],
)
def test_a_description_without_operations_exits_2_with_a_located_problem(
    tmp_path: Path, document: dict[str, Any], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, spec, out = _run(tmp_path, document)
    err = capsys.readouterr().err
    assert code == 2
    assert f"error: cannot import {spec}:\n  {spec}{message}" in err
    assert "Traceback" not in err
    assert "0 tool(s)" not in err
    assert not out.exists()


def _operation(operation_id: str, **extra: Any) -> dict[str, Any]:
    return {"operationId": operation_id, "responses": OK, **extra}


UNSENDABLE = {"name": "h", "in": "header", "required": True, "schema": {"type": "object"}}


def test_every_operation_skipped_lists_each_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = {
        "/a": {"get": _operation("a", parameters=[UNSENDABLE])},
        "/b": {"trace": _operation("b")},
        "/c": {"get": _operation("c", deprecated=True)},
    }
    code, spec, out = _run(tmp_path, _openapi(paths=paths))
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines()[-4:] == [
        f"error: cannot import {spec}:",
        f"  {spec}#/paths: none of the 3 selected operation(s) can be imported: 2 cannot be "
        "expressed (each reason below); 1 deprecated (give --include-deprecated)",
        f"  {spec}#/paths/~1a/get/parameters/0: a: required header parameter 'h': an "
        "object-valued parameter (simple) is not supported",
        f"  {spec}#/paths/~1b/trace: b: method TRACE is not supported",
    ]
    assert not out.exists()


def test_every_operation_deprecated_says_how_to_import_them(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, _openapi(paths={"/a": {"get": _operation("a", deprecated=True)}}))
    with pytest.raises(OpenAPIError) as raised:
        import_openapi(spec, source="api", out=tmp_path / "out")
    assert [str(found) for found in raised.value.problems] == [
        "#/paths: none of the 1 selected operation(s) can be imported: 1 deprecated "
        "(give --include-deprecated)"
    ]
    report = import_openapi(
        spec, source="api", out=tmp_path / "out", selection=Selection(deprecated=True)
    )
    assert report.tools == 1


def test_a_selection_that_matches_no_operation_is_an_error(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, _openapi(paths={"/a": {"get": _operation("a")}}))
    with pytest.raises(OpenAPIError) as raised:
        import_openapi(
            spec, source="api", out=tmp_path / "out", selection=Selection(methods=["POST"])
        )
    assert [str(found) for found in raised.value.problems] == [
        "#/paths: no operation matches the selection; widen the filters"
    ]
    assert not (tmp_path / "out").exists()


def test_many_skipped_operations_are_summarized(tmp_path: Path) -> None:
    paths = {
        f"/p{index}": {"get": _operation(f"p{index}", parameters=[UNSENDABLE])}
        for index in range(25)
    }
    spec = write_spec(tmp_path, _openapi(paths=paths))
    with pytest.raises(OpenAPIError) as raised:
        import_openapi(spec, source="api", out=tmp_path / "out")
    problems = [str(found) for found in raised.value.problems]
    assert problems[0].startswith("#/paths: none of the 25 selected operation(s) can be imported")
    assert len(problems) == 12
    assert problems[-1] == "#/paths: and 15 more operation(s) skipped"


def test_a_swagger_description_whose_operations_are_all_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = {"/a": {"get": {"operationId": "a", "security": [{"nope": []}], "responses": OK}}}
    code, spec, _ = _run(tmp_path, _swagger(paths=paths))
    err = capsys.readouterr().err
    assert code == 2
    assert (
        f"  {spec}#/paths/~1a/get/security: a: no supported security requirement: security "
        "scheme 'nope' is not defined"
    ) in err


def test_an_update_to_a_description_without_operations_writes_nothing(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, _openapi(paths={"/a": {"get": _operation("a")}}))
    out = tmp_path / "out"
    import_openapi(spec, source="api", out=out)
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    write_spec(tmp_path, _openapi(paths={}))
    with pytest.raises(OpenAPIError, match="'paths' is empty"):
        update_openapi(spec, source="api", out=out)
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


@pytest.mark.parametrize("document", [_openapi, _swagger], ids=["3.0", "2.0"])
def test_an_extension_beside_the_paths_is_no_operation(tmp_path: Path, document: Any) -> None:
    extension = {"get": {"operationId": "hidden", "responses": OK}, "post": {"responses": OK}}
    paths = {"x-internal": extension, "/a": {"get": {"operationId": "a", "responses": OK}}}
    report = import_openapi(
        write_spec(tmp_path, document(paths=paths)), source="api", out=tmp_path / "o"
    )
    assert report.tools == 1
    assert report.skipped == []
    assert sorted(path.name for path in (tmp_path / "o").glob("*.yaml")) == [
        "a.yaml",
        "api.source.yaml",
    ]
