"""How big an import lets each tool grow: its schemas' depth and size, its descriptions,
and the streaming parameters it leaves out.

A large description (Kubernetes' nests a pod spec twenty levels deep under each
workload, and repeats a page of text per field) otherwise imports into files no
reviewer reads and schemas no model's context holds. The budgets are kept in the
lock file, so ``--update`` generates with the same ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any, Final, final

from agentkit.schemasize import DEFAULT_SCHEMA_BUDGET, SchemaSize, schema_bytes
from agentkit.toolerrors import SchemaDefinitionError, UsageError
from agentkit.toolschema import ToolSchema

#: Query parameters that turn a call into a stream (Kubernetes' ``watch`` and
#: ``follow``): a tool reads one answer, so a call with them set would never end.
STREAMING_PARAMETERS: Final = frozenset({"watch", "follow"})

#: The longest tool description every provider accepts (``agentkit validate`` warns above).
MAX_TOOL_DESCRIPTION: Final = 1024
#: Each numeric budget's command-line option and its least value.
_OPTIONS: Final = {
    "max_depth": ("--max-depth", 0),
    "schema_bytes": ("--schema-budget", 1),
    "description_chars": ("--description-budget", 20),
    "tool_description_chars": ("--tool-description-budget", 20),
}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Budgets:
    """The import's budgets (``agentkit import openapi --max-depth`` and the others).

    - ``max_depth``: the levels of nesting a schema keeps below a top-level parameter;
      deeper objects and lists become a free-form ``dictionary`` or ``list``.
    - ``schema_bytes``: a tool's schema size (``agentkit.schemasize``); a tool over it is
      generated again with less depth, its larger schema first, until it fits.
    - ``description_chars``: a parameter's description; ``tool_description_chars``: a
      tool's. Longer ones are cut at a sentence, else a word, and end with ``…``.
    - ``keep_streaming``: keep optional ``watch``/``follow`` query parameters.
    """

    max_depth: int = 8
    schema_bytes: int = DEFAULT_SCHEMA_BUDGET
    description_chars: int = 300
    tool_description_chars: int = 1000
    keep_streaming: bool = False

    def __post_init__(self) -> None:
        for name, (option, low) in _OPTIONS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise UsageError(
                    f"{option}: expected a whole number of at least {low}, got {value!r}"
                )
        if self.tool_description_chars > MAX_TOOL_DESCRIPTION:
            raise UsageError(
                f"--tool-description-budget: expected at most {MAX_TOOL_DESCRIPTION} (the "
                f"longest tool description providers accept), got {self.tool_description_chars}"
            )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> Budgets:
        """The budgets ``to_json`` wrote (a lock file's); absent ones are the defaults."""
        if not isinstance(data, dict):
            return cls()
        known = {field.name for field in fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in known})


#: The schema each direction's definition key holds.
_KEYS: Final = {"input": "input_schema", "output": "output_schema"}


def definition_size(document: dict[str, Any]) -> SchemaSize:
    """The schema size (``agentkit.schemasize``) of the tool ``document`` defines.

    A binary tool's output counts nothing, as in ``tools/list``; a schema that does not
    parse counts nothing (the import's own check reports it).
    """
    sizes = {}
    for direction, key in _KEYS.items():
        http = document.get("backend", {}).get("http", {})
        if direction == "output" and isinstance(http, dict) and http.get("binary") is True:
            sizes[direction] = 0
            continue
        try:
            sizes[direction] = schema_bytes(ToolSchema.from_dict(document.get(key, {})))
        except SchemaDefinitionError:
            sizes[direction] = 0
    return SchemaSize(input=sizes["input"], output=sizes["output"])


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Fitted:
    """A tool's definition as the size budget left it: the depths it was cut to, if any."""

    document: dict[str, Any]
    size: SchemaSize
    #: The levels of nesting each direction kept where the budget cut it; empty when none.
    depths: dict[str, int]

    def notes(self, budgets: Budgets) -> list[str]:
        """What the budget cut, and whether the tool fits, for the notes of its file."""
        notes = []
        if self.depths:
            kept = " and ".join(
                f"{direction} to {depth} level(s)"
                for direction, depth in sorted(self.depths.items())
            )
            notes.append(
                f"nesting cut ({kept}) to fit the schema budget of {budgets.schema_bytes} "
                "bytes (--schema-budget); the parts cut are free-form, each noted"
            )
        if self.size.total > budgets.schema_bytes:
            notes.append(
                f"{self.size.total} bytes, over the schema budget of {budgets.schema_bytes} "
                "with no nesting left to cut: its top-level parameters alone are that large"
            )
        return notes


def fit(
    document: dict[str, Any],
    budgets: Budgets,
    build: Callable[[dict[str, int]], dict[str, Any]],
) -> Fitted:
    """``document``, or one ``build`` makes with less depth, within ``budgets.schema_bytes``.

    The larger of the two schemas loses its deepest structured level, and the tool is
    built again, until it fits or neither schema has a level left to lose (then the
    last, smallest, build is kept: its top-level parameters alone are over the budget).
    """
    size = _measured(document, budgets.schema_bytes)
    depths: dict[str, int] = {}
    while size.total > budgets.schema_bytes:
        # A level to lose: structure below a parameter, and a depth left to cut it at.
        deepest = {
            direction: _deepest(document.get(key, {}).get("parameters"))
            if depths.get(direction, budgets.max_depth) > 0
            else -1
            for direction, key in _KEYS.items()
        }
        larger = sorted(_KEYS, key=lambda direction: -getattr(size, direction))
        cut = next((direction for direction in larger if deepest[direction] >= 0), None)
        if cut is None:
            break
        depths[cut] = min(depths.get(cut, budgets.max_depth) - 1, deepest[cut])
        document = build(dict(depths))
        size = _measured(document, budgets.schema_bytes)
    return Fitted(document=document, size=size, depths=depths)


def _measured(document: dict[str, Any], budget: int) -> SchemaSize:
    """``definition_size(document)``, or a rough size when that is far over ``budget``.

    Measuring parses each schema (``ToolSchema.from_dict``), and a schema cut from
    300 KB to 8 KB was parsed at each size on the way: most of a large import's time.
    The definition's own compact JSON is about as long as its JSON Schema (in
    Kubernetes' tools, 0.9 to 1.1 times as long above a few hundred bytes), so a
    definition whose JSON is over twice the budget is over it, and measured roughly.
    """
    rough = {
        direction: len(json.dumps(document.get(key, {}), separators=(",", ":"), ensure_ascii=False))
        for direction, key in _KEYS.items()
    }
    if sum(rough.values()) > 2 * budget:
        return SchemaSize(input=rough["input"], output=rough["output"])
    return definition_size(document)


def _deepest(parameters: Any, depth: int = 0) -> int:
    """The depth of the deepest parameter with structure below it (fields, or a list's
    items); -1 when none has any. Top-level parameters are at depth 0, as the
    converter counts them: a budget of that depth makes them free-form."""
    deepest = -1
    for parameter in parameters if isinstance(parameters, list) else ():
        deepest = max(deepest, _structured(parameter, depth))
    return deepest


def _structured(parameter: Any, depth: int) -> int:
    if not isinstance(parameter, dict):
        return -1
    deepest = -1
    if "parameters" in parameter:
        deepest = max(depth, _deepest(parameter["parameters"], depth + 1))
    if "items" in parameter:
        deepest = max(deepest, depth, _structured(parameter["items"], depth + 1))
    return deepest
