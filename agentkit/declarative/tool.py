"""``DeclarativeTool``: the base class of every tool made from a definition file."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, ClassVar

from agentkit.callcache import CallCache, watching
from agentkit.context import aconfirm, arguments_shown, confirm
from agentkit.declarative.backends.python import PythonBackend
from agentkit.ratelimits import Limiter
from agentkit.tool import Tool

if TYPE_CHECKING:
    from agentkit.declarative.backends.base import Backend
    from agentkit.declarative.definition import ToolDefinition

__all__ = ["DeclarativeTool", "class_name_for"]


class DeclarativeTool(Tool):
    """A ``Tool`` whose constants come from a definition file and whose work is its backend's.

    ``load_tools`` makes one subclass per definition (``FetchWeatherTool`` for
    ``fetch_weather``); instances behave exactly like hand-written tools.
    """

    DEFINITION: ClassVar[ToolDefinition]
    BACKEND: ClassVar[Backend]
    #: The limits of the tool, its source and its toolsets (``limits:``); None: none.
    LIMITER: ClassVar[Limiter | None] = None
    #: Where its answers are kept (``cache:``, read-only tools); None: not kept.
    CACHE: ClassVar[CallCache | None] = None

    def execute(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        if self.CONFIRM and not _confirms_sends(self.BACKEND):
            confirm(lambda: arguments_shown(inputs))
        limiter = self.LIMITER
        if limiter is None and self.CACHE is None:
            return self.BACKEND.call(inputs, credentials)  # type: ignore[no-any-return]
        # A kept answer is a CachedAnswer, which the executor unwraps.
        return _limited(self, inputs, credentials, limiter)  # type: ignore[no-any-return]

    @classmethod
    def limiter(cls) -> Limiter:
        """The tool's limiter, made on first use (a toolset's limits join it after loading)."""
        if cls.LIMITER is None:
            cls.LIMITER = Limiter(cls.TOOL_NAME)
        return cls.LIMITER


async def _execute_async(
    self: DeclarativeTool, inputs: dict[str, Any], credentials: Mapping[str, str]
) -> dict[str, Any]:
    backend = self.BACKEND
    assert isinstance(backend, PythonBackend)  # only an async def function makes an async tool
    if self.CONFIRM:
        await aconfirm(lambda: arguments_shown(inputs))
    limiter, cache = self.LIMITER, self.CACHE
    key = ""
    if cache is not None:
        key, kept = cache.lookup(inputs, credentials)
        if kept is not None:
            return kept  # type: ignore[return-value]  # the executor unwraps it
    with limiter.admit() if limiter is not None else nullcontext(), watching() as said:
        result: dict[str, Any] = await backend.call(inputs, credentials)
    if cache is not None:
        cache.keep(key, result, said)
    return result


def _limited(
    tool: DeclarativeTool,
    inputs: dict[str, Any],
    credentials: Mapping[str, str],
    limiter: Limiter | None,
) -> Any:
    """A call of a tool with limits or a cache: a kept answer is given before any limit is
    counted (it sends nothing); otherwise the call is admitted, then made."""

    def run() -> Any:
        if limiter is None:
            return tool.BACKEND.call(inputs, credentials)
        with limiter.admit():
            return tool.BACKEND.call(inputs, credentials)

    cache = tool.CACHE
    return run() if cache is None else cache.call(run, inputs, credentials)


def _confirms_sends(backend: Backend) -> bool:
    """Whether ``backend`` asks a ``confirm: true`` call's user itself, showing what it is
    about to send (an HTTP backend's request), rather than the tool's arguments."""
    return getattr(backend, "confirms_sends", False) is True


def class_name_for(tool_name: str) -> str:
    """``fetch_weather`` -> ``FetchWeatherTool``."""
    words = tool_name.replace("-", "_").split("_")
    return "".join(word[:1].upper() + word[1:] for word in words if word) + "Tool"


def make_tool_class(definition: ToolDefinition) -> type[DeclarativeTool]:
    namespace = {
        "TOOL_NAME": definition.name,
        "TOOL_DESCRIPTION": definition.description,
        "TOOL_VERSION": definition.version,
        "INPUT_SCHEMA": definition.input_schema,
        "OUTPUT_SCHEMA": definition.output_schema,
        "TOOL_TAGS": definition.tags,
        "CREDENTIAL_NAMES": definition.credentials,
        "SOURCE": definition.source,
        "TOOL_ANNOTATIONS": definition.annotations,
        "BACKEND_KIND": definition.backend.kind,
        "DEFINITION": definition,
        "BACKEND": definition.backend,
        "CONCURRENCY": definition.concurrency,
        "CONFIRM": definition.confirm,
        "DEPRECATED": definition.deprecated,
        "MAX_OUTPUT": definition.max_output,
        "EXAMPLES": definition.examples,
        "__module__": "agentkit.declarative.generated",
        "__doc__": definition.description,
    }
    limits = [
        owner.limits
        for owner in (definition, definition.http_source)
        if owner is not None and owner.limits is not None
    ]
    if limits:
        limiter = Limiter(definition.name)
        for each in limits:
            limiter.add(each)
        namespace["LIMITER"] = limiter
    if definition.cache is not None:
        namespace["CACHE"] = CallCache(definition.name, definition.version, definition.cache)
    if isinstance(definition.backend, PythonBackend) and definition.backend.is_async:
        # An async def backend makes an async tool: aexecute awaits it on the loop
        # (so a deadline or a cancel stops it), execute runs it to completion.
        namespace["execute"] = _execute_async
    return type(class_name_for(definition.name), (DeclarativeTool,), namespace)
