"""Serving a registry to MCP clients over stdio, with the official MCP Python SDK.

- ``tools/list`` gives each tool's ``inputSchema``, ``outputSchema`` and annotations
  (``agentkit.export.mcp_tool``, the same shape ``agentkit export --format mcp``
  prints);
- ``tools/call`` runs through ``ToolExecutor.aexecute`` (async tools on the
  server's event loop, sync ones in the executor's thread pool): the output comes back as
  ``structuredContent`` and as the same JSON in a text block;
- a validation or execution failure is a result with ``isError: true`` and text
  the model can read (the problems listed, no secret); an unknown tool is a
  protocol error (``-32602``), as the MCP specification has it.

Needs ``pip install 'agentkit[mcp]'``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from agentkit import __version__
from agentkit.credentials import CredentialsManager
from agentkit.export import mcp_tool
from agentkit.tool import Tool
from agentkit.toolerrors import did_you_mean
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry

__all__ = ["CallScope", "build_server", "serve"]


def _listed(tool: Tool) -> types.Tool:
    exported = mcp_tool(tool)
    hints = exported["annotations"]
    return types.Tool(
        name=exported["name"],
        title=exported["title"],
        description=exported["description"],
        input_schema=exported["inputSchema"],
        output_schema=exported["outputSchema"],
        annotations=types.ToolAnnotations(
            title=hints.get("title"),
            read_only_hint=hints.get("readOnlyHint"),
            destructive_hint=hints.get("destructiveHint"),
            idempotent_hint=hints.get("idempotentHint"),
            open_world_hint=hints.get("openWorldHint"),
        ),
    )


#: Enters the scope one ``tools/call`` runs in, given the SDK's request context (the HTTP
#: server binds the caller's own credentials there, from its request headers).
CallScope = Callable[[Any], AbstractContextManager[None]]


def _json_text(value: Any) -> str:
    # UTF-8 as it is, not \u-escaped: "Zürich" is 6 characters to the model, not 11.
    return json.dumps(value, ensure_ascii=False)


def build_server(
    registry: ToolRegistry,
    executor: ToolExecutor | None = None,
    *,
    call_timeout: float | None = None,
    call_scope: CallScope | None = None,
) -> Server[Any]:
    """An MCP server answering ``tools/list`` and ``tools/call`` from ``registry``.

    ``call_timeout`` (seconds) is every call's deadline (``ToolExecutor.aexecute``'s
    ``timeout``); ``call_scope`` wraps each call (see ``CallScope``).
    """
    runner = executor or ToolExecutor()
    listed = [_listed(tool) for tool in registry]
    scope = call_scope or (lambda ctx: nullcontext())

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = registry.lookup(params.name)
        if tool is None:
            hint = did_you_mean(params.name, registry.names())
            raise MCPError(INVALID_PARAMS, f"Unknown tool: '{params.name}'{hint}")
        arguments = dict(params.arguments or {})
        # Async tools run on the server's loop; sync ones (HTTP, files) in the
        # executor's bounded thread pool, so a slow tool never blocks the loop.
        with scope(ctx):
            result = await runner.aexecute(
                tool, arguments, raise_on_failure=False, timeout=call_timeout
            )
        if result.succeeded:
            text = _json_text(result.output)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)],
                structured_content=result.output,
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"Error: {result.error}")],
            is_error=True,
        )

    return Server(
        "agentkit",
        version=__version__,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(
    registry: ToolRegistry,
    *,
    credentials_file: str | None = None,
    call_timeout: float | None = None,
) -> None:
    """Serve ``registry`` on stdin/stdout until the client disconnects."""
    executor = ToolExecutor(credentials=CredentialsManager.from_env(credentials_file))
    server = build_server(registry, executor, call_timeout=call_timeout)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    with executor:  # the thread pool goes when the client does
        anyio.run(run)
