"""Running examples offline: replay opens no socket and needs no credential; a changed
request or answer fails with a diff; recording keeps every credential out."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from agentkit.credentials import CredentialsManager
from agentkit.declarative import load_tools
from agentkit.testing.adapters import AnsweringAdapter, build_response
from agentkit.testing.recordings import recording_path
from agentkit.testing.runner import ExampleOutcome, collect_examples, run_example, summary_line
from agentkit.tool import Tool

KEY = "wk-5b8e1f0c7a9d4e2b"
PASSWORD = "pw-c0ffee-7a9d4e2b51"

DEFINITION = """\
name: weather
version: 1.0.0
credentials: [weather-key]
input_schema: {parameters: [{name: city, type: string}]}
output_schema: {parameters: [{name: temperature, type: float}]}
backend:
  http:
    url: https://api.example.test/weather
    query: {q: "{{ inputs.city }}"}
    auth: {api_key: {credential: weather-key, in: header, name: X-Api-Key}}
    output: {temperature: "{{ response.json.main.temp }}"}
examples:
  - name: oslo
    inputs: {city: Oslo}
    output: {temperature: 3.5}
"""

REPLY: dict[str, Any] = {"main": {"temp": 3.5}}


class Api(AnsweringAdapter):
    """The API, in process: ``answer`` makes each reply; every request is kept."""

    def __init__(
        self, reply: Callable[[requests.PreparedRequest], tuple[int, Any, dict[str, str]]]
    ) -> None:
        super().__init__()
        self.reply = reply
        self.requests: list[requests.PreparedRequest] = []

    def answer(
        self, request: requests.PreparedRequest, options: dict[str, Any]
    ) -> requests.Response:
        self.requests.append(request)
        status, data, headers = self.reply(request)
        headers = {"Content-Type": "application/json", **headers}
        return build_response(request, status, headers, json.dumps(data).encode())


def tool_in(folder: Path, text: str = DEFINITION) -> Tool:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "weather.yaml").write_text(text)
    (cls,) = load_tools(folder)
    return cls()


def record(tool: Tool, api: Api, credentials: dict[str, str]) -> ExampleOutcome:
    session = type(tool).BACKEND.session  # type: ignore[attr-defined]
    for prefix in ("http://", "https://"):
        session.mount(prefix, api)
    ((_, example),) = collect_examples([tool])
    return run_example(
        tool, example, record=True, credentials=CredentialsManager.from_mapping(credentials)
    )


def replay(tool: Tool) -> ExampleOutcome:
    ((_, example),) = collect_examples([tool])
    return run_example(tool, example)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Any attempt to open a connection fails the test (and is kept, to assert on)."""
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise AssertionError(f"replay opened a connection: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.delenv("WEATHER_KEY", raising=False)
    yield attempts
    assert attempts == []


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, Path]:
    """A tool folder whose example is recorded; (folder, recording)."""
    folder = tmp_path / "tools"
    outcome = record(tool_in(folder), Api(lambda _: (200, REPLY, {})), {"weather-key": KEY})
    assert outcome.passed, outcome.reason
    assert outcome.recorded == "new"
    return folder, recording_path(folder / "weather.yaml", "weather", "oslo")


def test_a_recording_holds_placeholders_and_replays_offline_without_credentials(
    recorded: tuple[Path, Path], no_network: list[Any]
) -> None:
    folder, path = recorded
    text = path.read_text()
    assert KEY not in text
    data = yaml.safe_load(text)
    (exchange,) = data["exchanges"]
    assert exchange["request"] == {
        "method": "GET",
        "url": "https://api.example.test/weather?q=Oslo",
        "headers": {"X-Api-Key": "agentkit-placeholder-weather-key"},
    }
    assert exchange["response"] == {
        "status": 200,
        "headers": {"Content-Type": "application/json"},
        "json": REPLY,
    }
    outcome = replay(tool_in(folder))
    assert outcome.passed, outcome.reason
    assert outcome.recorded is None


def test_recording_again_says_unchanged_or_changed(recorded: tuple[Path, Path]) -> None:
    folder, path = recorded
    again = record(tool_in(folder), Api(lambda _: (200, REPLY, {})), {"weather-key": KEY})
    assert again.recorded == "unchanged"
    warmer = {"main": {"temp": 4.0}}
    changed = record(tool_in(folder), Api(lambda _: (200, warmer, {})), {"weather-key": KEY})
    assert changed.recorded == "changed"
    assert not changed.passed  # the example still expects 3.5
    assert '+    "temperature": 4.0' in changed.reason
    assert yaml.safe_load(path.read_text())["exchanges"][0]["response"]["json"] == warmer


def test_a_request_that_no_longer_matches_fails_with_a_diff_of_the_two(
    recorded: tuple[Path, Path], no_network: list[Any]
) -> None:
    folder, path = recorded
    changed = DEFINITION.replace(
        'query: {q: "{{ inputs.city }}"}', 'query: {city: "{{ inputs.city }}", units: metric}'
    )
    outcome = replay(tool_in(folder, changed))
    assert not outcome.passed
    assert f"request 1 differs from its recording ({path}):" in outcome.reason
    lines = outcome.reason.splitlines()
    assert '-  "url": "https://api.example.test/weather?q=Oslo"' in lines
    assert '+  "url": "https://api.example.test/weather?city=Oslo&units=metric"' in lines
    assert '   "method": "GET",' in lines  # what is the same is shown, for context


def test_an_answer_that_no_longer_matches_fails_with_a_diff_of_the_two(
    recorded: tuple[Path, Path], no_network: list[Any]
) -> None:
    folder, _ = recorded
    changed = DEFINITION.replace("output: {temperature: 3.5}", "output: {temperature: 3.0}")
    outcome = replay(tool_in(folder, changed))
    assert not outcome.passed
    assert outcome.reason.startswith("the output differs:\n--- expected\n+++ got")
    assert '-    "temperature": 3.0' in outcome.reason.splitlines()
    assert '+    "temperature": 3.5' in outcome.reason.splitlines()


def test_an_example_without_its_recording_says_how_to_make_it(
    tmp_path: Path, no_network: list[Any]
) -> None:
    outcome = replay(tool_in(tmp_path))
    assert not outcome.passed
    assert "request 1 is not in the recording (" in outcome.reason
    assert (
        "oslo.yaml is not made yet): GET https://api.example.test/weather?q=Oslo" in outcome.reason
    )
    assert "agentkit test --record" in outcome.reason


def test_a_request_the_recording_has_but_the_call_no_longer_makes_fails(
    recorded: tuple[Path, Path], no_network: list[Any]
) -> None:
    folder, path = recorded
    data = yaml.safe_load(path.read_text())
    data["exchanges"].append(data["exchanges"][0])
    path.write_text(yaml.safe_dump(data))
    outcome = replay(tool_in(folder))
    assert not outcome.passed
    assert "the call sent 1 request(s); the recording" in outcome.reason
    assert "has 2: the rest were not sent" in outcome.reason


def test_a_broken_recording_is_named(recorded: tuple[Path, Path]) -> None:
    from agentkit.toolerrors import SemanticError

    folder, path = recorded
    path.write_text("tool: weather\nexchanges: {a: 1}\n")
    with pytest.raises(
        SemanticError, match=r"oslo\.yaml: not a recording: 'exchanges' must be a list"
    ):
        replay(tool_in(folder))


@pytest.mark.parametrize(
    ("reply", "where"),
    [
        pytest.param(
            lambda r: (200, {"main": {"temp": 1.0}, "echo": r.headers["X-Api-Key"]}, {}),
            "exchanges[0].response.json.echo",
            id="body-echo",
        ),
        pytest.param(
            lambda r: (200, REPLY, {"Location": f"/x?k={r.headers['X-Api-Key']}"}),
            "exchanges[0].response.headers.Location",
            id="header-echo",
        ),
        pytest.param(
            lambda r: (200, {"main": {"temp": 1.0}, "k": r.headers["X-Api-Key"].upper()}),
            "exchanges[0].response.json.k",
            id="other-case",
        ),
        pytest.param(
            lambda r: (
                200,
                {
                    "main": {"temp": 1.0},
                    "k": base64.b64encode(r.headers["X-Api-Key"].encode()).decode(),
                },
                {},
            ),
            "exchanges[0].response.json.k",
            id="base64",
        ),
    ],
)
def test_a_recording_that_would_hold_a_credential_is_refused(
    tmp_path: Path,
    reply: Callable[[requests.PreparedRequest], tuple[int, Any, dict[str, str]]],
    where: str,
) -> None:
    def answer(request: requests.PreparedRequest) -> tuple[int, Any, dict[str, str]]:
        status, data, *headers = reply(request)
        return status, data, headers[0] if headers else {}

    outcome = record(tool_in(tmp_path), Api(answer), {"weather-key": KEY})
    assert not outcome.passed
    assert outcome.reason.startswith(
        f"Tool 'weather', example 'oslo': the recording was not written: the value of "
        f"credential 'weather-key' is at {where}"
    )
    assert KEY not in outcome.reason
    assert not recording_path(tmp_path / "weather.yaml", "weather", "oslo").exists()


def test_a_basic_auth_pair_is_recorded_as_placeholders_and_replays(
    tmp_path: Path, no_network: list[Any]
) -> None:
    text = DEFINITION.replace(
        "credentials: [weather-key]", "credentials: [weather-user, weather-key]"
    ).replace(
        "auth: {api_key: {credential: weather-key, in: header, name: X-Api-Key}}",
        "auth: {basic: {username: weather-user, password: weather-key}}",
    )
    api = Api(lambda _: (200, REPLY, {}))
    socket_free = no_network  # recording here goes to the in-process Api, not a socket
    outcome = record(
        tool_in(tmp_path, text), api, {"weather-user": "user-8d1f3a2c", "weather-key": PASSWORD}
    )
    assert outcome.passed, outcome.reason
    sent = api.requests[0].headers["Authorization"]
    assert base64.b64decode(sent[6:]).decode() == f"user-8d1f3a2c:{PASSWORD}"
    saved = yaml.safe_load(recording_path(tmp_path / "weather.yaml", "weather", "oslo").read_text())
    stored = saved["exchanges"][0]["request"]["headers"]["Authorization"]
    assert base64.b64decode(stored[6:]).decode() == (
        "agentkit-placeholder-weather-user:agentkit-placeholder-weather-key"
    )
    assert replay(tool_in(tmp_path, text)).passed
    assert socket_free == []


def test_recording_without_the_credential_says_which(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WEATHER_KEY", raising=False)
    outcome = record(tool_in(tmp_path), Api(lambda _: (200, REPLY, {})), {})
    assert not outcome.passed
    assert outcome.reason.startswith("cannot record: Tool 'weather' needs credential 'weather-key'")


def test_the_summary_line_has_pytests_closing_form() -> None:
    passed = ExampleOutcome(tool="t", example="a", source="f:1", passed=True)
    failed = ExampleOutcome(tool="t", example="b", source="f:2", passed=False, reason="x")
    assert summary_line([passed] * 5 + [failed], 0.123) == (
        "==================== 5 passed, 1 failed in 0.12s ===================="
    )
    assert summary_line([passed], 1.0).strip("=") == " 1 passed in 1.00s "
    assert summary_line([], 0.0).strip("=") == " no examples ran in 0.00s "


def test_an_example_of_a_missing_credential_is_run_without_any(
    tmp_path: Path, no_network: list[Any]
) -> None:
    text = DEFINITION.replace(
        "    output: {temperature: 3.5}\n",
        "    output: {temperature: 3.5}\n  - name: no_key\n    inputs: {city: Oslo}\n    fails: credential\n",
    )
    tool = tool_in(tmp_path, text)
    outcomes = [run_example(tool, example) for _, example in collect_examples([tool])]
    assert [(o.example, o.passed) for o in outcomes] == [("oslo", False), ("no_key", True)]


@pytest.mark.parametrize(
    ("extra", "where"),
    [
        pytest.param(
            "headers: {X-Sig: \"{{ credentials['weather-key'] | upper }}\"}",
            "exchanges[0].request.headers.X-Sig",
            id="header",
        ),
        pytest.param(
            "method: POST\n    json: {sig: \"{{ credentials['weather-key'] | upper }}\"}",
            "exchanges[0].request.json.sig",
            id="body",
        ),
    ],
)
def test_a_request_holding_a_credential_in_another_spelling_is_refused(
    tmp_path: Path, extra: str, where: str
) -> None:
    text = DEFINITION.replace(
        'query: {q: "{{ inputs.city }}"}', 'query: {q: "{{ inputs.city }}"}\n    ' + extra
    )
    outcome = record(tool_in(tmp_path, text), Api(lambda _: (200, REPLY, {})), {"weather-key": KEY})
    recorded = recording_path(tmp_path / "weather.yaml", "weather", "oslo")
    assert not outcome.passed
    assert f"is at {where}, and a recording never holds a credential" in outcome.reason, (
        outcome.reason
    )
    assert KEY not in outcome.reason
    assert KEY.upper() not in outcome.reason
    assert not recorded.exists()


def test_a_hand_written_tools_examples_run_by_calling_it() -> None:
    from agentkit.testing import run_examples
    from tests.test_toolexamples import Documented

    outcomes = run_examples([Documented()])
    assert [(o.test_id, o.passed, o.recording) for o in outcomes] == [
        ("add_documented::small", True, None),
        ("add_documented::text", True, None),
    ]


def test_each_example_runs_alone_whatever_the_tools_limits_and_cache(tmp_path: Path) -> None:
    # One call an hour and answers kept an hour: were the examples to share the process's
    # store, the second would be refused, or answered from the first's call and never
    # recorded.
    limited = (
        DEFINITION.replace(
            "backend:",
            "annotations: {read_only: true}\n"
            "limits: {total: {requests: 1, per: 1h}}\n"
            "cache: {ttl: 1h, scope: shared}\n"
            "backend:",
        )
        + "  - name: oslo_again\n    inputs: {city: Oslo}\n    output: {temperature: 3.5}\n"
    )
    tool = tool_in(tmp_path / "tools", limited)
    api = Api(lambda request: (200, REPLY, {}))
    session = type(tool).BACKEND.session  # type: ignore[attr-defined]
    for prefix in ("http://", "https://"):
        session.mount(prefix, api)
    examples = [example for _, example in collect_examples([tool])]
    assert [example.name for example in examples] == ["oslo", "oslo_again"]
    keys = CredentialsManager.from_mapping({"weather-key": KEY})
    recorded = [run_example(tool, each, record=True, credentials=keys) for each in examples]
    assert [outcome.passed for outcome in recorded] == [True, True], recorded
    assert len(api.requests) == 2  # each example made its own call
    for each in examples:
        assert recording_path(tmp_path / "tools" / "weather.yaml", "weather", each.name).exists()
    replayed = [run_example(tool, each) for each in examples]
    assert [outcome.passed for outcome in replayed] == [True, True], replayed


@pytest.mark.parametrize(
    "key",
    ['wk-quote"d-7a9d4e2b', "wk-back\\slash-7a9d", 'wk-"both\\-7a9d4e2b'],
    ids=["quote", "backslash", "both"],
)
def test_a_credential_in_a_json_body_is_recorded_as_its_placeholder_whatever_it_holds(
    tmp_path: Path, key: str
) -> None:
    # JSON writes '"' and '\\' escaped: the credential is swapped in each string of the
    # body, where it is as sent, not in the body's JSON text.
    text = DEFINITION.replace(
        'query: {q: "{{ inputs.city }}"}',
        'query: {q: "{{ inputs.city }}"}\n    method: POST\n'
        "    json: {key: \"{{ credentials['weather-key'] }}\", nested: [{k: \"{{ credentials['weather-key'] }}\"}]}",
    )
    outcome = record(tool_in(tmp_path, text), Api(lambda _: (200, REPLY, {})), {"weather-key": key})
    assert outcome.passed, outcome.reason
    saved = recording_path(tmp_path / "weather.yaml", "weather", "oslo").read_text()
    assert key not in saved
    body = yaml.safe_load(saved)["exchanges"][0]["request"]["json"]
    assert body == {
        "key": "agentkit-placeholder-weather-key",
        "nested": [{"k": "agentkit-placeholder-weather-key"}],
    }


OAUTH2 = """\
name: weather
version: 1.0.0
credentials: [client-id, client-secret]
input_schema: {parameters: [{name: city, type: string}]}
output_schema: {parameters: [{name: temperature, type: float}]}
backend:
  http:
    url: https://api.example.test/weather
    query: {q: "{{ inputs.city }}"}
    auth: {oauth2: {token_url: "https://api.example.test/token", client_id: client-id, client_secret: client-secret}}
    output: {temperature: "{{ response.json.main.temp }}"}
examples:
  - name: oslo
    inputs: {city: Oslo}
    output: {temperature: 3.5}
"""


def test_a_recording_refused_for_an_oauth2_token_names_it_as_obtained(tmp_path: Path) -> None:
    # The token endpoint's answer is a secret of the call's own, not a credential's
    # value: the refusal says so, naming the credentials it was obtained with.
    def reply(request: requests.PreparedRequest) -> tuple[int, Any, dict[str, str]]:
        if (request.url or "").endswith("/token"):
            return 200, {"access_token": "at-5b8e1f0c7a9d4e2b", "token_type": "Bearer"}, {}
        return 200, REPLY, {}

    credentials = {"client-id": "client-0123456789", "client-secret": "secret-0123456789"}
    outcome = record(tool_in(tmp_path, OAUTH2), Api(reply), credentials)
    assert not outcome.passed
    assert (
        "a secret the call obtained with credential 'client-id', 'client-secret' (an OAuth2 "
        "access token, say) is at exchanges[0]"
    ) in outcome.reason, outcome.reason
    assert "at-5b8e1f0c7a9d4e2b" not in outcome.reason
    assert not recording_path(tmp_path / "weather.yaml", "weather", "oslo").exists()
