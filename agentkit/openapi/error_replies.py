"""Error replies a description defines, as per-status outputs (``responses:``).

Every 4xx and 5xx status (``404``, ``4XX``) under an operation's ``responses``,
and ``default`` as the classes ``4XX`` and ``5XX`` it covers, maps to its own
output mapping: the tool answers such a reply with ``error_status`` (the
status), ``error`` (the body, typed from its schema) and ``error_message``
(what the description says the status means) instead of failing the call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal, final

from agentkit.openapi.media import json_media
from agentkit.openapi.naming import NameTable
from agentkit.openapi.reader import Resolver, pointer_join
from agentkit.openapi.schemas import Notes, SchemaConverter
from agentkit.toolerrors import UnexpressibleOperation

_CODE: Final = re.compile(r"[45][0-9][0-9]")
_CLASS: Final = re.compile(r"([45])XX", re.IGNORECASE)
_TEMPLATE_SYNTAX: Final = re.compile(r"\{[{%#]|[}%#]\}")

Kind = Literal["json", "text", "none"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class _Reply:
    label: int | str
    pointer: str
    kind: Kind
    spec: dict[str, Any] | None
    message: str


def error_statuses(responses: dict[str, Any]) -> list[tuple[int | str, Any]]:
    """``(label, key)`` of each error reply: codes first, then classes, then ``default``
    as the classes it covers (``4XX``, ``5XX``) that are not given themselves."""
    codes: list[tuple[int | str, Any]] = []
    classes: list[tuple[int | str, Any]] = []
    for key in responses:
        text = str(key).strip()
        if _CODE.fullmatch(text):
            codes.append((int(text), key))
        elif match := _CLASS.fullmatch(text):
            classes.append((f"{match.group(1)}XX", key))
    if "default" in responses:
        given = {label for label, _ in classes}
        classes += [(label, "default") for label in ("4XX", "5XX") if label not in given]
    return sorted(codes, key=lambda pair: pair[0]) + classes


class ErrorOutputs:
    """Builds the error outputs and ``responses:`` of one operation."""

    def __init__(
        self, resolver: Resolver, schemas: SchemaConverter, notes: Notes, taken: list[str]
    ) -> None:
        self.resolver = resolver
        self.schemas = schemas
        self.notes = notes
        self.names = NameTable(tuple(taken))

    def build(
        self, pointer: str, responses: dict[str, Any], statuses: list[tuple[int | str, Any]]
    ) -> tuple[list[dict[str, Any]], dict[int | str, dict[str, Any]]] | None:
        """The outputs to add and the ``responses`` mapping; None when no status maps."""
        replies = [
            reply
            for label, key in statuses
            if (reply := self._reply(label, responses[key], pointer_join(pointer, key)))
        ]
        if not replies:
            return None
        error = self._error_spec(replies)
        status_name = self.names.claim("error_status")
        error_name = self.names.claim("error") if error is not None else ""
        message_name = self.names.claim("error_message") if any(r.message for r in replies) else ""
        outputs: list[dict[str, Any]] = [
            {
                "name": status_name,
                "type": "integer",
                "description": "The HTTP status of an error reply; absent on success.",
                "required": False,
            }
        ]
        if error is not None:
            error.setdefault("description", "The body of an error reply.")
            outputs.append({"name": error_name, **error, "required": False})
        if message_name:
            outputs.append(
                {
                    "name": message_name,
                    "type": "string",
                    "description": "What the API's description says the error status means.",
                    "required": False,
                }
            )
        by_status: dict[int | str, dict[str, Any]] = {}
        for reply in replies:
            mapping: dict[str, Any] = {
                status_name: reply.label
                if isinstance(reply.label, int)
                else "{{ response.status }}"
            }
            if error is not None:
                body = self._body(reply, error)
                if body is not None:
                    mapping[error_name] = body
            if reply.message:
                mapping[message_name] = reply.message
            by_status[reply.label] = mapping
        return outputs, by_status

    def _reply(self, label: int | str, node: Any, pointer: str) -> _Reply | None:
        where = f"responses.{label}"
        try:
            response, pointer, _ = self.resolver.resolve(node, pointer)
        except UnexpressibleOperation as exc:
            self.notes.add(where, exc.problem.path, f"{exc.problem.message}; not mapped")
            return None
        if not isinstance(response, dict):
            self.notes.add(where, pointer, "expected a response (a mapping); not mapped")
            return None
        message = self.schemas.describe(response.get("description"))
        if _TEMPLATE_SYNTAX.search(message):
            message = ""  # it would be read as a template
        content = response.get("content")
        if not isinstance(content, dict) or not content:
            return _Reply(label=label, pointer=pointer, kind="none", spec=None, message=message)
        media = json_media(content)
        schema = (
            content[media].get("schema") if media and isinstance(content[media], dict) else None
        )
        if media is None or schema is None:
            return _Reply(label=label, pointer=pointer, kind="text", spec=None, message=message)
        here = pointer_join(pointer, "content", media, "schema")
        spec, _ = self.schemas.convert(schema, here, where=where, direction="output")
        if spec is None:
            return _Reply(label=label, pointer=pointer, kind="text", spec=None, message=message)
        return _Reply(label=label, pointer=pointer, kind="json", spec=spec, message=message)

    def _error_spec(self, replies: list[_Reply]) -> dict[str, Any] | None:
        """The one declaration ``error`` gets for every reply that has a body."""
        specs = [reply.spec for reply in replies if reply.spec is not None]
        if not specs:
            has_text = any(reply.kind == "text" for reply in replies)
            return {"type": "string"} if has_text else None
        first = specs[0]
        if all(spec == first for spec in specs):
            return dict(first)
        pointer = next(reply.pointer for reply in replies if reply.spec is not None)
        self.notes.add(
            "responses", pointer, f"error replies of different shapes: a free-form {first['type']}"
        )
        return {"type": first["type"]}

    def _body(self, reply: _Reply, error: dict[str, Any]) -> str | None:
        if reply.kind == "json" and reply.spec is not None:
            if reply.spec["type"] == error["type"]:
                return "{{ response.json }}"
        elif reply.kind == "text" and error["type"] == "string":
            return "{{ response.text }}"
        elif reply.kind == "none":
            return None
        self.notes.add(
            f"responses.{reply.label}",
            reply.pointer,
            f"its body does not fit the other error replies' {error['type']}: not kept",
        )
        return None
