"""Putting the example third-party package (tests/plugin_example) on the path, for one test."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentkit.adapters.export import EXPORT_FORMATS
from agentkit.declarative.backends import BACKENDS

PLUGIN_FOLDER = Path(__file__).parent.parent / "plugin_example"
PLUGIN_MODULE = "agentkit_example_plugin"
# What the example package's entry points may leave registered once loaded.
PLUGIN_BACKENDS = ("echo", "misnamed")
PLUGIN_FORMATS = ("names",)


@contextmanager
def on_path(folder: Path) -> Iterator[None]:
    """``folder`` (holding packages and their ``*.dist-info``) importable, its entry points read."""
    sys.path.insert(0, str(folder))
    importlib.invalidate_caches()
    BACKENDS.rescan()
    EXPORT_FORMATS.rescan()
    try:
        yield
    finally:
        sys.path.remove(str(folder))
        importlib.invalidate_caches()
        BACKENDS.rescan()
        EXPORT_FORMATS.rescan()


@contextmanager
def example_plugin() -> Iterator[None]:
    """The example package installed, as far as agentkit can tell; uninstalled afterwards."""
    try:
        with on_path(PLUGIN_FOLDER):
            yield
    finally:
        for kind in PLUGIN_BACKENDS:
            BACKENDS.unregister(kind)
        for name in PLUGIN_FORMATS:
            EXPORT_FORMATS.unregister(name)
        sys.modules.pop(PLUGIN_MODULE, None)
