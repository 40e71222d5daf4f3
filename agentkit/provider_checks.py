"""What each LLM provider would refuse or change in a set of tools, found before a request fails.

The public path of ``agentkit.adapters.provider_checks``, where the code lives.
"""

# Every public name of the module, whatever it adds: this path only hands them on.
from agentkit.adapters.provider_checks import *  # noqa: F403
from agentkit.adapters.provider_checks import __all__ as __all__
