"""Swagger 2.0, read as the OpenAPI 3.0 model the importer knows.

``convert(document)`` returns a 3.0 document built from a 2.0 one:

- ``schemes``, ``host`` and ``basePath`` become the one server;
- ``securityDefinitions`` become ``components.securitySchemes`` (``basic`` as
  HTTP basic, an OAuth2 ``application`` flow as client credentials);
- a ``body`` parameter becomes the ``requestBody`` (one content entry per
  ``consumes`` type), ``formData`` parameters an object body (multipart when
  ``consumes`` says so or a parameter is a file); both stay in ``parameters``
  too, where the importer ignores them, so every other parameter keeps its
  index;
- a parameter's ``type``, ``format``, ``items``... become its ``schema``, and
  ``collectionFormat`` its ``style`` and ``explode``;
- a response's ``schema`` becomes its ``content`` for the ``produces`` type.

``$ref`` are left as written (``#/definitions/Pet`` resolves in the converted
document too). Every node the conversion moves is recorded in a table under
``POINTERS_KEY``, converted pointer -> original pointer, so a problem found in
the converted document still points into the file the user has.
"""

from __future__ import annotations

from typing import Any, Final

from agentkit.openapi.pointers import MAX_REF_CHAIN, pointer_join, pointer_keys, walk
from agentkit.toolerrors import PointerError

#: Where the converted document keeps its table of moved pointers.
POINTERS_KEY: Final = "x-agentkit-swagger-pointers"
#: Where the converted document keeps the original, for the schema check.
ORIGINAL_KEY: Final = "x-agentkit-swagger-original"

_METHODS: Final = ("get", "put", "post", "delete", "options", "head", "patch")
_SCHEMA_KEYS: Final = (
    "type",
    "format",
    "items",
    "enum",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "multipleOf",
)
_STYLES: Final = {
    "csv": ("form", False),
    "ssv": ("spaceDelimited", False),
    "pipes": ("pipeDelimited", False),
    "tsv": ("tabDelimited", False),
    "multi": ("form", True),
}
_JSON: Final = "application/json"
_FORM: Final = "application/x-www-form-urlencoded"
_MULTIPART: Final = "multipart/form-data"


def is_swagger(document: dict[str, Any]) -> bool:
    return "swagger" in document


def convert(document: dict[str, Any]) -> dict[str, Any]:
    """The 3.0 document for the Swagger 2.0 ``document`` (whose version is checked)."""
    return _Converter(document).run()


class _Converter:
    def __init__(self, document: dict[str, Any]) -> None:
        self.original = document
        self.pointers: dict[str, str] = {}
        self.consumes = _strings(document.get("consumes")) or [_JSON]
        self.produces = _strings(document.get("produces")) or [_JSON]

    def moved(self, converted: str, original: str) -> None:
        self.pointers[converted] = original

    def run(self) -> dict[str, Any]:
        doc = self.original
        converted: dict[str, Any] = {
            key: value
            for key, value in doc.items()
            if key
            not in (
                "swagger",
                "host",
                "basePath",
                "schemes",
                "consumes",
                "produces",
                "paths",
                "parameters",
                "responses",
                "securityDefinitions",
            )
        }
        converted["openapi"] = "3.0.3"
        server = self.server()
        if server is not None:
            converted["servers"] = [{"url": server}]
            for moved in ("#/servers", "#/servers/0", "#/servers/0/url"):
                self.moved(moved, "#/host")
        parameters = _mapping(doc.get("parameters"))
        converted["parameters"] = {
            name: self.parameter(param, pointer_join("#/parameters", name))
            for name, param in parameters.items()
        }
        converted["responses"] = {
            name: self.response(response, pointer_join("#/responses", name), self.produces)
            for name, response in _mapping(doc.get("responses")).items()
        }
        schemes = _mapping(doc.get("securityDefinitions"))
        if schemes:
            converted["components"] = {
                "securitySchemes": {name: _scheme(scheme) for name, scheme in schemes.items()}
            }
            self.moved("#/components/securitySchemes", "#/securityDefinitions")
        paths = doc.get("paths")
        if isinstance(paths, dict):
            converted["paths"] = {
                path: self.path_item(item, pointer_join("#/paths", path))
                for path, item in paths.items()
            }
        else:
            converted["paths"] = paths if paths is not None else {}
        converted[POINTERS_KEY] = self.pointers
        converted[ORIGINAL_KEY] = doc
        return converted

    def server(self) -> str | None:
        host = self.original.get("host")
        if not isinstance(host, str) or not host.strip():
            return None
        schemes = _strings(self.original.get("schemes"))
        scheme = "https" if "https" in schemes or not schemes else schemes[0]
        base = self.original.get("basePath")
        base = base if isinstance(base, str) and base.startswith("/") else ""
        return f"{scheme}://{host.strip()}{base.rstrip('/')}"

    # -- paths and operations ----------------------------------------------------------------

    def path_item(self, item: Any, pointer: str) -> Any:
        if not isinstance(item, dict):
            return item
        converted = dict(item)
        shared = item.get("parameters")
        if isinstance(shared, list):
            converted["parameters"] = [
                self.parameter(param, pointer_join(pointer, "parameters", index))
                for index, param in enumerate(shared)
            ]
        for method in _METHODS:
            if isinstance(item.get(method), dict):
                here = pointer_join(pointer, method)
                converted[method] = self.operation(item[method], here, shared, pointer)
        return converted

    def operation(
        self, node: dict[str, Any], pointer: str, shared: Any, item_pointer: str
    ) -> dict[str, Any]:
        converted = {k: v for k, v in node.items() if k not in ("consumes", "produces")}
        consumes = _strings(node.get("consumes")) or self.consumes
        produces = _strings(node.get("produces")) or self.produces
        own = node.get("parameters")
        if isinstance(own, list):
            converted["parameters"] = [
                self.parameter(param, pointer_join(pointer, "parameters", index))
                for index, param in enumerate(own)
            ]
        body = self.body(pointer, item_pointer, own, shared, consumes)
        if body is not None:
            converted["requestBody"] = body
        responses = node.get("responses")
        if isinstance(responses, dict):
            converted["responses"] = {
                code: self.response(response, pointer_join(pointer, "responses", code), produces)
                for code, response in responses.items()
            }
        return converted

    def body(
        self, pointer: str, item_pointer: str, own: Any, shared: Any, consumes: list[str]
    ) -> dict[str, Any] | None:
        """The request body of the ``body`` or ``formData`` parameters (the operation's own
        first, then the path item's)."""
        found: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}
        for params, base in ((shared, item_pointer), (own, pointer)):
            for index, raw in enumerate(params if isinstance(params, list) else []):
                param, here = self.resolve(raw, pointer_join(base, "parameters", index))
                where = param.get("in") if isinstance(param, dict) else None
                if where in ("body", "formData") and isinstance(param, dict):
                    found[(where, str(param.get("name")))] = (param, here)
        target = pointer_join(pointer, "requestBody")
        bodies = [(param, here) for (where, _), (param, here) in found.items() if where == "body"]
        if bodies:
            param, here = bodies[-1]
            self.moved(target, here)
            content = {media: {"schema": param.get("schema", {})} for media in consumes}
            for media in consumes:
                self.moved(pointer_join(target, "content", media, "schema"), f"{here}/schema")
            body: dict[str, Any] = {"content": content, "required": param.get("required") is True}
            if isinstance(param.get("description"), str):
                body["description"] = param["description"]
            return body
        fields = [(param, here) for (where, _), (param, here) in found.items() if where != "body"]
        if not fields:
            return None
        files = any(param.get("type") == "file" for param, _ in fields)
        media = _MULTIPART if files or _MULTIPART in consumes else _FORM
        self.moved(target, fields[0][1])
        at = pointer_join(target, "content", media, "schema")
        self.moved(at, fields[0][1])
        properties: dict[str, Any] = {}
        required: list[str] = []
        for param, here in fields:
            name = str(param.get("name"))
            properties[name] = _schema_of(param)
            self.moved(pointer_join(at, "properties", name), here)
            if param.get("required") is True:
                required.append(name)
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        return {"content": {media: {"schema": schema}}, "required": bool(required)}

    def resolve(self, node: Any, pointer: str) -> tuple[Any, str]:
        """A parameter with its ``$ref`` chain followed in the original, and its pointer.

        A ref may name a parameter anywhere in the file (``#/parameters/Body%20Param``,
        another operation's ``#/paths/~1e/post/parameters/0``) or another ref. A chain
        that leads nowhere (a ref outside the file, invalid, naming nothing, a loop, more
        than ``MAX_REF_CHAIN``) gives ``node`` back: the importer's resolver follows the
        same chain and skips the operation with the reason.
        """
        found, here = node, pointer
        passed: set[str] = set()
        while isinstance(found, dict) and isinstance(found.get("$ref"), str):
            try:
                keys = pointer_keys(found["$ref"])
            except PointerError:
                return node, pointer
            here = pointer_join("#", *keys)
            found, reached = walk(self.original, keys)
            if reached < len(keys) or here in passed or len(passed) >= MAX_REF_CHAIN:
                return node, pointer
            passed.add(here)
        return found, here

    # -- parameters and responses ------------------------------------------------------------

    def parameter(self, param: Any, pointer: str) -> Any:
        if not isinstance(param, dict) or "$ref" in param:
            return param
        if param.get("in") in ("body", "formData"):
            return param  # in the request body; the importer reads no such location
        converted = {k: v for k, v in param.items() if k not in (*_SCHEMA_KEYS, "collectionFormat")}
        converted["schema"] = _schema_of(param)
        self.moved(pointer_join(pointer, "schema"), pointer)
        if param.get("type") == "array":
            style, explode = _STYLES.get(str(param.get("collectionFormat", "csv")), ("csv", False))
            if param.get("in") == "query" or style != "form":
                converted["style"] = style
            converted["explode"] = explode
        return converted

    def response(self, response: Any, pointer: str, produces: list[str]) -> Any:
        if not isinstance(response, dict) or "$ref" in response or "schema" not in response:
            return response
        converted = {k: v for k, v in response.items() if k not in ("schema", "examples")}
        schema = response["schema"]
        if isinstance(schema, dict) and schema.get("type") == "file":
            media = next(
                (kind for kind in produces if "json" not in kind), "application/octet-stream"
            )
            schema = {"type": "string", "format": "binary"}
        else:
            media = next((kind for kind in produces if "json" in kind), produces[0])
        converted["content"] = {media: {"schema": schema}}
        self.moved(pointer_join(pointer, "content", media, "schema"), f"{pointer}/schema")
        return converted


def _schema_of(param: dict[str, Any]) -> dict[str, Any]:
    """The schema of a non-body parameter: its own type keys, ``file`` as binary."""
    schema: dict[str, Any] = {key: param[key] for key in _SCHEMA_KEYS if key in param}
    if schema.get("type") == "file":
        schema = {"type": "string", "format": "binary"}
    if isinstance(param.get("description"), str) and param.get("in") == "formData":
        schema["description"] = param["description"]
    return schema


def _scheme(scheme: Any) -> Any:
    if not isinstance(scheme, dict):
        return scheme
    kind = scheme.get("type")
    if kind == "basic":
        return {"type": "http", "scheme": "basic"}
    if kind == "oauth2":
        flow = scheme.get("flow")
        scopes = _mapping(scheme.get("scopes"))
        if flow == "application":
            flows = {"clientCredentials": {"tokenUrl": scheme.get("tokenUrl"), "scopes": scopes}}
        else:
            name = {"accessCode": "authorizationCode"}.get(str(flow), str(flow))
            flows = {name: {"scopes": scopes}}
        return {"type": "oauth2", "flows": flows}
    return scheme


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []
