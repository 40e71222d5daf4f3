"""agentkit: a tool host for LLM agents.

One contract for every tool (``Tool``), a registry to find them, and an executor
that validates, resolves credentials, runs, and reports each call.
"""

import typing as _typing

from agentkit.lazy import lazy_names

__version__ = "0.1.0"

if _typing.TYPE_CHECKING:
    from agentkit.adapters.export import (
        ExportFormat,
        register_format,
    )
    from agentkit.credentials import (
        CredentialProvider,
        CredentialsManager,
        EnvironmentProvider,
        MappingProvider,
        SecretsFileProvider,
    )
    from agentkit.declarative import (
        DeclarativeTool,
        load_tools,
        load_toolsets,
    )
    from agentkit.declarative.backends import (
        Backend,
        BackendContext,
        register_backend,
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
    from agentkit.paging import (
        Page,
        PageStore,
    )
    from agentkit.progress import (
        Progress,
        reporting_progress,
    )
    from agentkit.recording import (
        ExecutionRecorder,
        RecordedCall,
        ReplayMissError,
    )
    from agentkit.redaction import (
        Redactor,
    )
    from agentkit.tool import (
        AsyncTool,
        Definition,
        Tool,
        ToolSpec,
    )
    from agentkit.toolerrors import (
        AgentKitError,
        AnswerError,
        BackendError,
        CallError,
        CredentialError,
        DeclinedError,
        DefinitionError,
        DefinitionProblem,
        ElicitationError,
        ExportError,
        HttpCallError,
        OAuth2Error,
        PluginError,
        Problem,
        RedactedError,
        SchemaDefinitionError,
        SchemaProblem,
        SecretInOutputError,
        SemanticError,
        ServingError,
        TemplateRenderError,
        ToolExecutionError,
        ToolTimeoutError,
        ToolValidationError,
        UnknownToolError,
        UsageError,
    )
    from agentkit.toolexecutor import (
        ToolExecutor,
    )
    from agentkit.toolregistry import (
        ToolRegistry,
    )
    from agentkit.toolresult import (
        STATUS_FAILURE,
        STATUS_SUCCESS,
        ToolResult,
    )
    from agentkit.toolschema import (
        PARAMETER_TYPES,
        Checked,
        Parameter,
        ToolSchema,
    )
    from agentkit.toolsets import (
        Toolset,
    )

# Public names load on first use (PEP 562): `import agentkit` -- and so the
# `agentkit` command's start-up -- pays only for what is actually touched.
_LAZY: dict[str, str] = {
    "AgentKitError": "agentkit.toolerrors",
    "AnswerError": "agentkit.toolerrors",
    "BackendError": "agentkit.toolerrors",
    "AsyncTool": "agentkit.tool",
    "Backend": "agentkit.declarative.backends",
    "BackendContext": "agentkit.declarative.backends",
    "CallError": "agentkit.toolerrors",
    "Checked": "agentkit.toolschema",
    "CredentialError": "agentkit.toolerrors",
    "CredentialProvider": "agentkit.credentials",
    "CredentialsManager": "agentkit.credentials",
    "DURATION_METRIC": "agentkit.observability",
    "DeclarativeTool": "agentkit.declarative",
    "DeclinedError": "agentkit.toolerrors",
    "Definition": "agentkit.tool",
    "DefinitionError": "agentkit.toolerrors",
    "DefinitionProblem": "agentkit.toolerrors",
    "EVENT_COMPLETED": "agentkit.observability",
    "EVENT_FAILED": "agentkit.observability",
    "EVENT_STARTED": "agentkit.observability",
    "ElicitationError": "agentkit.toolerrors",
    "EnvironmentProvider": "agentkit.credentials",
    "ExecutionRecorder": "agentkit.recording",
    "ExportError": "agentkit.toolerrors",
    "ExportFormat": "agentkit.adapters.export",
    "HistogramSnapshot": "agentkit.observability",
    "HttpCallError": "agentkit.toolerrors",
    "InMemoryHistogram": "agentkit.observability",
    "MappingProvider": "agentkit.credentials",
    "OAuth2Error": "agentkit.toolerrors",
    "OTelMetrics": "agentkit.observability",
    "OTelTracer": "agentkit.observability",
    "PARAMETER_TYPES": "agentkit.toolschema",
    "Page": "agentkit.paging",
    "PageStore": "agentkit.paging",
    "Parameter": "agentkit.toolschema",
    "PluginError": "agentkit.toolerrors",
    "Problem": "agentkit.toolerrors",
    "Progress": "agentkit.progress",
    "RecordedCall": "agentkit.recording",
    "RedactedError": "agentkit.toolerrors",
    "Redactor": "agentkit.redaction",
    "ReplayMissError": "agentkit.recording",
    "STATUS_FAILURE": "agentkit.toolresult",
    "STATUS_SUCCESS": "agentkit.toolresult",
    "SchemaDefinitionError": "agentkit.toolerrors",
    "SchemaProblem": "agentkit.toolerrors",
    "SecretsFileProvider": "agentkit.credentials",
    "SecretInOutputError": "agentkit.toolerrors",
    "SemanticError": "agentkit.toolerrors",
    "ServingError": "agentkit.toolerrors",
    "TemplateRenderError": "agentkit.toolerrors",
    "Tool": "agentkit.tool",
    "ToolEvent": "agentkit.observability",
    "ToolExecutionError": "agentkit.toolerrors",
    "ToolExecutor": "agentkit.toolexecutor",
    "ToolRegistry": "agentkit.toolregistry",
    "ToolResult": "agentkit.toolresult",
    "ToolSchema": "agentkit.toolschema",
    "ToolSpec": "agentkit.tool",
    "ToolTimeoutError": "agentkit.toolerrors",
    "Toolset": "agentkit.toolsets",
    "ToolValidationError": "agentkit.toolerrors",
    "UnknownToolError": "agentkit.toolerrors",
    "UsageError": "agentkit.toolerrors",
    "load_tools": "agentkit.declarative",
    "load_toolsets": "agentkit.declarative",
    "register_backend": "agentkit.declarative.backends",
    "register_format": "agentkit.adapters.export",
    "reporting_progress": "agentkit.progress",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())

__all__ = [
    "DURATION_METRIC",
    "EVENT_COMPLETED",
    "EVENT_FAILED",
    "EVENT_STARTED",
    "PARAMETER_TYPES",
    "STATUS_FAILURE",
    "STATUS_SUCCESS",
    "AgentKitError",
    "AnswerError",
    "AsyncTool",
    "Backend",
    "BackendContext",
    "BackendError",
    "CallError",
    "Checked",
    "CredentialError",
    "CredentialProvider",
    "CredentialsManager",
    "DeclarativeTool",
    "DeclinedError",
    "Definition",
    "DefinitionError",
    "DefinitionProblem",
    "ElicitationError",
    "EnvironmentProvider",
    "ExecutionRecorder",
    "ExportError",
    "ExportFormat",
    "HistogramSnapshot",
    "HttpCallError",
    "InMemoryHistogram",
    "MappingProvider",
    "OAuth2Error",
    "OTelMetrics",
    "OTelTracer",
    "Page",
    "PageStore",
    "Parameter",
    "PluginError",
    "Problem",
    "Progress",
    "RecordedCall",
    "RedactedError",
    "Redactor",
    "ReplayMissError",
    "SchemaDefinitionError",
    "SchemaProblem",
    "SecretInOutputError",
    "SecretsFileProvider",
    "SemanticError",
    "ServingError",
    "TemplateRenderError",
    "Tool",
    "ToolEvent",
    "ToolExecutionError",
    "ToolExecutor",
    "ToolRegistry",
    "ToolResult",
    "ToolSchema",
    "ToolSpec",
    "ToolTimeoutError",
    "ToolValidationError",
    "Toolset",
    "UnknownToolError",
    "UsageError",
    "__version__",
    "load_tools",
    "load_toolsets",
    "register_backend",
    "register_format",
    "reporting_progress",
]
