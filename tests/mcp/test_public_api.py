"""``agentkit.mcp``'s public names, where the docs say they are, and the deprecated
module of 0.1.0 that still hands them on."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

import anyio

import agentkit.mcp
from agentkit.mcp.options import HttpOptions, ServeOptions
from agentkit.toolregistry import ToolRegistry
from tests.support.serving import session, start

DOCUMENTED = {
    "serve": "agentkit.mcp",
    "ServeOptions": "agentkit.mcp.options",
    "HttpOptions": "agentkit.mcp.options",
    "BearerToken": "agentkit.mcp.options",
    "build_app": "agentkit.mcp.http_app",
    "StaticTokens": "agentkit.mcp.http_security",
    "CallerIdentity": "agentkit.mcp.http_security",
    "rebinding_refusal": "agentkit.mcp.http_security",
    "Reloader": "agentkit.mcp.reload",
    "ServedTools": "agentkit.mcp.reload",
}


@pytest.mark.parametrize(("name", "home"), DOCUMENTED.items())
def test_each_public_name_is_the_one_its_module_defines(name: str, home: str) -> None:
    assert name in agentkit.mcp.__all__
    assert getattr(agentkit.mcp, name) is getattr(importlib.import_module(home), name)


def test_the_package_lists_its_names_and_refuses_others() -> None:
    assert set(agentkit.mcp.__all__) <= set(dir(agentkit.mcp))
    with pytest.raises(AttributeError, match=r"'agentkit\.mcp' has no attribute 'serve_http'"):
        _ = agentkit.mcp.serve_http


def test_importing_the_package_imports_none_of_the_sdk() -> None:
    code = (
        "import sys, agentkit.mcp\n"
        "loaded = sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'anyio')))\n"
        "print(loaded)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_http_options_are_serve_options_with_the_same_defaults() -> None:
    assert issubclass(HttpOptions, ServeOptions)
    shared = ServeOptions()
    http = HttpOptions()
    for name in ServeOptions.__dataclass_fields__:
        assert getattr(http, name) == getattr(shared, name), name


def test_serving_over_http_refuses_what_only_stdio_takes() -> None:
    with pytest.raises(TypeError, match="wire and hangups are for serving over stdio"):
        agentkit.mcp.serve(ToolRegistry(), HttpOptions(port=0), wire=object())  # type: ignore[arg-type]


def test_the_module_of_0_1_0_still_hands_its_names_on_with_a_warning() -> None:
    sys.modules.pop("agentkit.mcp_http", None)
    with pytest.warns(DeprecationWarning, match="import build_app, HttpOptions, StaticTokens"):
        old = importlib.import_module("agentkit.mcp_http")
    for name in ("build_app", "HttpOptions", "StaticTokens", "rebinding_refusal"):
        assert getattr(old, name) is getattr(agentkit.mcp, name)


APPLICATION = """\
import sys
from agentkit import ToolRegistry, load_tools
from agentkit.mcp import HttpOptions, serve

registry = ToolRegistry()
load_tools(sys.argv[1], registry=registry)
serve(registry, HttpOptions(port=0, stateless=True, max_calls=4))
"""


def test_an_application_serves_over_http_through_the_one_entry() -> None:
    served = start(["tools.d"], command=[sys.executable, "-c", APPLICATION])
    try:

        async def names() -> list[str]:
            async with session(served.url) as client:
                listed = await client.list_tools()
                return sorted(tool.name for tool in listed.tools)

        listed = anyio.run(names)
    finally:
        status = served.stop()
    assert "text_stats" in listed
    assert status == 0, served.stderr
