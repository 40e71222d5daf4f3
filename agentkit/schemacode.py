"""The validator generator: a schema's parameters compiled into checking code.

Validation runs twice on every call, so a schema is not interpreted but
compiled: each parameter into one closure (``compile_check``), each schema into
one generated function (``generate_validator``). Both append ``Problem`` values
in the chapter's wording and return the value to use; neither changes its input.
"""

from __future__ import annotations

import copy
import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from types import CodeType
from typing import Any, Protocol

from agentkit.jsonvalues import checked_copy
from agentkit.schematypes import (
    ABSENT,
    EXACT_TYPES,
    Check,
    TypeSpec,
    enum_key,
    is_number,
    show,
    type_label,
    type_members,
    type_name,
    type_test,
)
from agentkit.toolerrors import Problem

__all__ = ["ParameterSpec", "Validator", "compile_check", "generate_validator"]

# values, path prefix, problem list -> the values to use: ``values`` itself when
# nothing had to change, else a changed copy (``values`` is never modified).
Validator = Callable[[dict[str, Any], str, list[Problem]], Any]


class _Nested(Protocol):
    _check: Validator


class _Element(Protocol):
    _check: Check


class ParameterSpec(Protocol):
    """What the generator reads of a parameter (``toolschema.Parameter`` has it all)."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> TypeSpec: ...
    @property
    def required(self) -> bool: ...
    @property
    def default(self) -> Any: ...
    @property
    def enum(self) -> tuple[Any, ...] | None: ...
    @property
    def items(self) -> _Element | None: ...
    @property
    def parameters(self) -> _Nested | None: ...
    @property
    def minimum(self) -> int | float | None: ...
    @property
    def maximum(self) -> int | float | None: ...
    @property
    def pattern(self) -> str | None: ...
    @property
    def has_default(self) -> bool: ...
    @property
    def is_trivial(self) -> bool: ...
    @property
    def _check(self) -> Check: ...


def _problem(path: str, message: str) -> Problem:
    return Problem(path=path, message=f"Parameter '{path}': {message}")


def compile_check(spec: ParameterSpec) -> Check:
    """Build the function that checks (and where needed converts) one value of ``spec``."""
    declared = spec.type
    passes = type_test(declared)
    expected = type_label(declared)
    constraints = _constraint_checks(spec)
    members = type_members(declared)
    # A number given for a float is stored as a float, unless a union takes integers too.
    to_float = "float" in members and "integer" not in members
    finite = "float" in members
    element = spec.items._check if spec.items is not None else None
    nested = spec.parameters
    with_list = isinstance(declared, tuple) and "list" in members
    # A free-form list or dictionary, or a union's list member without items.
    free_form = (
        element is None and nested is None and ("list" in members or "dictionary" in members)
    )

    def check(value: Any, path: str, errors: list[Problem]) -> Any:
        if not passes(value):
            errors.append(_problem(path, f"expected type {expected}, got '{type_name(value)}'"))
            return value
        if to_float and is_number(value) and type(value) is not float:
            try:
                value = float(value)
            except OverflowError:
                errors.append(_problem(path, "expected type 'float', got an integer too large"))
                return value
        if finite and isinstance(value, float) and not math.isfinite(value):
            errors.append(_problem(path, f"expected a finite number, got {value}"))
            return value
        for constraint in constraints:
            constraint(value, path, errors)
        if with_list and not isinstance(value, list):
            return value  # a scalar of a union with a list: checked
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


def _constraint_checks(spec: ParameterSpec) -> list[Check]:
    checks: list[Check] = []
    if spec.enum is not None:
        values = list(spec.enum)
        shown = show(values) if len(repr(values)) <= 200 else "the declared values"
        if isinstance(spec.type, str):
            # One type: the type check has told a bool from a number, so Python's ``in``.
            allowed = spec.enum

            def check_enum(value: Any, path: str, errors: list[Problem]) -> None:
                if value not in allowed:
                    errors.append(_problem(path, f"expected one of {shown}, got {show(value)}"))

        else:
            # A union: matched by JSON kind and value (an enum of 1 does not take true);
            # a list is the enum's to judge only through its items.
            keys = frozenset(enum_key(value) for value in spec.enum)

            def check_enum(value: Any, path: str, errors: list[Problem]) -> None:
                if not isinstance(value, list) and enum_key(value) not in keys:
                    errors.append(_problem(path, f"expected one of {shown}, got {show(value)}"))

        checks.append(check_enum)
    if spec.minimum is not None:
        low = spec.minimum

        def check_minimum(value: Any, path: str, errors: list[Problem]) -> None:
            if value < low:
                errors.append(_problem(path, f"expected a value of at least {low}, got {value}"))

        checks.append(check_minimum)
    if spec.maximum is not None:
        high = spec.maximum

        def check_maximum(value: Any, path: str, errors: list[Problem]) -> None:
            if value > high:
                errors.append(_problem(path, f"expected a value of at most {high}, got {value}"))

        checks.append(check_maximum)
    if spec.pattern is not None:
        regex = re.compile(spec.pattern)
        pattern = spec.pattern

        def check_pattern(value: Any, path: str, errors: list[Problem]) -> None:
            if regex.fullmatch(value) is None:
                errors.append(
                    _problem(path, f"expected a string matching {pattern!r}, got {show(value)}")
                )

        checks.append(check_pattern)
    return checks


def generate_validator(
    params: Sequence[ParameterSpec],
    report_unknown: Validator,
    *,
    result: type[tuple[Any, ...]],
    refuse: Callable[[Any], Any],
) -> tuple[Validator, Callable[[Any], Any]]:
    """Compile a schema's parameters into two straight-line functions of one body.

    ``validate(values, prefix, problems)`` appends to ``problems`` and returns
    the values to use (nested schemas call it with their path as ``prefix``);
    ``check(values)`` is the same body as one whole call: it returns a
    ``result`` (a named tuple type) of ``(values, problems)`` -- ``refuse(values)``
    for a value that is not a mapping -- with no second Python call on the way
    (``tuple.__new__`` straight), as it runs twice a tool call.

    Validation runs twice on every call, so it is generated code in two tiers
    (benchmarks/ has the figures behind this):

    - the fast tier, one boolean expression, holds when every parameter is
      present with exactly its declared type and nothing else was given -- the
      usual case; it costs about half of checking the parameters one by one.
      An unconstrained required ``float`` given as a finite float is part of
      the expression too; when no parameter needs a conversion the fast tier
      returns the caller's mapping itself, without even a list for problems;
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
        "Problem": Problem,
        "Mapping": Mapping,
        "result": result,
        "new_tuple": tuple.__new__,
        "refuse": refuse,
    }
    conditions = [f"len(values) == {len(params)}"]
    fast_checks = []
    for index, param in enumerate(params):
        namespace[f"N{index}"] = param.name
        if param.is_trivial and isinstance(param.type, str):  # trivial: one type, never a union
            namespace[f"T{index}"] = EXACT_TYPES[param.type]
            lookup = f"values[N{index}]" if param.required else f"values.get(N{index})"
            conditions.append(f"type({lookup}) is T{index}")
        elif param.required and _plain_float(param):
            # A float given as a finite float needs nothing more: no conversion,
            # no bound (``x - x == 0.0`` is False for NaN and the infinities).
            conditions.append(
                f"type(values[N{index}]) is float and values[N{index}] - values[N{index}] == 0.0"
            )
        else:
            conditions.append(f"values.get(N{index}) is not None")
            fast_checks.append(
                f"        values[N{index}] = C{index}(values[N{index}], prefix + N{index}, errors)"
            )
    lines = [
        "    try:",
        f"        fast = {' and '.join(conditions)}",
        "    except KeyError:",
        "        fast = False",
        "    if fast:",
        *(["        values = dict(values)", *fast_checks] if fast_checks else []),
        "        return values",
    ]
    fast_tier = len(lines)
    lines += [
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
            lines.append(f"        path = prefix + {name}")
            lines.append(
                "        errors.append(Problem(path=path, "
                'message="Missing required parameter: \'" + path + "\'"))'
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
            if fill:
                lines.append(f"{indent}    {fill}")
            else:
                # Left out: no longer one of the names seen, or an unknown name
                # beside it would pass unreported.
                lines.append(f"{indent}    del values[{name}]")
                lines.append(f"{indent}    seen -= 1")
            lines.append(f"{indent}else:")
            lines.append(f"{indent}    values[{name}] = {check}(value, prefix + {name}, errors)")
        else:
            lines.append(f"{indent}values[{name}] = {check}(value, prefix + {name}, errors)")
    lines.append("    if seen != len(values):")
    lines.append("        report_unknown(values, prefix, errors)")
    lines.append("    return values")
    whole = "return new_tuple(result, (values, tuple(errors) if errors else ()))"
    valid = "return new_tuple(result, (values, ()))"
    source = "\n".join(
        [
            "def validate(values, prefix, errors):",
            *lines,
            "def check(values):",
            "    if type(values) is not dict and not isinstance(values, Mapping):",
            "        return refuse(values)",
            '    prefix = ""',
            # Without a conversion the fast tier finds no problem: it returns
            # before any list of them is made.
            *(["    errors = []"] if fast_checks else []),
            *(
                line.replace("return values", whole if fast_checks else valid)
                for line in lines[:fast_tier]
            ),
            *([] if fast_checks else ["    errors = []"]),
            *(line.replace("return values", whole) for line in lines[fast_tier:]),
        ]
    )
    exec(_compiled(source), namespace)
    validate: Validator = namespace["validate"]
    whole_check: Callable[[Any], Any] = namespace["check"]
    # Each function gets its own copy of the shared code: CPython keeps
    # specialised bytecode (LOAD_GLOBAL caches keyed to one globals dict) on the
    # code object, so functions sharing one undo each other's caches every call.
    validate.__code__ = validate.__code__.replace()
    whole_check.__code__ = whole_check.__code__.replace()
    return validate, whole_check


def _plain_float(param: ParameterSpec) -> bool:
    """A ``float`` parameter with no constraint: only its type and finiteness to check."""
    return (
        param.type == "float"
        and param.enum is None
        and param.minimum is None
        and param.maximum is None
        and param.pattern is None
    )


@functools.lru_cache(maxsize=1024)
def _compiled(source: str) -> CodeType:
    """The code of a generated validator, compiled once per distinct source.

    The source depends only on a schema's shape (how many parameters, which are
    required, trivial or defaulted); names and checks arrive through the
    namespace. Schemas of one shape -- most of a tools.d folder -- share one
    compile, which was most of the load time of 1,000 definitions.
    """
    return compile(source, "<agentkit schema validator>", "exec")
