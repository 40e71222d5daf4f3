"""One operation of a description turned into one tool definition."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from agentkit.openapi.bodies import COOKIE_NAME, BodyConverter, Cookie, Request, cookie_template
from agentkit.openapi.budgets import STREAMING_PARAMETERS, Budgets
from agentkit.openapi.error_replies import ErrorOutputs, error_statuses
from agentkit.openapi.media import json_media
from agentkit.openapi.memo import Conversions
from agentkit.openapi.naming import NameTable, identifier, snake_case
from agentkit.openapi.paging import paginate
from agentkit.openapi.reader import Resolver, pointer_join, unexpressible
from agentkit.openapi.schemas import Notes, SchemaConverter, named, trim
from agentkit.openapi.source import AUTH_OFF, NO_AUTH, Auth, Security, accepts
from agentkit.toolerrors import UnexpressibleOperation

METHODS: Final = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
SUPPORTED: Final = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"})
#: Header parameters OpenAPI says to ignore: the request sets them itself.
_IGNORED_HEADERS: Final = frozenset({"accept", "content-type", "authorization"})
_TEMPLATE_SYNTAX = re.compile(r"\{[{%#]|[}%#]\}")
_PATH_TEMPLATE = re.compile(r"\{([^{}]+)\}")
#: A parameter name a matrix path segment spells out (``;id=5``), inside a template string.
_MATRIX_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_DELIMITERS: Final = {"form": ",", "simple": ",", "spaceDelimited": " ", "pipeDelimited": "|"}
#: Swagger 2.0's request body locations, read into the ``requestBody`` by its conversion.
_BODY: Final = ("body", "formData")


@dataclass
class Operation:
    """One method of one path, as found in the description."""

    method: str
    path: str
    node: dict[str, Any]
    path_item: dict[str, Any]
    name: str = ""

    @property
    def pointer(self) -> str:
        return pointer_join("#/paths", self.path, self.method.lower())

    @property
    def operation_id(self) -> str | None:
        value = self.node.get("operationId")
        return value if isinstance(value, str) else None

    @property
    def tags(self) -> list[str]:
        tags = self.node.get("tags")
        return [str(tag) for tag in tags] if isinstance(tags, list) else []

    @property
    def deprecated(self) -> bool:
        return self.node.get("deprecated") is True


def path_items(paths: dict[str, Any]) -> dict[str, Any]:
    """The path items of a ``paths`` object: every key but its ``x-`` extensions, which
    the OpenAPI ``paths`` object allows beside the paths and which are no path."""
    return {path: item for path, item in paths.items() if not str(path).startswith("x-")}


def operations(document: dict[str, Any]) -> list[Operation]:
    """Every operation, in the order of the description's paths and of ``METHODS``."""
    found: list[Operation] = []
    for path, item in path_items(document.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            node = item.get(method)
            if isinstance(node, dict):
                found.append(Operation(method.upper(), str(path), node, item))
    return found


@dataclass
class OperationConverter:
    """Builds the definition of one operation; raises ``UnexpressibleOperation`` to skip it."""

    resolver: Resolver
    security: Security
    source: str
    source_auth: Auth
    #: The security scheme the source's auth is, when it has one.
    source_scheme: str | None = None
    notes: Notes = field(default_factory=Notes)
    #: The schema conversions of the import so far (None: convert each schema afresh).
    memo: Conversions | None = None
    budgets: Budgets = field(default_factory=Budgets)
    #: The levels of nesting each direction keeps, when the size budget cut them.
    depths: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.notes.translate = self.resolver.original
        self.schemas = SchemaConverter(
            self.resolver, self.notes, self.memo, budgets=self.budgets, depths=self.depths
        )
        #: The streaming query parameters left out (``watch``, ``follow``).
        self.streaming: list[str] = []
        self.names = NameTable()
        self.bodies = BodyConverter(self.resolver, self.schemas, self.notes, self._input_name)

    def definition(self, op: Operation) -> dict[str, Any]:
        """The definition of ``op``; its problem located in the file read when it is skipped."""
        try:
            return self._definition(op)
        except UnexpressibleOperation as exc:
            pointer = self.resolver.original(exc.problem.path)
            if pointer == exc.problem.path:
                raise
            raise unexpressible(pointer, exc.problem.message) from None

    def _definition(self, op: Operation) -> dict[str, Any]:
        if op.method not in SUPPORTED:
            raise unexpressible(op.pointer, f"method {op.method} is not supported")
        if _TEMPLATE_SYNTAX.search(op.path):
            message = "a path with '{{', '{%' or '{#' would be read as a template"
            raise unexpressible(op.pointer, message)
        request = Request(path=op.path)
        if "#" in op.path:
            # Some descriptions tell operations of one path apart by a fragment
            # (`/cookies#formExploded`); a client never sends it.
            request.path = op.path.split("#", 1)[0] or "/"
            self.notes.add("path", op.pointer, f"the fragment of {op.path!r} is not sent")
        self._parameters(op, request)
        self.bodies.body(op.node, op.pointer, request)
        outputs, replies = self._outputs(op)
        paged = paginate(
            op.method, request.query, request.inputs, outputs, replies, self._link_header(op)
        )
        if isinstance(paged, str):
            self.notes.add("paginate", op.pointer, paged)
        elif paged is not None:
            outputs, replies, request.query = paged.outputs, paged.replies, paged.query
            self.notes.add("paginate", op.pointer, paged.note)
        auth = self._auth(op)
        # A tool's Cookie header replaces the source's, so the source's API key cookie
        # goes in it too when the tool sends cookies of its own.
        key = auth.cookie if auth is not None else self.source_auth.cookie
        if key is not None and (auth is not None or request.cookies):
            request.cookies.insert(0, key)
        self._cookie_header(request, op.pointer)
        http: dict[str, Any] = {"source": self.source}
        if op.method != "GET":
            http["method"] = op.method
        http["path"] = request.path
        if request.query:
            http["query"] = request.query
        if request.headers:
            http["headers"] = request.headers
        if request.json is not None:
            http["json"] = request.json
        if request.form is not None:
            http["form"] = request.form
        if request.multipart is not None:
            http["multipart"] = request.multipart
        if auth is not None and auth.auth is not None:
            http["auth"] = auth.auth
        http.update(replies)
        doc: dict[str, Any] = {"name": op.name, "version": "1.0.0"}
        doc["description"] = _description(op, self.budgets.tool_description_chars)
        tags = {"source": self.source}
        if op.tags:
            tags["tag"] = op.tags[0]
        doc["tags"] = tags
        if auth is not None and auth.credentials:
            doc["credentials"] = list(auth.credentials)
        doc["annotations"] = _annotations(op)
        if request.inputs:
            doc["input_schema"] = {"parameters": request.inputs}
        if outputs:
            doc["output_schema"] = {"parameters": outputs}
        doc["backend"] = {"http": http}
        return doc

    # -- parameters -------------------------------------------------------------------------

    def _parameters(self, op: Operation, request: Request) -> None:
        found: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}
        for owner, base in (
            (op.path_item, pointer_join("#/paths", op.path)),
            (op.node, op.pointer),
        ):
            parameters = owner.get("parameters")
            for index, raw in enumerate(parameters if isinstance(parameters, list) else []):
                here = pointer_join(base, "parameters", index)
                param, here, _ = self.resolver.resolve(raw, here)
                if not isinstance(param, dict) or not isinstance(param.get("name"), str):
                    raise unexpressible(here, "expected a parameter with a 'name'")
                found[(str(param.get("in")), param["name"])] = (param, here)
        _check_body_parameters(op, found)
        in_path = _PATH_TEMPLATE.findall(request.path)
        for name in in_path:
            if ("path", name) not in found:
                self.notes.add("path", op.pointer, f"path parameter {name!r} undeclared: a string")
                found[("path", name)] = ({"name": name, "in": "path", "schema": {}}, op.pointer)
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
            input_name = self._input_name(wanted, location, here)
        else:
            input_name = self._input_name(name, location, here)
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
                Cookie(name, value, None if required and not nullable else f"{given} is not none")
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
        input_name = self._input_name(name, location, here)
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
            input_name = self._input_name(wanted, location, here)
            value = {k: v for k, v in field_spec.items() if k not in ("name", "required")}
            request.inputs.append(named(input_name, value, required=field_required))
            request.query[query_key] = "{{ inputs." + input_name + " }}"

    def _cookie_header(self, request: Request, pointer: str) -> None:
        """The cookies as one ``Cookie`` header, each value percent-encoded."""
        if not request.cookies:
            return
        if any(header.lower() == "cookie" for header in request.headers):
            raise unexpressible(pointer, "a Cookie header parameter and cookie parameters")
        request.headers["Cookie"] = cookie_template(request.cookies)

    def _cannot(self, name: str, location: str, here: str, what: str, required: bool) -> None:
        if required:
            raise unexpressible(
                here, f"required {location} parameter {name!r}: {what} is not supported"
            )
        self.notes.add(f"{location} {name}", here, f"{what} is not supported: left out")

    def _input_name(self, name: str, location: str, here: str) -> str:
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

    # -- outputs ----------------------------------------------------------------------------

    def _outputs(self, op: Operation) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The output parameters, and the HTTP keys (``output``, ``binary``, ``responses``)."""
        responses = _mapping(op.node.get("responses"))
        outputs, replies = self._success(op, responses)
        errors = error_statuses(responses)
        if not errors:
            return outputs, replies
        here = pointer_join(op.pointer, "responses")
        if replies.get("binary"):
            self.notes.add("responses", here, "error replies not mapped: a binary tool has none")
            return outputs, replies
        taken = [output["name"] for output in outputs]
        mapped = ErrorOutputs(self.resolver, self.schemas, self.notes, taken).build(
            here, responses, errors
        )
        if mapped is None:
            return outputs, replies
        error_outputs, by_status = mapped
        for output in outputs:
            output["required"] = False
        listed = ", ".join(str(label) for label in by_status)
        self.notes.add(
            "responses",
            here,
            f"{listed} answer with the error outputs instead of failing; every output is optional",
        )
        replies["responses"] = by_status
        return [*outputs, *error_outputs], replies

    def _success(
        self, op: Operation, responses: dict[str, Any]
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        statuses = sorted(
            ((str(code), code) for code in responses if str(code).startswith("2")),
            key=lambda pair: pair[0],
        )
        if not statuses:
            return [_text_output()], {"output": {"body": "{{ response.text }}"}}
        status, key = statuses[0]
        here = pointer_join(op.pointer, "responses", status)
        response, here, _ = self.resolver.resolve(responses[key], here)
        content = response.get("content") if isinstance(response, dict) else None
        if not isinstance(content, dict) or not content:
            return [], {"output": {}}
        media = json_media(content)
        if media is None:
            if any(kind.startswith("text/") for kind in content):
                return [_text_output()], {"output": {"body": "{{ response.text }}"}}
            return [], {"binary": True}
        here = pointer_join(here, "content", media, "schema")
        schema_node = content[media].get("schema") if isinstance(content[media], dict) else None
        if schema_node is None:
            return [_text_output()], {"output": {"body": "{{ response.text }}"}}
        schema, _, stack = self.schemas.flatten(schema_node, here, ())
        properties = schema.get("properties")
        if isinstance(properties, dict) and properties:
            outputs = self.schemas.properties(
                schema, here, where="output", direction="output", stack=stack
            )
            if outputs is not None:
                return outputs, {}
        spec, _ = self.schemas.convert(schema_node, here, where="output", direction="output")
        if spec is None:
            return [_text_output()], {"output": {"body": "{{ response.text }}"}}
        name = {"list": "items", "dictionary": "body"}.get(str(spec["type"]), "result")
        return [named(name, spec, required=False)], {"output": {name: "{{ response.json }}"}}

    def _link_header(self, op: Operation) -> bool:
        """Whether the first 2xx response declares a ``Link`` header."""
        responses = _mapping(op.node.get("responses"))
        statuses = sorted((str(code), code) for code in responses if str(code).startswith("2"))
        if not statuses:
            return False
        status, key = statuses[0]
        here = pointer_join(op.pointer, "responses", status)
        response, _, _ = self.resolver.resolve(responses[key], here)
        headers = response.get("headers") if isinstance(response, dict) else None
        return isinstance(headers, dict) and any(str(name).lower() == "link" for name in headers)

    # -- auth -------------------------------------------------------------------------------

    def _auth(self, op: Operation) -> Auth | None:
        """The tool's own auth when it differs from the source's, else None; ``AUTH_OFF``
        when it needs none and the source sends some."""
        if "security" not in op.node:
            return None
        if self.source_scheme is not None and accepts(op.node["security"], self.source_scheme):
            return None
        auth = self.security.choose(op.node["security"], pointer_join(op.pointer, "security"))
        if auth == self.source_auth:
            return None
        if auth == NO_AUTH and self.source_auth.cookie is not None:
            self.notes.add("auth", op.pointer, "needs no auth, but the source's cookie is sent")
            return None
        if auth == NO_AUTH:
            return AUTH_OFF
        return auth


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
    op: Operation, found: dict[tuple[str, str], tuple[dict[str, Any], str]]
) -> None:
    """Raises ``UnexpressibleOperation`` when a ``body`` or ``formData`` parameter (Swagger
    2.0's, keyed ``(in, name)`` in ``found``) is not the operation's one request body:
    the tool would send the request without it."""
    bodies = [(where, name, here) for (where, name), (_, here) in found.items() if where in _BODY]
    if not bodies:
        return
    where, name, here = bodies[-1]
    if "requestBody" not in op.node:
        message = (
            f"parameter {name!r} is in {where!r}, which no request body was read from "
            "(an OpenAPI 3 operation gives its body as 'requestBody')"
        )
        raise unexpressible(here, message)
    if len({where for where, _, _ in bodies}) > 1:
        raise unexpressible(here, "body and formData parameters together: a request has one body")
    if len(bodies) > 1 and where == "body":
        raise unexpressible(here, "more than one body parameter: a request has one body")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _joined(value: str, separator: str, declared: Any) -> str:
    """The template expression of a list ``value`` joined by ``separator``; a union's
    value is joined only when it is a list (a string is sent as it is)."""
    joined = f"{value} | join('{separator}')"
    if declared == "list":
        return joined
    return f"({joined} if {value} is sequence and {value} is not string else {value})"


def _text_output() -> dict[str, Any]:
    return {"name": "body", "type": "string", "description": "The response body, whole."}


def _description(op: Operation, limit: int) -> str:
    """The tool's description: the summary, then the description, within ``limit``."""
    summary = trim(op.node.get("summary"), limit)
    details = trim(op.node.get("description"), limit)
    if summary and details and not details.startswith(summary.rstrip(".…")):
        return trim(f"{summary.rstrip('.')}. {details}", limit)
    return details or summary or f"{op.method} {op.path}"


def _annotations(op: Operation) -> dict[str, Any]:
    method = op.method
    annotations: dict[str, Any] = {}
    title = trim(op.node.get("summary"), 100)
    if title:
        annotations["title"] = title
    annotations["read_only"] = method in ("GET", "HEAD", "OPTIONS")
    annotations["destructive"] = method in ("PUT", "PATCH", "DELETE")
    annotations["idempotent"] = method in ("GET", "HEAD", "OPTIONS", "PUT", "DELETE")
    annotations["open_world"] = True
    return annotations
