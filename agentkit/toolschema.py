"""Tool schemas: the parameters a tool takes or returns, and how values are checked.

A schema is written as a plain dictionary (``{"parameters": [...]}``), the same
in a Python tool's ``INPUT_SCHEMA`` and in a YAML definition. ``ToolSchema.from_dict``
checks the whole definition at once and compiles it into a validation plan;
``validate`` then runs that plan on every call, so the common case -- a value of
exactly the declared type with no further constraint -- costs one type check.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import CodeType, MappingProxyType
from typing import Any, ClassVar, Final, final

from agentkit.jsonvalues import checked_copy
from agentkit.redaction import excerpt
from agentkit.toolerrors import (
    SchemaDefinitionError,
    SchemaProblem,
    SemanticError,
    did_you_mean,
    format_location,
)

__all__ = ["FREE_FORM", "PARAMETER_TYPES", "Parameter", "ToolSchema"]

#: The six parameter types, in the order error messages list them.
PARAMETER_TYPES: Final = ("string", "integer", "float", "boolean", "list", "dictionary")

_JSON_TYPES: Final = {
    "string": "string",
    "integer": "integer",
    "float": "number",
    "boolean": "boolean",
    "list": "array",
    "dictionary": "object",
}
# Names people reach for from Python or JSON Schema, so "int" can say "did you mean 'integer'?".
_TYPE_ALIASES: Final = {
    "str": "string",
    "text": "string",
    "int": "integer",
    "number": "float",
    "double": "float",
    "bool": "boolean",
    "array": "list",
    "tuple": "list",
    "dict": "dictionary",
    "object": "dictionary",
    "map": "dictionary",
    "mapping": "dictionary",
}
_ELEMENT_KEYS: Final = (
    "type",
    "description",
    "enum",
    "items",
    "parameters",
    "minimum",
    "maximum",
    "pattern",
)
_PARAMETER_KEYS: Final = ("name", "required", "default", *_ELEMENT_KEYS)
_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_SHOWN_VALUE_LIMIT: Final = 60


class _Absent:
    """The type of ABSENT: no value at all, as distinct from ``None``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()


# A check takes the value, its path for messages, and the error list to append
# to; it returns the value to store (an int becomes a float, nested containers
# come back as checked copies).
_Check = Callable[[Any, str, list[str]], Any]


def _is_string(value: Any) -> bool:
    return isinstance(value, str)


def is_integer(value: Any) -> bool:
    """An int that is not a bool (JSON and LLMs keep the two apart; Python does not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """An int or float that is not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_boolean(value: Any) -> bool:
    return isinstance(value, bool)


def _is_list(value: Any) -> bool:
    return isinstance(value, list)


def _is_dictionary(value: Any) -> bool:
    return isinstance(value, dict)


_TYPE_TESTS: Final[dict[str, Callable[[Any], bool]]] = {
    "string": _is_string,
    "integer": is_integer,
    "float": is_number,
    "boolean": _is_boolean,
    "list": _is_list,
    "dictionary": _is_dictionary,
}
_EXACT_TYPES: Final[dict[str, type]] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "list": list,
    "dictionary": dict,
}


def _show(value: Any) -> str:
    """A value as an error message quotes it: its repr, cut short.

    The running call's secrets are redacted before the cut, while each is whole.
    """
    return excerpt(repr(value), _SHOWN_VALUE_LIMIT)


def _type_name(value: Any) -> str:
    return type(value).__name__


def _fresh(default: Any) -> Any:
    """A default as it is handed to a call: containers are copied, so no call changes another's."""
    return copy.deepcopy(default) if isinstance(default, (list, dict)) else default


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
        "maximum",
        "minimum",
        "name",
        "parameters",
        "pattern",
        "required",
        "type",
    )

    name: str
    type: str
    required: bool
    default: Any
    description: str
    enum: tuple[Any, ...] | None
    items: Parameter | None
    parameters: ToolSchema | None
    minimum: int | float | None
    maximum: int | float | None
    pattern: str | None
    _check: _Check

    def __init__(
        self,
        *,
        name: str,
        type: str,
        required: bool = True,
        default: Any = ABSENT,
        description: str = "",
        enum: Sequence[Any] | None = None,
        items: Parameter | None = None,
        parameters: ToolSchema | None = None,
        minimum: int | float | None = None,
        maximum: int | float | None = None,
        pattern: str | None = None,
    ) -> None:
        fields = {
            "name": name,
            "type": type,
            "required": required,
            "default": default,
            "description": description,
            "enum": tuple(enum) if enum is not None else None,
            "items": items,
            "parameters": parameters,
            "minimum": minimum,
            "maximum": maximum,
            "pattern": pattern,
        }
        for key, value in fields.items():
            object.__setattr__(self, key, value)
        object.__setattr__(self, "_check", _compile_check(self))

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

        A float never is: it must also be finite (``NaN`` passes every bound).
        """
        return (
            self.enum is None
            and self.items is None
            and self.parameters is None
            and self.minimum is None
            and self.maximum is None
            and self.pattern is None
            and self.type not in ("float", "list", "dictionary")
        )

    def check(self, value: Any, path: str | None = None) -> tuple[Any, list[str]]:
        """Check one value against this parameter: the value to use, and the errors found."""
        errors: list[str] = []
        checked = self._check(value, path if path is not None else self.name, errors)
        return checked, errors

    def to_dict(self) -> dict[str, Any]:
        """This parameter in the definition format (the inverse of parsing it)."""
        out: dict[str, Any] = {}
        if self.name:
            out["name"] = self.name
        out["type"] = self.type
        if self.name and not self.required:
            out["required"] = False
        if self.has_default:
            out["default"] = copy.deepcopy(self.default)
        if self.description:
            out["description"] = self.description
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.items is not None:
            out["items"] = self.items.to_dict()
        if self.parameters is not None:
            out["parameters"] = self.parameters.to_dict()["parameters"]
        for key in ("minimum", "maximum", "pattern"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    def to_json_schema(self) -> dict[str, Any]:
        """The JSON Schema (draft 2020-12) of a value of this parameter."""
        out: dict[str, Any] = {"type": _JSON_TYPES[self.type]}
        if self.description:
            out["description"] = self.description
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.pattern is not None:
            # JSON Schema patterns search; ours must match the whole string.
            out["pattern"] = f"^(?:{self.pattern})$"
        if self.type == "list":
            out["items"] = self.items.to_json_schema() if self.items is not None else {}
        if self.parameters is not None:
            out.update(self.parameters.to_json_schema())
        if self.has_default:
            out["default"] = copy.deepcopy(self.default)
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Parameter):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.name, self.type))

    def __repr__(self) -> str:
        return f"Parameter({self.to_dict()!r})"


def _compile_check(spec: Parameter) -> _Check:
    """Build the function that checks (and where needed converts) one value of ``spec``."""
    type_name = spec.type
    type_test = _TYPE_TESTS[type_name]
    constraints = _constraint_checks(spec)
    to_float = type_name == "float"
    element = spec.items._check if spec.items is not None else None
    nested = spec.parameters
    free_form = element is None and nested is None and type_name in ("list", "dictionary")

    def check(value: Any, path: str, errors: list[str]) -> Any:
        if not type_test(value):
            errors.append(
                f"Parameter '{path}': expected type '{type_name}', got '{_type_name(value)}'"
            )
            return value
        if to_float and type(value) is not float:
            try:
                value = float(value)
            except OverflowError:
                errors.append(
                    f"Parameter '{path}': expected type 'float', got an integer too large"
                )
                return value
        if to_float and not math.isfinite(value):
            errors.append(f"Parameter '{path}': expected a finite number, got {value}")
            return value
        for constraint in constraints:
            constraint(value, path, errors)
        if element is not None:
            value = [element(item, f"{path}[{index}]", errors) for index, item in enumerate(value)]
        elif nested is not None:
            checked = nested._check(value, f"{path}.", errors)
            # Always a copy, so a tool changing a nested value never reaches the caller's.
            value = dict(checked) if checked is value else checked
        elif free_form:
            # Free-form containers are copied so defaults and callers never share
            # them, and checked on the way: bounded nesting, finite numbers.
            value = checked_copy(value, path, errors)
        return value

    return check


def _constraint_checks(spec: Parameter) -> list[_Check]:
    checks: list[_Check] = []
    if spec.enum is not None:
        allowed = spec.enum
        shown = _show(list(allowed)) if len(repr(list(allowed))) <= 200 else "the declared values"

        def check_enum(value: Any, path: str, errors: list[str]) -> None:
            if value not in allowed:
                errors.append(f"Parameter '{path}': expected one of {shown}, got {_show(value)}")

        checks.append(check_enum)
    if spec.minimum is not None:
        low = spec.minimum

        def check_minimum(value: Any, path: str, errors: list[str]) -> None:
            if value < low:
                errors.append(
                    f"Parameter '{path}': expected a value of at least {low}, got {value}"
                )

        checks.append(check_minimum)
    if spec.maximum is not None:
        high = spec.maximum

        def check_maximum(value: Any, path: str, errors: list[str]) -> None:
            if value > high:
                errors.append(
                    f"Parameter '{path}': expected a value of at most {high}, got {value}"
                )

        checks.append(check_maximum)
    if spec.pattern is not None:
        regex = re.compile(spec.pattern)
        pattern = spec.pattern

        def check_pattern(value: Any, path: str, errors: list[str]) -> None:
            if regex.fullmatch(value) is None:
                errors.append(
                    f"Parameter '{path}': expected a string matching {pattern!r}, "
                    f"got {_show(value)}"
                )

        checks.append(check_pattern)
    return checks


@final
class ToolSchema:
    """The parameters of a tool's inputs or outputs.

    Build one with ``ToolSchema.from_dict(schema_data)`` or
    ``ToolSchema(parameters=[...])`` (``Parameter`` objects or the dictionaries of
    the definition format); it is immutable after that. ``FREE_FORM`` is the
    schema of a tool that declares none (``INPUT_SCHEMA = None``): it checks
    nothing and accepts any dictionary.
    """

    __slots__ = ("_by_name", "_check", "_free_form", "_names", "_parameters")

    #: The six parameter types (the chapter's spelling of ``PARAMETER_TYPES``).
    SUPPORTED_TYPES: ClassVar[frozenset[str]] = frozenset(PARAMETER_TYPES)
    #: The Python type a value of each parameter type is stored as. Validation is
    #: stricter and looser than ``isinstance`` with these: ``integer`` refuses
    #: ``bool`` (a subclass of ``int``) and ``float`` takes an ``int`` (stored as float).
    TYPE_MAP: ClassVar[Mapping[str, type]] = MappingProxyType(_EXACT_TYPES)

    _parameters: tuple[Parameter, ...]
    _by_name: dict[str, Parameter]
    _names: frozenset[str]
    _free_form: bool
    # values, path prefix, error list -> the values to use: ``values`` itself when
    # nothing had to change, else a changed copy (``values`` is never modified).
    _check: Callable[[dict[str, Any], str, list[str]], dict[str, Any]]

    def __init__(self, parameters: Iterable[Parameter | Mapping[str, Any]] | None = None) -> None:
        params = _as_parameters(parameters)
        by_name = {param.name: param for param in params}
        if len(by_name) != len(params):
            raise SchemaDefinitionError([SchemaProblem((), "duplicate parameter names")])
        object.__setattr__(self, "_parameters", params)
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "_names", frozenset(by_name))
        object.__setattr__(self, "_free_form", False)
        # The validator is generated on first use: loading a thousand definitions
        # checks every schema but need not compile code for ones never called.
        object.__setattr__(self, "_check", self._first_check)

    @classmethod
    def from_dict(cls, schema_data: Mapping[str, Any]) -> ToolSchema:
        """Parse and check a schema definition, reporting every problem at once.

        Raises ``SchemaDefinitionError`` whose ``problems`` each carry the location
        of the offending key (``parameters[1].default``).
        """
        problems: list[SchemaProblem] = []
        schema = _parse_schema(schema_data, (), problems)
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
        return self._parameters == other._parameters and self._free_form == other._free_form

    def __hash__(self) -> int:
        return hash((self.names, self._free_form))

    def __repr__(self) -> str:
        return "ToolSchema(free-form)" if self._free_form else f"ToolSchema({list(self.names)!r})"

    def validate(self, values: dict[str, Any]) -> list[str]:
        """Check ``values`` against the schema; return the problems (empty when valid).

        Defaults are applied to ``values`` in place, integers given for ``float``
        parameters are stored as floats, and an optional parameter given ``None``
        counts as absent. ``values`` is otherwise left as it was, even when invalid.
        """
        if not isinstance(values, dict):
            return [f"Expected a mapping of parameter names to values, got '{_type_name(values)}'"]
        errors: list[str] = []
        checked = self._check(values, "", errors)
        if checked is not values:
            values.clear()
            values.update(checked)
        return errors

    def _first_check(
        self, values: dict[str, Any], prefix: str, errors: list[str]
    ) -> dict[str, Any]:
        # Two threads racing here each build an equal validator; either may stay.
        check = _generate_validator(self._parameters, self._report_unknown)
        object.__setattr__(self, "_check", check)
        return check(values, prefix, errors)

    def _report_unknown(self, values: dict[str, Any], prefix: str, errors: list[str]) -> None:
        known = sorted(self._names)
        for key in values:
            if key in self._names:
                continue
            if isinstance(key, str):
                hint = did_you_mean(key, known, prefix)
                errors.append(f"Unknown parameter: '{prefix}{key}'{hint}")
            else:
                errors.append(f"Unknown parameter: {prefix}{key!r} (parameter names are strings)")

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


def _accept_any(values: dict[str, Any], prefix: str, errors: list[str]) -> dict[str, Any]:
    return values


def _free_form_schema() -> ToolSchema:
    schema = ToolSchema()
    object.__setattr__(schema, "_free_form", True)
    object.__setattr__(schema, "_check", _accept_any)
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
    problems: list[SchemaProblem] = []
    schema = _parse_parameter_list(parameters, ("parameters",), problems)
    if problems:
        raise SchemaDefinitionError(problems)
    return schema._parameters


#: The schema of a tool that declares none: nothing is checked, nothing is changed.
FREE_FORM: Final = _free_form_schema()


def _generate_validator(
    params: Sequence[Parameter],
    report_unknown: Callable[[dict[str, Any], str, list[str]], None],
) -> Callable[[dict[str, Any], str, list[str]], dict[str, Any]]:
    """Compile a schema's parameters into one straight-line validation function.

    Validation runs twice on every call, so it is generated code in two tiers
    (benchmarks/ has the figures behind this):

    - the fast tier, one boolean expression, holds when every parameter is
      present with exactly its declared type and nothing else was given -- the
      usual case; it costs about half of checking the parameters one by one;
    - otherwise the full tier checks each parameter in turn: defaults, ``None``
      for optionals, conversions, constraints, and every error message.

    The generated source holds only fixed code and generated names (``N0``,
    ``C0``, ...): every name, default and check reaches it through the namespace,
    never as text, so no definition can inject code.
    """
    namespace: dict[str, Any] = {
        "ABSENT": ABSENT,
        "deepcopy": copy.deepcopy,
        "report_unknown": report_unknown,
    }
    conditions = [f"len(values) == {len(params)}"]
    fast_checks = []
    for index, param in enumerate(params):
        namespace[f"N{index}"] = param.name
        if param.is_trivial:
            namespace[f"T{index}"] = _EXACT_TYPES[param.type]
            lookup = f"values[N{index}]" if param.required else f"values.get(N{index})"
            conditions.append(f"type({lookup}) is T{index}")
        else:
            conditions.append(f"values.get(N{index}) is not None")
            fast_checks.append(
                f"        values[N{index}] = C{index}(values[N{index}], prefix + N{index}, errors)"
            )
    lines = [
        "def validate(values, prefix, errors):",
        "    try:",
        f"        fast = {' and '.join(conditions)}",
        "    except KeyError:",
        "        fast = False",
        "    if fast:",
        *(["        values = dict(values)", *fast_checks] if fast_checks else []),
        "        return values",
        "    values = dict(values)",
        "    seen = 0",
    ]
    for index, param in enumerate(params):
        name, check, default = f"N{index}", f"C{index}", f"D{index}"
        namespace[check] = param._check
        namespace[default] = param.default
        if isinstance(param.default, (list, dict)):
            fill = f"values[{name}] = deepcopy({default})"
        elif param.has_default:
            fill = f"values[{name}] = {default}"
        else:
            fill = ""
        lines.append(f"    value = values.get({name}, ABSENT)")
        lines.append("    if value is ABSENT:")
        if param.required:
            lines.append(
                f'        errors.append("Missing required parameter: \'" + prefix + {name} + "\'")'
            )
        else:
            lines.append(f"        {fill or 'pass'}")
        lines.append("    else:")
        lines.append("        seen += 1")
        indent = "        "
        if param.is_trivial:
            lines.append(f"        if type(value) is not T{index}:")
            indent = "            "
        if not param.required:
            lines.append(f"{indent}if value is None:")
            lines.append(f"{indent}    {fill or f'del values[{name}]'}")
            lines.append(f"{indent}else:")
            lines.append(f"{indent}    values[{name}] = {check}(value, prefix + {name}, errors)")
        else:
            lines.append(f"{indent}values[{name}] = {check}(value, prefix + {name}, errors)")
    lines.append("    if seen != len(values):")
    lines.append("        report_unknown(values, prefix, errors)")
    lines.append("    return values")
    exec(_compiled("\n".join(lines)), namespace)
    validate: Callable[[dict[str, Any], str, list[str]], dict[str, Any]] = namespace["validate"]
    # Each validator gets its own copy of the shared function code: CPython keeps
    # specialised bytecode (LOAD_GLOBAL caches keyed to one globals dict) on the
    # code object, so validators sharing one undo each other's caches every call.
    validate.__code__ = validate.__code__.replace()
    return validate


@functools.lru_cache(maxsize=1024)
def _compiled(source: str) -> CodeType:
    """The code of a generated validator, compiled once per distinct source.

    The source depends only on a schema's shape (how many parameters, which are
    required, trivial or defaulted); names and checks arrive through the
    namespace. Schemas of one shape -- most of a tools.d folder -- share one
    compile, which was most of the load time of 1,000 definitions.
    """
    return compile(source, "<agentkit schema validator>", "exec")


# -- parsing a definition ------------------------------------------------------------------------

Location = tuple[str | int, ...]


def _parse_schema(definition: Any, location: Location, problems: list[SchemaProblem]) -> ToolSchema:
    if not isinstance(definition, Mapping):
        problems.append(
            SchemaProblem(
                location,
                f"expected a mapping with a 'parameters' list, got '{_type_name(definition)}'",
            )
        )
        return ToolSchema()
    for key in definition:
        if key != "parameters":
            problems.append(
                SchemaProblem(
                    (*location, str(key)),
                    f"unknown key '{key}'{did_you_mean(str(key), ['parameters'])}; "
                    "a schema has only 'parameters'",
                )
            )
    raw = definition.get("parameters", [])
    return _parse_parameter_list(raw, (*location, "parameters"), problems)


def _parse_parameter_list(
    raw: Any, location: Location, problems: list[SchemaProblem]
) -> ToolSchema:
    if raw is None:
        raw = []
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        problems.append(
            SchemaProblem(location, f"expected a list of parameters, got '{_type_name(raw)}'")
        )
        return ToolSchema()
    params: list[Parameter] = []
    first_seen: dict[str, int] = {}
    for index, item in enumerate(raw):
        here = (*location, index)
        if isinstance(item, Parameter) and item.name:
            param: Parameter | None = item
        else:
            param = _parse_parameter(item, here, problems, named=True)
        if param is None:
            continue
        if param.name in first_seen:
            first = format_location((*location, first_seen[param.name]))
            problems.append(
                SchemaProblem(
                    (*here, "name"),
                    f"duplicate parameter name '{param.name}' (first defined at {first})",
                )
            )
            continue
        first_seen[param.name] = index
        params.append(param)
    return ToolSchema(params)


def _parse_parameter(
    raw: Any, location: Location, problems: list[SchemaProblem], *, named: bool
) -> Parameter | None:
    """Parse one parameter (``named``) or list element spec; ``None`` when it is unusable."""
    allowed = _PARAMETER_KEYS if named else _ELEMENT_KEYS
    if isinstance(raw, str) and not named:
        raw = {"type": raw}
    if not isinstance(raw, Mapping):
        expected = "a mapping with 'name' and 'type'" if named else "a type name or a mapping"
        problems.append(SchemaProblem(location, f"expected {expected}, got '{_type_name(raw)}'"))
        return None
    start = len(problems)

    def problem(key: str, message: str) -> None:
        problems.append(SchemaProblem((*location, key), message))

    for key in raw:
        if key not in allowed:
            text = str(key)
            hint = did_you_mean(text, allowed)
            if not named and text in ("name", "required", "default"):
                problem(text, f"'{text}' does not apply to list elements")
            else:
                problem(
                    text, f"unknown key {_show(text)}{hint}; allowed keys: {', '.join(allowed)}"
                )

    name = ""
    if named:
        raw_name = raw.get("name")
        if raw_name is None:
            problems.append(SchemaProblem(location, "missing 'name'"))
        elif not isinstance(raw_name, str):
            problem("name", f"expected a string, got '{_type_name(raw_name)}'")
        elif not _NAME_RE.fullmatch(raw_name):
            problem(
                "name",
                f"invalid parameter name {_show(raw_name)}: use letters, digits and underscores, "
                "starting with a letter or underscore, at most 64 characters",
            )
        else:
            name = raw_name

    type_name = _parse_type(raw.get("type"), location, problems)

    required = True
    if named and "required" in raw:
        if isinstance(raw["required"], bool):
            required = raw["required"]
        else:
            problem("required", f"expected true or false, got '{_type_name(raw['required'])}'")

    description = raw.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        problem("description", f"expected a string, got '{_type_name(description)}'")
        description = ""

    if type_name is None:
        return None

    enum = _parse_enum(raw, type_name, problem)
    minimum = _parse_bound(raw, "minimum", type_name, problem)
    maximum = _parse_bound(raw, "maximum", type_name, problem)
    if minimum is not None and maximum is not None and minimum > maximum:
        problem("maximum", f"maximum {maximum} is below minimum {minimum}")
    pattern = _parse_pattern(raw, type_name, problem)

    items = None
    if "items" in raw:
        if type_name != "list":
            problem("items", f"'items' applies only to type 'list', not '{type_name}'")
        else:
            items = _parse_parameter(raw["items"], (*location, "items"), problems, named=False)

    nested = None
    if "parameters" in raw:
        if type_name != "dictionary":
            problem(
                "parameters", f"'parameters' applies only to type 'dictionary', not '{type_name}'"
            )
        else:
            nested = _parse_parameter_list(raw["parameters"], (*location, "parameters"), problems)

    if len(problems) > start:
        return None
    param = Parameter(
        name=name,
        type=type_name,
        required=required,
        description=description,
        enum=enum,
        items=items,
        parameters=nested,
        minimum=minimum,
        maximum=maximum,
        pattern=pattern,
    )
    if "default" not in raw:
        return param
    default = raw["default"]
    if required:
        problem(
            "default",
            "a required parameter cannot have a default; "
            "set 'required: false' or remove the default",
        )
        return None
    if default is None:
        problem("default", "a default of null means no default; remove it")
        return None
    checked, errors = param.check(default)
    if errors:
        problem("default", "invalid default: " + "; ".join(errors))
        return None
    return Parameter(**{**_fields(param), "default": checked})


def _fields(param: Parameter) -> dict[str, Any]:
    return {key: getattr(param, key) for key in Parameter.__slots__ if not key.startswith("_")}


def _parse_type(raw: Any, location: Location, problems: list[SchemaProblem]) -> str | None:
    choices = ", ".join(PARAMETER_TYPES)
    if raw is None:
        problems.append(SchemaProblem(location, f"missing 'type'; expected one of: {choices}"))
        return None
    if not isinstance(raw, str) or raw not in _TYPE_TESTS:
        shown = raw if isinstance(raw, str) else _type_name(raw)
        alias = _TYPE_ALIASES.get(str(raw).lower()) if isinstance(raw, str) else None
        hint = f" (did you mean '{alias}'?)" if alias else did_you_mean(str(shown), PARAMETER_TYPES)
        problems.append(
            SchemaProblem(
                (*location, "type"),
                f"unsupported type {_show(shown)}{hint}; expected one of: {choices}",
            )
        )
        return None
    return raw


def _parse_enum(
    raw: Mapping[str, Any], type_name: str, problem: Callable[[str, str], None]
) -> tuple[Any, ...] | None:
    if "enum" not in raw:
        return None
    values = raw["enum"]
    if type_name not in ("string", "integer", "float"):
        problem(
            "enum", f"'enum' applies to string, integer and float parameters, not '{type_name}'"
        )
        return None
    if not isinstance(values, list) or not values:
        problem("enum", "expected a non-empty list of allowed values")
        return None
    type_test = _TYPE_TESTS[type_name]
    bad = next((value for value in values if not type_test(value)), ABSENT)
    if bad is not ABSENT:
        problem("enum", f"every value must be of type '{type_name}'; {_show(bad)} is not")
        return None
    if any(value != value for value in values):  # NaN: equal to nothing, so never allowed
        problem("enum", "NaN can never be matched; remove it")
        return None
    duplicates = _duplicates(values)
    if duplicates:
        shown = ", ".join(_show(value) for value in duplicates[:5])
        more = f" and {len(duplicates) - 5} more" if len(duplicates) > 5 else ""
        problem("enum", f"duplicate values: {shown}{more}; list each value once")
        return None
    return tuple(float(v) for v in values) if type_name == "float" else tuple(values)


def _duplicates(values: Sequence[Any]) -> list[Any]:
    """The values that occur more than once in ``values``, each once, in first-seen order.

    One pass over a hashed set (a value and its repeats compare equal, so 1 and
    1.0 are one value, as ``in`` sees them); a value that cannot be hashed is
    keyed by its canonical JSON, which keeps the pass linear for JSON-like data.
    """
    seen: set[Any] = set()
    reported: set[Any] = set()
    found: list[Any] = []
    for value in values:
        key = value
        try:
            hash(value)
        except TypeError:
            key = ("json", json.dumps(value, sort_keys=True, default=repr))
        if key in seen:
            if key not in reported:
                reported.add(key)
                found.append(value)
        else:
            seen.add(key)
    return found


def _parse_bound(
    raw: Mapping[str, Any], key: str, type_name: str, problem: Callable[[str, str], None]
) -> int | float | None:
    if key not in raw:
        return None
    value = raw[key]
    if type_name not in ("integer", "float"):
        problem(key, f"'{key}' applies to integer and float parameters, not '{type_name}'")
        return None
    if not is_number(value):
        problem(key, f"expected a number, got '{_type_name(value)}'")
        return None
    if not math.isfinite(value):
        # A NaN bound compares false with everything: it would check nothing.
        problem(key, f"expected a finite number, got {value}")
        return None
    return value  # type: ignore[no-any-return]  # narrowed by is_number


def _parse_pattern(
    raw: Mapping[str, Any], type_name: str, problem: Callable[[str, str], None]
) -> str | None:
    if "pattern" not in raw:
        return None
    value = raw["pattern"]
    if type_name != "string":
        problem("pattern", f"'pattern' applies to string parameters, not '{type_name}'")
        return None
    if not isinstance(value, str):
        problem("pattern", f"expected a regular expression string, got '{_type_name(value)}'")
        return None
    try:
        re.compile(value)
    except re.error as exc:
        problem("pattern", f"invalid regular expression: {exc}")
        return None
    return value
