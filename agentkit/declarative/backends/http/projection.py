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
    """The projection of a value of ``param``; None when there is nothing to drop.

    A union with both a dictionary and a list member projects each by its own rule.
    """
    project_object = _object_projector(param.parameters) if param.parameters is not None else None
    project_list = (
        _list_projector(param.items)
        if "list" in type_members(param.type) and param.items is not None  # a union's too
        else None
    )
    if project_object is not None and project_list is not None:
        both = (project_object, project_list)
        return lambda value: both[isinstance(value, list)](value)
    return project_object or project_list


def _object_projector(parameters: ToolSchema) -> Projector:
    """A dictionary's projection: its declared fields only, each projected."""
    fields = tuple((nested.name, projector(nested)) for nested in parameters)

    def project_object(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {
            name: project(value[name]) if project is not None else value[name]
            for name, project in fields
            if name in value
        }

    return project_object


def _list_projector(items: Parameter) -> Projector | None:
    """A list's projection: each item projected; None when its items need none."""
    project_item = projector(items)
    if project_item is None:
        return None

    def project_list(value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [project_item(item) for item in value]

    return project_list


def schema_projectors(schema: ToolSchema) -> dict[str, Projector]:
    """The projector of each output of ``schema`` that has one, by name."""
    found = {param.name: projector(param) for param in schema}
    return {name: project for name, project in found.items() if project is not None}
