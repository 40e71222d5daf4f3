"""Text from a description written so that loading the definitions never substitutes it.

The loader fills ``${VAR}`` from the environment in a few places of a definition
(``agentkit.declarative.environment`` lists them): a source's ``base_url``, the
literal values of ``headers:`` and ``query:``, an OAuth2 ``token_url``, and the
string defaults of input parameters. A description is data from whoever wrote it:
a ``${GITHUB_TOKEN}`` in its server URL or token URL, copied as it is, would be
filled from the operator's environment and sent to the description's host. Every
string the importer takes from a description into one of those places goes
through this module; the ``${SOURCE_...}`` the importer writes itself (the base
URL, and the server variables the operator exposes) are its own code, their
defaults data.

A message (a note, an error, a finding) shows such text through ``shown``: quoted,
its unprintable characters escaped, and clipped.
"""

from __future__ import annotations

import re
from typing import Final

# The loader's own syntax (agentkit/declarative/environment.py): a reference, the
# escape of a literal "${", and the delimiters that make a value a template.
_REFERENCE: Final = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^{}]*)?\}")
_TEMPLATE_DELIMITERS: Final = ("{{", "{%", "{#")
#: How much of the description's text a message shows.
MAX_SHOWN: Final = 60


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


def shown(text: object, limit: int = MAX_SHOWN) -> str:
    """``text`` from the description as a message shows it: quoted, every character
    that is not printable escaped (a line break cannot end a line of the message, a
    terminal escape cannot restyle it), and at most ``limit`` characters (``…`` where
    it is cut)."""
    quoted = repr(str(text))  # repr escapes what str.isprintable says is not printable
    if len(quoted) <= limit:
        return quoted
    return quoted[: limit - 2] + "…" + quoted[-1]
