"""The validator generator: a schema's parameters compiled into checking code.

Validation runs twice on every call, so a schema is not interpreted but
compiled: each parameter into one closure (``compile_check``), each schema into
generated functions (``generate_validator``): a fast tier that takes plainly
valid values whole, nested ones included, and a full tier that appends
``Problem`` values in the chapter's wording. All return the value to use;
none changes its input. It is over 500 lines on purpose: the closures and both
generated tiers read each parameter's compiled ``_check``, a private part of the
``ParameterSpec`` contract defined here, which no other module may read.
"""

from __future__ import annotations

import copy
import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from types import CodeType
from typing import Any, Final, Protocol

from agentkit.jsonvalues import checked_copy, plain_dict_copy, plain_list_copy
from agentkit.schema.values import (
    ABSENT,
    EXACT_TYPES,
    Check,
    TypeSpec,
    characters,
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

    @property
    def parameters(self) -> Sequence[ParameterSpec]: ...


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
    def items(self) -> ParameterSpec | None: ...
    @property
    def parameters(self) -> _Nested | None: ...
    @property
    def minimum(self) -> int | float | None: ...
    @property
    def maximum(self) -> int | float | None: ...
    @property
    def pattern(self) -> str | None: ...
    @property
    def min_length(self) -> int | None: ...
    @property
    def max_length(self) -> int | None: ...
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
    # A list is checked by its items and a dictionary by its parameters, whether the
    # type is one or a union's member; without them either is free-form.
    holds_containers = "list" in members or "dictionary" in members

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
        if not holds_containers:
            return value
        if isinstance(value, list):
            if element is not None:
                return [
                    element(item, f"{path}[{index}]", errors) for index, item in enumerate(value)
                ]
        elif isinstance(value, dict):
            if nested is not None:
                checked = nested._check(value, f"{path}.", errors)
                # Always a copy, so a tool changing a nested value never reaches the caller's.
                return dict(checked) if checked is value else checked
        else:
            return value  # a scalar of a union: checked
        # Free-form containers are copied so defaults and callers never share
        # them, and checked on the way: JSON values, bounded nesting, finite numbers.
        return checked_copy(value, path, errors)

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
            # a list or a dictionary is the enum's to judge only through what it holds.
            keys = frozenset(enum_key(value) for value in spec.enum)

            def check_enum(value: Any, path: str, errors: list[Problem]) -> None:
                if not isinstance(value, (list, dict)) and enum_key(value) not in keys:
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
                    # The pattern as written: a repr would double each backslash.
                    _problem(path, f"expected a string matching '{pattern}', got {show(value)}")
                )

        checks.append(check_pattern)
    if spec.min_length is not None:
        shortest = spec.min_length
        at_least = f"expected a string of at least {characters(shortest)}, got "

        def check_min_length(value: Any, path: str, errors: list[Problem]) -> None:
            if len(value) < shortest:
                errors.append(_problem(path, f"{at_least}{len(value):,}"))

        checks.append(check_min_length)
    if spec.max_length is not None:
        longest = spec.max_length
        at_most = f"expected a string of at most {characters(longest)}, got "

        def check_max_length(value: Any, path: str, errors: list[Problem]) -> None:
            if len(value) > longest:
                errors.append(_problem(path, f"{at_most}{len(value):,}"))

        checks.append(check_max_length)
    return checks


def generate_validator(
    params: Sequence[ParameterSpec],
    report_unknown: Validator,
    *,
    result: type[tuple[Any, ...]],
    refuse: Callable[[Any], Any],
) -> tuple[Validator, Callable[[Any], Any], Callable[[Any], Any]]:
    """Compile a schema's parameters into three functions: two tiers, two ways to call them.

    - ``fast_check(values)``, the fast tier: the values a call gets when ``values``
      is plainly valid -- an exact ``dict``, each value of exactly its declared
      type (an integer for a ``float``) and within its constraints, no name no
      parameter has, every nested list and dictionary the same all the way down.
      It returns them as the full tier would (defaults filled in, ``None`` for an
      optional left out) in a fresh copy that shares no list or dictionary with
      ``values``, or ``None`` for anything else (it never says why);
    - ``validate(values, prefix, problems)``: the fast tier, else the full tier,
      which checks each parameter in turn through its ``compile_check`` closure,
      appends every problem to ``problems`` in the chapter's wording and returns
      the values to use (nested schemas call it with their path as ``prefix``);
    - ``check(values)``: the same as one whole call, returning a ``result`` (a
      named tuple type) of ``(values, problems)`` -- ``refuse(values)`` for a value
      that is not a mapping -- built with ``tuple.__new__`` straight.

    Validation runs twice on every call, so the fast tier is straight-line code
    with the nested schemas' checks written out inline: no Python call per
    parameter, per nested object or per list item, each container copied whole
    in C (figures in docs/performance.md). Only a union, a free-form value or
    nesting past ``_INLINED_LEVELS`` costs a call. The full tier runs for what
    the fast tier declines: a value with a problem, a subclass of a type, a
    mapping that is not a dict.

    The generated source holds only fixed code and generated names (``N0``,
    ``C0``, ``v_4``, ...): every name, default and check reaches it through the
    namespace, never as text, so no definition can inject code.
    """
    namespace: dict[str, Any] = {
        "ABSENT": ABSENT,
        "deepcopy": copy.deepcopy,
        "plain_dict_copy": plain_dict_copy,
        "plain_list_copy": plain_list_copy,
        "report_unknown": report_unknown,
        "Problem": Problem,
        "Mapping": Mapping,
        "result": result,
        "new_tuple": tuple.__new__,
        "refuse": refuse,
    }
    fast = _FastTier(namespace)
    fast.check_object(params, "values", 2, 0)
    lines = [
        "def fast_check(values):",
        "    if type(values) is not dict:",
        "        return None",
        *(["    errors = []"] if fast.calls_checks else []),
        "    try:",
        *fast.lines,
        # A parameter missing, a huge integer for a float, a value nested past
        # the recursion limit: the full tier says what is wrong.
        "    except (KeyError, OverflowError, RecursionError):",
        "        return None",
        *(["    if errors:", "        return None"] if fast.calls_checks else []),
        "    return values",
    ]
    full_tier = _full_tier(params, namespace)
    whole = "return new_tuple(result, (values, tuple(errors) if errors else ()))"
    source = "\n".join(
        [
            *lines,
            "def validate(values, prefix, errors):",
            "    accepted = fast_check(values)",
            "    if accepted is not None:",
            "        return accepted",
            *full_tier,
            "def check(values):",
            "    if type(values) is not dict and not isinstance(values, Mapping):",
            "        return refuse(values)",
            "    accepted = fast_check(values)",
            "    if accepted is not None:",
            "        return new_tuple(result, (accepted, ()))",
            '    prefix = ""',
            "    errors = []",
            *(line.replace("return values", whole) for line in full_tier),
        ]
    )
    exec(_compiled(source), namespace)
    functions = [namespace["validate"], namespace["check"], namespace["fast_check"]]
    for function in functions:
        # Each function gets its own copy of the shared code: CPython keeps
        # specialised bytecode (LOAD_GLOBAL caches keyed to one globals dict) on the
        # code object, so functions sharing one undo each other's caches every call.
        function.__code__ = function.__code__.replace()
    validate, whole_check, fast_check = functions
    return validate, whole_check, fast_check


def _full_tier(params: Sequence[ParameterSpec], namespace: dict[str, Any]) -> list[str]:
    """The full tier's body: each parameter in turn, with every message."""
    lines = [
        "    values = dict(values)",
        "    seen = 0",
    ]
    for index, param in enumerate(params):
        name, check, default = f"N{index}", f"C{index}", f"D{index}"
        namespace[name] = param.name
        namespace[check] = param._check
        namespace[default] = param.default
        filled = _default(param, default)
        fill = f"values[{name}] = {filled}" if filled else ""
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
        if param.is_trivial and isinstance(param.type, str):  # trivial: never a union
            namespace[f"T{index}"] = EXACT_TYPES[param.type]
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
    return lines


def _default(param: ParameterSpec, default: str) -> str | None:
    """The expression of ``param``'s default (bound as ``default``) as a call gets it --
    a list or dictionary copied afresh, so no two calls share it -- or None without one."""
    if isinstance(param.default, (list, dict)):
        return f"deepcopy({default})"
    return default if param.has_default else None


#: How many levels of nested lists and objects the fast tier writes out inline;
#: a value nested deeper is checked by its parameter's own check (a call, and
#: CPython allows only 20 nested loops in one function).
_INLINED_LEVELS: Final = 6


class _FastTier:
    """The lines of ``fast_check``'s body, and the names they bind in the namespace.

    Each ``check_*`` method writes lines that leave in a variable the value a
    call gets, or ``return None`` from ``fast_check`` for anything it does not
    take as it is. What the lines accept, they accept exactly as the full tier
    does (tests/test_toolschema_fast.py runs both on the same values).
    """

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.lines: list[str] = []
        self.namespace = namespace
        self.calls_checks = False  # a parameter's own check needs the list of problems
        self._count = 0

    def new_name(self, prefix: str, value: Any = ABSENT) -> str:
        """A fresh generated name, bound to ``value`` in the namespace when one is given.

        ``N_3``, ``v_4``: never one of the full tier's ``N3``.
        """
        name = f"{prefix}_{self._count}"
        self._count += 1
        if value is not ABSENT:
            self.namespace[name] = value
        return name

    def add(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def check_object(
        self, params: Sequence[ParameterSpec], var: str, indent: int, level: int
    ) -> None:
        """``var``, a dict of ``params``: leave in it a checked copy, as the full tier
        makes it -- defaults filled in, an optional parameter given ``None`` left
        out or defaulted -- or return None (a name missing or unknown, a bad value).

        The copy is made first and the checks read it: only what changes (a
        conversion, a nested copy, a default) is written into it again."""
        required = sum(1 for param in params if param.required)
        seen = given = ""
        if required == len(params):
            self.add(indent, f"if len({var}) != {len(params)}:")
            self.add(indent + 1, "return None")
        else:
            seen, given = self.new_name("seen"), self.new_name("given")
            self.add(indent, f"{given} = len({var})")
            self.add(indent, f"{seen} = {required}")
        self.add(indent, f"{var} = {var}.copy()")
        for param in params:
            name = self.new_name("N", param.name)
            value = self.new_name("v")
            store = f"{var}[{name}] = {value}"
            if param.required:
                # A missing name raises KeyError: fast_check returns None.
                self.add(indent, f"{value} = {var}[{name}]")
                if self.check_value(param, value, indent, level, store):
                    self.add(indent, store)
                continue
            self.add(indent, f"{value} = {var}.get({name}, ABSENT)")
            filled = _default(param, self.new_name("D", param.default))
            if filled:
                self.add(indent, f"if {value} is ABSENT:")
                self.add(indent + 1, f"{var}[{name}] = {filled}")
                self.add(indent, f"elif {value} is None:")
                self.add(indent + 1, f"{seen} += 1")
                self.add(indent + 1, f"{var}[{name}] = {filled}")
                self.add(indent, "else:")
            else:  # left out when absent or None
                self.add(indent, f"if {value} is None:")
                self.add(indent + 1, f"{seen} += 1")
                self.add(indent + 1, f"del {var}[{name}]")
                self.add(indent, f"elif {value} is not ABSENT:")
            self.add(indent + 1, f"{seen} += 1")
            if self.check_value(param, value, indent + 1, level, store):
                self.add(indent + 1, store)
        if seen:
            self.add(indent, f"if {given} != {seen}:")  # a name no parameter has
            self.add(indent + 1, "return None")

    def check_value(
        self, spec: ParameterSpec, var: str, indent: int, level: int, store: str | None = None
    ) -> bool:
        """Lines that check ``var`` (not absent) against ``spec``; True when they may
        replace its value (a conversion, a copy) and ``store`` has not been written
        where they do (``store``: the statement that keeps a replaced value)."""
        declared = spec.type
        if not isinstance(declared, str):  # a union: its own check (enum_key matching)
            return self.call_check(spec, var, indent)
        constraints = self.constraint_tests(spec, var)
        if declared in ("string", "integer", "boolean"):
            exact = self.new_name("T", EXACT_TYPES[declared])
            self.add(indent, f"if {' or '.join([f'type({var}) is not {exact}', *constraints])}:")
            self.add(indent + 1, "return None")
            return False
        if declared == "float":
            # A finite float as it is; an integer as a float (OverflowError when too
            # large). ``x - x != 0.0`` holds for NaN and the infinities alone.
            self.add(indent, f"if type({var}) is not float:")
            self.add(indent + 1, f"if type({var}) is not int:")
            self.add(indent + 2, "return None")
            self.add(indent + 1, f"{var} = float({var})")
            if store:
                self.add(indent + 1, store)
            self.add(indent, f"elif {var} - {var} != 0.0:")
            self.add(indent + 1, "return None")
            if constraints:
                self.add(indent, f"if {' or '.join(constraints)}:")
                self.add(indent + 1, "return None")
            return not store
        if constraints or level >= _INLINED_LEVELS:
            return self.call_check(spec, var, indent)
        kind = "list" if declared == "list" else "dict"
        self.add(indent, f"if type({var}) is not {kind}:")
        self.add(indent + 1, "return None")
        if spec.parameters is not None:
            self.check_object(spec.parameters.parameters, var, indent, level + 1)
        elif spec.items is not None:
            self.check_items(spec.items, var, indent, level + 1)
        else:  # free-form: any plain JSON (string keys), nested within MAX_DEPTH
            self.add(indent, f"{var} = plain_{kind}_copy({var})")
            self.add(indent, f"if {var} is None:")
            self.add(indent + 1, "return None")
        return True

    def constraint_tests(self, spec: ParameterSpec, var: str) -> list[str]:
        """Conditions that hold when ``var`` breaks a constraint: the tests of
        ``_constraint_checks`` for a value of one type, as expressions."""
        tests = []
        if spec.enum is not None:
            tests.append(f"{var} not in {self.new_name('E', spec.enum)}")
        if spec.minimum is not None:
            tests.append(f"{var} < {self.new_name('L', spec.minimum)}")
        if spec.maximum is not None:
            tests.append(f"{var} > {self.new_name('H', spec.maximum)}")
        if spec.pattern is not None:
            fullmatch = self.new_name("P", re.compile(spec.pattern).fullmatch)
            tests.append(f"{fullmatch}({var}) is None")
        if spec.min_length is not None:
            tests.append(f"len({var}) < {self.new_name('LL', spec.min_length)}")
        if spec.max_length is not None:
            tests.append(f"len({var}) > {self.new_name('LH', spec.max_length)}")
        return tests

    def check_items(self, element: ParameterSpec, var: str, indent: int, level: int) -> None:
        """``var``, a list: leave in it a copy with each item checked against ``element``."""
        item = self.new_name("x")
        outer = self.lines
        self.lines = []
        changed = self.check_value(element, item, indent + 1, level)
        body, self.lines = self.lines, outer
        if not changed:  # items kept as they are: one loop to look, one C copy
            self.add(indent, f"for {item} in {var}:")
            self.lines += body
            self.add(indent, f"{var} = {var}.copy()")
            return
        copied = self.new_name("c")
        self.add(indent, f"{copied} = []")
        self.add(indent, f"for {item} in {var}:")
        self.lines += body
        self.add(indent + 1, f"{copied}.append({item})")
        self.add(indent, f"{var} = {copied}")

    def call_check(self, spec: ParameterSpec, var: str, indent: int) -> bool:
        """A union, a list or dictionary with constraints of its own, or nesting past
        _INLINED_LEVELS: the parameter's own check, its messages unread (the full
        tier makes them again)."""
        self.calls_checks = True
        self.add(indent, f"{var} = {self.new_name('C', spec._check)}({var}, '', errors)")
        return True


@functools.lru_cache(maxsize=1024)
def _compiled(source: str) -> CodeType:
    """The code of a generated validator, compiled once per distinct source.

    The source depends only on a schema's shape (how many parameters, which are
    required, trivial or defaulted, what they nest); names and checks arrive
    through the namespace. Schemas of one shape -- most of a tools.d folder -- share one
    compile, which was most of the load time of 1,000 definitions.
    """
    return compile(source, "<agentkit schema validator>", "exec")
