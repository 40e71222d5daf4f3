"""The typed values a parsed HTTP backend is made of: auth and body classes, frozen specs."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agentkit import ToolRegistry, load_tools
from agentkit.declarative.backends.http.backend import HttpBackend
from agentkit.declarative.backends.http.spec import HttpSpec, Retry
from agentkit.declarative.backends.http.values import (
    ApiKeyAuth,
    BasicAuth,
    BearerAuth,
    FormBody,
    JsonArray,
    JsonBody,
    JsonObject,
    TextBody,
)
from agentkit.declarative.templates import Template
from agentkit.declarative.tool import DeclarativeTool
from agentkit.redaction import Redactor, redacting
from tests.declarative.conftest import WriteFile

TOOL = """\
name: thing
version: 1.0.0
credentials: [token, user, password]
input_schema:
  parameters:
    - {{name: id, type: string}}
backend:
  http:
    method: POST
    url: https://api.example.com/things
{backend}
"""


def spec_of(write: WriteFile, backend: str) -> HttpSpec:
    registry = ToolRegistry()
    load_tools(write(TOOL.format(backend=backend)), registry=registry)
    (tool,) = list(registry)
    assert isinstance(tool, DeclarativeTool)
    assert isinstance(tool.BACKEND, HttpBackend)
    return tool.BACKEND.spec


@pytest.mark.parametrize(
    ("auth", "expected", "placement", "name"),
    [
        pytest.param(
            "{bearer: token}",
            BearerAuth(credential="token"),
            "header",
            "Authorization",
            id="bearer",
        ),
        pytest.param(
            "{basic: {username: user, password: password}}",
            BasicAuth(username="user", password="password"),
            "header",
            "Authorization",
            id="basic",
        ),
        pytest.param(
            "{api_key: {credential: token, in: query, name: key}}",
            ApiKeyAuth(credential="token", placement="query", name="key"),
            "query",
            "key",
            id="api-key-query",
        ),
        pytest.param(
            "{api_key: {credential: token, name: X-Key}}",
            ApiKeyAuth(credential="token", placement="header", name="X-Key"),
            "header",
            "X-Key",
            id="api-key-header-by-default",
        ),
    ],
)
def test_auth_is_a_class_that_says_where_it_goes(
    write: WriteFile, auth: str, expected: Any, placement: str, name: str
) -> None:
    spec = spec_of(write, f"    auth: {auth}")
    assert spec.auth == expected
    assert spec.auth is not None
    assert (spec.auth.placement, spec.auth.name) == (placement, name)
    assert set(spec.auth.credential_names) <= {"token", "user", "password"}


def test_each_auth_makes_its_value_from_the_credentials() -> None:
    credentials = {"token": "t0k-1234", "user": "ann", "password": "pw-12345"}
    assert BearerAuth(credential="token").value(credentials) == "Bearer t0k-1234"
    assert ApiKeyAuth(credential="token", name="key").value(credentials) == "t0k-1234"
    redactor = Redactor()
    with redacting(redactor):
        basic = BasicAuth(username="user", password="password").value(credentials)
    assert basic == "Basic YW5uOnB3LTEyMzQ1"  # base64 of "ann:pw-12345"
    # The pair is a derived form of two secrets: it joins the running call's redactor.
    assert redactor.redact("ann:pw-12345") == "***"
    written = BasicAuth(username="bob", password="password", literal_username=True)
    assert written.credential_names == ("password",)
    assert written.value(credentials) == "Basic Ym9iOnB3LTEyMzQ1"  # the username as written


def test_a_json_body_is_a_tree_of_typed_nodes(write: WriteFile) -> None:
    spec = spec_of(write, '    json: {id: "{{ inputs.id }}", tags: [a, 1, null], flag: true}')
    assert isinstance(spec.body, JsonBody)
    assert spec.body.content_type is None
    root = spec.body.value
    assert isinstance(root, JsonObject)
    members = dict(root.members)
    assert isinstance(members["id"], Template)
    assert isinstance(members["tags"], JsonArray)
    assert members["tags"].items[1:] == (1, None)
    assert members["flag"] is True


@pytest.mark.parametrize(
    ("backend", "kind", "content_type"),
    [
        pytest.param('    form: {id: "{{ inputs.id }}"}', FormBody, None, id="form"),
        pytest.param('    body: "id={{ inputs.id }}"', TextBody, "text/plain", id="text"),
        pytest.param(
            '    body: "<id/>"\n    content_type: application/xml',
            TextBody,
            "application/xml",
            id="text-typed",
        ),
        pytest.param(
            "    json: {a: 1}\n    content_type: application/merge-patch+json",
            JsonBody,
            "application/merge-patch+json",
            id="json-typed",
        ),
    ],
)
def test_each_body_is_its_own_class_with_its_media_type(
    write: WriteFile, backend: str, kind: type, content_type: str | None
) -> None:
    spec = spec_of(write, backend)
    assert type(spec.body) is kind
    assert spec.body is not None
    assert spec.body.content_type == content_type


def test_no_body_is_none(write: WriteFile) -> None:
    assert spec_of(write, "    headers: {A: b}").body is None


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(Retry(), id="retry"),
        pytest.param(BearerAuth(credential="c"), id="bearer"),
        pytest.param(ApiKeyAuth(credential="c", name="k"), id="api-key"),
        pytest.param(JsonBody(value=None), id="json-body"),
        pytest.param(JsonArray(items=()), id="json-array"),
    ],
)
def test_values_are_frozen_slotted_and_keyword_only(value: Any) -> None:
    field = dataclasses.fields(value)[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field.name, None)
    assert not hasattr(value, "__dict__")
    with pytest.raises(TypeError):
        type(value)(getattr(value, field.name))
