"""The agent's tool-call path: a provider's tool calls in, executed results and replies out.

The public path of ``agentkit.adapters.dispatch``, where the code lives.
"""

# Every public name of the module, whatever it adds: this path only hands them on.
from agentkit.adapters.dispatch import *  # noqa: F403
from agentkit.adapters.dispatch import __all__ as __all__
