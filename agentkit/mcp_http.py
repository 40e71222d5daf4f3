"""Deprecated: the names 0.1.0 documented here live in ``agentkit.mcp`` now.

``agentkit.mcp_http.build_app``, ``HttpOptions``, ``StaticTokens``, ``rebinding_refusal``
and ``serve_http`` still import from here, with a ``DeprecationWarning``; this module
goes in the next minor release. Import them from ``agentkit.mcp`` (``serve`` replaces
``serve_http``).
"""

from __future__ import annotations

import warnings

from agentkit.mcp.http_app import build_app
from agentkit.mcp.http_security import StaticTokens, rebinding_refusal
from agentkit.mcp.http_serving import serve_http
from agentkit.mcp.options import HttpOptions

__all__ = ["HttpOptions", "StaticTokens", "build_app", "rebinding_refusal", "serve_http"]

warnings.warn(
    "agentkit.mcp_http is deprecated: import build_app, HttpOptions, StaticTokens and "
    "rebinding_refusal from agentkit.mcp, and serve over HTTP with agentkit.mcp.serve",
    DeprecationWarning,
    stacklevel=2,
)
