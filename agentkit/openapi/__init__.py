"""Import an OpenAPI 3.0 / 3.1 description as reviewable tool definitions.

``import_openapi(spec, source=..., out=...)`` writes one source file (``servers``
as the base URL, ``securitySchemes`` as auth) and one definition file per
operation, each an ordinary definition that ``agentkit validate`` accepts.
``update_openapi(spec, source=..., out=...)`` imports a newer description over
such a folder, keeping the reviewer's edits; its report classifies each tool's
change with ``agentkit.adapters.diff.ToolDiff``, as ``agentkit diff`` does.
"""

from agentkit.openapi.import_report import ImportReport, Renamed, Skipped
from agentkit.openapi.importer import import_openapi
from agentkit.openapi.selection import Selection
from agentkit.openapi.update import update_openapi
from agentkit.openapi.update_report import Conflict, UpdateReport
from agentkit.toolerrors import DescriptionProblem, OpenAPIError, UnexpressibleOperation

__all__ = [
    "Conflict",
    "DescriptionProblem",
    "ImportReport",
    "OpenAPIError",
    "Renamed",
    "Selection",
    "Skipped",
    "UnexpressibleOperation",
    "UpdateReport",
    "import_openapi",
    "update_openapi",
]
