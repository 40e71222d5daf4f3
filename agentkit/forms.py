"""The form of a question to the user, and the answer checked against it.

A tool asks with a form (``agentkit.context.elicit(message, schema)``): MCP's
``requestedSchema``, a restricted JSON Schema, a flat object whose properties are

- strings: ``minLength``, ``maxLength``, ``format`` (``email``, ``uri``, ``date``,
  ``date-time``), and a single choice: ``enum`` (with the legacy ``enumNames``) or
  ``oneOf`` of ``{"const": ..., "title": ...}``;
- numbers and integers: ``minimum``, ``maximum``;
- booleans;
- arrays of several choices: ``items`` with ``enum`` or ``anyOf`` of titled ``const``
  options, ``minItems``, ``maxItems``;

each with a ``title``, a ``description`` and a ``default``; ``required`` names the
fields that must be filled. ``Form.read`` reads a schema once (every problem, each
at its key: a form the client could not show, or that says what no answer can be
checked against, is never asked), and ``Form.check`` checks an answer's content
against it.

The client is trusted no more than the model: a missing required field, a value of
the wrong type, outside its choices, its length or its bounds, or a field the form
does not have are each a ``Problem`` naming the field and what it expected, never
the value given (a form may ask for something secret). A field left empty (absent or
``null``) is absent; an integer written ``3.0`` is given as ``3``.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, final

from agentkit.problem import did_you_mean
from agentkit.schema.values import is_number, show, type_name, written
from agentkit.toolerrors import ElicitationError, Problem

__all__ = ["FORMATS", "Form", "FormField"]

#: The string formats MCP's forms have, as a message names what each expects.
FORMATS: Final[Mapping[str, str]] = {
    "email": "an email address",
    "uri": "an absolute URI (scheme:...)",
    "date": "a date (YYYY-MM-DD)",
    "date-time": "a date and time (RFC 3339: YYYY-MM-DDTHH:MM:SS with a time zone)",
}
_KINDS: Final = ("string", "number", "integer", "boolean", "array")
#: What any field may say besides what its kind checks: read by the client, not checked.
_ANNOTATIONS: Final = frozenset({"type", "title", "description", "default"})
_KEYS: Final[Mapping[str, frozenset[str]]] = {
    "string": _ANNOTATIONS | {"minLength", "maxLength", "format", "enum", "enumNames", "oneOf"},
    "number": _ANNOTATIONS | {"minimum", "maximum"},
    "integer": _ANNOTATIONS | {"minimum", "maximum"},
    "boolean": _ANNOTATIONS,
    "array": _ANNOTATIONS | {"items", "minItems", "maxItems"},
}
#: JSON Schema's other assertions: a form that uses one says what the answer is not
#: checked against (MCP's clients do not know them either), so it is not asked.
_UNCHECKED: Final = frozenset(
    {
        "pattern", "const", "multipleOf", "exclusiveMinimum", "exclusiveMaximum",
        "uniqueItems", "contains", "minContains", "maxContains", "prefixItems",
        "properties", "additionalProperties", "patternProperties", "required",
        "minProperties", "maxProperties", "dependentRequired", "allOf", "anyOf",
        "oneOf", "not", "if", "then", "else", "$ref", "enum", "format", "items",
        "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems",
    }
)  # fmt: skip
_FORM_KEYS: Final = frozenset({"type", "properties", "required", "title", "description", "$schema"})
_NO_MORE: Final = frozenset({"additionalProperties"})
_TYPE_TESTS: Final[Mapping[str, Callable[[Any], bool]]] = {
    "string": lambda value: isinstance(value, str),
    "number": is_number,
    "integer": is_number,  # an integral float too, as JSON Schema has it
    "boolean": lambda value: isinstance(value, bool),
    "array": lambda value: isinstance(value, list),
}
#: The most choices an error lists (the rest are counted).
_CHOICES_SHOWN: Final = 10
_EMAIL: Final = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s]*")
_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_DATE_TIME: Final = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII
)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class FormField:
    """One field of a form: its ``kind`` (``string``, ``number``, ``integer``,
    ``boolean`` or ``array``, several choices) and what an answer must meet."""

    name: str
    kind: str
    required: bool = False
    #: The values a single choice (a string) or each choice of an array may take.
    choices: tuple[str, ...] | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_items: int | None = None
    max_items: int | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Form:
    """A form as ``Form.read`` found it: its fields, in the schema's order."""

    fields: tuple[FormField, ...]

    @classmethod
    def read(cls, schema: Mapping[str, Any]) -> Form:
        """The form ``schema`` describes. Raises ``ElicitationError`` listing every
        problem, each at its key (``properties.age.minimum``), when it is no form MCP's
        clients can show or no answer could be checked against it."""
        reader = _Reader()
        form = reader.form(schema)
        if reader.problems:
            raise ElicitationError(
                "the form cannot be asked, it is not one MCP's elicitation has: "
                + "; ".join(reader.problems)
            )
        return form

    def check(self, content: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[Problem, ...]]:
        """``content`` (an accepted answer's values) as the tool gets it, and its
        problems: each names the field and what it expected, never the value given.
        An empty field (absent or ``null``) is left out; an integral number given for
        an integer field is an ``int``."""
        problems: list[Problem] = []
        values: dict[str, Any] = {}
        names = {field.name for field in self.fields}
        for key in content:
            if key not in names:
                hint = did_you_mean(key, sorted(names))
                problems.append(Problem(path=key, message=f"Unknown field: {show(key)}{hint}"))
        for field in self.fields:
            value = content.get(field.name)
            if value is None:
                if field.required:
                    problems.append(
                        Problem(path=field.name, message=f"Missing required field: '{field.name}'")
                    )
                continue
            checked = _checked(field, value, problems)
            values[field.name] = checked
        return values, tuple(problems)


def _problem(path: str, message: str) -> Problem:
    return Problem(path=path, message=f"Field '{path}': {message}")


def _checked(field: FormField, value: Any, problems: list[Problem]) -> Any:
    """``value`` as the tool gets it; its problems appended."""
    if not _TYPE_TESTS[field.kind](value):
        problems.append(
            _problem(field.name, f"expected type '{field.kind}', got '{type_name(value)}'")
        )
    elif field.kind == "string":
        _string(field, value, problems)
    elif field.kind == "array":
        _chosen_items(field, value, problems)
    elif field.kind in ("number", "integer"):
        # An int is whole and finite, however large (no float conversion: it may overflow).
        if isinstance(value, float) and not math.isfinite(value):
            problems.append(_problem(field.name, "expected a finite number"))
        elif field.kind == "integer" and isinstance(value, float) and not value.is_integer():
            problems.append(_problem(field.name, "expected type 'integer', got a fraction"))
        else:
            value = int(value) if field.kind == "integer" else value
            _bounded(field, value, problems)
    return value


def _string(field: FormField, value: str, problems: list[Problem]) -> None:
    path = field.name
    if field.choices is not None:
        if value not in field.choices:
            problems.append(
                _problem(path, f"expected one of {_listed(field.choices)}, got another value")
            )
        return
    length = len(value)
    if field.min_length is not None and length < field.min_length:
        problems.append(
            _problem(
                path, f"expected at least {_count(field.min_length, 'character')}, got {length:,}"
            )
        )
    if field.max_length is not None and length > field.max_length:
        problems.append(
            _problem(
                path, f"expected at most {_count(field.max_length, 'character')}, got {length:,}"
            )
        )
    if field.format is not None and not _formatted(field.format, value):
        problems.append(
            _problem(
                path,
                f"expected {FORMATS[field.format]} (format '{field.format}'), "
                "got a string that is not one",
            )
        )


def _bounded(field: FormField, value: int | float, problems: list[Problem]) -> None:
    if field.minimum is not None and value < field.minimum:
        problems.append(_problem(field.name, f"expected a value of at least {field.minimum}"))
    if field.maximum is not None and value > field.maximum:
        problems.append(_problem(field.name, f"expected a value of at most {field.maximum}"))


def _chosen_items(field: FormField, value: list[Any], problems: list[Problem]) -> None:
    assert field.choices is not None  # an array field is several choices (``_Reader``)
    for index, item in enumerate(value):
        at = f"{field.name}[{index}]"
        if not isinstance(item, str):
            problems.append(_problem(at, f"expected type 'string', got '{type_name(item)}'"))
        elif item not in field.choices:
            problems.append(
                _problem(at, f"expected one of {_listed(field.choices)}, got another value")
            )
    count = len(value)
    if field.min_items is not None and count < field.min_items:
        problems.append(
            _problem(
                field.name, f"expected at least {_count(field.min_items, 'choice')}, got {count:,}"
            )
        )
    if field.max_items is not None and count > field.max_items:
        problems.append(
            _problem(
                field.name, f"expected at most {_count(field.max_items, 'choice')}, got {count:,}"
            )
        )


def _formatted(format: str, value: str) -> bool:
    """Whether ``value`` is written in ``format`` (one of ``FORMATS``)."""
    if format == "email":
        return _EMAIL.fullmatch(value) is not None
    if format == "uri":
        return _URI.fullmatch(value) is not None and value.isprintable()
    if format == "date":
        return _DATE.fullmatch(value) is not None and _valid(datetime.date.fromisoformat, value)
    found = _DATE_TIME.fullmatch(value)
    if found is None:
        return False
    day, hour, minute, second, _, zone = found.groups()
    offset = "+00:00" if zone in ("Z", "z") else zone
    # Seconds up to 60: RFC 3339 allows a leap second.
    return (
        _valid(datetime.date.fromisoformat, day)
        and int(hour) < 24
        and int(minute) < 60
        and int(second) <= 60
        and int(offset[1:3]) < 24
        and int(offset[4:6]) < 60
    )


def _valid(parse: Any, text: str) -> bool:
    try:
        parse(text)
    except ValueError:
        return False
    return True


def _listed(choices: Sequence[str]) -> str:
    shown = ", ".join(show(choice) for choice in choices[:_CHOICES_SHOWN])
    more = len(choices) - _CHOICES_SHOWN
    return f"{shown} (and {more:,} more)" if more > 0 else shown


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


class _Reader:
    """Reads a schema into a ``Form``, collecting every problem (``problems``)."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def problem(self, at: str, message: str) -> None:
        self.problems.append(f"{at}: {message}" if at else message)

    def form(self, schema: Any) -> Form:
        if not isinstance(schema, Mapping):
            self.problem("", f"expected a mapping (a JSON Schema object), got {written(schema)}")
            return Form(fields=())
        if schema.get("type") != "object":
            self.problem("type", f"must be 'object', got {written(schema.get('type'))}")
        # additionalProperties: false says what check does anyway.
        self.unchecked(
            schema,
            _FORM_KEYS | _NO_MORE if schema.get("additionalProperties") is False else _FORM_KEYS,
            "",
        )
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            self.problem("properties", f"expected a mapping of fields, got {written(properties)}")
            properties = {}
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
            self.problem("required", f"expected a list of field names, got {written(required)}")
            required = []
        for name in required:
            if name not in properties:
                self.problem(
                    "required", f"names '{name}', which is no field{did_you_mean(name, properties)}"
                )
        fields = tuple(
            self.field(str(name), spec, required=name in required)
            for name, spec in properties.items()
        )
        return Form(fields=fields)

    def unchecked(self, spec: Mapping[str, Any], allowed: frozenset[str], at: str) -> None:
        for key in spec:
            if key in _UNCHECKED and key not in allowed:
                where = f"{at}.{key}" if at else key
                self.problem(
                    where, "is not in MCP's elicitation forms, so no answer is checked against it"
                )

    def field(self, name: str, spec: Any, *, required: bool) -> FormField:
        at = f"properties.{name}"
        if not isinstance(spec, Mapping):
            self.problem(at, f"expected a mapping, got {written(spec)}")
            return FormField(name=name, kind="string", required=required)
        kind = spec.get("type")
        if kind not in _KINDS:
            self.problem(
                f"{at}.type",
                f"must be one of {', '.join(map(repr, _KINDS))} (a form is flat), "
                f"got {written(kind)}",
            )
            return FormField(name=name, kind="string", required=required)
        self.unchecked(spec, _KEYS[kind], at)
        if kind == "string":
            return self.string(name, spec, at, required=required)
        if kind in ("number", "integer"):
            low = self.number(spec, "minimum", at)
            high = self.number(spec, "maximum", at)
            if low is not None and high is not None and low > high:
                self.problem(at, f"minimum {low} is above maximum {high}")
            return FormField(name=name, kind=kind, required=required, minimum=low, maximum=high)
        if kind == "array":
            return self.array(name, spec, at, required=required)
        return FormField(name=name, kind=kind, required=required)

    def string(self, name: str, spec: Mapping[str, Any], at: str, *, required: bool) -> FormField:
        choices = None
        if "enum" in spec and "oneOf" in spec:
            self.problem(at, "has both 'enum' and 'oneOf': one list of choices, please")
        if "enum" in spec:
            choices = self.strings(spec["enum"], f"{at}.enum")
            names = spec.get("enumNames")
            if names is not None and (
                not isinstance(names, list) or len(names) != len(choices or ())
            ):
                self.problem(
                    f"{at}.enumNames", "expected one title (a string) for each value of 'enum'"
                )
        elif "oneOf" in spec:
            choices = self.titled(spec["oneOf"], f"{at}.oneOf")
        elif "enumNames" in spec:
            self.problem(f"{at}.enumNames", "titles 'enum' values, and there is no 'enum'")
        fmt = spec.get("format")
        if fmt is not None and fmt not in FORMATS:
            self.problem(
                f"{at}.format",
                f"must be one of {', '.join(repr(f) for f in FORMATS)}, got {written(fmt)}",
            )
            fmt = None
        low = self.count(spec, "minLength", at)
        high = self.count(spec, "maxLength", at)
        if low is not None and high is not None and low > high:
            self.problem(at, f"minLength {low} is above maxLength {high}")
        return FormField(
            name=name, kind="string", required=required, choices=choices,
            min_length=low, max_length=high, format=fmt,
        )  # fmt: skip

    def array(self, name: str, spec: Mapping[str, Any], at: str, *, required: bool) -> FormField:
        items = spec.get("items")
        choices: tuple[str, ...] | None = None
        if not isinstance(items, Mapping) or ("enum" in items) == ("anyOf" in items):
            self.problem(
                f"{at}.items",
                "must list the choices: {'type': 'string', 'enum': [...]} or "
                "{'anyOf': [{'const': ..., 'title': ...}, ...]} (an array is several choices)",
            )
        elif "enum" in items:
            choices = self.strings(items["enum"], f"{at}.items.enum")
        else:
            choices = self.titled(items["anyOf"], f"{at}.items.anyOf")
        low = self.count(spec, "minItems", at)
        high = self.count(spec, "maxItems", at)
        if low is not None and high is not None and low > high:
            self.problem(at, f"minItems {low} is above maxItems {high}")
        return FormField(
            name=name, kind="array", required=required, choices=choices or (),
            min_items=low, max_items=high,
        )  # fmt: skip

    def strings(self, values: Any, at: str) -> tuple[str, ...]:
        if (
            not isinstance(values, list)
            or not values
            or not all(isinstance(v, str) for v in values)
        ):
            self.problem(at, f"expected a non-empty list of strings, got {written(values)}")
            return ()
        return tuple(values)

    def titled(self, options: Any, at: str) -> tuple[str, ...]:
        if (
            not isinstance(options, list)
            or not options
            or not all(
                isinstance(option, Mapping)
                and isinstance(option.get("const"), str)
                and isinstance(option.get("title"), str)
                for option in options
            )
        ):
            self.problem(
                at,
                "expected a non-empty list of options, each "
                "{'const': <the value>, 'title': <what the user sees>}, both strings",
            )
            return ()
        return tuple(option["const"] for option in options)

    def number(self, spec: Mapping[str, Any], key: str, at: str) -> int | float | None:
        value = spec.get(key)
        if value is None:
            return None
        if not is_number(value) or not math.isfinite(value):
            self.problem(f"{at}.{key}", f"expected a number, got {written(value)}")
            return None
        return value  # type: ignore[no-any-return]

    def count(self, spec: Mapping[str, Any], key: str, at: str) -> int | None:
        value = spec.get(key)
        if value is None:
            return None
        if type(value) is not int or value < 0:
            self.problem(
                f"{at}.{key}", f"expected a whole number of at least 0, got {written(value)}"
            )
            return None
        return value
