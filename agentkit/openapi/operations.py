"""One operation of a description turned into one tool definition."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final, final

from agentkit.openapi.bodies import BodyConverter, Request, cookie_template
from agentkit.openapi.budgets import Budgets
from agentkit.openapi.descriptions import trim
from agentkit.openapi.error_replies import ErrorOutputs, error_statuses
from agentkit.openapi.media import json_media
from agentkit.openapi.memo import Conversions
from agentkit.openapi.naming import NameTable
from agentkit.openapi.paging import paginate
from agentkit.openapi.parameters import ParameterConverter
from agentkit.openapi.reader import Resolver, pointer_join, unexpressible
from agentkit.openapi.schemas import Notes, SchemaConverter, named
from agentkit.openapi.source import AUTH_OFF, NO_AUTH, Auth, Security, accepts
from agentkit.toolerrors import UnexpressibleOperation

METHODS: Final = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
SUPPORTED: Final = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"})
_TEMPLATE_SYNTAX = re.compile(r"\{[{%#]|[}%#]\}")


@final
@dataclass(slots=True, kw_only=True)
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
                found.append(
                    Operation(method=method.upper(), path=str(path), node=node, path_item=item)
                )
    return found


@final
@dataclass(slots=True)
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
    #: The streaming query parameters left out (``watch``, ``follow``).
    streaming: list[str] = field(init=False, default_factory=list)
    #: The converters of the operation's parts, built on the fields above.
    schemas: SchemaConverter = field(init=False)
    parameters: ParameterConverter = field(init=False)
    bodies: BodyConverter = field(init=False)

    def __post_init__(self) -> None:
        self.notes.translate = self.resolver.original
        self.schemas = SchemaConverter(
            resolver=self.resolver,
            notes=self.notes,
            memo=self.memo,
            budgets=self.budgets,
            depths=self.depths,
        )
        self.parameters = ParameterConverter(
            resolver=self.resolver,
            schemas=self.schemas,
            notes=self.notes,
            budgets=self.budgets,
            names=NameTable(),
            streaming=self.streaming,
        )
        self.bodies = BodyConverter(
            resolver=self.resolver,
            schemas=self.schemas,
            notes=self.notes,
            input_name=self.parameters.input_name,
        )

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
        self.parameters.add(
            path=op.path, pointer=op.pointer, node=op.node, path_item=op.path_item, request=request
        )
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

    def _cookie_header(self, request: Request, pointer: str) -> None:
        """The cookies as one ``Cookie`` header, each value percent-encoded."""
        if not request.cookies:
            return
        if any(header.lower() == "cookie" for header in request.headers):
            raise unexpressible(pointer, "a Cookie header parameter and cookie parameters")
        request.headers["Cookie"] = cookie_template(request.cookies)

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


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


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
