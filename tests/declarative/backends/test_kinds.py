"""The backend seam: kinds from a table, one added from a package outside agentkit."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import jsonschema
import pytest
import yaml

from agentkit import DefinitionError, ToolExecutor, ToolRegistry, load_tools
from agentkit.declarative import definition_schema
from agentkit.declarative.backends import (
    BackendContext,
    backend_kinds,
    find_backend,
    register_backend,
    unregister_backend,
)
from agentkit.declarative.backends.http.backend import HttpBackend
from agentkit.toolerrors import PluginError
from tests.declarative.conftest import WriteFile
from tests.support.plugins import PLUGIN_FOLDER, example_plugin, on_path

ECHO_TOOL = """\
name: shout
version: 1.0.0
input_schema:
  parameters:
    - {{name: text, type: string}}
output_schema:
  parameters:
    - {{name: text, type: string}}
backend:
  {backend}
"""


def load_one(write: WriteFile, backend: str) -> Any:
    registry = ToolRegistry()
    load_tools(write(ECHO_TOOL.format(backend=backend)), registry=registry)
    (tool,) = list(registry)
    return tool


def problems_of(write: WriteFile, backend: str) -> str:
    with pytest.raises(DefinitionError) as info:
        load_one(write, backend)
    return str(info.value)


@pytest.fixture
def plugin() -> Iterator[None]:
    with example_plugin():
        yield


def test_the_built_in_kinds_come_from_the_table() -> None:
    assert backend_kinds()[:2] == ("http", "python")
    assert find_backend("nope") is None


@pytest.mark.usefixtures("plugin")
def test_a_kind_from_a_package_outside_agentkit_loads_and_runs(write: WriteFile) -> None:
    assert "echo" in backend_kinds()
    tool = load_one(write, 'echo: {prefix: "> "}')
    assert tool.backend_kind == "echo"
    assert tool.annotations == {"read_only": True}  # the kind's default annotations
    assert tool.definition.to_dict()["backend"] == {"echo": {"prefix": "> "}}
    result = ToolExecutor().execute(tool, {"text": "hello"})
    assert result.output == {"text": "> hello"}


@pytest.mark.usefixtures("plugin")
def test_the_files_annotations_win_over_the_kinds(write: WriteFile) -> None:
    text = ECHO_TOOL.format(backend="echo: {}") + "annotations: {read_only: false}\n"
    registry = ToolRegistry()
    load_tools(write(text), registry=registry)
    (tool,) = list(registry)
    assert tool.annotations == {"read_only": False}


@pytest.mark.usefixtures("plugin")
def test_a_plugin_kind_reports_its_problems_at_their_place(write: WriteFile) -> None:
    message = problems_of(write, "echo: {prefix: 3, loud: true}")
    assert "tool.yaml:10:18: backend.echo.prefix: expected a string" in message
    assert "backend.echo.loud: unknown key 'loud'; an echo backend takes: prefix" in message


@pytest.mark.parametrize(
    ("kind", "problem"),
    [
        pytest.param(
            "missing",
            "agentkit.backends 'missing' (entry point missing = "
            "agentkit_example_plugin:NoSuchBackend from agentkit-example-plugin 0.1.0): "
            "loading it raised AttributeError",
            id="import-fails",
        ),
        pytest.param(
            "misnamed",
            "agentkit.backends 'misnamed' (entry point misnamed = "
            "agentkit_example_plugin:EchoBackend from agentkit-example-plugin 0.1.0): "
            "the class's kind is 'echo', not 'misnamed'; they must be the same",
            id="wrong-kind",
        ),
    ],
)
@pytest.mark.usefixtures("plugin")
def test_a_broken_entry_point_is_a_located_problem_naming_it(
    write: WriteFile, kind: str, problem: str
) -> None:
    message = problems_of(write, f"{kind}: {{}}")
    assert f"tool.yaml:10:{len(kind) + 5}: backend.{kind}: {problem}" in message


def test_a_plugin_kind_is_unknown_once_its_package_is_gone(write: WriteFile) -> None:
    with example_plugin():
        load_one(write, "echo: {}")
    assert "echo" not in backend_kinds()
    message = problems_of(write, "echo: {}")
    assert "backend.echo: unknown key 'echo'; backend takes: http, python" in message


def test_an_unknown_kind_gets_a_hint(write: WriteFile) -> None:
    message = problems_of(write, "htp: {url: https://example.com}")
    assert "unknown key 'htp' (did you mean 'http'?); backend takes: http, python" in message


def dist_info(folder: Path, entry_points: str) -> Path:
    info = folder / "agentkit_rogue-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: agentkit-rogue\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    return folder


def test_an_entry_point_cannot_replace_a_built_in_kind(write: WriteFile, tmp_path: Path) -> None:
    folder = dist_info(tmp_path / "site", "[agentkit.backends]\nhttp = agentkit_rogue:Http\n")
    with on_path(folder):
        tool = load_one(write, "http: {url: 'https://example.com'}")
        assert "http" in backend_kinds()
    # The built-in kind runs; the rogue entry point is never imported.
    assert isinstance(tool.BACKEND, HttpBackend)
    assert "agentkit_rogue" not in sys.modules


def test_two_packages_may_not_declare_one_kind(write: WriteFile, tmp_path: Path) -> None:
    folder = dist_info(tmp_path / "site", "[agentkit.backends]\necho = agentkit_rogue:Echo\n")
    with example_plugin(), on_path(folder):
        message = problems_of(write, "echo: {}")
    assert "'echo' (entry point echo = " in message
    assert "the name is also declared by entry point echo = " in message
    assert "uninstall one of them" in message


class Constant:
    """A backend kind registered in code: a constant output."""

    kind: ClassVar[str] = "constant"

    def __init__(self, value: str) -> None:
        self.value = value

    @classmethod
    def parse(cls, raw: Any, context: BackendContext) -> Constant | None:
        if not isinstance(raw, str):
            context.problem("expected the text to return")
            return None
        return cls(raw)

    def call(self, inputs: dict[str, Any], credentials: Mapping[str, str]) -> dict[str, Any]:
        return {"text": self.value}

    @property
    def default_annotations(self) -> Mapping[str, Any]:
        return {}


@pytest.fixture
def constant() -> Iterator[None]:
    register_backend(Constant)
    yield
    unregister_backend("constant")


@pytest.mark.usefixtures("constant")
def test_a_kind_registered_in_code(write: WriteFile) -> None:
    tool = load_one(write, "constant: fixed")
    assert ToolExecutor().execute(tool, {"text": "x"}).output == {"text": "fixed"}
    assert "tool.yaml:10:13: backend.constant: expected the text to return" in problems_of(
        write, "constant: [1]"
    )


@pytest.mark.usefixtures("constant")
def test_a_taken_kind_is_refused_unless_replaced() -> None:
    with pytest.raises(
        PluginError,
        match=r"agentkit.backends 'constant' \(register_backend\(.*Constant\)\): the name is "
        r"taken by register_backend\(.*Constant\); choose another name, or pass replace=True",
    ):
        register_backend(Constant)
    register_backend(Constant, replace=True)


@pytest.mark.parametrize(
    ("attributes", "problem"),
    [
        pytest.param({"kind": "class"}, "'class' cannot name a backend kind", id="reserved"),
        pytest.param({"kind": "two words"}, "'two words' cannot name a backend kind", id="name"),
        pytest.param({"call": None}, "has no 'call' method", id="no-call"),
        pytest.param({"parse": None}, "has no 'parse' method", id="no-parse"),
    ],
)
def test_a_class_breaking_the_rules_is_refused(attributes: dict[str, Any], problem: str) -> None:
    broken: Any = type("Broken", (Constant,), attributes)
    with pytest.raises(PluginError, match=problem):
        register_backend(broken)
    assert broken.kind == "constant" or broken.kind not in backend_kinds()


def test_the_example_package_is_not_installed() -> None:
    # It is found only through tests.support.plugins, which puts it on the path for one test.
    assert not any(Path(entry) == PLUGIN_FOLDER for entry in sys.path)


def test_loading_a_built_in_kind_reads_no_entry_point() -> None:
    # Reading entry points scans every installed package; a built-in kind never needs it.
    code = (
        "import sys; from agentkit import load_tools; load_tools('tools.d/fetch_weather.yaml'); "
        "print('importlib.metadata' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"


@pytest.mark.usefixtures("plugin")
def test_the_definition_schema_shows_editors_a_kind_from_a_package() -> None:
    schema = definition_schema()
    kinds = schema["properties"]["backend"]["properties"]
    assert kinds["echo"]["properties"] == {
        "prefix": {"type": "string", "description": "Put before each input."}
    }
    validator = jsonschema.Draft202012Validator(schema)
    good = yaml.safe_load(ECHO_TOOL.format(backend='echo: {prefix: "> "}'))
    bad = yaml.safe_load(ECHO_TOOL.format(backend="echo: {prefix: 3}"))
    assert not list(validator.iter_errors(good))
    assert [error.json_path for error in validator.iter_errors(bad)] == ["$.backend.echo.prefix"]
    # A kind whose entry point cannot be used is listed, saying why, and takes any value.
    assert kinds["missing"]["description"].startswith("Backend kind 'missing', unusable here: ")
    assert "loading it raised AttributeError" in kinds["missing"]["description"]
    assert set(kinds["missing"]) == {"description"}


@pytest.mark.usefixtures("constant")
def test_a_kind_without_a_config_schema_takes_any_value_in_the_definition_schema() -> None:
    kinds = definition_schema()["properties"]["backend"]["properties"]
    assert set(kinds) == {"http", "python", "constant"}
    assert kinds["constant"] == {
        "description": f"Backend kind 'constant' ({Constant.__module__}.{Constant.__qualname__})."
    }


def test_the_definition_schema_has_only_the_built_in_kinds_when_nothing_is_added() -> None:
    assert set(definition_schema()["properties"]["backend"]["properties"]) == {"http", "python"}
