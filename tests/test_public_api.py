"""The public surface: one sorted __all__, every name importable."""

from __future__ import annotations

import subprocess
import sys

import agentkit


def test_all_lists_each_name_once() -> None:
    # Its order is ruff's (RUF022, checked by `make lint`).
    assert len(set(agentkit.__all__)) == len(agentkit.__all__)


def test_every_name_in_all_resolves() -> None:
    for name in agentkit.__all__:
        assert getattr(agentkit, name) is not None, name


def test_all_and_the_lazy_table_agree() -> None:
    assert set(agentkit._LAZY) == set(agentkit.__all__) - {"__version__"}


def test_dir_lists_the_public_names() -> None:
    assert dir(agentkit) == sorted(agentkit.__all__)


def test_importing_agentkit_loads_nothing_heavy() -> None:
    heavy = ("jinja2", "requests", "yaml", "agentkit.toolexecutor", "concurrent.futures")
    code = f"import sys, agentkit; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_async_names_are_public() -> None:
    assert {"AsyncTool", "ToolTimeoutError"} <= set(agentkit.__all__)
    assert issubclass(agentkit.AsyncTool, agentkit.Tool)
    assert issubclass(agentkit.ToolTimeoutError, TimeoutError)


def test_the_executor_loads_asyncio_only_when_an_async_path_runs() -> None:
    # The CLI imports the executor to run a tool; asyncio would add to its start-up.
    code = "import sys, agentkit.toolexecutor; print('asyncio' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_the_error_tree_and_schema_values_are_public() -> None:
    names = {"Checked", "Problem", "UnknownToolError", "ExportError", "HttpCallError"}
    assert names <= set(agentkit.__all__)
    assert issubclass(agentkit.UnknownToolError, KeyError)
    assert agentkit.ToolSchema().check({"x": 1}).problems == (
        agentkit.Problem(path="x", message="Unknown parameter: 'x'"),
    )


def test_the_extension_seams_are_public() -> None:
    names = {"Backend", "BackendContext", "register_backend", "ExportFormat", "register_format"}
    assert names | {"PluginError", "Definition"} <= set(agentkit.__all__)
    assert issubclass(agentkit.PluginError, agentkit.AgentKitError)
    assert agentkit.Tool.DEFINITION is None


def test_loading_the_tables_reads_no_entry_point() -> None:
    # Installed packages are scanned when a plugin name is first looked up, not on import.
    code = (
        "import sys, agentkit.adapters.export, agentkit.declarative.backends; "
        "print('importlib.metadata' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
