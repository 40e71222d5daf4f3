"""The outcome of one tool call."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Final, final

from agentkit.toolerrors import SemanticError, ToolExecutionError, ToolValidationError

if TYPE_CHECKING:
    from agentkit.content import Block
    from agentkit.paging import Page

__all__ = [
    "STATUS_FAILURE",
    "STATUS_SUCCESS",
    "ToolResult",
    "describe_error",
    "make_result",
]

STATUS_SUCCESS: Final = "success"
STATUS_FAILURE: Final = "failure"


@final
class ToolResult:
    """An immutable record of one call: status, output, wall-clock duration and error.

    ``output`` is the validated output on success and ``None`` on failure;
    ``error`` is the typed exception on failure (``ToolValidationError`` or
    ``ToolExecutionError``) and ``None`` on success. ``content`` holds the
    content blocks of a tool that returned ``agentkit.content.Output`` (text,
    images, audio, resources, in order); it is empty otherwise. ``page`` says which
    page of a longer answer ``output`` is, for a tool with a ``MAX_OUTPUT`` whose
    answer was over it (``agentkit.paging``); None for an answer given whole.
    """

    # Every field in one slot, read through properties: a result is made on
    # every call, and one slot is one write where a slot per field took six
    # (half the cost of making a result; reading a field costs a little more).
    __slots__ = ("_fields",)

    #: The two statuses, as the chapter spells them (also module constants).
    STATUS_SUCCESS: ClassVar[str] = STATUS_SUCCESS
    STATUS_FAILURE: ClassVar[str] = STATUS_FAILURE

    _fields: tuple[
        str, str, dict[str, Any] | None, float, Exception | None, tuple[Block, ...], Page | None
    ]

    def __init__(
        self,
        tool_name: str,
        status: str,
        output: dict[str, Any] | None = None,
        duration: float = 0.0,
        error: Exception | None = None,
        *,
        content: tuple[Block, ...] = (),
        page: Page | None = None,
    ) -> None:
        # Positional construction (the chapter's) makes a swapped argument easy to miss.
        if status != STATUS_SUCCESS and status != STATUS_FAILURE:
            raise SemanticError(
                f"ToolResult for tool '{tool_name}': status must be ToolResult.STATUS_SUCCESS "
                f"('success') or ToolResult.STATUS_FAILURE ('failure'), got {status!r}"
            )
        _set_fields(self, (tool_name, status, output, duration, error, tuple(content), page))

    @property
    def tool_name(self) -> str:
        return self._fields[0]

    @property
    def status(self) -> str:
        return self._fields[1]

    @property
    def output(self) -> dict[str, Any] | None:
        return self._fields[2]

    @property
    def duration(self) -> float:
        return self._fields[3]

    @property
    def error(self) -> Exception | None:
        return self._fields[4]

    @property
    def content(self) -> tuple[Block, ...]:
        return self._fields[5]

    @property
    def page(self) -> Page | None:
        return self._fields[6]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ToolResult is immutable; cannot set '{name}'")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"ToolResult is immutable; cannot delete '{name}'")

    @property
    def succeeded(self) -> bool:
        return self._fields[1] == STATUS_SUCCESS

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable form: tool, status, output, duration and error -- and
        ``content`` when there is some, each block described (a media block by its
        media type and size, never its bytes), and ``page`` for a page of an answer."""
        described: dict[str, Any] = {
            "tool": self.tool_name,
            "status": self.status,
            "output": self.output,
            "duration": self.duration,
            "error": describe_error(self.error) if self.error is not None else None,
        }
        if self.content:
            described["content"] = [block.describe() for block in self.content]
        if self.page is not None:
            described["page"] = self.page.to_dict()
        return described

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolResult):
            return NotImplemented
        return (
            self.tool_name == other.tool_name
            and self.status == other.status
            and self.output == other.output
            and self.duration == other.duration
            and self.error is other.error
            and self.content == other.content
            and self.page == other.page
        )

    __hash__ = None  # type: ignore[assignment]  # the output is a dict, so results are unhashable

    def __repr__(self) -> str:
        if self.succeeded:
            detail = f"output={self.output!r}"
            if self.content:  # each block's repr names its media type and size, no bytes
                detail += f", content={self.content!r}"
        else:
            detail = f"error={type(self.error).__name__}"
        return (
            f"ToolResult(tool_name={self.tool_name!r}, status={self.status!r}, {detail}, "
            f"duration={self.duration:.6f})"
        )


# The slot's own setter: it skips ToolResult's closed __setattr__ without a
# second class.
_new = object.__new__
_set_fields: Callable[[ToolResult, tuple[Any, ...]], None] = ToolResult.__dict__["_fields"].__set__


def make_result(
    tool_name: str,
    status: str,
    output: dict[str, Any] | None,
    duration: float,
    error: Exception | None,
    content: tuple[Block, ...] = (),
    page: Page | None = None,
) -> ToolResult:
    """``ToolResult(...)`` by the fast path: the executor's constructor (``status`` unchecked)."""
    result = _new(ToolResult)
    _set_fields(result, (tool_name, status, output, duration, error, content, page))
    return result


def describe_error(error: BaseException) -> dict[str, Any]:
    """An error as data: its type and message, plus the fields its type carries."""
    described: dict[str, Any] = {"type": type(error).__name__, "message": str(error)}
    if isinstance(error, ToolValidationError):
        described["direction"] = error.direction
        described["errors"] = error.errors
    elif isinstance(error, ToolExecutionError):
        described["cause"] = error.cause_type
        described["detail"] = error.detail
    return described
