"""Content beyond JSON: text, images, audio and embedded resources a tool returns.

A tool whose answer is more than a JSON object returns an ``Output`` holding
content blocks, in the order the client should show them, and optionally the
structured output its ``OUTPUT_SCHEMA`` describes::

    from agentkit.content import Image, Output, Text

    def execute(self, inputs, credentials):
        png = render_chart(inputs["series"])
        return Output(
            Text("Sales by month"),
            Image(data=png, media_type="image/png"),
            structured={"points": 12},
        )

The blocks:

- ``Text(text)``: text for the model to read;
- ``Image(data=..., media_type="image/...")``, ``Audio(data=..., media_type="audio/...")``:
  the raw bytes (not base64) and their media type;
- ``Resource(uri=..., text=... | data=..., media_type=...)``: a document embedded in
  the answer, as text or as bytes, under a URI naming it.

The executor checks ``structured`` (default ``{}``) against the output schema
like any output and gives it as ``ToolResult.output``; the blocks come back as
``ToolResult.content``, as the tool made them. An answer that holds one of the
call's credential values -- in the structured output, a text, a URI, or as UTF-8
bytes in any letter case in an image, a sound or a resource -- is not given: the
call fails (``secret_in_answer``). Events (``ToolEvent.content``)
and recordings carry the blocks; a block's ``repr`` and ``describe()`` name its
media type and size, never its bytes. The MCP server sends each block as the
content block of its kind (and ``structured`` as ``structuredContent``);
``agentkit.adapters.dispatch`` gives a provider the texts and a line naming each media
block.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypeAlias, final

from agentkit.toolerrors import SecretInOutputError, SemanticError

if TYPE_CHECKING:
    from agentkit.redaction import Leak, Redactor

__all__ = [
    "Audio",
    "Block",
    "Image",
    "Output",
    "Resource",
    "Text",
    "block_from_json",
    "is_media_type",
    "secret_in_answer",
]

# type "/" subtype, each an RFC 9110 token, lower-case.
_MEDIA_TYPE: Final = re.compile(r"[!#$%&'*+.^_`|~0-9a-z-]+/[!#$%&'*+.^_`|~0-9a-z-]+")
# An RFC 3986 scheme and at least one more character: "test://x", "file:///a", "urn:x".
_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")
_BytesLike = bytes | bytearray | memoryview


def is_media_type(value: object) -> bool:
    """True for a lower-case ``type/subtype`` without parameters (``image/png``)."""
    return isinstance(value, str) and _MEDIA_TYPE.fullmatch(value) is not None


def _checked_media_type(owner: str, value: object, prefix: str | None) -> str:
    if not is_media_type(value):
        raise SemanticError(
            f"{owner}: media_type must be a lower-case 'type/subtype' such as "
            f"'{prefix or 'application'}/...' without parameters, got {value!r}"
        )
    assert isinstance(value, str)
    if prefix is not None and not value.startswith(f"{prefix}/"):
        raise SemanticError(
            f"{owner}: media_type must be '{prefix}/...', got {value!r}; "
            f"for other content use {'Resource' if prefix else 'Image or Audio'}"
        )
    return value


def _checked_bytes(owner: str, value: object) -> bytes:
    if isinstance(value, _BytesLike):
        return bytes(value)
    hint = " (pass the raw bytes, not base64 text)" if isinstance(value, str) else ""
    raise SemanticError(f"{owner}: data must be bytes, got '{type(value).__name__}'{hint}")


def _size(data: bytes) -> str:
    return f"{len(data)} bytes"


@final
@dataclass(frozen=True, slots=True)
class Text:
    """Text for the model to read.

    Positional, unlike the other values: 0.1.0 shipped and documented ``Text(text)``.
    """

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise SemanticError(f"Text: text must be a string, got '{type(self.text).__name__}'")

    def describe(self) -> dict[str, Any]:
        """The block as plain JSON data, as logs and ``ToolResult.to_dict`` show it."""
        return {"type": "text", "text": self.text}

    def to_json(self) -> dict[str, Any]:
        """The block as plain JSON data, whole (a recording's form)."""
        return self.describe()


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class _Media:
    """Bytes and their media type: the shared shape of ``Image`` and ``Audio``."""

    data: bytes
    media_type: str

    _KIND: ClassVar[str] = ""  # "image" or "audio": the type name and the media type's prefix

    def __post_init__(self) -> None:
        owner = type(self).__name__
        object.__setattr__(self, "data", _checked_bytes(owner, self.data))
        _checked_media_type(owner, self.media_type, self._KIND)

    def __repr__(self) -> str:  # never the bytes
        return f"{type(self).__name__}(media_type={self.media_type!r}, size={len(self.data)})"

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def base64(self) -> str:
        """``data`` in base64 (standard alphabet, padded), as MCP and most APIs carry it."""
        return base64.b64encode(self.data).decode("ascii")

    def describe(self) -> dict[str, Any]:
        return {"type": self._KIND, "media_type": self.media_type, "size": len(self.data)}

    def to_json(self) -> dict[str, Any]:
        return {"type": self._KIND, "media_type": self.media_type, "data": self.base64}


@final
@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Image(_Media):
    """An image: its bytes and an ``image/*`` media type."""

    _KIND: ClassVar[str] = "image"


@final
@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Audio(_Media):
    """A sound: its bytes and an ``audio/*`` media type."""

    _KIND: ClassVar[str] = "audio"


@final
@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Resource:
    """A document embedded in the answer: ``text`` or ``data`` (bytes), named by ``uri``.

    ``media_type`` defaults to ``text/plain`` for text and ``application/octet-stream``
    for bytes.
    """

    uri: str
    text: str | None = None
    data: bytes | None = None
    media_type: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.uri, str) or not _URI.fullmatch(self.uri):
            raise SemanticError(
                f"Resource: uri must be a URI with a scheme, such as 'file:///report.pdf' "
                f"or 'myapp://orders/42', got {self.uri!r}"
            )
        if (self.text is None) == (self.data is None):
            raise SemanticError(
                f"Resource {self.uri}: give exactly one of text= (a string) or data= (bytes)"
            )
        owner = f"Resource {self.uri}"
        if self.text is not None and not isinstance(self.text, str):
            raise SemanticError(f"{owner}: text must be a string, got '{type(self.text).__name__}'")
        if self.data is not None:
            object.__setattr__(self, "data", _checked_bytes(owner, self.data))
        default = "text/plain" if self.text is not None else "application/octet-stream"
        media_type = default if self.media_type is None else self.media_type
        object.__setattr__(self, "media_type", _checked_media_type(owner, media_type, None))

    def __repr__(self) -> str:  # never the bytes, nor a long text
        body = (
            f"size={len(self.data)}" if self.data is not None else f"chars={len(self.text or '')}"
        )
        return f"Resource(uri={self.uri!r}, media_type={self.media_type!r}, {body})"

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {
            "type": "resource",
            "uri": self.uri,
            "media_type": self.media_type,
        }
        if self.text is not None:
            described["text"] = self.text
        else:
            described["size"] = len(self.data or b"")
        return described

    def to_json(self) -> dict[str, Any]:
        if self.data is None:
            return self.describe()
        return {
            "type": "resource",
            "uri": self.uri,
            "media_type": self.media_type,
            "data": base64.b64encode(self.data).decode("ascii"),
        }


#: One content block.
Block: TypeAlias = Text | Image | Audio | Resource


@final
class Output:
    """What a tool returns when its answer holds content blocks.

    ``Output(*blocks, structured=None)``: the blocks in order, and the structured
    output (a dictionary, checked against the tool's ``OUTPUT_SCHEMA``; ``{}`` when
    not given).
    """

    __slots__ = ("blocks", "structured")

    blocks: tuple[Block, ...]
    structured: dict[str, Any]

    def __init__(self, *blocks: Block, structured: Mapping[str, Any] | None = None) -> None:
        for position, block in enumerate(blocks):
            if not isinstance(block, (Text, Image, Audio, Resource)):
                raise SemanticError(
                    f"Output: block {position} must be Text, Image, Audio or Resource "
                    f"(from agentkit.content), got '{type(block).__name__}'"
                )
        if structured is not None and not isinstance(structured, Mapping):
            raise SemanticError(
                f"Output: structured= must be a dictionary matching the tool's output schema, "
                f"got '{type(structured).__name__}'"
            )
        object.__setattr__(self, "blocks", blocks)
        object.__setattr__(self, "structured", dict(structured or {}))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Output is immutable; cannot set '{name}'")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Output):
            return NotImplemented
        return self.blocks == other.blocks and self.structured == other.structured

    __hash__ = None  # type: ignore[assignment]  # structured is a dict

    def __repr__(self) -> str:
        shown = ", ".join(repr(block) for block in self.blocks)
        return f"Output({shown}, structured={self.structured!r})"


def secret_in_answer(
    tool_name: str, output: Mapping[str, Any], blocks: tuple[Block, ...], redactor: Redactor
) -> SecretInOutputError | None:
    """Why a call's answer cannot be given, or ``None``: the first place where
    ``output`` (keys included) or a block (its URI, text or bytes) holds a secret
    ``redactor`` knows."""
    leak = redactor.leak(output, "output")
    if leak is None and blocks:
        leak = _leak_in_blocks(blocks, redactor)
    return None if leak is None else SecretInOutputError(tool_name, leak.credentials, leak.where)


def _leak_in_blocks(blocks: tuple[Block, ...], redactor: Redactor) -> Leak | None:
    for position, block in enumerate(blocks):
        for field in ("uri", "text", "data"):
            value = getattr(block, field, None)
            leak = None if value is None else redactor.leak(value, f"content[{position}].{field}")
            if leak is not None:
                return leak
    return None


def block_from_json(data: Any) -> Block:
    """The inverse of a block's ``to_json``; bad data raises ``ValueError`` saying what."""
    if not isinstance(data, Mapping):
        raise ValueError(f"a content block must be an object, got {type(data).__name__}")
    kind = data.get("type")
    try:
        if kind == "text":
            return Text(data["text"])
        if kind in ("image", "audio"):
            media = Image if kind == "image" else Audio
            return media(data=_decoded(data["data"]), media_type=data["media_type"])
        if kind == "resource":
            raw = data.get("data")
            return Resource(
                uri=data["uri"],
                text=data.get("text"),
                data=_decoded(raw) if raw is not None else None,
                media_type=data.get("media_type"),
            )
    except KeyError as exc:
        raise ValueError(f"a {kind} block needs {exc}") from exc
    except SemanticError as exc:
        raise ValueError(str(exc)) from exc
    raise ValueError(
        f"unknown content block type {kind!r}: expected text, image, audio or resource"
    )


def _decoded(text: Any) -> bytes:
    if not isinstance(text, str):
        raise ValueError(f"'data' must be base64 text, got {type(text).__name__}")
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"'data' is not base64: {exc}") from exc
