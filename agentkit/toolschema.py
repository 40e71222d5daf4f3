"""Tool schemas: the parameters a tool takes or returns, and how values are checked.

A schema is written as a plain dictionary (``{"parameters": [...]}``), the same
in a Python tool's ``INPUT_SCHEMA`` and in a YAML definition. ``ToolSchema.from_dict``
checks the whole definition at once (``schema.parse``) and ``check`` runs the
validator compiled from it (``schema.code``), so the common case -- a value of
exactly the declared type with no further constraint -- costs one type check.

This module holds the values, ``Parameter`` and ``ToolSchema``; the type
vocabulary is ``schema.values``. Names other modules imported from here before
the split are re-exported. It is over 500 lines on purpose: ``Parameter`` and
``ToolSchema`` refer to each other (a dictionary parameter holds a schema, a schema
its parameters), so apart their modules would import each other.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Final, NamedTuple, final

from agentkit.jsonvalues import plain_dict_copy
from agentkit.problem import did_you_mean
from agentkit.schema.code import Validator, compile_check, generate_validator
from agentkit.schema.parse import Builders, parse_parameter_list, parse_schema
from agentkit.schema.values import (
    ABSENT,
    EXACT_TYPES,
    JSON_TYPES,
    PARAMETER_TYPES,
    TYPE_TESTS,
    Check,
    TypeSpec,
    is_integer,
    is_number,
    type_name,
)
from agentkit.toolerrors import (
    Problem,
    SchemaDefinitionError,
    SemanticError,
)

__all__ = [
    "ABSENT",
    "FREE_FORM",
    "PARAMETER_TYPES",
    "Checked",
    "Parameter",
    "ToolSchema",
    "is_integer",
    "is_number",
]


class Checked(NamedTuple):
    """What ``ToolSchema.check`` found: the values a call would get, and the problems.

    A named tuple, not a dataclass: the executor makes two on every call, and
    a tuple is the cheapest immutable value Python builds.
    """

    values: dict[str, Any]
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        """True when there are no problems."""
        return not self.problems


@final
class Parameter:
    """One declared parameter (or, with an empty ``name``, the element spec of a list).

    Instances are immutable and built by ``ToolSchema.from_dict``.
    """

    __slots__ = (
        "_check",
        "default",
        "description",
        "enum",
        "items",
        "max_length",
        "maximum",
        "min_length",
        "minimum",
        "name",
        "parameters",
        "pattern",
        "required",
        "sensitive",
        "type",
    )

    name: str
    #: One of ``PARAMETER_TYPES``, or a union of two or more of them, each once
    #: (``("string", "integer")``): a value of any one of them passes. A union's
    #: ``enum`` holds the values its scalars may take, its ``items`` the elements of
    #: its list, its ``parameters`` those of its dictionary.
    type: TypeSpec
    required: bool
    default: Any
    description: str
    enum: tuple[Any, ...] | None
    items: Parameter | None
    parameters: ToolSchema | None
    minimum: int | float | None
    maximum: int | float | None
    pattern: str | None
    #: The fewest and most characters of a string (code points, as ``len`` counts them).
    min_length: int | None
    max_length: int | None
    #: The audit trail masks its value (``sensitive: true``); checking ignores it.
    sensitive: bool
    _check: Check

    def __init__(
        self,
        *,
        name: str,
        type: TypeSpec | list[str],
        required: bool = True,
        default: Any = ABSENT,
        description: str = "",
        enum: Sequence[Any] | None = None,
        items: Parameter | None = None,
        parameters: ToolSchema | None = None,
        minimum: int | float | None = None,
        maximum: int | float | None = None,
        pattern: str | None = None,
        min_length: int | None = None,
        max_length: int | None = None,
        sensitive: bool = False,
    ) -> None:
        fields = {
            "name": name,
            "type": tuple(type) if isinstance(type, list) else type,
            "required": required,
            "default": default,
            "description": description,
            "enum": tuple(enum) if enum is not None else None,
            "items": items,
            "parameters": parameters,
            "minimum": minimum,
            "maximum": maximum,
            "pattern": pattern,
            "min_length": min_length,
            "max_length": max_length,
            "sensitive": sensitive,
        }
        for key, value in fields.items():
            object.__setattr__(self, key, value)
        object.__setattr__(self, "_check", compile_check(self))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Parameter is immutable; cannot set '{name}'")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Parameter is immutable; cannot delete '{name}'")

    @property
    def has_default(self) -> bool:
        return self.default is not ABSENT

    @property
    def is_trivial(self) -> bool:
        """True when a value of exactly the declared type needs no further check.

        A float never is: it must also be finite (``NaN`` passes every bound); nor
        is a union, which has no one exact type.
        """
        return (
            isinstance(self.type, str)
            and self.enum is None
            and self.items is None
            and self.parameters is None
            and self.minimum is None
            and self.maximum is None
            and self.pattern is None
            and self.min_length is None
            and self.max_length is None
            and self.type not in ("float", "list", "dictionary")
        )

    def check(self, value: Any, path: str | None = None) -> tuple[Any, list[str]]:
        """Check one value against this parameter: the value to use, and the errors found."""
        problems: list[Problem] = []
        checked = self._check(value, path if path is not None else self.name, problems)
        return checked, [problem.message for problem in problems]

    def to_dict(self) -> dict[str, Any]:
        """This parameter in the definition format (the inverse of parsing it)."""
        out: dict[str, Any] = {}
        if self.name:
            out["name"] = self.name
        out["type"] = list(self.type) if isinstance(self.type, tuple) else self.type
        if self.name and not self.required:
            out["required"] = False
        if self.has_default:
            out["default"] = copy.deepcopy(self.default)
        if self.sensitive:
            out["sensitive"] = True
        if self.description:
            out["description"] = self.description
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.items is not None:
            out["items"] = self.items.to_dict()
        if self.parameters is not None:
            out["parameters"] = self.parameters.to_dict()["parameters"]
        for key in ("minimum", "maximum", "pattern", "min_length", "max_length"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    def to_json_schema(self) -> dict[str, Any]:
        """The JSON Schema (draft 2020-12) of a value of this parameter."""
        out: dict[str, Any]
        if isinstance(self.type, tuple):
            # anyOf, not a list of types: every provider's schema dialect takes anyOf
            # (OpenAI's strict mode documents a type list only with "null").
            out = {"anyOf": [self._member_schema(name) for name in self.type]}
        else:
            out = {"type": JSON_TYPES[self.type]}
        if self.description:
            out["description"] = self.description
        if self.enum is not None and isinstance(self.type, str):
            out["enum"] = list(self.enum)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.pattern is not None:
            # JSON Schema patterns search; ours must match the whole string.
            out["pattern"] = f"^(?:{self.pattern})$"
        if self.min_length is not None:
            out["minLength"] = self.min_length
        if self.max_length is not None:
            out["maxLength"] = self.max_length
        if self.type == "list":
            out["items"] = self.items.to_json_schema() if self.items is not None else {}
        if self.type == "dictionary" and self.parameters is not None:
            out.update(self.parameters.to_json_schema())
        if self.has_default:
            out["default"] = copy.deepcopy(self.default)
        return out

    def _member_schema(self, name: str) -> dict[str, Any]:
        """One member of a union: its type, with the enum values of that type, the items
        or the parameters.

        Each member carries its own values (``{"type": "integer", "enum": [1]}``), as
        providers that take an enum take it beside one type.
        """
        member: dict[str, Any] = {"type": JSON_TYPES[name]}
        if name == "list":
            member["items"] = self.items.to_json_schema() if self.items is not None else {}
        elif name == "dictionary":
            if self.parameters is not None:
                member.update(self.parameters.to_json_schema())
        elif self.enum is not None:
            member["enum"] = [value for value in self.enum if TYPE_TESTS[name](value)]
        return member

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Parameter):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.name, self.type))

    def __repr__(self) -> str:
        return f"Parameter({self.to_dict()!r})"


@final
class ToolSchema:
    """The parameters of a tool's inputs or outputs.

    Build one with ``ToolSchema.from_dict(schema_data)`` or
    ``ToolSchema(parameters=[...])`` (``Parameter`` objects or the dictionaries of
    the definition format); it is immutable after that. ``FREE_FORM`` is the
    schema of a tool that declares none (``INPUT_SCHEMA = None``): it checks
    nothing and accepts any dictionary.
    """

    __slots__ = (
        "_by_name",
        "_check",
        "_free_form",
        "_names",
        "_parameters",
        "check",
        "fast_check",
    )

    #: The six parameter types (the chapter's spelling of ``PARAMETER_TYPES``).
    SUPPORTED_TYPES: ClassVar[frozenset[str]] = frozenset(PARAMETER_TYPES)
    #: The Python type a value of each parameter type is stored as. Validation is
    #: stricter and looser than ``isinstance`` with these: ``integer`` refuses
    #: ``bool`` (a subclass of ``int``) and ``float`` takes an ``int`` (stored as float).
    TYPE_MAP: ClassVar[Mapping[str, type]] = MappingProxyType(EXACT_TYPES)

    _parameters: tuple[Parameter, ...]
    _by_name: dict[str, Parameter]
    _names: frozenset[str]
    _free_form: bool
    _check: Validator
    #: ``check(values) -> Checked(values, problems)``: the schema's check, changing
    #: nothing -- what a call would get. ``values`` is a fresh dict (``FREE_FORM``
    #: hands back the mapping itself) with the defaults applied, integers given for
    #: ``float`` parameters as floats and optional parameters given ``None`` left
    #: out. ``problems`` is empty when the argument is valid. (Generated code held
    #: per schema, not a method: it runs twice a tool call.)
    check: Callable[[Mapping[str, Any]], Checked]
    #: ``fast_check(values) -> dict | None``: the check's fast tier alone, for a
    #: caller that runs it on every call (the executor). When ``values`` is
    #: plainly valid -- a ``dict`` whose every value has exactly its declared type
    #: (an integer for a ``float``), all the way down, and no name no parameter
    #: has -- the values a call gets, as ``check`` makes them: a fresh copy that
    #: shares no list or dictionary with ``values``. ``None`` for anything else,
    #: valid or not (``check`` judges it and says why). ``FREE_FORM``'s is a copy
    #: of any dict of plain JSON values (string keys, nesting within ``MAX_DEPTH``).
    fast_check: Callable[[Any], dict[str, Any] | None]

    def __init__(self, parameters: Iterable[Parameter | Mapping[str, Any]] | None = None) -> None:
        params = _as_parameters(parameters)
        by_name = {param.name: param for param in params}
        if len(by_name) != len(params):
            raise SchemaDefinitionError([Problem(location=(), message="duplicate parameter names")])
        object.__setattr__(self, "_parameters", params)
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "_names", frozenset(by_name))
        object.__setattr__(self, "_free_form", False)
        # The validator is generated on first use: loading a thousand definitions
        # checks every schema but need not compile code for ones never called.
        object.__setattr__(self, "_check", self._first_check)
        object.__setattr__(self, "check", self._first_whole_check)
        object.__setattr__(self, "fast_check", self._first_fast_check)

    @classmethod
    def from_dict(cls, schema_data: Mapping[str, Any]) -> ToolSchema:
        """Parse and check a schema definition, reporting every problem at once.

        Raises ``SchemaDefinitionError`` whose ``problems`` each carry the location
        of the offending key (``parameters[1].default``).
        """
        problems: list[Problem] = []
        schema: ToolSchema = parse_schema(schema_data, (), problems, _BUILD)
        if problems:
            raise SchemaDefinitionError(problems)
        return schema

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ToolSchema is immutable; cannot set '{name}'")

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        return self._parameters

    @property
    def free_form(self) -> bool:
        """True for ``FREE_FORM``: no declared parameters, and any dictionary passes."""
        return self._free_form

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    @property
    def required_names(self) -> tuple[str, ...]:
        return tuple(param.name for param in self._parameters if param.required)

    def get(self, name: str) -> Parameter | None:
        return self._by_name.get(name)

    def __getitem__(self, name: str) -> Parameter:
        return self._by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters)

    def __len__(self) -> int:
        return len(self._parameters)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolSchema):
            return NotImplemented
        return (
            self._free_form == other._free_form
            # Tuples of different lengths compare their first elements all the same.
            and len(self._parameters) == len(other._parameters)
            and self._parameters == other._parameters
        )

    def __hash__(self) -> int:
        return hash((self.names, self._free_form))

    def __repr__(self) -> str:
        return "ToolSchema(free-form)" if self._free_form else f"ToolSchema({list(self.names)!r})"

    def validate(self, values: dict[str, Any]) -> list[str]:
        """Check ``values`` against the schema; return the problems (empty when valid).

        Defaults are applied to ``values`` in place, integers given for ``float``
        parameters are stored as floats, and an optional parameter given ``None``
        counts as absent. ``values`` is otherwise left as it was, even when invalid.
        ``check`` is the same check without changing ``values``.
        """
        if not isinstance(values, dict):
            return [_not_a_mapping(values).message]
        problems: list[Problem] = []
        checked = self._check(values, "", problems)
        if checked is not values:
            values.clear()
            values.update(checked)
        return [problem.message for problem in problems]

    def _generate(self) -> None:
        # Two threads racing here each build equal functions; either pair may stay.
        validate, check, fast_check = generate_validator(
            self._parameters, self._report_unknown, result=Checked, refuse=_refused
        )
        object.__setattr__(self, "_check", validate)
        object.__setattr__(self, "check", check)
        object.__setattr__(self, "fast_check", fast_check)

    def _first_check(self, values: dict[str, Any], prefix: str, errors: list[Problem]) -> Any:
        self._generate()
        return self._check(values, prefix, errors)

    def _first_whole_check(self, values: Mapping[str, Any]) -> Checked:
        self._generate()
        return self.check(values)

    def _first_fast_check(self, values: Any) -> dict[str, Any] | None:
        self._generate()
        return self.fast_check(values)

    def _report_unknown(self, values: dict[str, Any], prefix: str, errors: list[Problem]) -> None:
        known = sorted(self._names)
        for key in values:
            if key in self._names:
                continue
            if isinstance(key, str):
                hint = did_you_mean(key, known, prefix)
                message = f"Unknown parameter: '{prefix}{key}'{hint}"
                errors.append(Problem(path=f"{prefix}{key}", message=message))
            else:
                message = f"Unknown parameter: {prefix}{key!r} (parameter names are strings)"
                errors.append(Problem(path=f"{prefix}{key!r}", message=message))

    def to_json_schema(self) -> dict[str, Any]:
        """The JSON Schema (draft 2020-12) of an object with these parameters."""
        if self._free_form:
            return {"type": "object"}
        return {
            "type": "object",
            "properties": {param.name: param.to_json_schema() for param in self._parameters},
            "required": [param.name for param in self._parameters if param.required],
            "additionalProperties": False,
        }

    def to_dict(self) -> dict[str, Any]:
        """The schema in the definition format; ``from_dict(s.to_dict()) == s``."""
        if self._free_form:
            raise SemanticError(
                "A free-form schema (INPUT_SCHEMA or OUTPUT_SCHEMA = None) has no definition "
                "form; declare its parameters to write it as a definition"
            )
        return {"parameters": [param.to_dict() for param in self._parameters]}


def _accept_any(values: dict[str, Any], prefix: str, errors: list[Problem]) -> dict[str, Any]:
    return values


def _accept_any_mapping(values: Mapping[str, Any]) -> Checked:
    if type(values) is dict or isinstance(values, Mapping):
        return Checked(values, ())  # type: ignore[arg-type]
    return _refused(values)


def _copy_plain_dict(values: Any) -> dict[str, Any] | None:
    # Plain JSON values only: a tool's free-form output must be JSON (the executor's
    # step 4 says what is not), and inputs that are not plain take the full check.
    return plain_dict_copy(values, -1) if type(values) is dict else None


def _free_form_schema() -> ToolSchema:
    schema = ToolSchema()
    object.__setattr__(schema, "_free_form", True)
    object.__setattr__(schema, "_check", _accept_any)
    object.__setattr__(schema, "check", _accept_any_mapping)
    object.__setattr__(schema, "fast_check", _copy_plain_dict)
    return schema


def _as_parameters(
    parameters: Iterable[Parameter | Mapping[str, Any]] | None,
) -> tuple[Parameter, ...]:
    """The constructor's ``parameters``; dictionaries are parsed as ``from_dict`` parses them."""
    if parameters is None:
        return ()
    if isinstance(parameters, (list, tuple)) and all(type(p) is Parameter for p in parameters):
        return tuple(parameters)
    if not isinstance(parameters, (str, bytes, Mapping)) and isinstance(parameters, Iterable):
        parameters = list(parameters)
    problems: list[Problem] = []
    schema: ToolSchema = parse_parameter_list(parameters, ("parameters",), problems, _BUILD)
    if problems:
        raise SchemaDefinitionError(problems)
    return schema._parameters


def _not_a_mapping(values: object) -> Problem:
    return Problem(
        path="",
        message=f"Expected a mapping of parameter names to values, got '{type_name(values)}'",
    )


def _refused(values: object) -> Checked:
    return Checked(values, (_not_a_mapping(values),))  # type: ignore[arg-type]


_BUILD: Final = Builders(parameter=Parameter, schema=ToolSchema)

#: The schema of a tool that declares none: nothing is checked, nothing is changed.
FREE_FORM: Final = _free_form_schema()
