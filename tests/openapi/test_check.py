"""The description check: the OpenAPI meta-schema of the description's version,
located findings, nothing read outside the description; on unless turned off."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.cli import main
from agentkit.openapi import check, import_openapi, importer
from agentkit.openapi.check import MAX_FINDINGS, check_description
from agentkit.openapi.swagger import ORIGINAL_KEY
from tests.support.loopback import running

pytest.importorskip("jsonschema_rs")

NOTES = Path(__file__).parent.parent / "fixtures" / "openapi" / "notes.json"
OK = {"200": {"description": "ok"}}
SECRET = "API_TOKEN=s3cr3t-must-not-appear"


def test_no_check_skips_the_check_and_says_nothing_about_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def fail(document: object, *, tree: bool = False) -> None:
        raise AssertionError("checked despite --no-check")

    monkeypatch.setattr(importer, "check_description", fail)
    argv = ["import", "openapi", str(NOTES), "--source", "notes", "--out", str(tmp_path / "o")]
    assert main([*argv, "--no-check"]) == 0
    assert "checked" not in capsys.readouterr().out
    assert (tmp_path / "o" / "notes.source.yaml").exists()


def test_the_check_runs_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[object, bool]] = []

    def check(document: object, *, tree: bool = False) -> None:
        seen.append((document, tree))

    monkeypatch.setattr(importer, "check_description", check)
    argv = ["import", "openapi", str(NOTES), "--source", "notes", "--out", str(tmp_path / "o")]
    assert main(argv) == 0
    assert len(seen) == 1
    assert seen[0][1] is True  # JSON text: a tree, no alias to guard against


def test_without_jsonschema_rs_there_is_no_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema_rs", None)
    assert check_description(json.loads(NOTES.read_text())) is None


# -- nothing outside the description is opened or fetched ------------------------------


def description(version: str, ref: str, where: str) -> dict[str, Any]:
    """A description of ``version`` whose ``where`` is a ``$ref`` to ``ref``."""
    refs: dict[str, Any] = {"$ref": ref}
    operation: dict[str, Any] = {"operationId": "fine", "responses": OK}
    shaped: dict[str, Any] = {"get": operation}
    if where == "parameter":
        operation["parameters"] = [refs]
    elif where == "response":
        operation["responses"] = {"200": refs}
    elif where == "path item":
        shaped = refs
    head: dict[str, Any]
    if version == "2.0":
        head = {"swagger": "2.0", "definitions": {"Thing": refs}}
    else:
        head = {"openapi": version, "components": {"schemas": {"Thing": refs}}}
    fine = {"get": {"operationId": "kept", "responses": OK}}
    return {**head, "info": {"title": "T", "version": "1"}, "paths": {"/a": shaped, "/b": fine}}


@contextmanager
def listening() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server that serves the secret; yields its origin and the requests."""
    requests: list[str] = []

    class Recorder(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            body = json.dumps({"type": "string", "description": SECRET}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    with running(server):
        yield f"http://127.0.0.1:{server.server_address[1]}", requests


REF_FORMS: dict[str, Callable[[Path, str], str]] = {
    "file URL": lambda files, origin: (files / "secret.env").as_uri(),
    "file URL with pointer": lambda files, origin: (files / "secret.env").as_uri() + "#/x",
    "relative file": lambda files, origin: "secret.env",
    "relative file with pointer": lambda files, origin: "secret.env#/definitions/x",
    "FIFO": lambda files, origin: (files / "fifo").as_uri(),
    "loopback URL": lambda files, origin: f"{origin}/schema.json",
    "loopback URL with pointer": lambda files, origin: f"{origin}/schema.json#/x",
}


@pytest.mark.parametrize("version", ["2.0", "3.0.3", "3.1.0"])
@pytest.mark.parametrize("where", ["schema", "parameter", "response", "path item"])
@pytest.mark.parametrize("form", list(REF_FORMS), ids=list(REF_FORMS))
def test_the_default_import_never_opens_or_fetches_what_a_ref_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str, where: str, form: str
) -> None:
    files = tmp_path / "files"
    files.mkdir()
    (files / "secret.env").write_text(SECRET, encoding="utf-8")
    # Opening a FIFO to read blocks until a writer comes: an import that opens it hangs.
    os.mkfifo(files / "fifo")
    with listening() as (origin, requests):
        spec = files / "spec.json"
        spec.write_text(json.dumps(description(version, REF_FORMS[form](files, origin), where)))
        argv = ["import", "openapi", str(spec), "--source", "api", "--out", str(tmp_path / "o")]
        codes: list[int] = []
        worker = threading.Thread(target=lambda: codes.append(main(argv)), daemon=True)
        worker.start()
        worker.join(timeout=60)
        hung = worker.is_alive()
        if hung:  # let the import go on, then fail
            os.close(os.open(files / "fifo", os.O_WRONLY | os.O_NONBLOCK))
        assert not hung, "the import opened the FIFO a $ref names"
        assert requests == [], "the loopback server a $ref names was asked"
    output = capsys.readouterr()
    written = "".join(path.read_text() for path in (tmp_path / "o").rglob("*") if path.is_file())
    assert SECRET not in output.out + output.err + written
    assert codes == [0]


def test_the_meta_schemas_resolve_their_own_refs_without_retrieving_any(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []

    def record(uri: str) -> Any:
        asked.append(uri)
        raise ValueError(uri)

    monkeypatch.setattr(check, "_refuse", record)
    check._validator.cache_clear()
    try:
        for version in ("2.0", "3.0", "3.1"):
            check._validator(version)
    finally:
        check._validator.cache_clear()
    assert asked == []


# -- findings name the rule and the place, never the data -------------------------------


def v30(**extra: Any) -> dict[str, Any]:
    paths = extra.pop("paths", {"/a": {"get": {"operationId": "a", "responses": OK}}})
    return {"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": paths, **extra}


def v31(**extra: Any) -> dict[str, Any]:
    return {**v30(**extra), "openapi": "3.1.0"}


def v20(**extra: Any) -> dict[str, Any]:
    swagger = {"swagger": "2.0", "info": {"title": "T", "version": "1"}, "paths": {}, **extra}
    return {"openapi": "3.0.3", ORIGINAL_KEY: swagger}


def operation(**fields: Any) -> dict[str, Any]:
    return {"/a": {"get": {"operationId": "a", "responses": OK, **fields}}}


FINDINGS = {
    "3.0 missing required": (
        v30(paths={"/a": {"get": {"responses": {"200": {}}}}}),
        "#/paths/~1a/get/responses/200",
        'Response (required) failed: "description" is a required property',
    ),
    "3.0 unknown location": (
        v30(paths=operation(parameters=[{"name": "q", "in": "body", "schema": {}}])),
        "#/paths/~1a/get/parameters/0",
        "ParameterLocation (oneOf) failed: fits none of its 4 alternatives",
    ),
    "3.0 a key that is not allowed": (
        v30(paths={"a-path-without-slash": {}}),
        "#/paths",
        "Paths (additionalProperties) failed",
    ),
    "3.0 wrong type at the top": (
        v30(servers={"url": "x"}),
        "#/servers",
        'the document (type) failed: the value is not of type "array"',
    ),
    "3.0 a schema keyword 3.0 lacks": (
        v30(components={"schemas": {"S": {"const": 1}}}),
        "#/components/schemas/S",
        "Schema (additionalProperties) failed",
    ),
    "3.1 missing info.version": (
        {**v31(), "info": {"title": "T"}},
        "#/info",
        'info (required) failed: "version" is a required property',
    ),
    "3.1 unknown location": (
        v31(paths=operation(parameters=[{"name": "q", "in": "body", "schema": {}}])),
        "#/paths/~1a/get/parameters/0/in",
        "parameter (enum) failed",
    ),
    "2.0 a 3.0 key": (
        v20(servers=[]),
        "#",
        "the document (additionalProperties) failed: Additional properties are not allowed "
        "('servers' was unexpected)",
    ),
    "2.0 missing required": (
        v20(paths={"/a": {"get": {"responses": {"200": {}}}}}),
        "#/paths/~1a/get/responses/200",
        'response (required) failed: "description" is a required property',
    ),
}


@pytest.mark.parametrize(("document", "pointer", "says"), FINDINGS.values(), ids=list(FINDINGS))
def test_a_finding_names_the_place_and_the_rule(
    document: dict[str, Any], pointer: str, says: str
) -> None:
    findings = check_description(document)
    assert findings is not None
    assert any(f.path == pointer and says in f.message for f in findings), findings


@pytest.mark.parametrize(
    "document",
    [
        v30(paths=operation(parameters=[{"name": "q", "in": SECRET}])),
        v30(servers=SECRET),
        v30(components={"schemas": {"S": {"type": SECRET}}}),
        v31(paths=operation(parameters=[{"name": "q", "in": SECRET, "schema": {}}])),
        v20(host=["not", SECRET]),
    ],
    ids=["3.0 enum", "3.0 type", "3.0 schema type", "3.1 enum", "2.0 type"],
)
def test_a_finding_never_quotes_the_value_it_rejects(document: dict[str, Any]) -> None:
    findings = check_description(document)
    assert findings
    assert all(SECRET not in str(finding) for finding in findings)


#: Keys a rule rejects, each one a key of the description: shown quoted, escaped and clipped.
HOSTILE_KEYS = {
    "plain": (SECRET, repr(SECRET)),
    "long": ("k" * 5000, "'" + "k" * 37 + "…'"),
    "line break": ("a\nwarning: forged", "'a\\nwarning: forged'"),
    "terminal escape": ("\x1b[2Jwiped", "'\\x1b[2Jwiped'"),
    "bidi": ("abc\u202edef", "'abc\\u202edef'"),
}


@pytest.mark.parametrize(
    ("where", "place"),
    [
        (
            lambda key: v30(info={"title": "T", "version": "1", key: 1}),
            ("#/info", "Info", "additional"),
        ),
        (lambda key: v30(**{key: {}}), ("#", "the document", "additional")),
        (
            lambda key: v30(paths=operation(**{key: True})),
            ("#/paths/~1a/get", "Operation", "additional"),
        ),
        (lambda key: v30(paths={key: {}}), ("#/paths", "Paths", "additional")),
        (lambda key: v31(paths={key: {}}), ("#/paths", "paths", "unevaluated")),
        (
            lambda key: v31(info={"title": "T", "version": "1", key: 1}),
            ("#/info", "info", "unevaluated"),
        ),
        (
            lambda key: v20(info={"title": "T", "version": "1", key: 1}),
            ("#/info", "info", "additional"),
        ),
    ],
    ids=["3.0 info", "3.0 top", "3.0 operation", "3.0 paths", "3.1 paths", "3.1 info", "2.0 info"],
)
@pytest.mark.parametrize("key", HOSTILE_KEYS, ids=list(HOSTILE_KEYS))
def test_a_rejected_key_is_shown_escaped_and_clipped_under_its_parent(
    where: Callable[[str], dict[str, Any]], place: tuple[str, str, str], key: str
) -> None:
    text, shown = HOSTILE_KEYS[key]
    pointer, rule, kind = place
    findings = check_description(where(text))
    assert findings
    [finding] = [f for f in findings if f.path == pointer and f.message.startswith(rule)]
    assert finding.message == (
        f"{rule} ({kind}Properties) failed: {kind.capitalize()} properties are not allowed "
        f"({shown} was unexpected)"
    )
    assert all(char.isprintable() for finding in findings for char in str(finding))


def test_many_rejected_keys_show_the_first_few_and_count_the_rest() -> None:
    info = {"title": "T", "version": "1", **{f"{SECRET}-{i}": i for i in range(10)}}
    [finding] = check_description(v30(info=info)) or []
    assert finding.message == (
        f"Info (additionalProperties) failed: Additional properties are not allowed "
        f"('{SECRET}-0', '{SECRET}-1', '{SECRET}-2' and 7 more were unexpected)"
    )


def test_a_key_of_the_wrong_form_is_shown_escaped_not_as_the_validator_quotes_it() -> None:
    document = v31(components={"schemas": {"bad name\x1b[0m": {"type": "string"}}})
    findings = check_description(document)
    assert findings
    [finding] = [f for f in findings if f.path == "#/components/schemas"]
    assert finding.message == (
        "components (propertyNames) failed: the key 'bad name\\x1b[0m': the value does not "
        'match "^[a-zA-Z0-9._-]+$"'
    )


def test_keys_in_a_pointer_cannot_forge_or_restyle_a_line_of_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forged = "\nwarning: forged\x1b[2J\u202e"
    xml = {"required": True, "content": {"application/xml": {"schema": {}}}}
    paths = {
        "/a" + forged: {"get": {"operationId": "a", "responses": {"200": {}}}},
        "/b" + forged: {"post": {"operationId": "b", "requestBody": xml, "responses": OK}},
        "/fine": {"get": {"operationId": "fine", "responses": OK}},
    }
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(v30(paths=paths)))
    argv = ["import", "openapi", str(spec), "--source", "s", "--out", str(tmp_path / "o")]
    assert main(argv) == 0
    captured = capsys.readouterr()
    lines = (captured.out + captured.err).splitlines()
    assert not [line for line in lines if line.startswith("warning: forged")]
    assert "\x1b" not in captured.out + captured.err
    assert "\u202e" not in captured.out + captured.err
    encoded = "~1a%0Awarning: forged%1B[2J%E2%80%AE"
    warning = f"warning: {spec}#/paths/{encoded}/get/responses/200: Response (required)"
    assert any(line.startswith(warning) for line in lines)
    assert any(line.startswith("skipped: b: #/paths/~1b%0Awarning") for line in lines)


def test_extensions_beside_the_paths_are_allowed(tmp_path: Path) -> None:
    for document in (
        v30(paths={"/a": {"get": {"responses": OK}}, "x-internal": {"get": {}}}),
        v31(paths={"/a": {"get": {"responses": OK}}, "x-internal": {"get": {}}}),
    ):
        assert check_description(document) == []


def test_a_broken_description_reports_the_first_findings_and_counts_the_rest() -> None:
    paths: dict[str, Any] = {f"/p{i}": {"get": {"responses": {"200": {}}}} for i in range(200)}
    findings = check_description(v30(paths=paths))
    assert findings is not None
    assert len(findings) == MAX_FINDINGS + 1
    assert (
        str(findings[-1])
        == f"#: {200 - MAX_FINDINGS} more finding(s) of the schema check not shown"
    )
    assert all(len(finding.message) <= 240 for finding in findings)


@pytest.mark.parametrize(
    "text",
    [
        "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    get:\n"
        "      responses:\n        200: {description: ok}\n",
        "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    get:\n"
        "      responses:\n        200: {description: ok}\n      x-when: 2024-01-02\n",
    ],
    ids=["integer status keys", "a YAML date"],
)
def test_yaml_values_json_lacks_are_checked_as_json_would_read_them(text: str) -> None:
    assert check_description(yaml.safe_load(text)) == []


BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths: &p\n"
            "  /a: {get: {responses: {'200': {description: ok}}, x-self: *p}}\n",
            "not checked: a YAML alias makes the description contain itself",
        ),
        (
            "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths: {}\na: &a [x, x, x, x]\n"
            + BOMB,
            "not checked: YAML aliases expand it to",
        ),
    ],
    ids=["recursive alias", "alias bomb"],
)
def test_a_description_yaml_aliases_blow_up_is_not_checked_and_says_so(
    text: str, says: str
) -> None:
    findings = check_description(yaml.safe_load(text))
    assert findings is not None
    assert [finding.path for finding in findings] == ["#"]
    assert findings[0].message.startswith(says)


def _json_object(path: Path) -> bool:
    try:
        return isinstance(json.loads(path.read_bytes()), dict)
    except ValueError:
        return False


JSON_DESCRIPTIONS = sorted(path for path in NOTES.parent.glob("**/*.json") if _json_object(path))


@pytest.mark.parametrize(
    "spec",
    JSON_DESCRIPTIONS,
    ids=[str(path.relative_to(NOTES.parent)) for path in JSON_DESCRIPTIONS],
)
def test_a_description_read_from_json_is_checked_the_same_without_the_alias_walk(
    spec: Path,
) -> None:
    """JSON text reads as a tree: the walk that guards against YAML aliases finds
    nothing in it to refuse, so leaving it out changes no finding."""
    document = json.loads(spec.read_bytes())
    assert check_description(document, tree=True) == check_description(document)


def test_an_import_of_yaml_text_still_walks_it_for_aliases(tmp_path: Path) -> None:
    text = (
        "openapi: 3.0.3\ninfo: {title: T, version: '1'}\n"
        "servers: [{url: 'https://api.example.com'}]\n"
        "paths:\n  /a: {get: {operationId: get_a, responses: {'200': {description: ok}}}}\n"
        "x-bomb:\n" + "".join(f"  {line}\n" for line in ["a: &a [x, x, x, x]", *BOMB.splitlines()])
    )
    spec = tmp_path / "bomb.yaml"
    spec.write_text(text, encoding="utf-8")
    report = import_openapi(spec, source="bomb", out=tmp_path / "out")
    assert report.findings is not None
    assert report.findings[0].message.startswith("not checked: YAML aliases expand it to")
