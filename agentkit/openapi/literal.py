"""Text from a description written so that loading the definitions never substitutes it.

The loader fills ``${VAR}`` from the environment in a few places of a definition
(``agentkit.declarative.environment`` lists them): a source's ``base_url``, the
literal values of ``headers:`` and ``query:``, an OAuth2 ``token_url``, and the
string defaults of input parameters. A description is data from whoever wrote it:
a ``${GITHUB_TOKEN}`` in its server URL or token URL, copied as it is, would be
filled from the operator's environment and sent to the description's host. Every
string the importer takes from a description into one of those places goes
through this module; the ``${SOURCE_VAR:-default}`` the importer writes itself
(the server variables) are its own code, their defaults data.
"""

from __future__ import annotations

import re
from typing import Final

# The loader's own syntax (agentkit/declarative/environment.py): a reference, the
# escape of a literal "${", and the delimiters that make a value a template.
_REFERENCE: Final = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^{}]*)?\}")
_TEMPLATE_DELIMITERS: Final = ("{{", "{%", "{#")


def literal(text: str) -> str | None:
    """What to write for ``text`` where ``${VAR}`` is substituted, so that the value
    loaded is ``text`` itself; None when no spelling loads as ``text``.

    ``${`` is written ``$${``. A value that is also a template (``{{``) is never
    substituted nor unescaped: it is written as it is unless it holds a reference,
    which the loader refuses in a template whatever is done (None).
    """
    if "${" not in text:
        return text
    if any(delimiter in text for delimiter in _TEMPLATE_DELIMITERS):
        return None if _REFERENCE.search(text.replace("$${", "")) else text
    return text.replace("${", "$${")


def url_text(text: str) -> str:
    """``text``, part of a URL from the description, with ``{`` and ``}`` percent-encoded.

    A ``base_url`` takes no braces, and a ``${VAR:-default}``'s default none either;
    encoded, they are what a client sends for them, and no ``${`` is left to substitute.
    """
    return text.replace("{", "%7B").replace("}", "%7D")
