"""The adapters: agentkit's tools in the shapes other systems speak.

``export`` writes tools in each LLM provider's format, ``provider_checks`` says what a
provider would refuse or change in an export, ``dispatch`` runs a provider's tool calls
through the executor and answers in its format, and ``diff`` says what changed between
two sets of tools. They use the core only; their public paths are also
``agentkit.export``, ``agentkit.dispatch``, ``agentkit.diff`` and ``agentkit.provider_checks``.
"""
