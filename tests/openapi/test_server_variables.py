"""A server variable's name is the description's text: it never picks an environment variable.

Loading the imported files reads only the variables the operator chose: the source's
``SOURCE_BASE_URL``, and ``SOURCE_SERVER_NAME`` for each server variable named with
``--server-variable``. Whatever a description calls its variables (``{token}``,
``{AWS_SECRET_ACCESS_KEY}``, a name spelled like a credential's variable), in a 3.0 or
3.1 server, undeclared in the URL, or in a Swagger 2.0 ``host`` or ``basePath``, the
operator's environment does not reach the base URL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit import ToolRegistry, load_tools
from agentkit.cli import main
from agentkit.credentials import environment_name
from agentkit.openapi import import_openapi
from agentkit.openapi.naming import snake_case
from agentkit.openapi.schemas import Notes
from agentkit.openapi.source import Security, base_url, env_prefix, server_variable_env
from agentkit.toolerrors import UsageError
from tests.openapi.test_description_text_is_data import _loaded_values
from tests.openapi.test_import import OK, minimal, write_spec

#: Names a description may give a server variable: secrets' names in every spelling,
#: the base URL's own, a credential's of the same import, odd and very long ones.
NAMES = [
    "token",
    "TOKEN",
    "Token",
    "apiKey",
    "api_key",
    "API-KEY",
    "api.key",
    "AWS_SECRET_ACCESS_KEY",
    "aws-secret-access-key",
    "awsSecretAccessKey",
    "aws.secret.access.key",
    "GITHUB_TOKEN",
    "github_token",
    "HOME",
    "PATH",
    "base_url",
    "BASE-URL",
    "server_token",
    "SERVER",
    "bearer-auth",  # the credential of the scheme bearerAuth: GITHUB_BEARER_AUTH
    "bearerAuth_password",
    "$HOME",
    "é",
    "__",
    "t" * 5000,
]
SOURCES = ["github", "myApi"]
SCHEMES = {"bearerAuth": {"type": "http", "scheme": "bearer"}}


def _operation() -> dict[str, Any]:
    return {"/x": {"get": {"operationId": "get_x", "responses": OK}}}


def _declared(name: str) -> dict[str, Any]:
    server = {"url": "https://h.example/{" + name + "}/v1", "variables": {name: {"default": "d"}}}
    return minimal(_operation(), servers=[server])


def _declared_31(name: str) -> dict[str, Any]:
    return {**_declared(name), "openapi": "3.1.0"}


def _in_the_host(name: str) -> dict[str, Any]:
    server = {"url": "https://{" + name + "}.h.example", "variables": {name: {"default": "d"}}}
    return minimal(_operation(), servers=[server])


def _without_default(name: str) -> dict[str, Any]:
    server = {"url": "https://h.example/{" + name + "}", "variables": {name: {"enum": ["a"]}}}
    return minimal(_operation(), servers=[server])


def _undeclared(name: str) -> dict[str, Any]:
    return minimal(_operation(), servers=[{"url": "https://h.example/{" + name + "}"}])


def _swagger(host: str, base_path: str) -> dict[str, Any]:
    return {
        "swagger": "2.0",
        "info": {"title": "T", "version": "1"},
        "host": host,
        "basePath": base_path,
        "schemes": ["https"],
        "paths": {"/x": {"get": {"operationId": "get_x", "responses": OK}}},
    }


def _swagger_host(name: str) -> dict[str, Any]:
    return _swagger("{" + name + "}.h.example", "/v1")


def _swagger_base_path(name: str) -> dict[str, Any]:
    return _swagger("h.example", "/{" + name + "}")


FORMS: dict[str, Callable[[str], dict[str, Any]]] = {
    "declared": _declared,
    "declared-3.1": _declared_31,
    "host": _in_the_host,
    "no-default": _without_default,
    "undeclared": _undeclared,
    "swagger-host": _swagger_host,
    "swagger-base-path": _swagger_base_path,
}


def _with_schemes(document: dict[str, Any]) -> dict[str, Any]:
    if "swagger" in document:
        return {
            **document,
            "securityDefinitions": {"bearerAuth": {"type": "apiKey", "in": "header", "name": "K"}},
            "security": [{"bearerAuth": []}],
        }
    return {
        **document,
        "components": {"securitySchemes": SCHEMES},
        "security": [{"bearerAuth": []}],
    }


def _operator_environment(name: str, source: str) -> dict[str, str]:
    """A secret in every variable the name could have been read from, and the usual ones."""
    spellings = {name, name.upper(), snake_case(name).upper(), environment_name(name)}
    prefixes = {"", f"{env_prefix(source)}_", f"{environment_name(source)}_"}
    prefixes |= {f"{prefix}SERVER_" for prefix in prefixes if prefix}
    names = {prefix + spelling for prefix in prefixes for spelling in spellings if spelling}
    names |= {"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "HOME", "PATH", "GITHUB_BEARER_AUTH"}
    names = {each for each in names if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", each)}
    # The one variable the operator chose (by the source's name) is theirs to set.
    names.discard(f"{env_prefix(source)}_BASE_URL")
    return {each: f"operator-secret-{index}" for index, each in enumerate(sorted(names))}


def _imported(
    tmp_path: Path, document: dict[str, Any], source: str, **options: Any
) -> tuple[Path, str]:
    out = tmp_path / "tools.d"
    import_openapi(write_spec(tmp_path, document), source=source, out=out, **options)
    return out, (out / f"{source}.source.yaml").read_text(encoding="utf-8")


def _used(registry: ToolRegistry) -> set[str]:
    return {
        sub["variable"]
        for name in registry.names()
        for sub in registry[name].definition.loaded_with().get("substitutions", [])  # type: ignore[union-attr]
    }


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", NAMES, ids=lambda name: name[:24])
def test_no_server_variable_reads_the_environment_unless_exposed(
    tmp_path: Path, name: str, form: str, source: str
) -> None:
    out, text = _imported(tmp_path, _with_schemes(FORMS[form](name)), source)
    references = set(re.findall(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)", text))
    assert references == {f"{env_prefix(source)}_BASE_URL"}
    environ = _operator_environment(name, source)
    registry = ToolRegistry()
    load_tools(out, registry=registry, environ=environ)
    assert _used(registry) == {f"{env_prefix(source)}_BASE_URL"}
    loaded = _loaded_values(registry)
    assert [value for value in environ.values() if value in loaded] == []
    # Every note line stays short, whatever the name's length.
    assert all(len(line) < 400 for line in text.splitlines() if line.startswith("# note"))


@pytest.mark.parametrize("form", ["declared", "host", "undeclared", "swagger-host"])
@pytest.mark.parametrize(
    "name", ["token", "apiKey", "AWS_SECRET_ACCESS_KEY", "bearer-auth", "server_token", "région"]
)
def test_an_exposed_variable_reads_only_its_own_name(tmp_path: Path, name: str, form: str) -> None:
    out, text = _imported(
        tmp_path, _with_schemes(FORMS[form](name)), "github", server_variables=[name]
    )
    own = server_variable_env("github", name)
    assert own == f"GITHUB_SERVER_{snake_case(name).upper()}"
    assert set(re.findall(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)", text)) == {own}
    environ = {**_operator_environment(name, "github"), own: "staging"}
    registry = ToolRegistry()
    load_tools(out, registry=registry, environ=environ)
    assert _used(registry) == {own}
    loaded = _loaded_values(registry)
    assert "staging" in loaded
    assert [value for value in environ.values() if value != "staging" and value in loaded] == []


@pytest.mark.parametrize(
    "scheme",
    [
        "base_url",
        "baseUrl",
        "BASE-URL",
        "server",
        "Server",
        "server_region",
        "serverRegion",
        "SERVER-x",
    ],
)
@pytest.mark.parametrize(
    "kind",
    [
        {"type": "http", "scheme": "bearer"},
        {"type": "http", "scheme": "basic"},
        {
            "type": "oauth2",
            "flows": {"clientCredentials": {"tokenUrl": "https://a.example/t", "scopes": {}}},
        },
    ],
    ids=["bearer", "basic", "oauth2"],
)
def test_no_credential_is_read_from_the_base_url_s_variables(
    tmp_path: Path, scheme: str, kind: dict[str, Any]
) -> None:
    server = {
        "url": "https://h.example/{region}/{x}/{username}",
        "variables": {each: {"default": "d"} for each in ("region", "x", "username")},
    }
    document = minimal(
        _operation(),
        servers=[server],
        components={"securitySchemes": {scheme: kind}},
        security=[{scheme: []}],
    )
    out, text = _imported(tmp_path, document, "api", server_variables=["region", "x", "username"])
    credentials = yaml.safe_load(text)["credentials"]
    assert all(credential.startswith("api-scheme-") for credential in credentials)
    read_from = {environment_name(credential) for credential in credentials}
    assert not {env for env in read_from if env == "API_BASE_URL" or env.startswith("API_SERVER")}
    # The operator sets each credential where the import says; none reaches the URL.
    environ = {env: f"credential-secret-{index}" for index, env in enumerate(sorted(read_from))}
    registry = ToolRegistry()
    load_tools(out, registry=registry, environ=environ)
    assert _used(registry) == {"API_SERVER_REGION", "API_SERVER_X", "API_SERVER_USERNAME"}
    assert [value for value in environ.values() if value in _loaded_values(registry)] == []


#: Source names, scheme names and variable names chosen to make the prefixes disagree:
#: ``env_prefix`` is snake_case (``myApi`` -> ``MY_API``), a credential's variable is not.
_NAME_TEXT = st.text(alphabet="abAB_-. 0é", min_size=1, max_size=12)
_SOURCE_NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,10}", fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(_SOURCE_NAME, st.lists(_NAME_TEXT, max_size=4), st.lists(_NAME_TEXT, max_size=4))
def test_exposed_and_credential_variables_never_meet(
    source: str, schemes: list[str], variables: list[str]
) -> None:
    security = Security(
        {"components": {"securitySchemes": {name: {} for name in schemes}}},
        source,
        _NoResolver(),  # type: ignore[arg-type]
        Notes(),
    )
    credentials = security.environment_names()
    exposed = {server_variable_env(source, name) for name in variables if snake_case(name)}
    assert not credentials & exposed
    assert f"{env_prefix(source)}_BASE_URL" not in credentials


class _NoResolver:
    """Enough of a resolver for ``Security`` to name credentials."""

    def original(self, pointer: str) -> str:
        return pointer


@pytest.mark.parametrize(
    ("exposed", "message"),
    [
        (
            ["regoin"],
            r"--server-variable 'regoin': the first server's URL has no \{regoin\} \(its variables: 'region', 'a-b', 'a_b', '__', 'é'\) \(did you mean 'region'\?\)",
        ),
        (
            ["__"],
            r"--server-variable '__': a name without an ASCII letter or digit names no environment variable; set the whole URL with API_BASE_URL",
        ),
        (["é"], r"--server-variable 'é': a name without an ASCII letter or digit"),
        (
            ["a-b", "a_b"],
            r"--server-variable 'a_b' and 'a-b' would both be read from API_SERVER_A_B; expose one of them",
        ),
    ],
    ids=["unknown", "no-letter", "not-ascii", "same-variable"],
)
def test_a_name_that_cannot_be_exposed_is_a_usage_error(
    tmp_path: Path, exposed: list[str], message: str
) -> None:
    server = {"url": "https://{region}.h.example/{a-b}/{a_b}/{__}/{é}"}
    document = minimal(_operation(), servers=[server])
    out = tmp_path / "tools.d"
    with pytest.raises(UsageError, match=message):
        import_openapi(
            write_spec(tmp_path, document), source="api", out=out, server_variables=exposed
        )
    assert not out.exists()


def test_a_server_without_variables_has_none_to_expose(tmp_path: Path) -> None:
    for servers in ([{"url": "https://h.example"}], []):
        document = minimal(_operation(), servers=servers)
        with pytest.raises(UsageError, match=r"has no \{region\} \(its variables: none\)"):
            import_openapi(
                write_spec(tmp_path, document),
                source="api",
                out=tmp_path / "tools.d",
                server_variables=["region"],
            )


def test_an_exposed_variable_never_reads_a_credential_s_variable() -> None:
    document = {"servers": [{"url": "https://h.example/{token}"}]}
    with pytest.raises(UsageError, match=r"would be read from API_SERVER_TOKEN, a credential's"):
        base_url(document, "api", Notes(), expose=["token"], reserved={"API_SERVER_TOKEN"})


def test_notes_quote_names_and_defaults_escaped_and_clipped(tmp_path: Path) -> None:
    name = "a\u202e\x1b[31m" + "b" * 300
    server = {
        "url": "https://h.example/{" + name + "}/{plain}",
        "variables": {name: {"default": "c" * 300}, "plain": {"default": "p"}},
    }
    _, text = _imported(tmp_path, minimal(_operation(), servers=[server]), "api")
    notes = [line for line in text.splitlines() if line.startswith("# note: base_url")]
    assert len(notes) == 2
    assert "\x1b" not in text
    assert "\u202e" not in text
    quoted = "'a\\u202e\\x1b[31m" + "b" * 42 + "…'"
    assert len(quoted) == 60
    assert f"server variable {quoted} is its default" in notes[0]
    assert f"'{'c' * 57}…'" in notes[0]
    assert notes[1] == (
        "# note: base_url: server variable 'plain' is its default, 'p'; set API_BASE_URL to "
        "point elsewhere, or import with --server-variable to read 'API_SERVER_PLAIN' "
        "(#/servers/0/url)"
    )


def test_the_cli_exposes_the_variables_it_is_told_and_records_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path, _with_schemes(_in_the_host("tenant")))
    out = tmp_path / "tools.d"
    argv = ["import", "openapi", str(spec), "--source", "github", "--out", str(out)]
    assert main([*argv, "--server-variable", "tenant"]) == 0
    source = yaml.safe_load((out / "github.source.yaml").read_text())
    assert source["base_url"] == "https://${GITHUB_SERVER_TENANT:-d}.h.example"
    lock = json.loads((out / "github.openapi-lock.json").read_text())
    assert lock["server_variables"] == ["tenant"]
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main([*argv.copy()[:-1], str(tmp_path / "other"), "--server-variable", "tenat"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--server-variable 'tenat': the first server's URL has no {tenat}" in err
    assert "(did you mean 'tenant'?)" in err
    assert "Traceback" not in err


def test_a_host_variable_without_default_points_at_localhost_until_the_operator_says(
    tmp_path: Path,
) -> None:
    out, text = _imported(tmp_path, _with_schemes(_swagger_host("tenant")), "github")
    assert "base_url: ${GITHUB_BASE_URL:-http://localhost/v1}" in text
    assert "'{tenant}' is not a declared server variable; set GITHUB_BASE_URL" in text
    registry = ToolRegistry()
    load_tools(out, registry=registry, environ={"GITHUB_BASE_URL": "https://acme.h.example/v1"})
    assert "https://acme.h.example/v1" in _loaded_values(registry)


def test_an_exposed_host_variable_without_default_must_be_set(tmp_path: Path) -> None:
    out, text = _imported(
        tmp_path, _with_schemes(_swagger_host("tenant")), "github", server_variables=["tenant"]
    )
    assert "base_url: https://${GITHUB_SERVER_TENANT}.h.example/v1" in text
    with pytest.raises(Exception, match=r"'GITHUB_SERVER_TENANT' is not set and has no default"):
        load_tools(out, registry=ToolRegistry(), environ={})
    registry = ToolRegistry()
    load_tools(out, registry=registry, environ={"GITHUB_SERVER_TENANT": "acme"})
    assert "https://acme.h.example/v1" in _loaded_values(registry)
