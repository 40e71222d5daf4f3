"""agentkit: a tool host for LLM agents.

One contract for every tool (``Tool``), a registry to find them, and an executor
that validates, resolves credentials, runs, and reports each call.
"""

import typing as _typing

from agentkit.credentials import (
    CredentialProvider,
    CredentialsManager,
    EnvironmentProvider,
    MappingProvider,
    SecretsFileProvider,
)
from agentkit.observability import (
    DURATION_METRIC,
    EVENT_COMPLETED,
    EVENT_FAILED,
    EVENT_STARTED,
    HistogramSnapshot,
    InMemoryHistogram,
    OTelMetrics,
    OTelTracer,
    ToolEvent,
)
from agentkit.recording import ExecutionRecorder, RecordedCall, ReplayMissError
from agentkit.redaction import Redactor
from agentkit.tool import Tool
from agentkit.toolerrors import (
    AgentKitError,
    CredentialError,
    DefinitionError,
    DefinitionProblem,
    SchemaDefinitionError,
    SchemaProblem,
    SemanticError,
    ToolExecutionError,
    ToolValidationError,
)
from agentkit.toolexecutor import ToolExecutor
from agentkit.toolregistry import ToolRegistry
from agentkit.toolresult import STATUS_FAILURE, STATUS_SUCCESS, ToolResult
from agentkit.toolschema import PARAMETER_TYPES, Parameter, ToolSchema

__version__ = "0.1.0"

if _typing.TYPE_CHECKING:
    from agentkit.declarative import DeclarativeTool, load_tools


def __getattr__(name: str) -> _typing.Any:
    # The YAML layer pulls in requests and Jinja2; `import agentkit` stays light
    # until a definition is actually loaded.
    if name in ("DeclarativeTool", "load_tools"):
        from agentkit import declarative

        return getattr(declarative, name)
    raise AttributeError(f"module 'agentkit' has no attribute {name!r}")


__all__ = [
    "DURATION_METRIC",
    "EVENT_COMPLETED",
    "EVENT_FAILED",
    "EVENT_STARTED",
    "PARAMETER_TYPES",
    "STATUS_FAILURE",
    "STATUS_SUCCESS",
    "AgentKitError",
    "CredentialError",
    "CredentialProvider",
    "CredentialsManager",
    "DeclarativeTool",
    "DefinitionError",
    "DefinitionProblem",
    "EnvironmentProvider",
    "ExecutionRecorder",
    "HistogramSnapshot",
    "InMemoryHistogram",
    "MappingProvider",
    "OTelMetrics",
    "OTelTracer",
    "Parameter",
    "RecordedCall",
    "Redactor",
    "ReplayMissError",
    "SchemaDefinitionError",
    "SchemaProblem",
    "SecretsFileProvider",
    "SemanticError",
    "Tool",
    "ToolEvent",
    "ToolExecutionError",
    "ToolExecutor",
    "ToolRegistry",
    "ToolResult",
    "ToolSchema",
    "ToolValidationError",
    "__version__",
    "load_tools",
]
