"""One tool definition document: parsed, checked, and turned into a ``DeclarativeTool`` class."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final, final

from agentkit.declarative.http_backend import HttpBackend
from agentkit.declarative.http_spec import IDEMPOTENT, parse_http_spec
from agentkit.declarative.problems import Problems, check_keys
from agentkit.declarative.python_backend import PythonBackend, parse_python_backend
from agentkit.declarative.yamlsource import clip, read_documents
from agentkit.tool import ANNOTATION_KEYS, TOOL_NAME_PATTERN
from agentkit.toolerrors import SchemaDefinitionError
from agentkit.toolschema import ToolSchema

__all__ = ["ANNOTATION_KEYS", "TOP_LEVEL_KEYS", "ToolDefinition", "parse_definition"]

TOP_LEVEL_KEYS: Final = (
    "name",
    "version",
    "description",
    "tags",
    "credentials",
    "input_schema",
    "output_schema",
    "annotations",
    "backend",
)
_SEMVER: Final = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?"
)

Backend = HttpBackend | PythonBackend


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDefinition:
    """A checked definition: everything a ``DeclarativeTool`` class is made from."""

    name: str
    version: str
    description: str
    tags: dict[str, str]
    credentials: tuple[str, ...]
    input_schema: ToolSchema
    output_schema: ToolSchema
    annotations: dict[str, Any]
    backend: Backend
    path: str
    line: int
    #: The text of the file the definition is in, and which of its documents it is:
    #: kept instead of the located YAML tree, which is many times the size.
    text: str
    document: int

    @property
    def source(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def raw(self) -> dict[str, Any]:
        """The definition as written (its YAML document), read again from ``text``."""
        documents, _ = read_documents(self.text)
        raw: dict[str, Any] = documents[self.document][0]
        return raw

    def to_dict(self) -> dict[str, Any]:
        """The definition as written, as plain JSON data (what ``agentkit show`` prints)."""
        plain: dict[str, Any] = json.loads(json.dumps(self.raw, default=str))
        return plain


def parse_definition(
    raw: Any, problems: Problems, *, text: str, document: int
) -> ToolDefinition | None:
    """Check one document; problems go to ``problems``, and ``None`` comes back if any.

    ``raw`` is document number ``document`` (from 0) of ``read_documents(text)``.
    """
    if not check_keys(raw, TOP_LEVEL_KEYS, (), problems, "a tool definition"):
        return None
    start = len(problems)

    name = raw.get("name")
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
        problems.add(
            ("name",),
            f"invalid tool name {_quoted(name)}: use letters, digits, '_' and '-', starting with a "
            "letter, at most 64 characters"
            if name is not None
            else "missing 'name'",
        )
    version = raw.get("version")
    if isinstance(version, (int, float)) and not isinstance(version, bool):
        problems.add(
            ("version",), f"version {_quoted(version)} must be a quoted string like '1.2.0'"
        )
    elif not isinstance(version, str) or not _SEMVER.fullmatch(version):
        problems.add(
            ("version",),
            f"invalid version {_quoted(version)}: use a semantic version such as 1.2.0"
            if version is not None
            else "missing 'version' (a semantic version such as 1.0.0)",
        )
    description = raw.get("description", "")
    if not isinstance(description, str):
        problems.add(("description",), "expected a string")
    tags = raw.get("tags", {})
    if not isinstance(tags, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in tags.items()
    ):
        problems.add(("tags",), "tags must map strings to strings (quote numbers: '1')")
        tags = {}
    credentials = _parse_credentials(raw.get("credentials", []), problems)
    before_schema = len(problems)
    inputs = _parse_schema(raw, "input_schema", problems)
    inputs_ok = len(problems) == before_schema
    outputs = _parse_schema(raw, "output_schema", problems)
    backend = _parse_backend(
        raw.get("backend"), inputs if inputs_ok else None, outputs, credentials, problems
    )
    annotations = _parse_annotations(raw.get("annotations", {}), backend, problems)

    if len(problems) > start or backend is None:
        return None
    assert isinstance(name, str)
    assert isinstance(version, str)
    return ToolDefinition(
        name=name,
        version=version,
        description=description,
        tags=dict(tags),
        credentials=credentials,
        input_schema=inputs,
        output_schema=outputs,
        annotations=annotations,
        backend=backend,
        path=problems.path,
        line=problems.start[0],
        text=text,
        document=document,
    )


def _quoted(value: Any) -> str:
    return f"'{clip(value)}'" if isinstance(value, str) else clip(value)


def _parse_credentials(raw: Any, problems: Problems) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(item, str) and item for item in raw):
        problems.add(("credentials",), "expected a list of credential names")
        return ()
    seen: set[str] = set()
    for index, item in enumerate(raw):
        if item in seen:
            problems.add(("credentials", index), f"credential '{clip(item)}' is listed twice")
        seen.add(item)
    return tuple(raw)


def _parse_schema(raw: dict[str, Any], key: str, problems: Problems) -> ToolSchema:
    try:
        return ToolSchema.from_dict(raw.get(key, {}))
    except SchemaDefinitionError as exc:
        for problem in exc.problems:
            problems.add((key, *problem.location), problem.message)
        return ToolSchema()


def _parse_backend(
    raw: Any,
    inputs: ToolSchema | None,
    outputs: ToolSchema,
    credentials: tuple[str, ...],
    problems: Problems,
) -> HttpBackend | PythonBackend | None:
    if raw is None:
        problems.add((), "missing 'backend': give {http: ...} or {python: 'module:function'}")
        return None
    if not check_keys(raw, ("http", "python"), ("backend",), problems, "backend"):
        return None
    if len(raw) != 1:
        problems.add(("backend",), "give exactly one backend: 'http' or 'python'")
        return None
    if "python" in raw:
        if inputs is None:
            return None
        return parse_python_backend(raw["python"], inputs, ("backend", "python"), problems)
    spec = parse_http_spec(raw["http"], ("backend", "http"), inputs, outputs, credentials, problems)
    return HttpBackend(spec) if spec is not None else None


def _parse_annotations(raw: Any, backend: Backend | None, problems: Problems) -> dict[str, Any]:
    if not check_keys(raw, ANNOTATION_KEYS, ("annotations",), problems, "annotations"):
        return {}
    annotations: dict[str, Any] = {}
    if isinstance(backend, HttpBackend) and backend.spec.method in ("GET", "HEAD"):
        annotations = {"read_only": True, "idempotent": True}
    elif isinstance(backend, HttpBackend) and backend.spec.method in IDEMPOTENT:
        annotations = {"idempotent": True}
    for key, value in raw.items():
        expected = str if key == "title" else bool
        if not isinstance(value, expected):
            wanted = "a string" if expected is str else "true or false"
            problems.add(("annotations", key), f"expected {wanted}")
            continue
        annotations[key] = value
    return annotations
