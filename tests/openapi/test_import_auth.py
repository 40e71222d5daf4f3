"""Auth once on the source: shared security there, ``--auth`` to choose, ``auth: none``
for operations that need none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit import ToolExecutor, ToolRegistry, load_tools
from agentkit.cli import main
from agentkit.openapi import import_openapi
from agentkit.openapi.update import update_openapi
from agentkit.toolerrors import UsageError
from tests.support.loopback import Handler, serve

OK = {"200": {"description": "ok"}}
SCHEMES = {
    "BasicAuth": {"type": "http", "scheme": "basic"},
    "ApiKeyAuth": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
    "Partner": {"type": "http", "scheme": "bearer"},
    "Digest": {"type": "http", "scheme": "digest"},
}
EITHER: list[dict[str, list[str]]] = [{"BasicAuth": []}, {"ApiKeyAuth": []}]


def payments(**extra: Any) -> dict[str, Any]:
    """Adyen's shape: each operation repeats its security, no top-level one."""
    paths = {
        f"/payments{n}": {"post": {"operationId": f"pay{n}", "security": EITHER, "responses": OK}}
        for n in range(3)
    }
    paths["/health"] = {"get": {"operationId": "health", "security": [], "responses": OK}}
    paths["/partner"] = {
        "get": {"operationId": "partner", "security": [{"Partner": []}], "responses": OK}
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Payments", "version": "68"},
        "servers": [{"url": "https://pay.example.com/v68"}],
        "paths": paths,
        "components": {"securitySchemes": SCHEMES},
        **extra,
    }


def spec_file(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "payments.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def documents(out: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in sorted(out.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        found[str(doc.get("name") or doc.get("source"))] = doc
    return found


def import_to(tmp_path: Path, document: dict[str, Any], auth: str | None = None) -> Path:
    out = tmp_path / "tools.d"
    import_openapi(spec_file(tmp_path, document), source="pay", out=out, auth=auth)
    return out


def test_security_repeated_per_operation_goes_on_the_source_once(tmp_path: Path) -> None:
    docs = documents(import_to(tmp_path, payments()))
    assert docs["pay"]["auth"] == {
        "basic": {"username": "pay-basic-auth-username", "password": "pay-basic-auth-password"}
    }
    for name in ("pay0", "pay1", "pay2"):
        http = docs[name]["backend"]["http"]
        assert "auth" not in http
        assert "credentials" not in docs[name]
    assert docs["partner"]["backend"]["http"]["auth"] == {"bearer": "pay-partner"}
    assert docs["partner"]["credentials"] == ["pay-partner"]
    assert docs["health"]["backend"]["http"]["auth"] == "none"
    assert "credentials" not in docs["health"]
    source_text = (tmp_path / "tools.d" / "pay.source.yaml").read_text(encoding="utf-8")
    assert "no top-level security: the source uses 'BasicAuth', which 3 of 5" in source_text


def test_auth_chooses_the_sources_scheme_in_one_place(tmp_path: Path) -> None:
    out = import_to(tmp_path, payments(), auth="ApiKeyAuth")
    docs = documents(out)
    assert docs["pay"]["auth"] == {
        "api_key": {"credential": "pay-api-key-auth", "in": "header", "name": "X-API-Key"}
    }
    assert docs["pay"]["credentials"] == ["pay-api-key-auth"]
    assert all("auth" not in docs[f"pay{n}"]["backend"]["http"] for n in range(3))
    assert "chosen with --auth over BasicAuth, Partner, Digest" in (
        out / "pay.source.yaml"
    ).read_text(encoding="utf-8")
    # The choice is kept by --update, and only the source names the scheme.
    update_openapi(spec_file(tmp_path, payments()), source="pay", out=out)
    assert documents(out)["pay"]["auth"]["api_key"]["credential"] == "pay-api-key-auth"
    assert json.loads((out / "pay.openapi-lock.json").read_text(encoding="utf-8"))["auth"] == (
        "ApiKeyAuth"
    )


def test_the_top_level_security_is_the_sources_and_repeating_it_changes_nothing(
    tmp_path: Path,
) -> None:
    # Twilio's shape: the top-level security, repeated in each operation.
    document = payments(security=[{"ApiKeyAuth": []}])
    for item in document["paths"].values():
        for op in item.values():
            if op["operationId"].startswith("pay"):
                op["security"] = [{"ApiKeyAuth": []}]
    out = import_to(tmp_path, document)
    docs = documents(out)
    assert docs["pay"]["auth"]["api_key"]["name"] == "X-API-Key"
    assert (
        "the source uses 'ApiKeyAuth'; --auth chooses another of: BasicAuth, Partner, Digest"
        in (out / "pay.source.yaml").read_text(encoding="utf-8")
    )
    assert [
        name for name, doc in docs.items() if "auth" in doc.get("backend", {}).get("http", {})
    ] == [
        "health",
        "partner",
    ]


def test_an_operation_needing_no_auth_sends_none(tmp_path: Path) -> None:
    seen: list[str | None] = []

    def note(handler: Handler) -> None:
        seen.append(handler.headers.get("Authorization"))
        handler.reply(200, {})

    out = import_to(tmp_path, payments())
    with serve({"/v68/health": note, "/v68/payments0": note}) as origin:
        registry = ToolRegistry()
        load_tools(out, registry=registry, environ={"PAY_BASE_URL": f"{origin}/v68"})
        assert registry["health"].credential_names == ()
        assert ToolExecutor(credentials={}).execute(registry["health"], {}).succeeded
        secrets = {
            "pay-basic-auth-username": "user-payments",
            "pay-basic-auth-password": "pass-payments",
        }
        assert ToolExecutor(credentials=secrets).execute(registry["pay0"], {}).succeeded
    assert seen == [None, "Basic dXNlci1wYXltZW50czpwYXNzLXBheW1lbnRz"]


def test_without_source_auth_an_open_operation_writes_no_auth(tmp_path: Path) -> None:
    document = payments()
    document["components"]["securitySchemes"] = {"Digest": SCHEMES["Digest"]}
    for item in document["paths"].values():
        for op in item.values():
            op["security"] = [] if op["operationId"] == "health" else [{"Digest": []}]
    out = tmp_path / "tools.d"
    import_openapi(spec_file(tmp_path, document), source="pay", out=out)
    assert "auth" not in documents(out)["health"]["backend"]["http"]


@pytest.mark.parametrize(
    ("wanted", "expected"),
    [
        (
            "ApiKey",
            "--auth 'ApiKey' is not a security scheme of the description (did you mean "
            "'ApiKeyAuth'?); its schemes: ApiKeyAuth, BasicAuth, Digest, Partner",
        ),
        ("Digest", "--auth 'Digest': security scheme 'Digest' (http digest) is not supported"),
    ],
    ids=["unknown", "unsupported"],
)
def test_an_auth_scheme_that_cannot_be_used_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wanted: str, expected: str
) -> None:
    spec = spec_file(tmp_path, payments())
    out = tmp_path / "tools.d"
    with pytest.raises(SystemExit) as info:
        main(
            ["import", "openapi", str(spec), "--source", "pay", "--out", str(out), "--auth", wanted]
        )
    assert info.value.code == 2
    assert expected in capsys.readouterr().err
    assert not out.exists()


def test_update_refuses_auth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = spec_file(tmp_path, payments())
    out = import_to(tmp_path, payments())
    with pytest.raises(SystemExit) as info:
        main(
            [
                "import",
                "openapi",
                str(spec),
                "--source",
                "pay",
                "--out",
                str(out),
                "--update",
                "--auth",
                "ApiKeyAuth",
            ]
        )
    assert info.value.code == 2
    assert "--auth cannot change it" in capsys.readouterr().err
    with pytest.raises(UsageError, match="not a security scheme"):
        import_openapi(spec, source="pay", out=tmp_path / "other", auth="nope")
