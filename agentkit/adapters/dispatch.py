"""The agent's tool-call path: a provider's tool calls in, executed results and replies out.

``dispatch_openai(message.tool_calls, registry)`` gives the ``role: tool``
messages to append; ``dispatch_openai_responses(items, registry)`` the
``function_call_output`` items; ``dispatch_anthropic(content, registry)`` the
``tool_result`` blocks. Independent calls run concurrently through
``execute_many``; the ``adispatch_*`` twins do the same for asyncio callers
through ``aexecute_many`` (async tools on the loop, sync ones in the pool).
A result with content blocks (``agentkit.content``) is given as text -- its
texts, and a line naming each image, sound or file -- except that Anthropic
also gets the images it accepts (PNG, JPEG, GIF, WebP) as image blocks.
Anything that goes wrong -- an unknown tool, arguments that are not JSON, a
validation or execution error -- becomes text the model can act on: the
problems listed, no traceback, no secret. Plain dicts and the official
SDKs' objects are accepted alike; the SDKs are not imported.

With ``deferred=`` (the names or patterns an export deferred, see
``agentkit.adapters.export``), a call of the search tool ``search_tools`` is answered from the
registry's deferred tools (``agentkit.toolsearch``), ranked as the MCP server ranks
them; the tools it finds are called by name like any other.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, final

from agentkit import jsonvalues
from agentkit.content import Block, Image, Resource, Text
from agentkit.tool import Tool
from agentkit.toolerrors import ToolValidationError, UnknownToolError
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry
from agentkit.toolresult import ToolResult
from agentkit.toolsearch import SEARCH_TOOL_NAME, SearchTools, matching

__all__ = [
    "DispatchedCall",
    "adispatch_anthropic",
    "adispatch_openai",
    "adispatch_openai_responses",
    "dispatch_anthropic",
    "dispatch_openai",
    "dispatch_openai_responses",
]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class DispatchedCall:
    """One tool call as dispatched: its id, and the result or the reason it never ran."""

    call_id: str
    name: str
    result: ToolResult | None
    problem: str | None  # set when the call could not be made at all

    @property
    def is_error(self) -> bool:
        return self.result is None or not self.result.succeeded

    def content(self) -> str:
        """What the model reads: the output as JSON, or an error it can act on."""
        if self.problem is not None:
            return f"Error: {self.problem}"
        assert self.result is not None
        if self.result.succeeded:
            if self.result.content:
                text = "\n".join(_texts(self.result.output, self.result.content))
            else:
                text = json.dumps(self.result.output)
            page = self.result.page
            # A page of a longer answer says so, and how to fetch the next (max_output).
            return text if page is None else f"{text}\n{page.note()}"
        error = self.result.error
        if isinstance(error, ToolValidationError):
            return f"Error: {error}\nCorrect the arguments and call the tool again."
        return f"Error: {error}"


def _texts(output: dict[str, Any] | None, blocks: tuple[Block, ...]) -> list[str]:
    """A result with content blocks as text: the structured output's JSON (when there
    is any), each text, each text resource, and a line naming each media block (a
    text-only model cannot see it, but should know it was made)."""
    texts = [json.dumps(output)] if output else []
    for block in blocks:
        if isinstance(block, Text):
            texts.append(block.text)
        elif isinstance(block, Resource):
            header = f"[resource {block.uri} ({block.media_type})"
            if block.text is not None:
                texts.append(f"{header}]\n{block.text}")
            else:
                texts.append(f"{header}, {len(block.data or b'')} bytes]")
        else:
            texts.append(f"[{block.describe()['type']} {block.media_type}, {block.size} bytes]")
    return texts


#: The image types Anthropic's ``tool_result`` content takes as image blocks.
_ANTHROPIC_IMAGES: Final = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def _anthropic_content(done: DispatchedCall) -> str | list[dict[str, Any]]:
    """A ``tool_result``'s content: text, or text and image blocks when the call made
    images Anthropic accepts (other media become a line of text naming them)."""
    result = done.result
    if result is None or not result.succeeded or not result.content:
        return done.content()
    shown = [
        block
        for block in result.content
        if isinstance(block, Image) and block.media_type in _ANTHROPIC_IMAGES
    ]
    if not shown:
        return done.content()
    rest = tuple(block for block in result.content if block not in shown)
    texts = _texts(result.output, rest)
    if result.page is not None:
        texts.append(result.page.note())
    blocks: list[dict[str, Any]] = [{"type": "text", "text": "\n".join(texts)}] if texts else []
    blocks.extend(
        {
            "type": "image",
            "source": {"type": "base64", "media_type": image.media_type, "data": image.base64},
        }
        for image in shown
    )
    return blocks


def _field(item: Any, name: str, default: Any = None) -> Any:
    if isinstance(item, Mapping):
        return item.get(name, default)
    return getattr(item, name, default)


_Planned = tuple[str, str, Tool | None, dict[str, Any] | None, str | None]
_Request = tuple[str, str, Any]


#: The search tools made for ``deferred=``, by what they were made from: the
#: deferred patterns and the registry's tools (held, so that no id is reused).
_SEARCHES: dict[tuple[frozenset[str], tuple[int, ...]], tuple[tuple[Tool, ...], SearchTools]] = {}
_MAX_SEARCHES: Final = 8


def _search_tool(registry: ToolRegistry, deferred: frozenset[str]) -> SearchTools:
    """The search tool over ``registry``'s ``deferred`` tools, made once for each set
    of tools (a registry that changes gets a new one)."""
    tools = tuple(registry)
    key = (deferred, tuple(map(id, tools)))
    made = _SEARCHES.get(key)
    if made is None:
        names = matching(tools, deferred)
        made = (tools, SearchTools(tool for tool in tools if tool.name in names))
        while len(_SEARCHES) >= _MAX_SEARCHES:
            _SEARCHES.pop(next(iter(_SEARCHES)))
        _SEARCHES[key] = made
    return made[1]


def _plan(
    requests: list[_Request], registry: ToolRegistry, deferred: frozenset[str] = frozenset()
) -> list[_Planned]:
    """``requests`` are (call id, tool name, arguments as a dict or a JSON string)."""
    planned: list[_Planned] = []
    for call_id, name, arguments in requests:
        tool = registry.lookup(name)
        if tool is None and deferred and name == SEARCH_TOOL_NAME:
            tool = _search_tool(registry, deferred)
        if tool is None:
            planned.append(
                (call_id, name, None, None, str(UnknownToolError(name, registry.names())))
            )
            continue
        inputs, problem = _arguments(arguments)
        planned.append((call_id, name, tool, inputs, problem))
    return planned


def _runnable(planned: list[_Planned]) -> list[tuple[Tool, dict[str, Any], str]]:
    return [
        (tool, inputs, call_id)
        for call_id, _, tool, inputs, problem in planned
        if tool is not None and inputs is not None and problem is None
    ]


def _dispatched(planned: list[_Planned], results: list[ToolResult]) -> list[DispatchedCall]:
    """Each planned call with its result, or the reason it never ran, in call order."""
    ran = iter(results)
    dispatched = []
    for call_id, name, tool, inputs, problem in planned:
        if tool is not None and inputs is not None and problem is None:
            dispatched.append(
                DispatchedCall(call_id=call_id, name=name, result=next(ran), problem=None)
            )
        else:
            dispatched.append(
                DispatchedCall(call_id=call_id, name=name, result=None, problem=problem)
            )
    return dispatched


def _run(
    requests: list[_Request],
    registry: ToolRegistry,
    executor: ToolExecutor | None,
    deferred: Iterable[str],
) -> list[DispatchedCall]:
    planned = _plan(requests, registry, frozenset(deferred))
    results = (executor or ToolExecutor()).execute_many(_runnable(planned))
    return _dispatched(planned, results)


async def _arun(
    requests: list[_Request],
    registry: ToolRegistry,
    executor: ToolExecutor | None,
    deferred: Iterable[str],
) -> list[DispatchedCall]:
    planned = _plan(requests, registry, frozenset(deferred))
    if executor is None:
        with ToolExecutor() as own:  # its thread pool goes with it
            results = await own.aexecute_many(_runnable(planned))
    else:
        results = await executor.aexecute_many(_runnable(planned))
    return _dispatched(planned, results)


def _arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, str):
        try:
            raw = jsonvalues.loads(raw)
        except ValueError as exc:
            return None, f"the arguments are not valid JSON ({exc}); send a JSON object."
    if not isinstance(raw, Mapping):
        return None, f"the arguments must be a JSON object, got {type(raw).__name__}."
    return dict(raw), None


# Each provider's shape: its tool calls as requests, and the replies it expects.


def _openai_requests(tool_calls: Iterable[Any]) -> list[_Request]:
    return [
        (
            str(_field(call, "id", "")),
            str(_field(_field(call, "function", {}), "name", "")),
            _field(_field(call, "function", {}), "arguments", ""),
        )
        for call in tool_calls
    ]


def _openai_replies(dispatched: list[DispatchedCall]) -> list[dict[str, Any]]:
    return [
        {"role": "tool", "tool_call_id": done.call_id, "content": done.content()}
        for done in dispatched
    ]


def _responses_requests(items: Iterable[Any]) -> list[_Request]:
    return [
        (
            str(_field(item, "call_id", "")),
            str(_field(item, "name", "")),
            _field(item, "arguments", ""),
        )
        for item in items
        if _field(item, "type") == "function_call"
    ]


def _responses_replies(dispatched: list[DispatchedCall]) -> list[dict[str, Any]]:
    return [
        {"type": "function_call_output", "call_id": done.call_id, "output": done.content()}
        for done in dispatched
    ]


def _anthropic_requests(content: Iterable[Any]) -> list[_Request]:
    return [
        (str(_field(block, "id", "")), str(_field(block, "name", "")), _field(block, "input", {}))
        for block in content
        if _field(block, "type") == "tool_use"
    ]


def _anthropic_replies(dispatched: list[DispatchedCall]) -> list[dict[str, Any]]:
    blocks = []
    for done in dispatched:
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": done.call_id,
            "content": _anthropic_content(done),
        }
        if done.is_error:
            block["is_error"] = True
        blocks.append(block)
    return blocks


def dispatch_openai(
    tool_calls: Iterable[Any],
    registry: ToolRegistry,
    executor: ToolExecutor | None = None,
    *,
    deferred: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """OpenAI Chat ``message.tool_calls`` -> ``{"role": "tool", ...}`` messages, in order."""
    return _openai_replies(_run(_openai_requests(tool_calls), registry, executor, deferred))


def dispatch_openai_responses(
    items: Iterable[Any],
    registry: ToolRegistry,
    executor: ToolExecutor | None = None,
    *,
    deferred: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """Responses API ``function_call`` items -> ``function_call_output`` items (others skipped)."""
    return _responses_replies(_run(_responses_requests(items), registry, executor, deferred))


def dispatch_anthropic(
    content: Iterable[Any],
    registry: ToolRegistry,
    executor: ToolExecutor | None = None,
    *,
    deferred: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """Anthropic ``tool_use`` blocks -> ``tool_result`` blocks (other blocks skipped)."""
    return _anthropic_replies(_run(_anthropic_requests(content), registry, executor, deferred))


async def adispatch_openai(
    tool_calls: Iterable[Any],
    registry: ToolRegistry,
    executor: ToolExecutor | None = None,
    *,
    deferred: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """``dispatch_openai`` for asyncio callers, through ``aexecute_many``."""
    return _openai_replies(await _arun(_openai_requests(tool_calls), registry, executor, deferred))


async def adispatch_openai_responses(
    items: Iterable[Any],
    registry: ToolRegistry,
    executor: ToolExecutor | None = None,
    *,
    deferred: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """``dispatch_openai_responses`` for asyncio callers, through ``aexecute_many``."""
    return _responses_replies(await _arun(_responses_requests(items), registry, executor, deferred))


async def adispatch_anthropic(
    content: Iterable[Any],
    registry: ToolRegistry,
    executor: ToolExecutor | None = None,
    *,
    deferred: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """``dispatch_anthropic`` for asyncio callers, through ``aexecute_many``."""
    return _anthropic_replies(
        await _arun(_anthropic_requests(content), registry, executor, deferred)
    )
