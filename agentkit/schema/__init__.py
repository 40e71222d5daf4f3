"""How a tool's schema is read and checked, behind ``agentkit.toolschema``.

- ``parse``: a schema definition read into parameters, every problem located;
- ``code``: the check of values against them, compiled to Python once per schema;
- ``values``: what both say of a value (its type name, how it is shown).

``ToolSchema`` (``agentkit.toolschema``) is the public face; these modules are its parts.
"""
