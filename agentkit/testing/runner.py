"""Running tools' examples: through a ``ToolExecutor``, an HTTP tool against its recordings.

``run_examples(tools)`` runs every example of every tool and returns an
``ExampleOutcome`` for each:

- an HTTP tool's session gets a ``ReplayAdapter`` for the call: its requests are
  answered from the example's recording, nothing goes to the network, and its
  credentials are placeholders (``recordings.placeholder``), never values (none at
  all for an example that expects ``fails: credential``);
- with ``record=True`` it gets a ``RecordingAdapter`` instead: the call goes to the
  real API with real credentials, and the recording is written (or refused, when a
  credential would be in it), said ``new``, ``changed`` or ``unchanged``;
- any other tool (a Python backend, a hand-written class) is simply called: its own
  outbound calls are its author's to fake.

Either way the answer is then held against the example (``check_answer``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, final

from agentkit.credentials import CredentialsManager
from agentkit.declarative.backends.http.backend import HttpBackend
from agentkit.declarative.definition import ToolDefinition
from agentkit.ratelimits import LocalStore, use_store
from agentkit.testing.adapters import RecordingAdapter, ReplayAdapter
from agentkit.testing.recordings import (
    Recording,
    SecretInRecordingError,
    placeholders,
    recording_path,
    refuse_secrets,
)
from agentkit.tool import Tool
from agentkit.toolerrors import CredentialError, UnknownToolError
from agentkit.toolexamples import ToolExample, check_answer, examples_of
from agentkit.toolexecutor import ToolExecutor

__all__ = [
    "CHANGED",
    "NEW",
    "UNCHANGED",
    "ExampleOutcome",
    "collect_examples",
    "run_example",
    "run_examples",
    "summary_line",
]

NEW: Final = "new"
CHANGED: Final = "changed"
UNCHANGED: Final = "unchanged"
REMOVED: Final = "removed"
_PREFIXES: Final = ("http://", "https://")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ExampleOutcome:
    """How one example went: passed or not, why not (with a diff), and what was recorded."""

    tool: str
    example: str
    source: str
    passed: bool
    reason: str = ""
    duration: float = 0.0
    #: With ``record``: ``new``, ``changed``, ``unchanged`` or ``removed`` (no request
    #: made any more); None when nothing was recorded (not an HTTP tool, or replay).
    recorded: str | None = None
    recording: str | None = None

    @property
    def test_id(self) -> str:
        return f"{self.tool}::{self.example}"


def collect_examples(
    tools: Iterable[Tool], tool_name: str | None = None
) -> list[tuple[Tool, ToolExample]]:
    """Every (tool, example) pair, in the tools' order; only ``tool_name``'s when given
    (``UnknownToolError`` naming the tools when there is no such tool)."""
    tools = list(tools)
    if tool_name is not None:
        chosen = [tool for tool in tools if tool.name == tool_name]
        if not chosen:
            raise UnknownToolError(tool_name, [tool.name for tool in tools])
        tools = chosen
    return [(tool, example) for tool in tools for example in _located(tool)]


def _located(tool: Tool) -> tuple[ToolExample, ...]:
    """``examples_of(tool)``, each with its own ``path:line`` when a definition has it."""
    examples = examples_of(tool)
    definition = tool.definition
    if not isinstance(definition, ToolDefinition) or not examples:
        return examples
    written = definition.raw.get("examples")
    positions = getattr(written, "positions", None)
    if not positions or len(positions) != len(examples):
        return examples
    return tuple(
        replace(example, source=f"{definition.path}:{line}")
        for example, (line, _) in zip(examples, positions, strict=True)
    )


def _http_backend(tool: Tool) -> HttpBackend | None:
    backend = getattr(type(tool), "BACKEND", None)
    return backend if isinstance(backend, HttpBackend) else None


def run_example(
    tool: Tool,
    example: ToolExample,
    *,
    record: bool = False,
    credentials: CredentialsManager | None = None,
) -> ExampleOutcome:
    """Run ``example`` of ``tool`` (see the module); ``credentials``: where ``record``
    finds the real values (default: the environment)."""
    started = time.perf_counter()
    backend = _http_backend(tool)
    definition = tool.definition
    path = (
        recording_path(definition.path, tool.name, example.name)
        if backend is not None and isinstance(definition, ToolDefinition)
        else None
    )
    # An example of a missing credential gets none; the others get every one they name.
    names = () if example.fails == "credential" else tool.credential_names
    values: Mapping[str, str]
    if record:
        manager = credentials or CredentialsManager.from_env()
        try:
            values = manager.resolve(tool.name, names) if names else {}
        except CredentialError as exc:
            return _outcome(tool, example, started, reason=f"cannot record: {exc}")
    else:
        values = placeholders(names)
    adapter: ReplayAdapter | RecordingAdapter | None = None
    if backend is not None and path is not None:
        session = backend.session
        saved = dict(session.adapters)
        if record:
            assert isinstance(definition, ToolDefinition)
            adapter = RecordingAdapter(
                session.get_adapter("https://"), values, mentioned=definition.text
            )
        else:
            adapter = _replay_adapter(path)
        for prefix in _PREFIXES:
            session.mount(prefix, adapter)
        try:
            result = _call(tool, example, values)
        finally:
            session.adapters.clear()
            session.adapters.update(saved)
    else:
        result = _call(tool, example, values)
    recorded = None
    if isinstance(adapter, ReplayAdapter):
        if adapter.mismatch:
            return _outcome(tool, example, started, reason=adapter.mismatch, path=path)
        if adapter.used < adapter.size:
            return _outcome(
                tool,
                example,
                started,
                reason=f"the call sent {adapter.used} request(s); the recording ({path}) has "
                f"{adapter.size}: the rest were not sent. Record it again with "
                "`agentkit test --record`",
                path=path,
            )
    elif isinstance(adapter, RecordingAdapter) and path is not None:
        try:
            recorded = _save(tool, example, adapter, values, path)
        except SecretInRecordingError as exc:
            return _outcome(tool, example, started, reason=str(exc), path=path)
    problem = check_answer(example, result)
    return _outcome(tool, example, started, reason=problem or "", path=path, recorded=recorded)


def _replay_adapter(path: Path) -> ReplayAdapter:
    if not path.exists():
        return ReplayAdapter((), where=f"{path} is not made yet")
    return ReplayAdapter(Recording.load(path).exchanges, where=str(path))


def _call(tool: Tool, example: ToolExample, values: Mapping[str, str]) -> Any:
    # Each example runs as if alone: limits counted and answers kept in a store of its
    # own, so that no example is refused, or answered from the cache, for another's call.
    before = use_store(LocalStore())
    try:
        with ToolExecutor(credentials=dict(values)) as executor:
            return executor.execute(tool, dict(example.inputs), raise_on_failure=False)
    finally:
        use_store(before)


def _save(
    tool: Tool,
    example: ToolExample,
    adapter: RecordingAdapter,
    values: Mapping[str, str],
    path: Path,
) -> str | None:
    """Write the recording (refusing one that would hold a secret); what changed."""
    for position, exchange in enumerate(adapter.exchanges):
        refuse_secrets(
            exchange,
            values,
            tool=tool.name,
            example=example.name,
            position=position,
            derived=adapter.derived,
        )
    before = path.read_text(encoding="utf-8") if path.exists() else None
    if not adapter.exchanges:
        if before is None:
            return None
        path.unlink()
        return REMOVED
    text = Recording(
        tool=tool.name,
        version=tool.version,
        example=example.name,
        exchanges=tuple(adapter.exchanges),
    ).to_yaml()
    if before == text:
        return UNCHANGED
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return NEW if before is None else CHANGED


def _outcome(
    tool: Tool,
    example: ToolExample,
    started: float,
    *,
    reason: str,
    path: Path | None = None,
    recorded: str | None = None,
) -> ExampleOutcome:
    return ExampleOutcome(
        tool=tool.name,
        example=example.name,
        source=example.source or tool.source,
        passed=not reason,
        reason=reason,
        duration=time.perf_counter() - started,
        recorded=recorded,
        recording=str(path) if path is not None else None,
    )


def run_examples(
    tools: Iterable[Tool],
    *,
    tool_name: str | None = None,
    record: bool = False,
    credentials: CredentialsManager | None = None,
) -> list[ExampleOutcome]:
    """``run_example`` for every example of ``tools`` (``tool_name``'s only, if given)."""
    return [
        run_example(tool, example, record=record, credentials=credentials)
        for tool, example in collect_examples(tools, tool_name)
    ]


def summary_line(outcomes: Sequence[ExampleOutcome], seconds: float, *, width: int = 70) -> str:
    """pytest's closing line: ``==== 5 passed, 1 failed in 0.12s ====``."""
    failed = sum(1 for outcome in outcomes if not outcome.passed)
    passed = len(outcomes) - failed
    counts = [f"{passed} passed"] if passed else []
    counts += [f"{failed} failed"] if failed else []
    text = f" {', '.join(counts) or 'no examples ran'} in {seconds:.2f}s "
    side = max(width - len(text), 8) // 2
    return f"{'=' * side}{text}{'=' * side}"
