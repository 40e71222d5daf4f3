"""An operation's parameters (path, query, header, cookie) as inputs, and the templates
that send each one where the description says, in its style."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, final

from agentkit.openapi.bodies import COOKIE_NAME, Cookie, Request
from agentkit.openapi.budgets import STREAMING_PARAMETERS, Budgets
from agentkit.openapi.media import json_media
from agentkit.openapi.naming import NameTable, identifier, snake_case
from agentkit.openapi.reader import Resolver, pointer_join, unexpressible
from agentkit.openapi.schemas import Notes, SchemaConverter, named

#: Header parameters OpenAPI says to ignore: the request sets them itself.
_IGNORED_HEADERS: Final = frozenset({"accept", "content-type", "authorization"})
_PATH_TEMPLATE = re.compile(r"\{([^{}]+)\}")
#: A parameter name a matrix path segment spells out (``;id=5``), inside a template string.
_MATRIX_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_DELIMITERS: Final = {"form": ",", "simple": ",", "spaceDelimited": " ", "pipeDelimited": "|"}
#: Swagger 2.0's request body locations, read into the ``requestBody`` by its conversion.
_BODY: Final = ("body", "formData")
#: A query parameter that bounds a field: Twilio's ``DateSent<``, ``StartTime>=``.
_BOUND = re.compile(r"(.*[A-Za-z0-9])\s*(<=|>=|<|>)")
#: Each bound's name and meaning, for a date or time and for any other value.
_BOUNDS: Final = {
    "<": (("before", "strictly before"), ("below", "less than")),
    "<=": (("on_or_before", "on or before"), ("at_most", "at most")),
    ">": (("after", "strictly after"), ("above", "greater than")),
    ">=": (("on_or_after", "on or after"), ("at_least", "at least")),
}
_TEMPORAL_FORMATS: Final = frozenset({"date", "date-time", "time"})


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ParameterConverter:
    """Turns an operation's parameters into inputs; raises ``UnexpressibleOperation`` when
    a required one cannot be sent."""

    resolver: Resolver
    schemas: SchemaConverter
    notes: Notes
    budgets: Budgets
    #: The input names taken so far in this tool.
    names: NameTable
    #: The streaming query parameters left out (``watch``, ``follow``).
    streaming: list[str]

    def add(
        self,
        *,
        path: str,
        pointer: str,
        node: dict[str, Any],
        path_item: dict[str, Any],
        request: Request,
    ) -> None:
        """The parameters of the operation at ``pointer`` (``node``, of ``path_item`` at
        ``path``) as ``request``'s inputs and the templates that send them."""
        found: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}
        for owner, base in (
            (path_item, pointer_join("#/paths", path)),
            (node, pointer),
        ):
            parameters = owner.get("parameters")
            for index, raw in enumerate(parameters if isinstance(parameters, list) else []):
                here = pointer_join(base, "parameters", index)
                param, here, _ = self.resolver.resolve(raw, here)
                if not isinstance(param, dict) or not isinstance(param.get("name"), str):
                    raise unexpressible(here, "expected a parameter with a 'name'")
                found[(str(param.get("in")), param["name"])] = (param, here)
        _check_body_parameters(node, found)
        in_path = _PATH_TEMPLATE.findall(request.path)
        for name in in_path:
            if ("path", name) not in found:
                self.notes.add("path", pointer, f"path parameter {name!r} undeclared: a string")
                found[("path", name)] = ({"name": name, "in": "path", "schema": {}}, pointer)
        for location in ("path", "query", "header", "cookie"):
            for (where, name), (param, here) in found.items():
                if where == location:
                    self._parameter(name, location, param, here, in_path, request)

    def _parameter(
        self,
        name: str,
        location: str,
        param: dict[str, Any],
        here: str,
        in_path: list[str],
        request: Request,
    ) -> None:
        required = param.get("required") is True or location == "path"
        if location == "header" and name.lower() in _IGNORED_HEADERS:
            return
        if location == "path" and name not in in_path:
            self.notes.add(f"{location} {name}", here, "not in the path: left out")
            return
        schema = param.get("schema")
        content = param.get("content")
        in_json = schema is None and isinstance(content, dict)
        if schema is None and isinstance(content, dict):
            media = json_media(content) if location in ("query", "header") else None
            if media is None or len(content) != 1:
                what = f"a {location} parameter with 'content' other than JSON"
                self._cannot(name, location, here, what, required)
                return
            entry = content[media]
            schema = entry.get("schema") if isinstance(entry, dict) else None
            here = pointer_join(here, "content", media)
        if (
            location == "query"
            and not required
            and name.lower() in STREAMING_PARAMETERS
            and not self.budgets.keep_streaming
        ):
            self.streaming.append(name)
            message = (
                "a streaming parameter, left out: a tool reads one answer, and a call with it "
                "set would not end (--keep-streaming keeps it)"
            )
            self.notes.add(f"{location} {name}", here, message)
            return
        description = self.schemas.describe(param.get("description"))
        spec, nullable = self.schemas.convert(
            schema if schema is not None else {},
            pointer_join(here, "schema"),
            where=f"{location} {name}",
            direction="input",
            description=description,
        )
        if spec is None:
            spec = {"type": "string"}
            self.notes.add(f"{location} {name}", here, "no single type: sent as a string")
        if in_json:
            optional = not required or nullable
            self._json_parameter(name, location, here, spec, description, optional, request)
            return
        if spec["type"] == "dictionary":
            self._object(name, location, param, spec, here, required and not nullable, request)
            return
        style = param.get("style") or ("simple" if location in ("path", "header") else "form")
        prefixed = location == "path" and style in ("label", "matrix")
        if prefixed and not _MATRIX_NAME.fullmatch(name):
            self._cannot(name, location, here, f"a {style} parameter of this name", required)
            return
        explode = param.get("explode", style == "form") is True
        # A list, or a union that takes one (``[string, list]``): sent as a list is.
        listed = spec["type"] == "list" or (
            isinstance(spec["type"], list) and "list" in spec["type"]
        )
        if listed and (
            location == "cookie"
            or (style not in _DELIMITERS and not prefixed)
            # a path value is one encoded segment: the ';' of ';id=a;id=b' would be sent %3B
            or (style == "matrix" and explode)
        ):
            what = "a list-valued cookie" if location == "cookie" else f"style {style!r}"
            what += " exploded" if style == "matrix" and explode else ""
            self._cannot(name, location, here, what, required)
            return
        if location == "cookie" and not COOKIE_NAME.fullmatch(name):
            self._cannot(name, location, here, "a cookie name that is not a token", required)
            return
        if description:
            spec.setdefault("description", description)
        bound = _BOUND.fullmatch(name) if location == "query" else None
        if bound is not None:
            wanted, meaning = _bound(bound.group(1), bound.group(2), spec)
            spec["description"] = " ".join(filter(None, (meaning, spec.get("description"))))
            input_name = self.input_name(wanted, location, here)
        else:
            input_name = self.input_name(name, location, here)
        request.inputs.append(named(input_name, spec, required=required and not nullable))
        if location == "cookie":
            given = f"inputs.{input_name}"
            if spec["type"] == "boolean":
                value = f"('true' if {given} else 'false')"
            elif isinstance(spec["type"], list) and "boolean" in spec["type"]:  # a union
                value = f"(('true' if {given} else 'false') if {given} is boolean else {given})"
            else:
                value = given
            request.cookies.append(
                Cookie(
                    name=name,
                    value=value,
                    given=None if required and not nullable else f"{given} is not none",
                )
            )
            return
        value = f"inputs.{input_name}"
        if prefixed:
            # label: .a,b (.a.b exploded); matrix: ;id=a,b
            prefix = "." if style == "label" else f";{name}="
            if listed:
                value = _joined(value, "." if explode else ",", spec["type"])
            template = prefix + "{{ " + value + " }}"
        else:
            if listed and (location != "query" or not explode):
                joined = _joined(value, _DELIMITERS[style], spec["type"])
                value = f"none if {value} is none else {joined}"
            template = "{{ " + value + " }}"
        if location == "path":
            request.path = request.path.replace("{" + name + "}", template)
        elif location == "query":
            request.query[name] = template
        else:
            request.headers[name] = template

    def _json_parameter(
        self,
        name: str,
        location: str,
        here: str,
        spec: dict[str, Any],
        description: str,
        optional: bool,
        request: Request,
    ) -> None:
        """A parameter given by ``content: {application/json: ...}`` (Directus' ``filter``):
        its value as compact JSON, which the URL layer percent-encodes."""
        if description:
            spec.setdefault("description", description)
        input_name = self.input_name(name, location, here)
        request.inputs.append(named(input_name, spec, required=not optional))
        value = f"inputs.{input_name}"
        encoded = f"{value} | tojson"
        if optional:
            encoded = f"none if {value} is none else {encoded}"
        target = request.query if location == "query" else request.headers
        target[name] = "{{ " + encoded + " }}"

    def _object(
        self,
        name: str,
        location: str,
        param: dict[str, Any],
        spec: dict[str, Any],
        here: str,
        required: bool,
        request: Request,
    ) -> None:
        """An object in the query, one input per property: ``deepObject`` sends
        ``name[key]=value``, ``form`` (exploded, the default) ``key=value``."""
        style = param.get("style") or ("form" if location in ("query", "cookie") else "simple")
        # deepObject is defined only exploded, whatever ``explode`` says.
        explode = style == "deepObject" or param.get("explode", True) is True
        fields = spec.get("parameters")
        if location != "query" or style not in ("deepObject", "form") or not explode:
            self._cannot(name, location, here, f"an object-valued parameter ({style})", required)
            return
        if not fields:
            self._cannot(name, location, here, "an object without declared properties", required)
            return
        for field_spec in fields:
            key = field_spec["name"]
            where = f"{location} {name}.{key}"
            items = field_spec.get("items")
            field_required = required and field_spec.get("required", True) is True
            if field_spec["type"] == "dictionary" or (
                isinstance(items, dict) and items.get("type") in ("dictionary", "list")
            ):
                self._cannot(f"{name}.{key}", location, here, "a nested object", field_required)
                continue
            query_key = f"{name}[{key}]" if style == "deepObject" else key
            if query_key in request.query:
                raise unexpressible(here, f"{where}: query parameter {query_key!r} is given twice")
            wanted = f"{name}_{key}" if style == "deepObject" else key
            input_name = self.input_name(wanted, location, here)
            value = {k: v for k, v in field_spec.items() if k not in ("name", "required")}
            request.inputs.append(named(input_name, value, required=field_required))
            request.query[query_key] = "{{ inputs." + input_name + " }}"

    def _cannot(self, name: str, location: str, here: str, what: str, required: bool) -> None:
        if required:
            raise unexpressible(
                here, f"required {location} parameter {name!r}: {what} is not supported"
            )
        self.notes.add(f"{location} {name}", here, f"{what} is not supported: left out")

    def input_name(self, name: str, location: str, here: str) -> str:
        wanted = identifier(name, fallback=location, prefix=location)
        if self.names.has(wanted):
            clash = wanted
            wanted = identifier(f"{location}_{name}", fallback=location, prefix=location)
            claimed = self.names.claim(wanted)
            self.notes.add(
                f"{location} {name}", here, f"input named {claimed!r}: {clash!r} was taken"
            )
            return claimed
        return self.names.claim(wanted)


def _bound(field: str, operator: str, spec: dict[str, Any]) -> tuple[str, str]:
    """The input name of a bound on ``field`` (``date_sent_before``) and what it means."""
    words = snake_case(field).split("_")
    temporal = spec.get("format") in _TEMPORAL_FORMATS or bool({"date", "time"} & set(words))
    (suffix, meaning) = _BOUNDS[operator][0 if temporal else 1]
    value = "this date or time" if temporal else "this value"
    return (
        f"{field}_{suffix}",
        f"{field} {meaning} {value} (sent as {field}{operator}).",
    )


def _check_body_parameters(
    node: dict[str, Any], found: dict[tuple[str, str], tuple[dict[str, Any], str]]
) -> None:
    """Raises ``UnexpressibleOperation`` when a ``body`` or ``formData`` parameter (Swagger
    2.0's, keyed ``(in, name)`` in ``found``) is not the operation's one request body:
    the tool would send the request without it."""
    bodies = [(where, name, here) for (where, name), (_, here) in found.items() if where in _BODY]
    if not bodies:
        return
    where, name, here = bodies[-1]
    if "requestBody" not in node:
        message = (
            f"parameter {name!r} is in {where!r}, which no request body was read from "
            "(an OpenAPI 3 operation gives its body as 'requestBody')"
        )
        raise unexpressible(here, message)
    if len({where for where, _, _ in bodies}) > 1:
        raise unexpressible(here, "body and formData parameters together: a request has one body")
    if len(bodies) > 1 and where == "body":
        raise unexpressible(here, "more than one body parameter: a request has one body")


def _joined(value: str, separator: str, declared: Any) -> str:
    """The template expression of a list ``value`` joined by ``separator``; a union's
    value is joined only when it is a list (a string is sent as it is)."""
    joined = f"{value} | join('{separator}')"
    if declared == "list":
        return joined
    return f"({joined} if {value} is sequence and {value} is not string else {value})"
