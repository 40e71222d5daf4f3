"""Credentials: the provider chain, the places it looks, and no value in any message."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit import (
    CredentialError,
    CredentialsManager,
    EnvironmentProvider,
    MappingProvider,
    SecretsFileProvider,
    SemanticError,
)
from agentkit.credentials import environment_name


@pytest.mark.parametrize(
    ("name", "variable"),
    [
        ("weather-api-key", "WEATHER_API_KEY"),
        ("github.token", "GITHUB_TOKEN"),
        ("already_UPPER", "ALREADY_UPPER"),
        ("a b/c", "A_B_C"),
    ],
)
def test_environment_name(name: str, variable: str) -> None:
    assert environment_name(name) == variable


def test_environment_provider_reads_at_lookup_time(monkeypatch: pytest.MonkeyPatch) -> None:
    provider = EnvironmentProvider()
    assert provider.get("weather-api-key") is None
    monkeypatch.setenv("WEATHER_API_KEY", "abc")
    assert provider.get("weather-api-key") == "abc"


def test_empty_values_count_as_missing() -> None:
    assert EnvironmentProvider({"KEY": ""}).get("key") is None
    assert MappingProvider({"key": ""}).get("key") is None


def test_first_provider_wins() -> None:
    manager = CredentialsManager(
        [MappingProvider({"key": "from-code"}), EnvironmentProvider({"KEY": "from-env"})]
    )
    assert manager.resolve("t", ["key"]) == {"key": "from-code"}


def test_later_providers_fill_gaps() -> None:
    manager = CredentialsManager([MappingProvider({}), EnvironmentProvider({"KEY": "from-env"})])
    assert manager.resolve("t", ["key"]) == {"key": "from-env"}


def test_missing_credential_names_every_place(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets.env"
    secrets.write_text("OTHER=not-this-one\n")
    manager = CredentialsManager(
        [MappingProvider({}), EnvironmentProvider({}), SecretsFileProvider(secrets)]
    )
    with pytest.raises(CredentialError) as info:
        manager.resolve("fetch_weather", ["weather-api-key"])
    error = info.value
    assert error.tool_name == "fetch_weather"
    assert error.credential == "weather-api-key"
    assert error.looked_in == (
        "the mapping given in code (key 'weather-api-key')",
        "environment variable WEATHER_API_KEY",
        f"secrets file {secrets} ('weather-api-key' or 'WEATHER_API_KEY')",
    )
    assert "not-this-one" not in str(error)


def test_secrets_file_formats(tmp_path: Path) -> None:
    secrets = tmp_path / ".env"
    secrets.write_text(
        "# comment\n"
        "\n"
        "WEATHER_API_KEY=abc123\n"
        "export GITHUB_TOKEN = 'ghp_quoted'\n"
        'github-app = "with = sign"\n'
    )
    provider = SecretsFileProvider(secrets)
    assert provider.get("weather-api-key") == "abc123"
    assert provider.get("github-token") == "ghp_quoted"
    assert provider.get("github-app") == "with = sign"
    assert provider.get("missing") is None


def test_malformed_secrets_file_names_the_line_not_the_text(tmp_path: Path) -> None:
    secrets = tmp_path / ".env"
    secrets.write_text("GOOD=1\nsk-live-very-secret-without-a-name\n")
    with pytest.raises(SemanticError, match=r"\.env:2: expected NAME=value") as info:
        SecretsFileProvider(secrets)
    assert "very-secret" not in str(info.value)


def test_missing_secrets_file(tmp_path: Path) -> None:
    with pytest.raises(SemanticError, match=r"Cannot read secrets file .*nope\.env"):
        SecretsFileProvider(tmp_path / "nope.env")


def test_with_provider_adds_to_the_chain() -> None:
    manager = CredentialsManager.from_mapping({"a": "1"}).with_provider(MappingProvider({"b": "2"}))
    assert manager.resolve("t", ["a", "b"]) == {"a": "1", "b": "2"}
    first = manager.with_provider(MappingProvider({"a": "override"}), first=True)
    assert first.get("a") == "override"


def test_from_env_is_environment_only() -> None:
    (provider,) = CredentialsManager.from_env().providers
    assert isinstance(provider, EnvironmentProvider)


def test_from_env_then_a_secrets_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = tmp_path / ".env"
    secrets.write_text("A_KEY=from-file\nB_KEY=from-file\n")
    monkeypatch.setenv("A_KEY", "from-env")
    monkeypatch.delenv("B_KEY", raising=False)
    manager = CredentialsManager.from_env(secrets)
    assert manager.resolve("t", ["a-key", "b-key"]) == {"a-key": "from-env", "b-key": "from-file"}
