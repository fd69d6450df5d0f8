"""`_meta` keys, header names and protocol versions, each defined once.

Method names and what is known about each method (its types, eras, whether it may ask) are
`mcpkit.types.methods`.
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


class Header:
    """HTTP header names (compared case-insensitively; stored lower-case as ASGI gives them)."""

    PROTOCOL_VERSION: Final = "mcp-protocol-version"
    METHOD: Final = "mcp-method"
    NAME: Final = "mcp-name"
    PARAM_PREFIX: Final = "mcp-param-"
    SESSION_ID: Final = "mcp-session-id"
    LAST_EVENT_ID: Final = "last-event-id"
