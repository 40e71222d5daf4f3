"""JSON Schemas of a description turned into agentkit parameter specs.

The converter stays one class in one module because its methods recurse into one
another (a property, a list's items, a union's members go back through ``convert``).
What does not recurse is beside it: ``flatten`` (``$ref`` followed, ``allOf``
merged), ``constraints`` (a scalar's enum, bounds, pattern and default) and
``keywords`` (what one schema's keywords say).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, final

from agentkit.openapi.budgets import Budgets
from agentkit.openapi.descriptions import trim
from agentkit.openapi.flatten import flatten, recursive_ref
from agentkit.openapi.keywords import (
    CONSTRAINTS,
    TYPES,
    UNION_KINDS,
    Direction,
    Member,
    as_mapping,
    fits,
    is_nullable,
    kind_of,
    names_in,
    null_in_enum,
    only_null,
    skipped,
    union_enum,
    value_kind,
)
from agentkit.openapi.leaf_constraints import Note, constraints, default, drop_values
from agentkit.openapi.memo import Conversions
from agentkit.openapi.reader import Resolver, pointer_join, problem
from agentkit.toolerrors import UnexpressibleOperation

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def valid_name(name: object) -> bool:
    return isinstance(name, str) and _IDENTIFIER.fullmatch(name) is not None


@final
@dataclass(slots=True, kw_only=True)
class Notes:
    """What an import left out or simplified, for the comment at the top of a file."""

    lines: list[str] = field(default_factory=list)
    #: Maps a pointer back into the file read (a converted Swagger 2.0 description).
    translate: Callable[[str], str] | None = None

    def add(self, where: str, pointer: str, message: str) -> None:
        if self.translate is not None:
            pointer = self.translate(pointer)
        line = f"{where}: {message} ({pointer})"
        if line not in self.lines:
            self.lines.append(line)


class _Untypable(UnexpressibleOperation):
    """A required input property the definition format has no type for.

    It skips the operation only when every enclosing property is required too: an
    optional one that holds it (a list of such objects) is left out instead."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaConverter:
    """Turns schemas into parameter specs, following ``$ref`` and merging ``allOf``."""

    resolver: Resolver
    notes: Notes
    #: The conversions of this import, kept for the operations after this one.
    memo: Conversions | None = None
    budgets: Budgets = field(default_factory=Budgets)
    #: The levels of nesting each direction keeps, where the size budget cut them below
    #: the budgets' ``max_depth``.
    depths: dict[str, int] = field(default_factory=dict)

    def max_depth(self, direction: Direction) -> int:
        return self.depths.get(direction, self.budgets.max_depth)

    def describe(self, text: object) -> str:
        """``text`` as a parameter's description: within the description budget."""
        return trim(text, self.budgets.description_chars)

    def _note(self, where: str, pointer: str, message: str) -> None:
        self.notes.add(where, pointer, message)
        if self.memo is not None:
            self.memo.noted(where, pointer, message)

    def _noter(self, where: str, pointer: str) -> Note:
        """``_note`` at ``where`` and ``pointer``, for the leaves ``constraints`` keeps."""
        return functools.partial(self._note, where, pointer)

    def flatten(
        self, node: Any, pointer: str, stack: tuple[str, ...]
    ) -> tuple[dict[str, Any], str, tuple[str, ...]]:
        """``flatten.flatten`` with this converter's resolver and memo."""
        return flatten(self.resolver, self.memo, node, pointer, stack)

    # -- converting -------------------------------------------------------------------------

    def convert(
        self,
        node: Any,
        pointer: str,
        *,
        where: str,
        direction: Direction,
        stack: tuple[str, ...] = (),
        depth: int = 0,
        description: str = "",
    ) -> tuple[dict[str, Any] | None, bool]:
        """``(spec, nullable)``: the parameter spec (no name or required), or None if untypable.

        ``description``, when given, is used instead of the schema's own (a parameter's)."""
        try:
            schema, target, inner = flatten(self.resolver, self.memo, node, pointer, stack)
        except UnexpressibleOperation as exc:
            ref = recursive_ref(exc)
            if ref is None:
                raise
            target = self.resolver.lookup(ref, pointer)
            kind = kind_of(target) if isinstance(target, dict) else None
            self._note(where, pointer, f"recursive schema {ref} cut here, kept free-form")
            return (
                {"type": kind} if kind in ("list", "dictionary") else {"type": "dictionary"}
            ), True
        memo = self.memo
        if memo is None or len(inner) == len(stack):
            # Not a $ref: a schema written in place is converted where it is, once.
            return self._convert(schema, target, where, direction, inner, depth, description)
        key = (target, direction, depth, self.max_depth(direction), description)
        kept = memo.find(key, inner)
        if kept is not None:
            for suffix, at, message in kept.notes:
                self._note(where + suffix, at, message)
            return kept.result()
        memo.start(where)
        try:
            spec, nullable = self._convert(
                schema, target, where, direction, inner, depth, description
            )
        except BaseException:
            memo.abandon()
            raise
        memo.finish(key, inner, spec, nullable)
        return spec, nullable

    def _convert(
        self,
        schema: dict[str, Any],
        pointer: str,
        where: str,
        direction: Direction,
        stack: tuple[str, ...],
        depth: int,
        description: str,
    ) -> tuple[dict[str, Any] | None, bool]:
        """``convert`` of a flat schema (``$ref`` followed, ``allOf`` merged) at ``pointer``."""
        variants = schema.get("oneOf") or schema.get("anyOf")
        if isinstance(variants, list) and variants:
            return self._variants(schema, variants, pointer, where, direction, stack, depth)
        kind = kind_of(schema)
        nullable = is_nullable(schema) or null_in_enum(schema)
        if kind is None:
            # 3.1's type: [string, array], or an enum of mixed types: one member a type.
            members = self._split(schema, pointer, where)
            if members is not None and len(members) == 1:  # one type left: [1, {x: 1}]
                described = description or self.describe(
                    schema.get("description") or schema.get("title")
                )
                only, _ = self.convert(
                    members[0][1],
                    pointer,
                    where=where,
                    direction=direction,
                    stack=stack,
                    depth=depth,
                    description=described,
                )
                return only, nullable
            union = None
            if members is not None:
                union = self._union(schema, members, pointer, where, direction, stack, depth)
            return union, nullable
        spec: dict[str, Any] = {"type": kind}
        description = description or self.describe(schema.get("description") or schema.get("title"))
        if description:
            spec["description"] = description
        limit = self.max_depth(direction)
        if depth >= limit and kind in ("list", "dictionary"):
            self._note(where, pointer, f"nested over {limit} levels, kept free-form")
            return spec, nullable
        if kind == "list":
            self._items(spec, schema, pointer, where, direction, stack, depth)
        elif kind == "dictionary":
            self._properties(spec, schema, pointer, where, direction, stack, depth)
        elif direction == "input":
            constraints(spec, schema, self._noter(where, pointer))
        if direction == "input" and "default" in schema:
            default(spec, schema["default"], self._noter(where, pointer))
        return spec, nullable

    def _variants(
        self,
        schema: dict[str, Any],
        variants: list[Any],
        pointer: str,
        where: str,
        direction: Direction,
        stack: tuple[str, ...],
        depth: int,
    ) -> tuple[dict[str, Any] | None, bool]:
        keyword = "oneOf" if "oneOf" in schema else "anyOf"
        flat: list[tuple[dict[str, Any], str]] = []
        for index, variant in enumerate(variants):
            here = pointer_join(pointer, keyword, index)
            try:
                sub, sub_pointer, _ = flatten(self.resolver, self.memo, variant, here, stack)
            except UnexpressibleOperation as exc:
                if recursive_ref(exc) is None:
                    raise
                sub, sub_pointer = {"type": "object"}, here
            flat.append((sub, sub_pointer))
        typed = [(sub, at) for sub, at in flat if not only_null(sub)]
        nullable = (
            len(typed) < len(flat)
            or is_nullable(schema)
            or any(is_nullable(sub) or null_in_enum(sub) for sub, _ in typed)
        )
        if len(typed) == 1:
            spec, inner_nullable = self.convert(
                variants[flat.index(typed[0])],
                pointer_join(pointer, keyword, flat.index(typed[0])),
                where=where,
                direction=direction,
                stack=stack,
                depth=depth,
            )
            return spec, nullable or inner_nullable
        kinds = {kind_of(sub) for sub, _ in typed}
        members: list[Member] | None = []
        for sub, at in typed:
            split = self._split(sub, at, where)
            members = None if split is None or members is None else [*members, *split]
        union = None
        if members is not None:
            union = self._union(schema, members, pointer, where, direction, stack, depth)
        if union is not None:
            return union, nullable
        if len(kinds) != 1 or None in kinds:
            self._note(where, pointer, f"{keyword} of different types cannot be typed")
            return None, nullable
        spec = {"type": kinds.pop()}
        description = self.describe(schema.get("description") or schema.get("title"))
        if description:
            spec["description"] = description
        self._note(where, pointer, f"{keyword} kept as a free-form {spec['type']}")
        return spec, nullable

    def _split(self, schema: dict[str, Any], pointer: str, where: str) -> list[Member] | None:
        """``schema`` as union members of one type each; None when it has no type.

        A schema of one type is one member; 3.1's ``type: [string, array]`` a member
        per type (each with the enum values of its type, the array with the items);
        an enum of mixed types (``[1, auto, null]``) a member per type of its values.
        """
        kind = kind_of(schema)
        if kind is not None:
            return [(kind, schema, pointer)]
        declared = schema.get("type")
        enum = schema.get("enum")
        if isinstance(declared, list):
            names = [name for name in declared if name != "null"]
            kinds = [TYPES.get(name, "") if isinstance(name, str) else "" for name in names]
            if "" in kinds:
                return None
            shared = {key: value for key, value in schema.items() if key in CONSTRAINTS}
            members: list[Member] = []
            for name, member_kind in zip(names, kinds, strict=True):
                sub = {**shared, "type": name}
                if isinstance(enum, list):
                    sub["enum"] = [value for value in enum if fits(value, member_kind)]
                if name == "array" and "items" in schema:
                    sub["items"] = schema["items"]
                members.append((member_kind, sub, pointer))
            drop_values(enum, kinds, self._noter(where, pointer))
            return members
        if isinstance(enum, list) and enum:
            by_kind: dict[str, list[Any]] = {}
            for value in enum:
                found = value_kind(value)
                if found is not None:
                    by_kind.setdefault(found, []).append(value)
            drop_values(enum, list(by_kind), self._noter(where, pointer))
            return [(name, {"enum": values}, pointer) for name, values in by_kind.items()]
        return None

    def _union(
        self,
        schema: dict[str, Any],
        members: list[Member],
        pointer: str,
        where: str,
        direction: Direction,
        stack: tuple[str, ...],
        depth: int,
    ) -> dict[str, Any] | None:
        """A union (``type: [string, integer]``, ``[string, list]``) of ``members``, with
        the enum of its scalar values when every scalar member lists its values, and
        the items of its list; None when the members cannot be one union."""
        union = list(dict.fromkeys(kind for kind, _, _ in members))
        if len(union) < 2 or not all(kind in UNION_KINDS for kind in union):
            return None
        lists = [(sub, at) for kind, sub, at in members if kind == "list"]
        if len({json.dumps(sub.get("items"), sort_keys=True, default=str) for sub, _ in lists}) > 1:
            return None  # lists of different items: which items would a list have?
        spec: dict[str, Any] = {"type": union}
        description = self.describe(schema.get("description") or schema.get("title"))
        if description:
            spec["description"] = description
        enum = union_enum(members) if direction == "input" else None
        if enum is not None:
            spec["enum"] = enum
        kept = ("enum", "const") if enum is not None else ()
        if any(key in sub and key not in kept for _, sub, _ in members for key in CONSTRAINTS):
            listed = " or ".join(union)
            self._note(where, pointer, f"{listed}: the constraints of each type are not kept")
        if lists:
            sub, at = lists[0]
            self._items(spec, sub, at, where, direction, stack, depth)
        if "default" in schema:
            default(spec, schema["default"], self._noter(where, pointer))
        return spec

    def _items(
        self,
        spec: dict[str, Any],
        schema: dict[str, Any],
        pointer: str,
        where: str,
        direction: Direction,
        stack: tuple[str, ...],
        depth: int,
    ) -> None:
        if "items" not in schema:
            return
        items, _ = self.convert(
            schema["items"],
            pointer_join(pointer, "items"),
            where=f"{where}[]",
            direction=direction,
            stack=stack,
            depth=depth + 1,
        )
        if items is None:
            self._note(where, pointer, "items of no single type: a free-form list")
            return
        items.pop("default", None)
        items.pop("description", None)
        # A type name alone is short for {type: NAME}; a union stays a mapping.
        plain = len(items) == 1 and isinstance(items["type"], str)
        spec["items"] = items["type"] if plain else items

    def _properties(
        self,
        spec: dict[str, Any],
        schema: dict[str, Any],
        pointer: str,
        where: str,
        direction: Direction,
        stack: tuple[str, ...],
        depth: int,
    ) -> None:
        # Outputs are projected onto their declaration at every depth, so a key the API
        # adds to a nested mapping is dropped, not a failure: nested keys can be declared.
        properties = schema.get("properties")
        if not isinstance(properties, dict) or not properties:
            return
        if schema.get("additionalProperties") not in (None, False):
            self._note(where, pointer, "open mapping (additionalProperties) kept free-form")
            return
        parameters = self.properties(
            schema, pointer, where=where, direction=direction, stack=stack, depth=depth + 1
        )
        if parameters is not None:
            spec["parameters"] = parameters

    def properties(
        self,
        schema: dict[str, Any],
        pointer: str,
        *,
        where: str,
        direction: Direction,
        stack: tuple[str, ...] = (),
        depth: int = 0,
        required_too: bool = True,
    ) -> list[dict[str, Any]] | None:
        """Named parameter specs for an object's properties; None if a name cannot be one."""
        required = set(names_in(schema.get("required"))) if required_too else set()
        parameters: list[dict[str, Any]] = []
        for name, node in as_mapping(schema.get("properties")).items():
            here = pointer_join(pointer, "properties", name)
            if not valid_name(name):
                self._note(where, here, f"property {name!r} is not a parameter name")
                return None
            resolved, _, _ = self.resolver.resolve(node, here)
            if isinstance(resolved, dict) and skipped(resolved, direction):
                continue
            try:
                spec, nullable = self.convert(
                    node,
                    here,
                    where=f"{where}.{name}",
                    direction=direction,
                    stack=stack,
                    depth=depth,
                )
            except _Untypable as exc:
                if name in required:
                    raise
                inner = exc.problem
                self._note(f"{where}.{name}", inner.path, f"left out: {inner.message}")
                continue
            if spec is None:
                if name in required and direction == "input":
                    raise _Untypable(
                        problem(here, f"required property {name!r} has no single type")
                    )
                continue
            parameters.append(named(name, spec, required=name in required and not nullable))
        return parameters


def named(name: str, spec: dict[str, Any], *, required: bool) -> dict[str, Any]:
    """``spec`` with its name first, and ``required: false`` when it is optional."""
    param: dict[str, Any] = {"name": name, **spec}
    if "default" in param:
        required = False
    if not required:
        param["required"] = False
    return param
