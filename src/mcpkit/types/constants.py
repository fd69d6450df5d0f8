"""Method names, `_meta` keys, header names and protocol versions, each defined once.

What is known about each method (its types, eras, whether it may ask) is `mcpkit.types.methods`.
"""

from typing import Final

__all__ = [
    "CHANGES_KEY",
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "INPUT_CAPABILITIES",
    "LEGACY_VERSIONS",
    "LOG_LEVELS",
    "LOG_LEVEL_KEY",
    "MODERN_VERSION",
    "PROGRESS_TOKEN_KEY",
    "PROTOCOL_VERSION_KEY",
    "SERVER_INFO_KEY",
    "SUBSCRIPTION_ID_KEY",
    "SUPPORTED_VERSIONS",
    "TRACE_KEYS",
    "Header",
    "Method",
]

MODERN_VERSION: Final = "2026-07-28"
"""The protocol revision the core speaks."""

LEGACY_VERSION: Final = "2025-11-25"
LEGACY_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""Revisions of the initialize era, newest first; only the first is served in full."""

SUPPORTED_VERSIONS: Final = (MODERN_VERSION, LEGACY_VERSION)
"""What `server/discover` advertises and `-32022` lists, modern first."""

PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"
CHANGES_KEY: Final = "dev.mcpkit/changes"
"""In a `notifications/resources/updated`: how many changes it stands for, when the server
coalesced several into one (left out: one)."""
PROGRESS_TOKEN_KEY: Final = "progressToken"
TRACE_KEYS: Final = ("traceparent", "tracestate", "baggage")

LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""RFC 5424 severities, least severe first; the index is the rank."""

INPUT_CAPABILITIES: Final = ("elicitation", "sampling", "roots")
"""The client capabilities that answer a server's questions (its input requests)."""


class Method:
    """JSON-RPC method names of both eras."""

    DISCOVER: Final = "server/discover"
    TOOLS_LIST: Final = "tools/list"
    TOOLS_CALL: Final = "tools/call"
    RESOURCES_LIST: Final = "resources/list"
    RESOURCES_TEMPLATES_LIST: Final = "resources/templates/list"
    RESOURCES_READ: Final = "resources/read"
    PROMPTS_LIST: Final = "prompts/list"
    PROMPTS_GET: Final = "prompts/get"
    COMPLETE: Final = "completion/complete"
    SUBSCRIPTIONS_LISTEN: Final = "subscriptions/listen"

    ELICIT: Final = "elicitation/create"
    SAMPLE: Final = "sampling/createMessage"
    ROOTS_LIST: Final = "roots/list"

    CANCELLED: Final = "notifications/cancelled"
    PROGRESS: Final = "notifications/progress"
    MESSAGE: Final = "notifications/message"
    RESOURCE_UPDATED: Final = "notifications/resources/updated"
    RESOURCES_LIST_CHANGED: Final = "notifications/resources/list_changed"
    TOOLS_LIST_CHANGED: Final = "notifications/tools/list_changed"
    PROMPTS_LIST_CHANGED: Final = "notifications/prompts/list_changed"
    SUBSCRIPTIONS_ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"

    # The Tasks extension (io.modelcontextprotocol/tasks); `tasks/result` and `tasks/list`
    # were removed from it and are never served.
    TASKS_GET: Final = "tasks/get"
    TASKS_UPDATE: Final = "tasks/update"
    TASKS_CANCEL: Final = "tasks/cancel"
    TASKS_NOTIFICATION: Final = "notifications/tasks"

    # The Skills extension (io.modelcontextprotocol/skills); the directory read is served
    # only when the server's settings say `directoryRead: true`.
    SKILLS_LIST: Final = "skills/list"
    SKILLS_GET: Final = "skills/get"
    RESOURCES_DIRECTORY_READ: Final = "resources/directory/read"

    # Legacy (2025-11-25) only.
    INITIALIZE: Final = "initialize"
    INITIALIZED: Final = "notifications/initialized"
    PING: Final = "ping"
    SET_LEVEL: Final = "logging/setLevel"
    SUBSCRIBE: Final = "resources/subscribe"
    UNSUBSCRIBE: Final = "resources/unsubscribe"
    ROOTS_LIST_CHANGED: Final = "notifications/roots/list_changed"
    ELICITATION_COMPLETE: Final = "notifications/elicitation/complete"


class Header:
    """HTTP header names (compared case-insensitively; stored lower-case as ASGI gives them)."""

    PROTOCOL_VERSION: Final = "mcp-protocol-version"
    METHOD: Final = "mcp-method"
    NAME: Final = "mcp-name"
    PARAM_PREFIX: Final = "mcp-param-"
    SESSION_ID: Final = "mcp-session-id"
    LAST_EVENT_ID: Final = "last-event-id"
