"""The public surface: one sorted __all__, every name importable."""

from __future__ import annotations

import subprocess
import sys

import agentkit

LAZY = {"DeclarativeTool", "load_tools"}  # resolved on first use; see agentkit.__getattr__


def test_all_lists_each_name_once() -> None:
    # Its order is ruff's (RUF022, checked by `make lint`).
    assert len(set(agentkit.__all__)) == len(agentkit.__all__)


def test_every_name_in_all_resolves() -> None:
    for name in agentkit.__all__:
        assert getattr(agentkit, name) is not None, name


def test_everything_public_is_in_all() -> None:
    public = {
        name
        for name, value in vars(agentkit).items()
        if not name.startswith("_") and type(value).__name__ != "module"
    }
    assert public | LAZY == set(agentkit.__all__) - {"__version__"}


def test_importing_agentkit_leaves_the_yaml_layer_unloaded() -> None:
    code = "import sys, agentkit; print(sorted(m for m in ('jinja2', 'requests', 'yaml') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
