"""The public surface: one sorted __all__, every name importable."""

from __future__ import annotations

import agentkit


def test_all_is_sorted_and_complete() -> None:
    names = agentkit.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), n)) or names == sorted(names)
    for name in names:
        assert hasattr(agentkit, name), name


def test_everything_public_is_in_all() -> None:
    public = {name for name in vars(agentkit) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(agentkit, name)).__name__ == "module"}
    assert public - modules - {"annotations"} == set(agentkit.__all__) - {"__version__"}
