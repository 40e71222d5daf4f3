"""Request bodies: JSON as typed nested parameters, forms and multipart as flat fields.

A multipart property sent as a file (``format: binary``, or 3.1's
``contentMediaType``) becomes two inputs, the content (base64, or text for a
``text/*`` part) and an optional file name, and one ``multipart.files`` entry
with the media type of the property's ``encoding``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, final

from agentkit.openapi.descriptions import sentence
from agentkit.openapi.media import json_media, media_type
from agentkit.openapi.reader import Resolver, pointer_join, unexpressible
from agentkit.openapi.schemas import Notes, SchemaConverter, named

_FORM: Final = "application/x-www-form-urlencoded"
_MULTIPART: Final = "multipart/form-data"
#: A media type without wildcards, lists or parameters, as a part's content type.
_MEDIA = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+-]*/[A-Za-z0-9][A-Za-z0-9.+-]*")

#: A cookie name written as-is into a header and a template string: an RFC 6265 token
#: without the quote.
COOKIE_NAME: Final = re.compile(r"[A-Za-z0-9!#$%&*+.^_`|~-]+")

#: Names an input: ``(wanted name, location, pointer) -> the name it got``.
InputName = Callable[[str, str, str], str]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Cookie:
    """A cookie sent in the ``Cookie`` header: ``name=`` and a Jinja expression giving the
    value, percent-encoded; ``given`` tests whether it is sent (None: always)."""

    name: str
    value: str
    given: str | None = None


def cookie_template(cookies: list[Cookie]) -> str:
    """The ``Cookie`` header's template: plain text when every cookie is always sent."""
    if all(cookie.given is None for cookie in cookies):
        return "; ".join(
            f"{cookie.name}={{{{ {cookie.value} | urlencode }}}}" for cookie in cookies
        )
    pieces = ", ".join(
        f"'{cookie.name}=' ~ ({cookie.value} | urlencode)"
        + (f" if {cookie.given} else none" if cookie.given else "")
        for cookie in cookies
    )
    return "{{ [" + pieces + "] | reject('none') | join('; ') or none }}"


@final
@dataclass(slots=True, kw_only=True)
class Request:
    """The request of one tool as it is built: the definition's ``http`` keys and inputs."""

    path: str
    query: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, Any] = field(default_factory=dict)
    json: Any = None
    form: dict[str, str] | None = None
    multipart: dict[str, Any] | None = None
    inputs: list[dict[str, Any]] = field(default_factory=list)
    cookies: list[Cookie] = field(default_factory=list)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class BodyConverter:
    """Turns a ``requestBody`` into inputs and the body keys of a request."""

    resolver: Resolver
    schemas: SchemaConverter
    notes: Notes
    input_name: InputName

    def body(self, node: dict[str, Any], pointer: str, request: Request) -> None:
        """The operation's ``requestBody`` (at ``pointer``) into ``request``."""
        if "requestBody" not in node:
            return
        here = pointer_join(pointer, "requestBody")
        body, here, _ = self.resolver.resolve(node["requestBody"], here)
        if not isinstance(body, dict):
            raise unexpressible(here, "expected a request body (a mapping)")
        required = body.get("required") is True
        content = _mapping(body.get("content"))
        media = json_media(content)
        if media is None:
            for kind in content:
                at = pointer_join(here, "content", kind)
                if media_type(kind) == _FORM:
                    self._form(content[kind], at, required, request)
                    return
                if media_type(kind) == _MULTIPART:
                    self._multipart(content[kind], at, required, request)
                    return
            kinds = ", ".join(sorted(content)) or "none"
            if required:
                raise unexpressible(
                    here,
                    f"request body of {kinds}: only JSON, form and multipart bodies are supported",
                )
            self.notes.add(
                "body", here, f"request body of {kinds} left out (JSON, form and multipart only)"
            )
            return
        here = pointer_join(here, "content", media, "schema")
        schema_node = content[media].get("schema") if isinstance(content[media], dict) else None
        if schema_node is None:
            schema_node = {}
        schema, _, stack = self.schemas.flatten(schema_node, here, ())
        properties = schema.get("properties")
        if isinstance(properties, dict) and properties and _all_names(properties):
            parameters = self.schemas.properties(
                schema, here, where="body", direction="input", stack=stack, required_too=required
            )
            if parameters is not None:
                request.json = {}
                for param in parameters:
                    field_name = param["name"]
                    param["name"] = self.input_name(field_name, "body", here)
                    request.inputs.append(param)
                    request.json[field_name] = "{{ inputs." + param["name"] + " }}"
                return
        spec, nullable = self.schemas.convert(schema_node, here, where="body", direction="input")
        if spec is None:
            spec = {"type": "dictionary"}
            self.notes.add("body", here, "no single type: a free-form dictionary")
        input_name = self.input_name("body", "body", here)
        request.inputs.append(named(input_name, spec, required=required and not nullable))
        request.json = "{{ inputs." + input_name + " }}"

    def _form(self, media: Any, here: str, required: bool, request: Request) -> None:
        """A form body: one parameter per field, each a scalar or a list of scalars."""
        request.form = {}
        for field_name, param, _, at in self._fields(media, here, required, "form"):
            if _flat(param, field_name, at, self.notes, "form"):
                param["name"] = self.input_name(field_name, "body", here)
                request.inputs.append(param)
                request.form[field_name] = "{{ inputs." + param["name"] + " }}"

    def _multipart(self, media: Any, here: str, required: bool, request: Request) -> None:
        """A multipart body: files from base64 (or text) parameters, the rest as fields."""
        encodings = _mapping(media.get("encoding")) if isinstance(media, dict) else {}
        fields: dict[str, str] = {}
        files: dict[str, dict[str, Any]] = {}
        left_out: list[str] = []
        for field_name, param, schema, at in self._fields(media, here, required, "multipart"):
            encoding = _mapping(encodings.get(field_name))
            media_kind = _part_type(encoding.get("contentType")) or _part_type(
                schema.get("contentMediaType")
            )
            items = (
                self.resolver.resolve(schema["items"], pointer_join(at, "items"))[0]
                if "items" in schema
                else {}
            )
            if isinstance(items, dict) and _is_file(items):
                if param.get("required", True):
                    message = f"multipart field {field_name!r} is a list of files; one file a field"
                    raise unexpressible(at, message)
                self.notes.add(f"multipart {field_name}", at, "a list of files left out")
                left_out.append(f"{field_name!r} is a list of files (one file a field)")
                continue
            if not _is_file(schema):
                if _flat(param, field_name, at, self.notes, "multipart"):
                    param["name"] = self.input_name(field_name, "body", here)
                    request.inputs.append(param)
                    fields[field_name] = "{{ inputs." + param["name"] + " }}"
                else:
                    left_out.append(f"{field_name!r} is an object")
                continue
            text = media_kind is not None and media_kind.startswith("text/")
            content_name = self.input_name(field_name, "body", here)
            what = "the file's content, as text" if text else "the file's content, base64-encoded"
            described = self.schemas.describe(schema.get("description"))
            spec = {"type": "string", "description": sentence(described, what)}
            request.inputs.append(named(content_name, spec, required=param.get("required", True)))
            filename = self.input_name(f"{field_name}_filename", "body", here)
            request.inputs.append(
                {
                    "name": filename,
                    "type": "string",
                    "description": f"The file's name; {field_name!r} when not given.",
                    "required": False,
                }
            )
            part: dict[str, Any] = {"content": "{{ inputs." + content_name + " }}"}
            if not text:
                part["encoding"] = "base64"
            part["filename"] = "{{ inputs." + filename + " }}"
            if media_kind is not None:
                part["content_type"] = media_kind
            files[field_name] = part
        multipart: dict[str, Any] = {}
        if fields:
            multipart["fields"] = fields
        if files:
            multipart["files"] = files
        if not multipart:
            reasons = "; ".join(left_out) or "it has no fields"
            raise unexpressible(here, f"no field of the multipart body can be sent: {reasons}")
        request.multipart = multipart

    def _fields(
        self, media: Any, here: str, required: bool, what: str
    ) -> list[tuple[str, dict[str, Any], dict[str, Any], str]]:
        """``(field name, parameter, its schema, its pointer)`` for each property of a
        form-like body."""
        here = pointer_join(here, "schema")
        node = media.get("schema") if isinstance(media, dict) else None
        schema, _, stack = self.schemas.flatten(node if node is not None else {}, here, ())
        properties = _mapping(schema.get("properties"))
        parameters = (
            self.schemas.properties(
                schema, here, where=what, direction="input", stack=stack, required_too=required
            )
            if properties
            else None
        )
        if parameters is None:
            message = f"a {what} body needs an object schema with named properties"
            raise unexpressible(here, message)
        found: list[tuple[str, dict[str, Any], dict[str, Any], str]] = []
        for param in parameters:
            name = param["name"]
            at = pointer_join(here, "properties", name)
            resolved, _, _ = self.resolver.resolve(properties[name], at)
            found.append((name, param, resolved if isinstance(resolved, dict) else {}, at))
        return found


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _flat(param: dict[str, Any], name: str, here: str, notes: Notes, what: str) -> bool:
    """True for a scalar or a list of scalars; an object is left out (noted), or skips
    the operation when it is required."""
    items = param.get("items")
    if param["type"] != "dictionary" and not (
        isinstance(items, dict) and items.get("type") in ("dictionary", "list")
    ):
        return True
    if param.get("required", True):
        message = f"{what} field {name!r} is an object; {what} bodies send flat fields"
        raise unexpressible(here, message)
    notes.add(f"{what} {name}", here, "an object field left out")
    return False


def _is_file(schema: dict[str, Any]) -> bool:
    """A part sent as a file: ``format: binary`` (3.0) or ``contentMediaType`` (3.1)."""
    return schema.get("format") == "binary" or (
        "contentMediaType" in schema and schema.get("type") in (None, "string")
    )


def _part_type(value: Any) -> str | None:
    """One concrete media type (``image/png``) from an encoding's ``contentType``."""
    if not isinstance(value, str) or not _MEDIA.fullmatch(value.strip()):
        return None
    return value.strip()


def _all_names(properties: dict[str, Any]) -> bool:
    return all(isinstance(name, str) and name.isidentifier() for name in properties)
