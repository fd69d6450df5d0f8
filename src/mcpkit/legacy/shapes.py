"""Modern results and errors in their 2025-11-25 shapes.

Legacy results have no `resultType`, no caching hints and no serverInfo in `_meta` (a legacy
client reads identity from initialize); a missing resource is -32002. Results are copied, never
changed in place, because modern results may be shared cached objects.
"""

from __future__ import annotations

from typing import Any

from mcpkit.errors import ResourceNotFoundError, RPCError
from mcpkit.protocol.codec import notification_message
from mcpkit.server.subscriptions import Change
from mcpkit.types.constants import CHANGES_KEY, SERVER_INFO_KEY
from mcpkit.types.methods import Method

__all__ = [
    "change_notification",
    "legacy_capabilities",
    "legacy_error",
    "legacy_result",
]

_MODERN_ONLY = ("resultType", "ttlMs", "cacheScope")


def legacy_result(result: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in result.items() if k not in _MODERN_ONLY}
    meta = out.get("_meta")
    if meta is not None and SERVER_INFO_KEY in meta:
        rest = {k: v for k, v in meta.items() if k != SERVER_INFO_KEY}
        if rest:
            out["_meta"] = rest
        else:
            del out["_meta"]
    return out


def legacy_error(exc: RPCError) -> dict[str, Any]:
    error = exc.to_error()
    if isinstance(exc, ResourceNotFoundError):
        error["code"] = ResourceNotFoundError.LEGACY_CODE
    return error


def legacy_capabilities(modern: dict[str, Any]) -> dict[str, Any]:
    """Server capabilities as initialize reports them (no `extensions` member in 2025-11-25)."""
    return {k: v for k, v in modern.items() if k != "extensions"}


_LIST_CHANGED = {
    "tools": Method.TOOLS_LIST_CHANGED,
    "prompts": Method.PROMPTS_LIST_CHANGED,
    "resources": Method.RESOURCES_LIST_CHANGED,
}


def change_notification(
    subscriptions: list[str], change: Change, capabilities: dict[str, Any]
) -> dict[str, Any] | None:
    """The legacy notification a session gets for a change, or None when it gets none.

    List changes go to every session of a server that declared `listChanged` for that list;
    a resource update only to sessions that subscribed to that URI (or a parent of it).
    """
    if change.kind == "resource":
        uri = change.uri
        if uri is None or not capabilities.get("resources", {}).get("subscribe"):
            return None
        if not any(uri == u or uri.startswith(u.rstrip("/") + "/") for u in subscriptions):
            return None
        params: dict[str, Any] = {"uri": uri}
        if change.count > 1:
            params["_meta"] = {CHANGES_KEY: change.count}
        return notification_message(Method.RESOURCE_UPDATED, params)
    method = _LIST_CHANGED.get(change.kind)
    if method is None or not capabilities.get(change.kind, {}).get("listChanged"):
        return None
    return notification_message(method, None)
