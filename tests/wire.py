"""Validation of every message our code sends against the official JSON Schema of its revision.

The schemas are read from MCPKIT_SPEC_DIR (default: ../shared/spec beside the repository).
Results are checked against the typed result of the method they answer, as the conformance
harness does, and the whole message against JSONRPCMessage.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = Path(os.environ.get("MCPKIT_SPEC_DIR", ROOT.parent / "shared" / "spec"))
MODERN = "2026-07-28"
LEGACY = "2025-11-25"

RESULT_TYPES = {
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "subscriptions/listen": "SubscriptionsListenResult",
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
}
ERROR_TYPES = {
    -32020: "HeaderMismatchError",
    -32021: "MissingRequiredClientCapabilityError",
    -32022: "UnsupportedProtocolVersionError",
}
NOTIFICATION_TYPES = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/cancelled": "CancelledNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
}
REQUEST_TYPES = {
    "elicitation/create": "ElicitRequest",
    "sampling/createMessage": "CreateMessageRequest",
    "roots/list": "ListRootsRequest",
    "ping": "PingRequest",
}


def meta(**extra: Any) -> dict[str, Any]:
    """The `_meta` of a modern test request: version, no capabilities, a client name."""
    out: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1.0"},
    }
    out.update(extra)
    return out


def spec_available() -> bool:
    return (SPEC_DIR / f"schema-{MODERN}.json").is_file()


SPEC_MISSING = (
    f"the official MCP schemas were not found in {SPEC_DIR}; "
    "set MCPKIT_SPEC_DIR to a folder holding schema-2026-07-28.json and schema-2025-11-25.json"
)


@functools.cache
def _schema(revision: str) -> dict[str, Any]:
    with open(SPEC_DIR / f"schema-{revision}.json", encoding="utf-8") as f:
        return json.load(f)  # type: ignore[no-any-return]


@functools.cache
def validator(revision: str, definition: str) -> Any:
    from jsonschema import Draft202012Validator

    schema = _schema(revision)
    if definition not in schema["$defs"]:
        raise KeyError(f"{definition} is not defined in the {revision} schema")
    return Draft202012Validator(
        {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    )


def check(revision: str, definition: str, value: Any) -> None:
    """Validate `value` as `definition`; without the schemas (see SPEC_MISSING) it checks nothing
    and the session header says so."""
    if not spec_available():
        return
    errors = sorted(validator(revision, definition).iter_errors(value), key=lambda e: e.path)
    if errors:
        detail = "; ".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
        raise AssertionError(f"not a valid {revision} {definition}: {detail}\n{json.dumps(value)[:2000]}")


def check_server_message(revision: str, message: dict[str, Any], method: str | None) -> None:
    """Validate one message a server sent; `method` is that of the request it answers."""
    if not spec_available():
        return
    check(revision, "JSONRPCMessage", message)
    if "result" in message:
        result = message["result"]
        if result.get("resultType") == "input_required":
            check(revision, "InputRequiredResult", result)
        elif method in RESULT_TYPES:
            check(revision, RESULT_TYPES[method], result)
    elif "error" in message:
        name = ERROR_TYPES.get(message["error"]["code"])
        if name and revision == MODERN:
            check(revision, name, message)
    elif "id" in message:
        check(revision, REQUEST_TYPES[message["method"]], message)
    else:
        name = NOTIFICATION_TYPES.get(message["method"])
        if name is None:
            raise AssertionError(f"unexpected notification {message['method']}")
        check(revision, name, message)


def check_client_message(revision: str, message: dict[str, Any]) -> None:
    """Validate one message a client sent (requests, notifications, responses)."""
    if not spec_available():
        return
    check(revision, "JSONRPCMessage", message)
    if "method" in message and "id" in message:
        check(revision, "ClientRequest", message)
    elif "method" in message:
        check(revision, "ClientNotification", message)
