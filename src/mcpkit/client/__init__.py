"""The mcpkit client: one `Client` for modern and legacy servers on every transport.

Everything here is async and transport-agnostic: transports come in as a `Connector` or a
`ClientTransport` object (see `mcpkit.transports.stdio.client`, `mcpkit.transports.memory`).
May import `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol`, `mcpkit.schema`, `mcpkit.store`
(the era cache) and `mcpkit._version`.
"""

from mcpkit.client.client import Client
from mcpkit.client.content import (
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcpkit.client.era import EraCache, NoCommonVersionError
from mcpkit.client.forms import (
    ElicitationAnswerError,
    Form,
    FormField,
    FormSchemaError,
    check_answer,
    read_form,
)
from mcpkit.client.inputs import (
    ElicitationHandler,
    InputHandlers,
    InputRequest,
    RootsHandler,
    SamplingHandler,
)
from mcpkit.client.legacy.completions import ElicitationCompleteHandler
from mcpkit.client.listen import Subscription
from mcpkit.client.options import (
    ClientOptions,
    InputRoundsExceededError,
    LogHandler,
    ProgressHandler,
    RequestTimeoutError,
    otel_trace_context,
)
from mcpkit.client.results import (
    CallToolResult,
    GetPromptResult,
    Prompt,
    PromptArgument,
    PromptMessage,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcpkit.client.server_entries import ServerEntry, read_entries, read_entry
from mcpkit.client.sync import SyncClient, SyncSubscription
from mcpkit.client.tools import RejectedTool
from mcpkit.client.transport import ClientTransport, Connector
from mcpkit.client.wire_object import ResultAsDictWarning, WireObject
from mcpkit.errors import ResultTypeError, ServerConfigError, TaskCancelledError

__all__ = [
    "AudioContent",
    "BlobResourceContents",
    "CallToolResult",
    "Client",
    "ClientOptions",
    "ClientTransport",
    "Connector",
    "ContentBlock",
    "ElicitationAnswerError",
    "ElicitationCompleteHandler",
    "ElicitationHandler",
    "EmbeddedResource",
    "EraCache",
    "Form",
    "FormField",
    "FormSchemaError",
    "GetPromptResult",
    "ImageContent",
    "InputHandlers",
    "InputRequest",
    "InputRoundsExceededError",
    "LogHandler",
    "NoCommonVersionError",
    "ProgressHandler",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "RejectedTool",
    "RequestTimeoutError",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "ResultAsDictWarning",
    "ResultTypeError",
    "RootsHandler",
    "SamplingHandler",
    "ServerConfigError",
    "ServerEntry",
    "Subscription",
    "SyncClient",
    "SyncSubscription",
    "TaskCancelledError",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "WireObject",
    "check_answer",
    "otel_trace_context",
    "read_entries",
    "read_entry",
    "read_form",
]
