"""``multipart:``: a ``multipart/form-data`` body of text fields and files.

```yaml
multipart:
  fields: {title: "{{ inputs.title }}", labels: [bug, ui]}
  files:
    screenshot:
      content: "{{ inputs.image }}"          # a template: the file's content
      encoding: base64                       # or text (UTF-8), the default
      filename: "{{ inputs.name }}"          # default: the field's name
      content_type: image/png                # default by encoding
  max_bytes: 10485760
```

Fields render as ``form:`` fields do (a list repeats the field, ``null`` leaves
it out); a file whose content renders ``null`` is left out. Each file's bytes
are decoded here -- base64 strictly -- and counted, with the fields, against
``max_bytes`` before anything is encoded; requests' own encoder then writes the
body (urllib3 escapes quotes and line breaks in names and file names). A media
type is checked at call time too, since a template can make it: one with a
line break or that is not ``type/subtype`` fails the call.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal, final

from agentkit.declarative.problems import Location, Problems, check_keys
from agentkit.declarative.templates import Template
from agentkit.toolerrors import MultipartError
from agentkit.toolschema import is_integer

__all__ = [
    "MULTIPART_KEYS",
    "PART_KEYS",
    "MultipartBody",
    "MultipartError",
    "MultipartFile",
    "parse_multipart",
]

MULTIPART_KEYS: Final = ("fields", "files", "max_bytes")
PART_KEYS: Final = ("content", "encoding", "filename", "content_type")
ENCODINGS: Final = ("text", "base64")
DEFAULT_MAX_BYTES: Final = 10 * 1024 * 1024
MAX_BYTES_LIMIT: Final = 1024**3
_DEFAULT_TYPES: Final = {"text": "text/plain; charset=utf-8", "base64": "application/octet-stream"}
_TOKEN: Final = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_MEDIA_TYPE: Final = re.compile(
    rf"{_TOKEN}/{_TOKEN}(?:[ \t]*;[ \t]*{_TOKEN}=(?:{_TOKEN}|\"[^\"\\\r\n\0]*\"))*"
)

# Compiles a request template (inputs, credentials), reporting its problems; None if broken.
Compile = Callable[[str, Location], "Template | None"]
# Checks a field value as ``form:`` does: a template, a scalar, or a list of those.
FieldValue = Callable[[Any, Location], Any]
# Renders a template or passes a literal through, at call time.
Render = Callable[[Any], Any]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class MultipartFile:
    """One file part: its content, how that content is written, its name and media type."""

    field: str
    content: Template
    encoding: Literal["text", "base64"] = "text"
    filename: Template | str | None = None  # None: the field's name
    content_type: Template | str | None = None  # None: by encoding


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class MultipartBody:
    """``multipart:``: text fields and files, at most ``max_bytes`` of them in all."""

    fields: tuple[tuple[str, Any], ...]
    files: tuple[MultipartFile, ...]
    max_bytes: int = DEFAULT_MAX_BYTES
    content_type: ClassVar[None] = None  # requests writes it, with the boundary

    def parts(
        self, fields: list[tuple[str, str]], render: Render
    ) -> list[tuple[str, tuple[str | None, bytes, str | None]]]:
        """The rendered ``fields`` and each file, as requests' ``files=`` takes them:
        ``(name, (filename, bytes, media type))``, a text field without a filename.

        Raises ``MultipartError`` when the whole would pass ``max_bytes`` (before
        anything is encoded), or nothing is left to send.
        """
        used = sum(len(name.encode()) + len(value.encode()) for name, value in fields)
        if used > self.max_bytes:
            raise MultipartError(_over(self.max_bytes))
        # A text field as a part without a filename: requests would send fields
        # alone as a urlencoded form, not as multipart/form-data.
        parts: list[tuple[str, tuple[str | None, bytes, str | None]]] = [
            (name, (None, value.encode(), None)) for name, value in fields
        ]
        for part in self.files:
            where = f"multipart file '{part.field}'"
            content = render(part.content)
            if content is None:
                continue
            if not isinstance(content, str):
                raise MultipartError(
                    f"{where}: the content must render text, got {type(content).__name__}"
                )
            data = _decode(content, part.encoding, where, room=self.max_bytes - used)
            if data is None:
                raise MultipartError(f"{where}: " + _over(self.max_bytes))
            used += len(data)
            if used > self.max_bytes:
                raise MultipartError(_over(self.max_bytes))
            filename = _text(render(part.filename), f"{where}: filename") or part.field
            media_type = _text(render(part.content_type), f"{where}: content_type")
            media_type = media_type or _DEFAULT_TYPES[part.encoding]
            if not _MEDIA_TYPE.fullmatch(media_type):
                raise MultipartError(
                    f"{where}: content_type is not a media type such as 'image/png' "
                    "(the value is not shown)"
                )
            parts.append((part.field, (filename, data, media_type)))
        if not parts:
            raise MultipartError("every multipart field and file rendered null: nothing to send")
        return parts


def _over(limit: int) -> str:
    return f"the multipart body would be over max_bytes ({limit} bytes); nothing was sent"


def _decode(content: str, encoding: str, where: str, *, room: int) -> bytes | None:
    """The file's bytes; None when they would surely not fit in ``room`` (not decoded then)."""
    if encoding == "text":
        # A character is at least one byte: a text that long need not be encoded to know.
        return None if len(content) > room else content.encode("utf-8")
    # Whitespace is allowed (wrapped base64); anything else outside the alphabet is not.
    packed = "".join(content.split())
    if len(packed) // 4 * 3 > room + 3:
        return None
    try:
        return base64.b64decode(packed, validate=True)
    except (binascii.Error, ValueError):
        raise MultipartError(
            f"{where}: the content is not valid base64 (the value is not shown)"
        ) from None


def _text(value: Any, where: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise MultipartError(f"{where} must render text, got {type(value).__name__}")
    if any(char in value for char in "\r\n\0"):
        raise MultipartError(f"{where} would contain a line break or NUL (the value is not shown)")
    return value


# -- load time ----------------------------------------------------------------------------------


def parse_multipart(
    raw: Any, location: Location, compile_: Compile, field_value: FieldValue, problems: Problems
) -> MultipartBody | None:
    """Check ``multipart:``; templates compile with ``compile_``, fields with ``field_value``."""
    if not check_keys(raw, MULTIPART_KEYS, location, problems, "multipart"):
        return None
    start = len(problems)
    fields: list[tuple[str, Any]] = []
    raw_fields = raw.get("fields", {})
    if not isinstance(raw_fields, Mapping):
        problems.add((*location, "fields"), "'fields' must map field names to values")
    else:
        for name, value in raw_fields.items():
            fields.append((str(name), field_value(value, (*location, "fields", name))))
    files: list[MultipartFile] = []
    raw_files = raw.get("files", {})
    if not isinstance(raw_files, Mapping):
        problems.add((*location, "files"), "'files' must map field names to files")
        raw_files = {}
    for name, part in raw_files.items():
        parsed = _parse_file(str(name), part, (*location, "files", name), compile_, problems)
        if parsed is not None:
            files.append(parsed)
    if not fields and not files and len(problems) == start:
        problems.add(location, "a multipart body needs 'fields', 'files' or both")
    max_bytes = raw.get("max_bytes", DEFAULT_MAX_BYTES)
    if not is_integer(max_bytes) or not 1 <= max_bytes <= MAX_BYTES_LIMIT:
        problems.add(
            (*location, "max_bytes"),
            f"expected a whole number of bytes from 1 to {MAX_BYTES_LIMIT}",
        )
    if len(problems) > start:
        return None
    return MultipartBody(fields=tuple(fields), files=tuple(files), max_bytes=max_bytes)


def _parse_file(
    name: str, raw: Any, location: Location, compile_: Compile, problems: Problems
) -> MultipartFile | None:
    if not check_keys(raw, PART_KEYS, location, problems, "a multipart file"):
        return None
    content = raw.get("content")
    if not isinstance(content, str):
        problems.add(location, "a file needs 'content', a template such as '{{ inputs.data }}'")
        return None
    template = compile_(content, (*location, "content"))
    encoding = raw.get("encoding", "text")
    if encoding not in ENCODINGS:
        problems.add((*location, "encoding"), "expected 'text' (UTF-8) or 'base64'")
        return None
    names: dict[str, Template | str | None] = {}
    for key in ("filename", "content_type"):
        value = raw.get(key)
        if value is None:
            names[key] = None
        elif not isinstance(value, str):
            problems.add((*location, key), "expected a string (a template)")
        else:
            names[key] = compile_(value, (*location, key))
    media_type = names.get("content_type")
    if (
        isinstance(media_type, Template)
        and media_type.is_literal
        and not _MEDIA_TYPE.fullmatch(media_type.source)
    ):
        problems.add(
            (*location, "content_type"),
            f"{media_type.source!r} is not a media type such as 'image/png'",
        )
    if template is None or len(names) < 2:
        return None
    return MultipartFile(
        field=name,
        content=template,
        encoding=encoding,
        filename=names["filename"],
        content_type=names["content_type"],
    )
