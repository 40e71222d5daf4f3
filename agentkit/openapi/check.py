"""Checking a description against the OpenAPI schema, with ``openapi-spec-validator``.

The library is an extra (``pip install agentkit[openapi]``): without it the import
runs unchecked, and says so.
"""

from __future__ import annotations

from typing import Any, Final

from agentkit.openapi.reader import pointer_join, problem
from agentkit.openapi.swagger import ORIGINAL_KEY
from agentkit.toolerrors import DescriptionProblem

#: At most this many findings are reported; a broken description has thousands.
MAX_FINDINGS: Final = 50
_MAX_MESSAGE: Final = 200


def check_description(document: dict[str, Any]) -> list[DescriptionProblem] | None:
    """What the validator finds wrong, located; None when it is not installed."""
    try:
        from openapi_spec_validator import (
            OpenAPIV2SpecValidator,
            OpenAPIV30SpecValidator,
            OpenAPIV31SpecValidator,
        )
    except ImportError:
        return None
    validator: Any
    original = document.get(ORIGINAL_KEY)
    if isinstance(original, dict):  # Swagger 2.0: checked as the user wrote it
        document, validator = original, OpenAPIV2SpecValidator
    elif str(document.get("openapi", "")).startswith("3.1"):
        validator = OpenAPIV31SpecValidator
    else:
        validator = OpenAPIV30SpecValidator
    findings: list[DescriptionProblem] = []
    try:
        for error in validator(document).iter_errors():
            pointer = pointer_join("#", *getattr(error, "path", ()))
            findings.append(problem(pointer, _short(getattr(error, "message", error))))
            if len(findings) >= MAX_FINDINGS:
                break
    # The validator's own failures (a reference it cannot follow, a recursion) are
    # findings too: the import goes on and locates its own problems per operation.
    except Exception as exc:
        findings.append(problem("#", _short(f"the validator stopped: {type(exc).__name__}: {exc}")))
    return findings


def _short(text: object) -> str:
    message = " ".join(str(text).split())
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"
