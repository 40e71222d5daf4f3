"""What a ``Tool`` class declares, checked: its tags, credential names, annotations and
schemas, and the lowercase spellings of them the chapter writes.

Each check appends what is wrong to a list of problems, so that a class is refused
once with all of them (``refuse``); ``ToolSpec`` in ``agentkit.tool`` runs them when a
class is defined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from agentkit.problem import did_you_mean
from agentkit.toolerrors import (
    Problem,
    SchemaDefinitionError,
    SemanticError,
)
from agentkit.toolschema import FREE_FORM, Parameter, ToolSchema

__all__ = [
    "ANNOTATION_KEYS",
    "adopt_lowercase_declarations",
    "check_annotations",
    "check_credential_names",
    "check_tags",
    "compile_schema",
    "refuse",
    "with_continuation",
]

#: The keys of ``TOOL_ANNOTATIONS``: MCP's tool hints, ``title`` a string, the rest booleans.
ANNOTATION_KEYS: Final = ("title", "read_only", "destructive", "idempotent", "open_world")


def with_continuation(schema: ToolSchema, problems: list[str]) -> ToolSchema:
    """``schema`` with the optional argument that fetches the next page of an answer."""
    from agentkit.paging import CONTINUATION

    if schema.free_form:  # takes any argument already
        return schema
    if CONTINUATION in schema:
        problems.append(
            f"INPUT_SCHEMA declares '{CONTINUATION}', the argument a tool with MAX_OUTPUT "
            "takes to fetch the next page of an answer: rename the parameter"
        )
        return schema
    taken = Parameter(
        name=CONTINUATION,
        type="string",
        required=False,
        # Whoever holds it may read the rest of the answer: the audit trail masks it.
        sensitive=True,
        description=(
            "Only to fetch the next page of an answer given in pages: the continuation "
            "the previous page named."
        ),
    )
    return ToolSchema([*schema.parameters, taken])


def refuse(subject: str, problems: list[str]) -> None:
    """Raise ``SemanticError`` listing ``problems`` under ``subject``, when there are any."""
    if problems:
        raise SemanticError(f"{subject}:\n" + "\n".join(f"  - {p}" for p in problems))


def compile_schema(definition: Any, owner: str) -> ToolSchema:
    """``definition`` (a mapping, a ``ToolSchema`` or None for free-form) compiled;
    ``SchemaDefinitionError`` naming ``owner`` when it is wrong."""
    if definition is None:
        return FREE_FORM
    if isinstance(definition, ToolSchema):
        return definition
    try:
        return ToolSchema.from_dict(definition)
    except SchemaDefinitionError as exc:
        raise exc.with_owner(owner) from exc
    except Exception as exc:  # a definition object that fails while being read
        problem = Problem(location=(), message=f"could not be read: {type(exc).__name__}: {exc}")
        raise SchemaDefinitionError([problem], owner=owner) from exc


def check_tags(tags: Any, problems: list[str], label: str) -> Mapping[str, str]:
    """``tags`` as a read-only mapping of strings; what is wrong goes to ``problems``."""
    if not isinstance(tags, Mapping) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in tags.items()
    ):
        problems.append(f"{label} must map strings to strings, got {_shown(tags)}")
        return MappingProxyType({})
    return MappingProxyType(dict(tags))


def check_credential_names(names: Any, problems: list[str], label: str) -> tuple[str, ...]:
    """``names`` as a tuple of distinct non-empty strings; what is wrong goes to ``problems``."""
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
        problems.append(
            f"{label} must be a list of credential names, got {_shown(names)}"
            + (f" (write [{names!r}])" if isinstance(names, str) else "")
        )
        return ()
    if not all(isinstance(name, str) and name for name in names):
        problems.append(f"{label} must hold non-empty strings, got {_shown(names)}")
        return ()
    if len(set(names)) != len(names):
        problems.append(f"{label} lists a credential twice: {_shown(names)}")
    return tuple(names)


def check_annotations(annotations: Any, problems: list[str]) -> Mapping[str, Any]:
    """``TOOL_ANNOTATIONS`` as a read-only mapping; what is wrong goes to ``problems``."""
    if not isinstance(annotations, Mapping):
        problems.append(f"TOOL_ANNOTATIONS must be a mapping, got {_shown(annotations)}")
        return MappingProxyType({})
    for key, value in annotations.items():
        if key not in ANNOTATION_KEYS:
            problems.append(
                f"TOOL_ANNOTATIONS has an unknown key {_shown(key)}"
                f"{did_you_mean(str(key), ANNOTATION_KEYS)}; "
                f"the keys are: {', '.join(ANNOTATION_KEYS)}"
            )
        elif not isinstance(value, str if key == "title" else bool):
            wanted = "a string" if key == "title" else "true or false"
            problems.append(f"TOOL_ANNOTATIONS['{key}'] must be {wanted}, got {_shown(value)}")
    return MappingProxyType(dict(annotations))


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# Lowercase class attributes a subclass may write instead of the constants (the
# chapter declares ``credential_names = [...]``), and the ones it may not: the
# executor and the registry read the checked declaration, so an override of these
# properties would be silently ignored by the one and obeyed by the other.
_ADOPTED: Final = {"credential_names": "CREDENTIAL_NAMES", "tags": "TOOL_TAGS"}
_REFUSED: Final = {
    "name": "TOOL_NAME",
    "description": "TOOL_DESCRIPTION",
    "version": "TOOL_VERSION",
    "input_schema": "INPUT_SCHEMA",
    "output_schema": "OUTPUT_SCHEMA",
    "source": "SOURCE",
    "annotations": "TOOL_ANNOTATIONS",
    "backend_kind": "BACKEND_KIND",
    "definition": "DEFINITION",
}
_DECLARATIONS: Final = frozenset((*_ADOPTED, *_REFUSED))


def adopt_lowercase_declarations(cls: type[object]) -> None:
    """Take a ``Tool`` subclass's ``tags`` and ``credential_names`` class attributes as
    its ``TOOL_TAGS`` and ``CREDENTIAL_NAMES``; refuse one that overrides another
    declaration the executor reads from the class."""
    declared = _DECLARATIONS.intersection(cls.__dict__)  # most classes: none of them
    if not declared:
        return
    owner = f"Tool class {cls.__module__}.{cls.__qualname__}"
    for attribute in (*_ADOPTED, *_REFUSED):
        if attribute not in declared:
            continue
        value = cls.__dict__[attribute]
        constant = _ADOPTED.get(attribute) or _REFUSED[attribute]
        computed = hasattr(type(value), "__get__")  # a property, method or other descriptor
        if attribute not in _ADOPTED or computed:
            instead = (
                f" or pass {attribute}= to Tool.__init__() from the subclass's __init__"
                if attribute in _ADOPTED
                else ""
            )
            raise SemanticError(
                f"{owner} overrides '{attribute}', which the executor and the registry do not "
                f"read from the tool object; declare it as {constant} = ... on the class{instead}"
            )
        if constant in cls.__dict__:
            raise SemanticError(
                f"{owner} declares both {attribute} and {constant}; keep one of them"
            )
        problems: list[str] = []
        if attribute == "tags":
            checked: Any = check_tags(value, problems, attribute)
        else:
            checked = check_credential_names(value, problems, attribute)
        refuse(f"{owner} is invalid", problems)
        setattr(cls, constant, checked)
        # Gone from the class, the base's read-only property answers again.
        delattr(cls, attribute)
