"""TLS: the system's trust by default, a ca_bundle of one's own, or verify: false, on real HTTPS."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
import trustme

from agentkit import DefinitionError, ToolExecutor, ToolRegistry, ToolResult, load_tools
from agentkit.declarative.backends.http.backend import HttpBackend
from tests.declarative.conftest import WriteFile
from tests.support import loopback

TOOL = """\
name: secure
version: 1.0.0
output_schema:
  parameters:
    - {name: title, type: string}
backend:
  http:
    url: ORIGIN/item
    timeout: {total: 10}
    retry: {attempts: 1}
"""


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def origin(authority: trustme.CA) -> Iterator[str]:
    """An HTTPS server on 127.0.0.1 whose certificate only ``authority`` vouches for."""
    behaviours = {"/item": loopback.ok({"title": "t"})}
    handler = type("TlsHandler", (loopback.Handler,), {"behaviours": behaviours, "hits": {}})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with loopback.running(server):
        yield f"https://127.0.0.1:{server.server_address[1]}"


def call(write: WriteFile, text: str) -> ToolResult:
    registry = ToolRegistry()
    load_tools(write(text), registry=registry)
    (tool,) = list(registry)
    return ToolExecutor().execute(tool, {}, raise_on_failure=False)


def test_an_unknown_authority_fails_the_call(write: WriteFile, origin: str) -> None:
    result = call(write, TOOL.replace("ORIGIN", origin))
    assert not result.succeeded
    error = str(result.error)
    port = origin.rsplit(":", 1)[-1]
    assert f"the TLS certificate of 127.0.0.1:{port} failed verification (" in error
    assert "CERTIFICATE_VERIFY_FAILED" in error
    assert "name its CA file in ca_bundle" in error
    assert "Connection(" not in error, error


def test_a_ca_bundle_relative_to_the_file_is_trusted(
    write: WriteFile, origin: str, authority: trustme.CA
) -> None:
    (write.folder / "certs").mkdir()
    authority.cert_pem.write_to_path(str(write.folder / "certs" / "ca.pem"))
    text = TOOL.replace("ORIGIN", origin) + "    ca_bundle: certs/ca.pem\n"
    result = call(write, text)
    assert result.output == {"title": "t"}


def test_a_sources_ca_bundle_is_relative_to_the_sources_file(
    write: WriteFile, origin: str, authority: trustme.CA
) -> None:
    (write.folder / "shared").mkdir()
    authority.cert_pem.write_to_path(str(write.folder / "shared" / "ca.pem"))
    write(f"source: s\nbase_url: {origin}\nca_bundle: ca.pem\n", "shared/source.yaml")
    write(TOOL.replace("url: ORIGIN/item", "source: s\n    path: /item"), "tools/tool.yaml")
    registry = ToolRegistry()
    load_tools(write.folder, registry=registry)
    result = ToolExecutor().execute(registry["secure"], {})
    assert result.output == {"title": "t"}


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
def test_verify_false_skips_the_check(write: WriteFile, origin: str) -> None:
    result = call(write, TOOL.replace("ORIGIN", origin) + "    verify: false\n")
    assert result.output == {"title": "t"}


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        pytest.param("    ca_bundle: nope.pem\n", "no such file", id="missing-bundle"),
        pytest.param("    verify: false\n    ca_bundle: tool.yaml\n", "not both", id="both"),
        pytest.param("    verify: 'no'\n", "expected true or false", id="verify-type"),
    ],
)
def test_tls_keys_are_checked_at_load_time(write: WriteFile, keys: str, message: str) -> None:
    path = write(TOOL.replace("ORIGIN", "https://127.0.0.1:1") + keys)
    with pytest.raises(DefinitionError, match=message):
        load_tools(path)


def test_ca_bundle_path_is_absolute_in_the_spec(write: WriteFile, tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_text("x")
    path = write(TOOL.replace("ORIGIN", "https://127.0.0.1:1") + "    ca_bundle: ca.pem\n")
    (cls,) = load_tools(path)
    backend = cls.DEFINITION.backend
    assert isinstance(backend, HttpBackend)
    assert backend.spec.verify == str(tmp_path / "ca.pem")
