"""Comparing two sets of tool definitions, and checking each version bump.

The public path of ``agentkit.adapters.diff``, where the code lives.
"""

# Every public name of the module, whatever it adds: this path only hands them on.
from agentkit.adapters.diff import *  # noqa: F403
from agentkit.adapters.diff import __all__ as __all__
