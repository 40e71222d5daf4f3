"""A stdio server's first answers, written without the MCP SDK (issue #10).

Importing the SDK (``mcp``, ``mcp_types``, pydantic) takes longer than loading a
thousand tool definitions, and a client's first requests do not need it: the
handshake's ``initialize``, ``notifications/initialized``, ``ping`` and ``tools/list``
have fixed answers. ``Front`` gives them, byte for byte as the SDK would on that
connection (``tests/test_mcp_front.py`` compares both paths for every protocol
version), and declines every other line. The server then imports the SDK and hands
over (``agentkit.mcp_front``): the client's ``initialize`` is replayed into it
(``Front.replay``) so that its session is the one the client negotiated, and every
line from the first declined one on goes to the SDK, which answers it as it always has.

``Front`` declines whenever it cannot be sure of the SDK's answer, which is always
safe: a malformed line, an id or a parameter it does not know, anything before
``initialize``, anything carrying the 2026-07-28 protocol's ``_meta`` envelope (that
era has no handshake; the SDK serves it). ``Front.for_tools`` gives ``None`` for a
listing it cannot write exactly (a schema holding what JSON does not, a hint that is
not a boolean): then the SDK serves from the start.

``file_state`` is the state ``--reload`` compares against, taken before the first
load so that a change made while the server starts is not missed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, final

from agentkit import __version__
from agentkit.export import mcp_tool
from agentkit.tool import Tool
from agentkit.toolerrors import AgentKitError
from agentkit.toolschema import ToolSchema

__all__ = [
    "HANDSHAKE_VERSIONS",
    "REPLAY_ID",
    "SERVER_NAME",
    "Front",
    "file_state",
    "lone_surrogate",
    "wire_json",
    "writable",
]

#: The server's name in ``initialize``'s ``serverInfo``.
SERVER_NAME: Final = "agentkit"
#: The protocol versions the SDK negotiates with ``initialize``, oldest first
#: (``mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS``; a test holds them equal). A client
#: asking for another one is offered the newest.
HANDSHAKE_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: The id the client's ``initialize`` is replayed into the SDK with; the SDK's answer to
#: it is the client's second, and is not sent.
REPLAY_ID: Final = "agentkit/front/initialize"
#: The reserved ``_meta`` key of the 2026-07-28 protocol's per-request envelope.
_ENVELOPE_KEY: Final = "io.modelcontextprotocol/protocolVersion"
#: JSON-RPC ids the front answers: what a client sends, well inside what any peer reads.
_MAX_ID: Final = 2**53
_UNENCODABLE: Final = re.compile("[\ud800-\udfff]")
#: Compact JSON, text as it is: one encoder for every value (``json.dumps`` with
#: options makes one a call).
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_HINTS: Final = ("destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint", "title")
#: A tool's and a schema's fields in the order the SDK writes them (its models' order);
#: a schema's other keys follow in their own order.
_SCHEMA_FIELDS: Final = ("$schema", "properties", "required", "type")


class _Unwritable(AgentKitError):
    """A value the front cannot write exactly as the SDK would (never leaves this
    module: ``Front.for_tools`` gives ``None`` instead)."""


# -- JSON as the SDK writes it ----------------------------------------------------------------


def wire_json(value: Any) -> str:
    """``value`` as compact JSON, exactly as the SDK's pydantic writes it: UTF-8 text
    (not ``\\u`` escapes), pydantic's float format, NaN and infinities as ``null``, and
    every lone surrogate replaced by U+FFFD (``agentkit.mcp_content.encodable``).

    Raises ``_Unwritable`` for what JSON does not hold (a set, a non-string key).
    """
    return _encodable(_json(value))


def _encodable(text: str) -> str:
    if not text.isascii() and _UNENCODABLE.search(text):
        return _UNENCODABLE.sub("\ufffd", text)
    return text


def _json(value: Any) -> str:
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise _Unwritable(str(exc)) from exc
    # Python and pydantic write floats alike except NaN, the infinities and small
    # exponents ("1e-07" against "1e-7"): only then is the slower writer needed.
    if "e-" in text or "NaN" in text or "Infinity" in text:
        text = "".join(_pieces(value))
    return text


def _pieces(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield json.dumps(value, ensure_ascii=False)
    elif value is None or isinstance(value, (bool, int)):
        yield json.dumps(value)
    elif isinstance(value, float):
        yield _float(value)
    elif isinstance(value, dict):
        yield "{"
        for index, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise _Unwritable(f"a non-string key: {key!r}")
            yield ("," if index else "") + json.dumps(key, ensure_ascii=False) + ":"
            yield from _pieces(item)
        yield "}"
    elif isinstance(value, (list, tuple)):
        yield "["
        for index, item in enumerate(value):
            if index:
                yield ","
            yield from _pieces(item)
        yield "]"
    else:
        raise _Unwritable(f"not a JSON value: {type(value).__name__}")


def _float(value: float) -> str:
    """A float as pydantic writes it: Python's ``repr``, but ``null`` for NaN and the
    infinities, plain digits for exponent -5 and no zero padding in smaller ones."""
    if not math.isfinite(value):
        return "null"
    text = repr(value)
    mantissa, negative_exponent, exponent = text.partition("e-")
    if not negative_exponent:
        return text
    if exponent == "05":
        sign = "-" if mantissa.startswith("-") else ""
        return f"{sign}0.0000{mantissa.lstrip('-').replace('.', '')}"
    return f"{mantissa}e-{exponent.lstrip('0')}"


# -- the answers ------------------------------------------------------------------------------


def _schema(schema: Any) -> dict[str, Any]:
    """An input or output schema as the SDK sends it: its model's fields first, then
    the rest, without top-level ``None`` values (deeper ones stay)."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise _Unwritable("a schema that is not an object's")
    first = {key: schema[key] for key in _SCHEMA_FIELDS if schema.get(key) is not None}
    rest = {
        key: value
        for key, value in schema.items()
        if key not in _SCHEMA_FIELDS and value is not None
    }
    return {**first, **rest}


@final
class _Schemas:
    """Each schema written once, however many tools share it (a thousand tools loaded
    from one folder share a few ``ToolSchema`` objects, which are immutable)."""

    def __init__(self) -> None:
        # id(schema) -> the schema (so that its id stays its own), and it written.
        self._seen: dict[int, tuple[ToolSchema, str]] = {}

    def written(self, schema: ToolSchema) -> str:
        """``schema`` as the SDK sends it (``_schema``), written."""
        seen = self._seen.get(id(schema))
        if seen is None:
            seen = self._seen[id(schema)] = (schema, _written(_schema(schema.to_json_schema())))
        return seen[1]


def _listed_tool(tool: Tool, schemas: _Schemas) -> str:
    """``tool`` as the SDK lists it on a handshake connection (``ServedTools.listed``
    through the SDK's 2025-11-25 wire model), written: ``mcp_tool``'s fields in the
    model's order."""
    exported = mcp_tool(tool, schema=schemas.written)
    given = exported["annotations"]
    hints = {key: given[key] for key in _HINTS if given.get(key) is not None}
    if any(not isinstance(hints.get(key, False), bool) for key in _HINTS[:-1]):
        raise _Unwritable(f"tool {tool.name!r}: a hint that is not a boolean")
    for key in ("title", "description"):
        if not isinstance(exported.get(key), (str, type(None))):
            raise _Unwritable(f"tool {tool.name!r}: {key} is not a string")
    if not isinstance(hints.get("title", ""), str) or not isinstance(exported["name"], str):
        raise _Unwritable(f"tool {tool.name!r}: a name or title that is not a string")
    # Strings and booleans read back as written: only the schemas need _written's check.
    fields = [f'"annotations":{_json(hints)}']
    if exported["description"] is not None:
        fields.append(f'"description":{_json(exported["description"])}')
    fields.append(f'"inputSchema":{exported["inputSchema"]}')
    fields.append(f'"name":{_json(exported["name"])}')
    if exported.get("outputSchema") is not None:
        fields.append(f'"outputSchema":{exported["outputSchema"]}')
    if exported["title"] is not None:
        fields.append(f'"title":{_json(exported["title"])}')
    return "{" + ",".join(fields) + "}"


def _written(value: Any) -> str:
    """``_json(value)``, which must read back as ``value``: no key that JSON turns into
    a string, no tuple, no NaN (the SDK takes none of them)."""
    text = _json(value)
    if json.loads(text) != value:
        raise _Unwritable("a value JSON does not read back the same")
    return text


def _answer(request_id: int | str, result: str) -> str:
    """A JSON-RPC answer line, ``result`` already written."""
    return f'{{"jsonrpc":"2.0","id":{wire_json(request_id)},"result":{result}}}\n'


def _is_id(value: Any) -> bool:
    if isinstance(value, str):
        return True
    return type(value) is int and -_MAX_ID <= value <= _MAX_ID


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_mapping_of_mappings(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(item, dict) for item in value.values())


#: The client capabilities the front knows the SDK accepts: each a check of its value.
_CAPABILITIES: Final[dict[str, Callable[[Any], bool]]] = {
    "experimental": _is_mapping_of_mappings,
    "extensions": _is_mapping_of_mappings,
    "roots": lambda value: (
        isinstance(value, dict)
        and set(value) <= {"listChanged"}
        and isinstance(value.get("listChanged", False), bool)
    ),
    "sampling": lambda value: (
        isinstance(value, dict)
        and set(value) <= {"context", "tools"}
        and _is_mapping_of_mappings(value)
    ),
    "elicitation": lambda value: (
        isinstance(value, dict) and set(value) <= {"form", "url"} and _is_mapping_of_mappings(value)
    ),
}
_CLIENT_INFO: Final = {"name", "version", "title", "description", "websiteUrl"}


def _initialize_params(params: Any) -> str | None:
    """The protocol version ``initialize`` with ``params`` asks for, or ``None`` when
    the front is not sure the SDK would take them (it then answers them itself)."""
    if not isinstance(params, dict) or set(params) != {
        "protocolVersion",
        "capabilities",
        "clientInfo",
    }:
        return None
    version, capabilities, info = (
        params["protocolVersion"],
        params["capabilities"],
        params["clientInfo"],
    )
    if not isinstance(version, str) or not isinstance(capabilities, dict):
        return None
    if any(
        key not in _CAPABILITIES or not _CAPABILITIES[key](value)
        for key, value in capabilities.items()
    ):
        return None
    if not isinstance(info, dict) or not set(info) <= _CLIENT_INFO:
        return None
    if not (_is_text(info.get("name")) and _is_text(info.get("version"))):
        return None
    if not all(_is_text(value) for value in info.values()):
        return None
    return version


def writable(text: str) -> bool:
    """Whether UTF-8 can carry ``text`` (it holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def lone_surrogate(message: dict[str, Any]) -> str | None:
    """Where in ``message`` a key or a string holds a lone surrogate (``params.arguments``,
    ``the id``), or None. Searched without recursion: a deep message is no crash."""
    stack: list[tuple[Any, str]] = [(message, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if not writable(value):
                return f"the value of '{path}'" if path else "the message"
        elif isinstance(value, dict):
            for key, item in value.items():
                if not writable(key):
                    return f"a key in '{path}'" if path else "a key of the message"
                stack.append((item, f"{path}.{key}" if path else key))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{index}]") for index, item in enumerate(value))
    return None


def _message(line: str) -> dict[str, Any] | None:
    """``line`` as a JSON-RPC message the front may answer, or ``None``."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # nested too deeply: the SDK's side refuses it
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    if not set(message) <= {"jsonrpc", "id", "method", "params"} or not _is_text(
        message.get("method")
    ):
        return None
    if "id" in message and not _is_id(message["id"]):
        return None
    # A "\ud800" escape: a lone surrogate, which the SDK's parser refuses (it drops the line).
    if "\\u" in line and lone_surrogate(message) is not None:
        return None
    params = message.get("params", {})
    if (
        isinstance(params, dict)
        and isinstance(params.get("_meta"), dict)
        and _ENVELOPE_KEY in params["_meta"]
    ):
        return None
    return message


@final
class Front:
    """Answers a client's first lines the way the SDK would, until one it cannot.

    ``answer(line)`` gives the answer line to send, ``""`` for a notification taken
    without one, or ``None``: this line and every later one are the SDK's. ``replay``
    holds the lines the SDK must read before those, for the session the client set up.
    """

    def __init__(self, listing: str, *, tools_changed: bool = True) -> None:
        self._listing = listing
        self._capabilities = wire_json({"logging": {}, "tools": {"listChanged": tools_changed}})
        self._server = wire_json({"name": SERVER_NAME, "version": __version__})
        self._version: str | None = None  # negotiated by initialize
        self._initialized = False
        #: The lines for the SDK to read first: ``initialize`` (with ``REPLAY_ID``) and
        #: ``notifications/initialized``, as the client sent them.
        self.replay: list[str] = []
        #: Whether the client has its first ``tools/list`` answer.
        self.listed = False
        #: The answer the SDK's to the replayed ``initialize`` must equal.
        self.expected = ""

    @classmethod
    def for_tools(cls, tools: Iterable[Tool], *, tools_changed: bool = True) -> Front | None:
        """A front listing ``tools``; ``None`` when it cannot write them as the SDK would."""
        schemas = _Schemas()
        try:
            listing = ",".join(_listed_tool(tool, schemas) for tool in tools)
        except _Unwritable:
            return None
        return cls(_encodable(f'{{"tools":[{listing}]}}'), tools_changed=tools_changed)

    def initialize_result(self, version: str) -> str:
        """``initialize``'s result for a client asking for protocol ``version``."""
        negotiated = version if version in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        return (
            f'{{"capabilities":{self._capabilities},"protocolVersion":{wire_json(negotiated)},'
            f'"serverInfo":{self._server}}}'
        )

    def answer(self, line: str) -> str | None:
        message = _message(line)
        if message is None:
            return None
        method = message["method"]
        params = message.get("params", {})
        if "id" not in message:
            initializing = self._version is not None and not self._initialized
            if method == "notifications/initialized" and initializing:
                self._initialized = True
                self.replay.append(line)
                return ""
            return None
        request_id = message["id"]
        if self._version is None:
            # The SDK decides a connection's protocol era by its first request: only
            # an initialize makes it the handshake era, the one answered here.
            version = _initialize_params(params) if method == "initialize" else None
            if version is None:
                return None
            self._version = version
            result = self.initialize_result(version)
            replayed = {"jsonrpc": "2.0", "id": REPLAY_ID, "method": method, "params": params}
            self.replay.append(json.dumps(replayed) + "\n")
            self.expected = _answer(REPLAY_ID, result)
            return _answer(request_id, result)
        if params != {}:
            return None
        if method == "ping":
            return _answer(request_id, "{}")
        if method == "tools/list":
            self.listed = True
            return _answer(request_id, self._listing)
        return None


def file_state(files: Iterable[Path]) -> tuple[tuple[str, int, int], ...]:
    """Each of ``files`` with its size and modification time, sorted; a file gone
    meanwhile is left out (its absence is the change)."""
    seen: list[tuple[str, int, int]] = []
    for path in files:
        try:
            status = path.stat()
        except OSError:
            continue
        seen.append((str(path), status.st_size, status.st_mtime_ns))
    return tuple(sorted(seen))
