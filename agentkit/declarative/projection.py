"""Projecting a response value onto the output a definition declares, at every depth.

A ``dictionary`` output with nested ``parameters`` keeps only the declared
keys of the value it is given; a ``list`` whose ``items`` are such
dictionaries does that for each item; and so on down, as deep as the schema
goes. Undeclared keys an API adds are dropped, as they are at the top level;
declared ones are left for the executor's output validation to check.

A value of another type than declared is passed through untouched, so that
validation reports it (``Parameter 'issues[0].user': expected type
'dictionary', got 'str'``). A free-form ``dictionary`` or ``list`` (no nested
declaration) is kept whole. The work is bounded by the schema: a value nested
deeper than its declaration is not walked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentkit.schema.values import type_members
from agentkit.toolschema import Parameter, ToolSchema

__all__ = ["Projector", "projector", "schema_projectors"]

#: Takes a value, returns it projected (a new container when anything changed).
Projector = Callable[[Any], Any]


def projector(param: Parameter) -> Projector | None:
    """The projection of a value of ``param``; None when there is nothing to drop."""
    if param.type == "dictionary" and param.parameters is not None:
        fields = tuple((nested.name, projector(nested)) for nested in param.parameters)

        def project_object(value: Any) -> Any:
            if not isinstance(value, dict):
                return value
            return {
                name: project(value[name]) if project is not None else value[name]
                for name, project in fields
                if name in value
            }

        return project_object
    if "list" in type_members(param.type) and param.items is not None:  # a union's too
        project_item = projector(param.items)
        if project_item is None:
            return None

        def project_list(value: Any) -> Any:
            if not isinstance(value, list):
                return value
            return [project_item(item) for item in value]

        return project_list
    return None


def schema_projectors(schema: ToolSchema) -> dict[str, Projector]:
    """The projector of each output of ``schema`` that has one, by name."""
    found = {param.name: projector(param) for param in schema}
    return {name: project for name, project in found.items() if project is not None}
