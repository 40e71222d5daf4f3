"""Proxies: an HTTP tool connects directly unless its definition says ``proxy:``.

With the standard variables set and no ``proxy:`` nothing reaches the proxy,
and a failed connection says the variable was set but not used; with
``proxy: environment`` they are honoured (``NO_PROXY`` too), with a proxy URL
that proxy is used whatever the environment says. ``.netrc`` is never read. A
loopback forward proxy answers every request itself, so an API host that does
not resolve is reached only through it.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit import DefinitionError, ToolExecutor, ToolRegistry, load_tools
from tests.declarative.conftest import WriteFile
from tests.support import loopback, rawserver
from tests.support.leaks import chain_text, leaked, logged_exception

VARIABLES = (
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
)
#: A host that never resolves: reached only through a proxy.
UNRESOLVABLE = "http://api.proxied.invalid"

TOOL = """\
name: probe
version: 1.0.0
output_schema:
  parameters:
    - {{name: ok, type: boolean}}
backend:
  http:
    url: {url}
    timeout: {{connect: 2, total: 5}}
    retry: {{attempts: 1}}
{extra}"""


@pytest.fixture(autouse=True)
def no_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def api() -> Iterator[str]:
    with loopback.serve({"/x": loopback.ok({"ok": True})}) as origin:
        yield origin


def _tool(write: WriteFile, url: str, extra: str = "", folder: Path | None = None) -> Any:
    path = write(TOOL.format(url=url, extra=extra))
    registry = ToolRegistry()
    load_tools(folder or path, registry=registry)
    return registry["probe"]


def _call(tool: Any, **credentials: str) -> Any:
    return ToolExecutor(credentials=credentials).execute(tool, {}, raise_on_failure=False)


def _refused_port() -> int:
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        return int(placeholder.getsockname()[1])


# -- by default: direct ------------------------------------------------------------------------


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"])
def test_by_default_the_environments_proxy_is_not_used(
    write: WriteFile, api: str, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    with loopback.forward_proxy() as (proxy, seen):
        monkeypatch.setenv(variable, proxy)
        result = _call(_tool(write, f"{api}/x"))
    assert result.output == {"ok": True}
    assert seen.targets == []


@pytest.mark.parametrize(
    ("scheme", "variables", "named"),
    [
        pytest.param("http", {"HTTP_PROXY": "P"}, "HTTP_PROXY", id="HTTP_PROXY"),
        pytest.param("http", {"http_proxy": "P", "HTTP_PROXY": "P"}, "http_proxy", id="lower"),
        pytest.param("http", {"ALL_PROXY": "P"}, "ALL_PROXY", id="ALL_PROXY"),
        pytest.param("https", {"HTTPS_PROXY": "P"}, "HTTPS_PROXY", id="HTTPS_PROXY"),
        pytest.param("https", {"HTTP_PROXY": "P"}, None, id="other-scheme"),
        pytest.param("http", {"HTTP_PROXY": "P", "NO_PROXY": "127.0.0.1"}, None, id="no_proxy"),
        pytest.param("http", {"HTTP_PROXY": "P", "no_proxy": "*"}, None, id="no_proxy-star"),
        pytest.param("http", {}, None, id="none-set"),
    ],
)
def test_a_failed_direct_connection_says_a_set_proxy_was_not_used(
    write: WriteFile,
    monkeypatch: pytest.MonkeyPatch,
    scheme: str,
    variables: dict[str, str],
    named: str | None,
) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, "http://127.0.0.1:9" if value == "P" else value)
    port = _refused_port()
    result = _call(_tool(write, f"{scheme}://127.0.0.1:{port}/x"))
    message = str(result.error)
    assert f"the connection to 127.0.0.1:{port} was refused" in message
    if named is None:
        assert "is set but not used" not in message
    else:
        assert f"; {named} is set but not used: HTTP tools connect directly unless " in message
        assert "'proxy: environment'" in message


def test_netrc_is_never_read(
    write: WriteFile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password netrc-secret-1\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".netrc").write_text(netrc.read_text())
    (tmp_path / ".netrc").chmod(0o600)
    with loopback.forward_proxy(echo_headers=True) as (proxy, _seen):
        for extra in ("", f"    proxy: {proxy}\n"):
            tool = _tool(write, f"{proxy}/x" if not extra else f"{UNRESOLVABLE}/x", extra)
            result = _call(tool)
            assert result.error is not None  # the echoed headers are no {ok: ...} object
            assert "Authorization" not in str(result.error)


# -- proxy: environment ----------------------------------------------------------------------


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
def test_proxy_environment_goes_through_the_variables_proxy(
    write: WriteFile, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    with loopback.forward_proxy() as (proxy, seen):
        monkeypatch.setenv(variable, proxy)
        result = _call(_tool(write, f"{UNRESOLVABLE}/x", "    proxy: environment\n"))
    assert result.output == {"ok": True}, result.error
    assert seen.targets == [f"{UNRESOLVABLE}/x"]


@pytest.mark.parametrize("exempt", ["127.0.0.1", "localhost,127.0.0.1", "*"])
def test_no_proxy_exempts_a_host_from_proxy_environment(
    write: WriteFile, api: str, monkeypatch: pytest.MonkeyPatch, exempt: str
) -> None:
    with loopback.forward_proxy() as (proxy, seen):
        monkeypatch.setenv("HTTP_PROXY", proxy)
        monkeypatch.setenv("NO_PROXY", exempt)
        result = _call(_tool(write, f"{api}/x", "    proxy: environment\n"))
    assert result.output == {"ok": True}
    assert seen.targets == []


def test_proxy_environment_without_a_variable_connects_directly(write: WriteFile, api: str) -> None:
    assert _call(_tool(write, f"{api}/x", "    proxy: environment\n")).output == {"ok": True}


@pytest.mark.parametrize(
    ("proxy", "said"),
    [
        pytest.param(
            "socks5://user:pw-9@127.0.0.1:1080",
            "is a socks5:// proxy; only http:// and https:// proxies are supported",
            id="socks",
        ),
        pytest.param(
            "http://user:pw-9@[::g]:3128",
            "the environment's proxy for http:// URLs, whose URL's host '[::g]' is not a valid IPv6",
            id="bad-ipv6",
        ),
        pytest.param(
            "http://user:pw-9@proxy.example.com:0",
            "the environment's proxy for http:// URLs, whose URL's port 0 is out of range",
            id="port-0",
        ),
        pytest.param("user:pw-9@proxy..example.com:3128", "label 2 of 4 is empty", id="no-scheme"),
    ],
)
def test_an_environment_proxy_that_cannot_be_used_fails_the_call_saying_so(
    write: WriteFile, monkeypatch: pytest.MonkeyPatch, proxy: str, said: str
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy)
    result = _call(_tool(write, f"{UNRESOLVABLE}/x", "    proxy: environment\n"))
    message = str(result.error)
    assert f"GET {UNRESOLVABLE}: proxy: environment: " in message, message
    assert said in message
    assert "pw-9" not in message


def test_an_environment_proxy_without_a_scheme_is_http(
    write: WriteFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    with loopback.forward_proxy() as (proxy, seen):
        monkeypatch.setenv("http_proxy", proxy.removeprefix("http://"))
        result = _call(_tool(write, f"{UNRESOLVABLE}/x", "    proxy: environment\n"))
    assert result.output == {"ok": True}, result.error
    assert seen.targets == [f"{UNRESOLVABLE}/x"]


def test_a_password_in_the_environments_proxy_never_shows(
    write: WriteFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    password = "pr0xy/pass+word"  # '/' and '+': its encoded and base64 spellings differ
    with loopback.forward_proxy(status=500, echo_headers=True) as (proxy, seen):
        host = proxy.removeprefix("http://")
        monkeypatch.setenv("HTTP_PROXY", f"http://ann:{password.replace('/', '%2F')}@{host}")
        result = _call(_tool(write, f"{UNRESOLVABLE}/x", "    proxy: environment\n"))
    [(_, _, headers)] = seen.requests
    assert headers["Proxy-Authorization"].startswith("Basic ")  # it was sent to the proxy
    assert "Proxy-Authorization" in str(result.error)  # and echoed into the error
    shown = "\n".join(
        [json.dumps(result.to_dict()), chain_text(result.error), logged_exception(result.error)]
    )
    assert leaked(shown, [password, f"ann:{password}"]) == []


# -- a named proxy ---------------------------------------------------------------------------


def test_a_named_proxy_is_used_whatever_the_environment(
    write: WriteFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "*")
    with loopback.forward_proxy() as (proxy, seen):
        result = _call(_tool(write, f"{UNRESOLVABLE}/x", f"    proxy: {proxy}\n"))
    assert result.output == {"ok": True}, result.error
    assert seen.targets == [f"{UNRESOLVABLE}/x"]


def test_a_sources_proxy_applies_to_its_tools_and_a_tool_can_go_direct(
    write: WriteFile, api: str
) -> None:
    with loopback.forward_proxy() as (proxy, seen):
        write(f"source: far\nbase_url: {UNRESOLVABLE}\nproxy: {proxy}\n", "far.yaml")
        write(f"source: near\nbase_url: {api}\nproxy: {proxy}\n", "near.yaml")
        write(
            "name: via\nversion: 1.0.0\n"
            "output_schema: {parameters: [{name: ok, type: boolean}]}\n"
            "backend: {http: {source: far, path: /x}}\n"
            "---\n"
            "name: direct\nversion: 1.0.0\n"
            "output_schema: {parameters: [{name: ok, type: boolean}]}\n"
            "backend: {http: {source: near, path: /x, proxy: direct}}\n",
            "tools.yaml",
        )
        registry = ToolRegistry()
        load_tools(write.folder, registry=registry)
        executor = ToolExecutor()
        assert executor.execute(registry["via"], {}).output == {"ok": True}
        assert executor.execute(registry["direct"], {}).output == {"ok": True}
    assert seen.targets == [f"{UNRESOLVABLE}/x"]


def test_an_oauth2_token_request_goes_through_the_proxy_too(write: WriteFile) -> None:
    with loopback.forward_proxy() as (proxy, seen):
        extra = (
            f"    proxy: {proxy}\n"
            "    auth: {oauth2: {token_url: 'http://auth.proxied.invalid/token', "
            "client_id: id, client_secret: secret}}\n"
        )
        text = TOOL.format(url=f"{UNRESOLVABLE}/x", extra=extra).replace(
            "version: 1.0.0\n", "version: 1.0.0\ncredentials: [id, secret]\n"
        )
        registry = ToolRegistry()
        load_tools(write(text), registry=registry)
        result = _call(registry["probe"], id="client-id-7", secret="client-secret")
    assert result.output == {"ok": True}, result.error
    assert seen.targets == ["http://auth.proxied.invalid/token", f"{UNRESOLVABLE}/x"]


def test_a_proxy_refusing_a_tunnel_is_named(write: WriteFile) -> None:
    with loopback.forward_proxy() as (proxy, seen):
        result = _call(_tool(write, "https://api.proxied.invalid/x", f"    proxy: {proxy}\n"))
    host = proxy.removeprefix("http://")
    assert (
        f"failed to connect after 1 attempt(s): through the proxy {host}: the proxy refused to "
        "open a tunnel (CONNECT) to the API: '403 Tunnels Refused'"
    ) in str(result.error)
    assert seen.requests[0][0] == "CONNECT"


def test_a_proxy_that_is_down_is_named(write: WriteFile) -> None:
    port = _refused_port()
    result = _call(_tool(write, f"{UNRESOLVABLE}/x", f"    proxy: http://127.0.0.1:{port}\n"))
    assert (
        f"through the proxy 127.0.0.1:{port}: the connection to 127.0.0.1:{port} was refused"
        in str(result.error)
    )


def test_the_deadline_holds_through_a_silent_proxy(write: WriteFile) -> None:
    with rawserver.serve(rawserver.silence) as proxy:
        extra = f"    proxy: {proxy.origin}\n"
        text = TOOL.format(url=f"{UNRESOLVABLE}/x", extra=extra).replace("total: 5", "total: 1")
        registry = ToolRegistry()
        load_tools(write(text), registry=registry)
        result = _call(registry["probe"])
    assert "timed out after 1.0 s (timeout.total)" in str(result.error)


# -- what proxy: may say -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "said"),
    [
        pytest.param("socks5://127.0.0.1:1080", "SOCKS proxies are not supported", id="socks"),
        pytest.param(
            "http://ann:pw-in-file@proxy.example.com:3128",
            "must not hold user info (user:password@)",
            id="user-info",
        ),
        pytest.param("3128", "expected 'direct' (the default), 'environment'", id="port-only"),
        pytest.param("environmnet", "or a proxy URL such as http://", id="typo"),
        pytest.param("ann:pw-in-file@proxy:3128", "a value with user info (not shown)", id="at"),
        pytest.param("http://proxy.example.com:0", "port 0 is out of range", id="port-0"),
        pytest.param("http://proxy..example.com", "label 2 of 4 is empty", id="empty-label"),
        pytest.param("http://proxy.example.com:3128/p", "has a path, query or fragment", id="path"),
        pytest.param("true", "expected 'direct'", id="boolean"),
    ],
)
def test_a_bad_proxy_value_is_a_located_problem(write: WriteFile, value: str, said: str) -> None:
    with pytest.raises(DefinitionError) as info:
        load_tools(write(TOOL.format(url=f"{UNRESOLVABLE}/x", extra=f"    proxy: {value}\n")))
    [problem] = [str(problem) for problem in info.value.problems]
    assert ":11:12: backend.http.proxy: " in problem, problem
    assert said in problem
    assert "pw-in-file" not in problem
