"""Tool definitions in the shapes LLM providers expect.

The public path of ``agentkit.adapters.export``, where the code lives.
"""

# Every public name of the module, whatever it adds: this path only hands them on.
from agentkit.adapters.export import *  # noqa: F403
from agentkit.adapters.export import __all__ as __all__
