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
from agentkit.redaction import MIN_SECRET_LENGTH


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
        [MappingProvider({"key": "from-code"}), EnvironmentProvider({"KEY": "from-env-var"})]
    )
    assert manager.resolve("t", ["key"]) == {"key": "from-code"}


def test_later_providers_fill_gaps() -> None:
    manager = CredentialsManager(
        [MappingProvider({}), EnvironmentProvider({"KEY": "from-env-var"})]
    )
    assert manager.resolve("t", ["key"]) == {"key": "from-env-var"}


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
    manager = CredentialsManager.from_mapping({"a": "secret-1"}).with_provider(
        MappingProvider({"b": "secret-2"})
    )
    assert manager.resolve("t", ["a", "b"]) == {"a": "secret-1", "b": "secret-2"}
    first = manager.with_provider(MappingProvider({"a": "override"}), first=True)
    assert first.get("a") == "override"


def test_from_env_is_environment_only() -> None:
    (provider,) = CredentialsManager.from_env().providers
    assert isinstance(provider, EnvironmentProvider)


def test_from_env_then_a_secrets_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = tmp_path / ".env"
    secrets.write_text("A_KEY=from-file\nB_KEY=from-file\n")
    monkeypatch.setenv("A_KEY", "from-env-var")
    monkeypatch.delenv("B_KEY", raising=False)
    manager = CredentialsManager.from_env(secrets)
    assert manager.resolve("t", ["a-key", "b-key"]) == {
        "a-key": "from-env-var",
        "b-key": "from-file",
    }


# -- the shortest credential a call takes -----------------------------------------------------


@pytest.mark.parametrize("length", [1, 2, MIN_SECRET_LENGTH - 1])
def test_a_credential_shorter_than_the_minimum_is_refused_naming_its_source(
    tmp_path: Path, length: int
) -> None:
    secrets = tmp_path / ".env"
    secrets.write_text(f"SHORT_KEY={'f' * length}\nLONG_KEY={'f' * MIN_SECRET_LENGTH}\n")
    manager = CredentialsManager([EnvironmentProvider({}), SecretsFileProvider(secrets)])
    assert manager.resolve("t", ["long-key"]) == {"long-key": "f" * MIN_SECRET_LENGTH}
    with pytest.raises(CredentialError) as info:
        manager.resolve("fetch_weather", ["long-key", "short-key"])
    error = info.value
    assert (error.tool_name, error.credential) == ("fetch_weather", "short-key")
    source = f"secrets file {secrets} ('short-key' or 'SHORT_KEY')"
    assert error.looked_in == (source,)
    assert error.refused is not None
    assert str(error) == (
        f"Tool 'fetch_weather' needs credential 'short-key': its value from {source} is "
        f"shorter than {MIN_SECRET_LENGTH} characters, the least a credential needs: so short "
        "a value turns up by chance in ordinary text, and could be kept out of neither errors "
        "nor answers. Give the whole credential; a value that is not secret (a basic-auth "
        "username) is written in the definition instead (docs/tool-definitions.md, Basic auth)"
    )


def test_the_first_provider_that_has_a_credential_is_judged_not_a_later_one() -> None:
    # A short value first is refused, even when a later provider holds a long one.
    manager = CredentialsManager(
        [MappingProvider({"key": "short"}), MappingProvider({"key": "long-enough-value"})]
    )
    with pytest.raises(
        CredentialError, match=r"the mapping given in code \(key 'key'\) is shorter"
    ):
        manager.resolve("t", ["key"])


def test_the_length_is_counted_in_characters() -> None:
    manager = CredentialsManager.from_mapping({"key": "é" * MIN_SECRET_LENGTH, "k2": "é" * 7})
    assert manager.resolve("t", ["key"]) == {"key": "é" * MIN_SECRET_LENGTH}
    with pytest.raises(CredentialError, match="shorter than 8 characters"):
        manager.resolve("t", ["k2"])  # 14 bytes of UTF-8, but 7 characters
