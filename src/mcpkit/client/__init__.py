"""The mcpkit client: one `Client` for modern and legacy servers on every transport.

Everything here is async and transport-agnostic: transports come in as a `Connector` or a
`ClientTransport` object (see `mcpkit.transports.stdio_client`, `mcpkit.transports.memory`).
May import `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol`, `mcpkit.schema`, `mcpkit.store`
(the era cache) and `mcpkit._version`.
"""

from mcpkit.client.client import Client
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
from mcpkit.client.tasks import StatusHandler, TaskHandle
from mcpkit.client.tools import RejectedTool
from mcpkit.client.transport import ClientTransport, Connector
from mcpkit.errors import TaskCancelledError

__all__ = [
    "Client",
    "ClientOptions",
    "ClientTransport",
    "Connector",
    "ElicitationAnswerError",
    "ElicitationCompleteHandler",
    "ElicitationHandler",
    "EraCache",
    "Form",
    "FormField",
    "FormSchemaError",
    "InputHandlers",
    "InputRequest",
    "InputRoundsExceededError",
    "LogHandler",
    "NoCommonVersionError",
    "ProgressHandler",
    "RejectedTool",
    "RequestTimeoutError",
    "RootsHandler",
    "SamplingHandler",
    "StatusHandler",
    "Subscription",
    "TaskCancelledError",
    "TaskHandle",
    "check_answer",
    "otel_trace_context",
    "read_form",
]
