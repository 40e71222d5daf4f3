"""agentkit's MCP server, on the official MCP Python SDK (``pip install 'agentkit[mcp]'``,
and ``'agentkit[serve]'`` for HTTP).

One entry serves a registry over either transport::

    from agentkit.mcp import HttpOptions, ServeOptions, serve

    serve(registry)                                      # stdio, until the client leaves
    serve(registry, ServeOptions(call_timeout=30))       # stdio, with limits
    serve(registry, HttpOptions(port=8000, stateless=True))  # streamable HTTP, until SIGTERM

``build_app`` gives the HTTP server as an ASGI app, to mount or to wrap (OAuth, see
docs/serving.md). Inside the package, a module per concern, each importing only those
below it: ``http_serving`` (uvicorn, draining) > ``http_app`` (the app) and
``stdio_serving`` (stdin and stdout, to the end) > ``server`` (handlers: listing, calls,
confirmation, logging) and ``fastpath`` (plain HTTP requests answered without the SDK's
transport, on a contract checked by ``sdk``) > ``served_call`` (one call's messages,
progress and questions) and ``fastpath_channel`` > ``input_required`` (asking a
2026-07-28 client) > ``reload``, ``content`` (results as MCP content), ``stdio``,
``sdk``, ``request_ids``, ``http_security``, ``user_credentials`` > ``served_tools``
(the served set, swapped whole) and ``shown_paths`` > ``listing`` (what ``tools/list``
gives, deferred tools left out) > ``options`` > ``admission`` (limits and queues) and
``connections`` (HTTP connection limits) > ``stdio_claim`` (stdout kept for the wire).

Importing this package imports nothing of the SDK; each name is imported when first
used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit.lazy import lazy_names

if TYPE_CHECKING:
    from collections.abc import Mapping

    from agentkit.mcp.http_app import build_app
    from agentkit.mcp.http_security import CallerIdentity, StaticTokens, rebinding_refusal
    from agentkit.mcp.options import BearerToken, HttpOptions, ServeOptions
    from agentkit.mcp.reload import EarlyHangups, Reloader
    from agentkit.mcp.served_tools import ServedTools
    from agentkit.mcp.stdio_claim import StdioWire
    from agentkit.toolregistry import ToolRegistry

__all__ = [
    "BearerToken",
    "CallerIdentity",
    "HttpOptions",
    "Reloader",
    "ServeOptions",
    "ServedTools",
    "StaticTokens",
    "build_app",
    "rebinding_refusal",
    "serve",
]

# Where each public name lives, imported on first use.
_HOMES = {
    "BearerToken": "agentkit.mcp.options",
    "HttpOptions": "agentkit.mcp.options",
    "ServeOptions": "agentkit.mcp.options",
    "Reloader": "agentkit.mcp.reload",
    "ServedTools": "agentkit.mcp.served_tools",
    "StaticTokens": "agentkit.mcp.http_security",
    "CallerIdentity": "agentkit.mcp.http_security",
    "rebinding_refusal": "agentkit.mcp.http_security",
    "build_app": "agentkit.mcp.http_app",
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals())


def serve(
    tools: ToolRegistry | ServedTools,
    options: ServeOptions | None = None,
    *,
    toolsets: Mapping[str, ToolRegistry | ServedTools] | None = None,
    credentials_file: str | None = None,
    reloader: Reloader | None = None,
    wire: StdioWire | None = None,
    hangups: EarlyHangups | None = None,
) -> None:
    """Serve ``tools`` to MCP clients until they are done with it.

    ``toolsets``, over HTTP only: each served at a path of its own below
    ``options.path`` (``/mcp/<toolset>``), the registry of its tools alone (see
    ``agentkit.Toolset.restrict``); a reloader serving them gives its ``sets``. Over
    stdio, serve one set by passing its registry as ``tools``.

    With ``HttpOptions``, over streamable HTTP until SIGINT or SIGTERM (then draining:
    the calls in flight finish within ``drain_seconds``); otherwise over stdin and
    stdout until the client closes stdin. ``credentials_file``: a secrets file read
    after the environment. ``reloader`` (made on the same ``ServedTools``): reloads the
    tools while serving, on SIGHUP and, if it watches, when their files change.

    Over stdio, stdout belongs to the wire while serving: whatever else writes to it
    (``print`` in a tool, a C extension) goes to stderr. A caller that must claim it
    before loading its tools (a module may print as it is imported) passes what
    ``agentkit.mcp.stdio_claim.claim_stdio`` gave as ``wire``, and ``hangups``
    (``agentkit.mcp.reload.EarlyHangups``) for a SIGHUP that came meanwhile.
    """
    from agentkit.mcp.options import HttpOptions, ServeOptions

    if isinstance(options, HttpOptions):
        if wire is not None or hangups is not None:
            raise TypeError("wire and hangups are for serving over stdio, not HTTP")
        from agentkit.mcp.http_serving import serve_http

        serve_http(
            tools,
            options,
            toolsets=toolsets,
            credentials_file=credentials_file,
            reloader=reloader,
        )
        return
    if toolsets:
        raise TypeError(
            "toolsets are served over HTTP, each at its own path; over stdio, serve one "
            "set by passing its registry (Toolset.restrict) as tools"
        )
    from agentkit.mcp.stdio_serving import serve_on_stdio

    serve_on_stdio(
        tools,
        options if options is not None else ServeOptions(),
        credentials_file=credentials_file,
        reloader=reloader,
        wire=wire,
        hangups=hangups,
    )
