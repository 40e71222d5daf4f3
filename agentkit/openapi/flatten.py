"""A schema made flat: its ``$ref`` followed and its ``allOf`` merged into one schema.

A schema that refers back to itself on the way raises an ``UnexpressibleOperation``
that ``recursive_ref`` tells apart: ``schemas`` cuts such a schema where it converts,
and a caller that needs the schema whole skips the operation.
"""

from __future__ import annotations

from typing import Any

from agentkit.openapi.keywords import as_mapping, names_in
from agentkit.openapi.memo import Conversions
from agentkit.openapi.reader import Resolver, pointer_join, problem, unexpressible
from agentkit.toolerrors import UnexpressibleOperation


class _Recursive(UnexpressibleOperation):
    """A schema that refers to itself through ``$ref``/``allOf``.

    ``SchemaConverter.convert`` cuts it and keeps it free-form; where a caller flattens a
    schema it needs whole (a request body, a 2xx response) it skips just that operation."""

    def __init__(self, ref: str, pointer: str) -> None:
        super().__init__(
            problem(
                pointer, "its allOf refers back to itself, so it cannot be merged into one schema"
            )
        )
        self.ref = ref


def recursive_ref(exc: UnexpressibleOperation) -> str | None:
    """The ref at which ``flatten`` met a schema referring back to itself; None when
    ``exc`` is another problem."""
    return exc.ref if isinstance(exc, _Recursive) else None


def flatten(
    resolver: Resolver, memo: Conversions | None, node: Any, pointer: str, stack: tuple[str, ...]
) -> tuple[dict[str, Any], str, tuple[str, ...]]:
    """``(schema, pointer, stack)``: the schema with ``$ref`` followed and ``allOf`` merged,
    where it is, and ``stack`` with the refs followed to it; raises ``UnexpressibleOperation``
    (``recursive_ref`` names the ref) when one of them is on ``stack`` already."""
    node, pointer, refs = resolver.resolve(node, pointer)
    for ref in refs:
        if memo is not None:
            memo.asked(ref)
        if ref in stack:
            raise _Recursive(ref, pointer)
    stack = (*stack, *refs)
    if not isinstance(node, dict):
        raise unexpressible(pointer, "expected a schema (a mapping)")
    if "allOf" not in node:
        return node, pointer, stack
    merged = {key: value for key, value in node.items() if key != "allOf"}
    properties = dict(as_mapping(merged.get("properties")))
    required = names_in(merged.get("required"))
    parts = node["allOf"] if isinstance(node["allOf"], list) else []
    for index, part in enumerate(parts):
        sub, _, _ = flatten(resolver, memo, part, pointer_join(pointer, "allOf", index), stack)
        for name, spec in as_mapping(sub.get("properties")).items():
            properties.setdefault(name, spec)
        required += [name for name in names_in(sub.get("required")) if name not in required]
        for key, value in sub.items():
            if key not in ("properties", "required"):
                merged.setdefault(key, value)
    if properties:
        merged["properties"] = properties
        merged.setdefault("type", "object")
    if required:
        merged["required"] = required
    return merged, pointer, stack
