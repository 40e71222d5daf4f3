"""Import an OpenAPI 3.0 / 3.1 description as reviewable tool definitions.

``import_openapi(spec, source=..., out=...)`` writes one source file (``servers``
as the base URL, ``securitySchemes`` as auth) and one definition file per
operation, each an ordinary definition that ``agentkit validate`` accepts.
"""

from agentkit.openapi.importer import ImportReport, Renamed, Selection, Skipped, import_openapi
from agentkit.openapi.reader import OpenAPIError, Problem

__all__ = [
    "ImportReport",
    "OpenAPIError",
    "Problem",
    "Renamed",
    "Selection",
    "Skipped",
    "import_openapi",
]
