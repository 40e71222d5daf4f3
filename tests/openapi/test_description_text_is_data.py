"""A description's ``${VAR}`` never reaches the operator's environment.

The loader fills ``${VAR}`` at load time in a source's ``base_url``, literal
``headers:``/``query:`` values, an OAuth2 ``token_url`` and input defaults. A
description is someone else's data: whatever of its text the import writes there
loads as the text itself. The importer's own variables (``${SOURCE_BASE_URL:-url}``,
and ``${SOURCE_SERVER_VAR:-default}`` for a server variable the operator exposes) are
the only variables a load uses.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
import yaml

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.cli import main
from agentkit.declarative.environment import Environment
from agentkit.openapi import import_openapi
from agentkit.openapi.literal import literal, url_text
from tests.openapi.test_import import OK, minimal, write_spec

#: What the operator's environment holds; none of it may reach a loaded value or a request.
ENVIRON = {
    "HOME": "/home/operator",
    "GITHUB_TOKEN": "ghp_operator_secret",
    "X": "from-env",
    # What a server variable {HOME} or {base} of source "api" might have been read from.
    "API_HOME": "api-home-of-the-operator",
    "API_BASE": "api-base-of-the-operator",
}
#: The text a hostile (or careless) description writes in every string it has.
TEXT = "${HOME}-${GITHUB_TOKEN}-${X:-default}"
VARIANTS = ["${HOME}", "${GITHUB_TOKEN}", "${X:-default}", "$${HOME}", "$$${X}", "a$", "${"]


@pytest.mark.parametrize("text", [*VARIANTS, TEXT, "plain", ""], ids=repr)
def test_literal_text_loads_as_itself_whatever_the_environment(text: str) -> None:
    written = literal(text)
    assert written is not None
    expansion = Environment(ENVIRON).expand(written)
    assert (expansion.text, expansion.used, expansion.missing) == (text, (), ())


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("{{ inputs.a }}${", "{{ inputs.a }}${"),  # a template, no reference: as it is
        ("{{ inputs.a }}${HOME}", None),  # the loader refuses a reference in a template
        ("{% if x %}${X:-d}{% endif %}", None),
    ],
    ids=["template-no-reference", "template-reference", "template-default"],
)
def test_literal_text_that_is_also_a_template(text: str, written: str | None) -> None:
    assert literal(text) == written


@pytest.mark.parametrize("text", [*VARIANTS, TEXT], ids=repr)
def test_url_text_leaves_no_reference_and_no_brace(text: str) -> None:
    encoded = url_text(text)
    assert "{" not in encoded
    assert "}" not in encoded
    assert unquote(encoded) == text


# -- a whole description, imported, loaded and called ---------------------------------------


def _description(origin: str) -> dict[str, Any]:
    """``TEXT`` in every string field an import may read, each in its own place."""
    schema = {"type": "string", "description": TEXT, "default": TEXT, "example": TEXT}
    item = {
        "type": "object",
        "description": TEXT,
        "properties": {"name": dict(schema), "note": {"type": "string", "enum": [TEXT, "b"]}},
    }
    reply = {"description": TEXT, "content": {"application/json": {"schema": item}}}
    parameters = [
        {"name": "q", "in": "query", "description": TEXT, "example": TEXT, "schema": schema},
        {
            "name": "choice",
            "in": "query",
            "schema": {"type": "string", "enum": [TEXT, "other"], "default": TEXT},
        },
        {"name": "X-Note", "in": "header", "description": TEXT, "schema": schema},
        {"name": "pref", "in": "cookie", "schema": schema},
        {
            "name": "many",
            "in": "query",
            "schema": {"type": "array", "items": {"type": "string"}, "default": [TEXT]},
        },
        {"name": "filter", "in": "query", "style": "deepObject", "schema": item},
    ]
    body = {
        "description": TEXT,
        "content": {
            "application/json": {
                "example": {"label": TEXT},
                "schema": {
                    "type": "object",
                    "properties": {
                        "label": schema,
                        "meta": {"type": "object", "properties": {"inner": schema}},
                    },
                },
            }
        },
    }
    return minimal(
        {
            "/items": {
                "get": {
                    "operationId": "list_items",
                    "summary": TEXT,
                    "description": TEXT,
                    "tags": [TEXT],
                    "parameters": parameters,
                    "responses": {"200": reply, "404": {"description": TEXT}},
                },
                "post": {
                    "operationId": "make_item",
                    "requestBody": body,
                    "responses": {"201": reply, "default": {"description": TEXT}},
                },
            }
        },
        info={"title": TEXT, "version": TEXT, "description": TEXT},
        servers=[
            {
                "url": origin + "/{base}/${HOME}",
                "description": TEXT,
                "variables": {"base": {"default": TEXT, "enum": [TEXT], "description": TEXT}},
            }
        ],
        components={
            "securitySchemes": {
                "oauth": {
                    "type": "oauth2",
                    "description": TEXT,
                    "flows": {
                        "clientCredentials": {
                            "tokenUrl": origin + "/token?k=${GITHUB_TOKEN}&d=${X:-default}",
                            "refreshUrl": origin + "/${HOME}",
                            "scopes": {TEXT: TEXT},
                        }
                    },
                }
            }
        },
        security=[{"oauth": [TEXT]}],
    )


class _Recorder(BaseHTTPRequestHandler):
    """Every request, as received: a token for the token endpoint, an item otherwise."""

    seen: list[dict[str, Any]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        self.seen.append({"path": self.path, "headers": dict(self.headers), "body": body})
        if self.path.startswith("/token"):
            payload: Any = {"access_token": "at-1", "token_type": "Bearer", "expires_in": 600}
        else:
            payload = {"name": TEXT, "note": TEXT}
        data = json.dumps(payload).encode()
        self.send_response(201 if self.command == "POST" and "/token" not in self.path else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer


@contextmanager
def _server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _leaks(text: str) -> list[str]:
    return [value for value in ENVIRON.values() if value in text or value in unquote(text)]


def _loaded_values(registry: ToolRegistry) -> str:
    """Everything a load made of the definitions, as one text to search."""
    parts = []
    for name in registry.names():
        tool = registry[name]
        definition = tool.definition
        assert definition is not None
        parts.append(
            json.dumps(
                [
                    definition.to_dict(),
                    definition.loaded_with(),
                    tool.input_schema.to_json_schema(),
                    tool.output_schema.to_json_schema(),
                ],
                default=str,
            )
        )
    return "\n".join(parts)


@pytest.mark.parametrize(
    ("exposed", "variables"),
    [((), {"API_BASE_URL"}), (("base", "HOME"), {"API_SERVER_BASE", "API_SERVER_HOME"})],
    ids=["defaults", "exposed"],
)
def test_no_loaded_value_holds_the_environment_and_requests_carry_the_text(
    tmp_path: Path, exposed: tuple[str, ...], variables: set[str]
) -> None:
    with _server() as (origin, seen):
        spec = write_spec(tmp_path, _description(origin))
        out = tmp_path / "tools.d"
        report = import_openapi(spec, source="api", out=out, server_variables=exposed)
        assert report.skipped == []
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ=ENVIRON)
        assert sorted(registry.names()) == ["list_items", "make_item"]

        loaded = _loaded_values(registry)
        assert _leaks(loaded) == []
        used = {
            item["variable"]
            for name in registry.names()
            for item in registry[name].definition.loaded_with().get("substitutions", [])  # type: ignore[union-attr]
        }
        # Only the importer's own variables: the base URL's, or the exposed ones.
        assert used == variables

        executor = ToolExecutor(
            credentials={
                "api-oauth-client-id": "client-id-1",
                "api-oauth-client-secret": "csecret-1",
            }
        )
        listed = executor.execute(registry["list_items"], {"filter_name": "n"})
        made = executor.execute(registry["make_item"], {"meta": {}})
    assert listed.succeeded, listed.error
    assert made.succeeded, made.error
    assert listed.output["name"] == TEXT  # type: ignore[index]
    assert all(_leaks(json.dumps(request)) == [] for request in seen)

    token = next(request for request in seen if request["path"].startswith("/token"))
    assert parse_qs(urlsplit(token["path"]).query) == {
        "k": ["${GITHUB_TOKEN}"],
        "d": ["${X:-default}"],
    }
    assert parse_qs(token["body"])["scope"] == [TEXT]

    calls = [request for request in seen if not request["path"].startswith("/token")]
    get = next(request for request in calls if "?" in request["path"])
    path, query = get["path"].split("?", 1)
    assert unquote(path) == f"/{TEXT}/${{HOME}}/items"
    assert parse_qs(query) == {
        "q": [TEXT],
        "choice": [TEXT],
        "many": [TEXT],
        "filter[name]": ["n"],
    }
    assert get["headers"]["X-Note"] == TEXT
    assert unquote(get["headers"]["Cookie"]) == f"pref={TEXT}"

    post = next(request for request in calls if request["body"])
    assert json.loads(post["body"]) == {"label": TEXT, "meta": {"inner": TEXT}}


@pytest.mark.parametrize(
    ("exposed", "base_url"),
    [
        (
            (),
            "${API_BASE_URL:-https://api.example.com/"
            "$%7BHOME%7D-$%7BGITHUB_TOKEN%7D-$%7BX:-default%7D/$%7BHOME%7D}",
        ),
        (
            ("base", "HOME"),
            "https://api.example.com/${API_SERVER_BASE:-$%7BHOME%7D-$%7BGITHUB_TOKEN%7D-"
            "$%7BX:-default%7D}/%24${API_SERVER_HOME:-%7BHOME%7D}",
        ),
    ],
    ids=["defaults", "exposed"],
)
def test_the_written_files_escape_every_substituted_place(
    tmp_path: Path, exposed: tuple[str, ...], base_url: str
) -> None:
    spec = write_spec(tmp_path, _description("https://api.example.com"))
    out = tmp_path / "tools.d"
    import_openapi(spec, source="api", out=out, server_variables=exposed)
    source = yaml.safe_load((out / "api.source.yaml").read_text(encoding="utf-8"))
    # The importer's variables are its own code; the description's text in them is encoded.
    assert source["base_url"] == base_url
    assert source["auth"]["oauth2"]["token_url"] == (
        "https://api.example.com/token?k=$%7BGITHUB_TOKEN%7D&d=$%7BX:-default%7D"
    )
    listing = yaml.safe_load((out / "list_items.yaml").read_text(encoding="utf-8"))
    defaults = {p["name"]: p.get("default") for p in listing["input_schema"]["parameters"]}
    escaped = "$${HOME}-$${GITHUB_TOKEN}-$${X:-default}"
    assert defaults["q"] == defaults["x_note"] == defaults["pref"] == escaped
    assert defaults["many"] == [TEXT]  # a list default is never substituted
    # Text the loader never substitutes is written as the description gave it.
    assert listing["description"].startswith(TEXT)


@pytest.mark.parametrize(
    ("server", "exposed", "base_url", "loaded"),
    [
        (
            {"url": "https://h.example/${HOME}"},
            (),
            "${API_BASE_URL:-https://h.example/$%7BHOME%7D}",
            "https://h.example/${HOME}",
        ),
        (
            {"url": "https://h.example/${HOME}"},
            ("HOME",),
            "https://h.example/%24${API_SERVER_HOME:-%7BHOME%7D}",
            "https://h.example/${HOME}",
        ),
        (
            {"url": "https://h.example/{v}", "variables": {"v": {"default": "${X:-d}"}}},
            (),
            "${API_BASE_URL:-https://h.example/$%7BX:-d%7D}",
            "https://h.example/${X:-d}",
        ),
        (
            {"url": "https://h.example/{v}", "variables": {"v": {"default": "${X:-d}"}}},
            ("v",),
            "https://h.example/${API_SERVER_V:-$%7BX:-d%7D}",
            "https://h.example/${X:-d}",
        ),
        (
            {"url": "https://h.example/$$${X}", "variables": {"X": {"default": "x"}}},
            (),
            "${API_BASE_URL:-https://h.example/$$$x}",
            "https://h.example/$$$x",
        ),
        (
            {"url": "https://h.example/$$${X}", "variables": {"X": {"default": "x"}}},
            ("X",),
            "https://h.example/$$%24${API_SERVER_X:-x}",
            "https://h.example/$$$x",
        ),
        (
            # A default ending in "$" right before an exposed variable.
            {
                "url": "https://h.example/{a}{b}",
                "variables": {"a": {"default": "x$"}, "b": {"default": "y"}},
            },
            ("b",),
            "https://h.example/x%24${API_SERVER_B:-y}",
            "https://h.example/x$y",
        ),
        (
            {"url": "https://h.example/a}b{"},
            (),
            "${API_BASE_URL:-https://h.example/a%7Db%7B}",
            "https://h.example/a}b{",
        ),
        (
            {"url": "/rel/${HOME}"},
            (),
            "${API_BASE_URL:-http://localhost}/rel/$%7BHOME%7D",
            "http://localhost/rel/${HOME}",
        ),
        (
            {"url": "/rel/${HOME}"},
            ("HOME",),
            "${API_BASE_URL:-http://localhost}/rel/%24${API_SERVER_HOME:-%7BHOME%7D}",
            "http://localhost/rel/${HOME}",
        ),
    ],
    ids=[
        "undeclared-variable",
        "undeclared-variable-exposed",
        "default-with-reference",
        "default-with-reference-exposed",
        "dollars-before-variable",
        "dollars-before-variable-exposed",
        "default-ending-in-dollar",
        "braces",
        "relative",
        "relative-exposed",
    ],
)
def test_server_urls_load_as_the_description_wrote_them(
    tmp_path: Path, server: dict[str, Any], exposed: tuple[str, ...], base_url: str, loaded: str
) -> None:
    spec = write_spec(
        tmp_path, minimal({"/a": {"get": {"operationId": "a", "responses": OK}}}, servers=[server])
    )
    out = tmp_path / "tools.d"
    import_openapi(spec, source="api", out=out, server_variables=exposed)
    source = yaml.safe_load((out / "api.source.yaml").read_text(encoding="utf-8"))
    assert source["base_url"] == base_url
    assert unquote(Environment(ENVIRON).expand(base_url).text) == loaded
    registry = ToolRegistry()
    load_tools(out, registry=registry, environ=ENVIRON)
    assert _leaks(_loaded_values(registry)) == []


def test_a_default_that_is_a_template_holding_a_reference_is_left_out_with_a_note(
    tmp_path: Path,
) -> None:
    parameter = {
        "name": "q",
        "in": "query",
        "schema": {"type": "string", "default": "{{ a }}${HOME}"},
    }
    spec = write_spec(
        tmp_path,
        minimal({"/a": {"get": {"operationId": "a", "parameters": [parameter], "responses": OK}}}),
    )
    out = tmp_path / "tools.d"
    report = import_openapi(spec, source="api", out=out)
    assert report.skipped == []
    text = (out / "a.yaml").read_text(encoding="utf-8")
    assert "default left out: a template ('{{') holding '${' cannot be written" in text
    [q] = yaml.safe_load(text)["input_schema"]["parameters"]
    assert "default" not in q


def test_the_cli_imports_a_hostile_description_that_loads_without_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path, _description("https://api.example.com"))
    out = tmp_path / "tools.d"
    assert main(["import", "openapi", str(spec), "--source", "api", "--out", str(out)]) == 0
    assert "wrote 2 tool(s) and a source" in capsys.readouterr().out
    for name, value in ENVIRON.items():
        monkeypatch.setenv(name, value)
    assert main(["validate", "--strict", "--tools", str(out)]) == 0
    for tool in ("list_items", "make_item"):
        capsys.readouterr()
        assert main(["show", tool, "--json", "--tools", str(out)]) == 0
        shown = capsys.readouterr().out
        assert _leaks(shown) == []
        variables = {item["variable"] for item in json.loads(shown).get("substitutions", [])}
        assert variables == {"API_BASE_URL"}
