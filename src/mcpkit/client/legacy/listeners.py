"""Subscriptions over a legacy session: `subscriptions/listen` built from what 2025-11-25 offers.

The era has no listen request. A `Subscription` is built instead from `resources/subscribe` for
each URI (shared by every subscription of the session that asked for it, unsubscribed when the
last one ends) and from the session's unsolicited list-changed and resource-updated
notifications, filtered to what each subscription asked for and the server's capabilities
allow. The acknowledgement is made up locally from those capabilities.

May import `mcpkit.types`, `mcpkit.errors` and `mcpkit.client.adapter`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcpkit.client.adapter import Listener
from mcpkit.errors import RPCError, TransportError
from mcpkit.types.methods import Method

__all__ = ["LegacyListeners"]

_FLAGS = {
    "toolsListChanged": ("tools", Method.TOOLS_LIST_CHANGED),
    "promptsListChanged": ("prompts", Method.PROMPTS_LIST_CHANGED),
    "resourcesListChanged": ("resources", Method.RESOURCES_LIST_CHANGED),
}
"""Listen flag -> (the server capability that offers it, the notification it asks for)."""


class LegacyListeners:
    """The subscriptions of a legacy session, and the `resources/subscribe`s they share."""

    def __init__(
        self, request: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
    ) -> None:
        self._request = request
        self._subscriptions: list[Listener] = []
        self._uris: dict[str, int] = {}
        self._subscribed: dict[Listener, list[str]] = {}
        """Subscription -> the URIs it subscribed to (kept until it ends, also past `clear`)."""

    async def start(self, sub: Listener, capabilities: dict[str, Any]) -> None:
        """Acknowledge what the server's capabilities allow, subscribing to the URIs."""
        ack: dict[str, Any] = {}
        for flag, (kind, _) in _FLAGS.items():
            if sub.requested.get(flag) and (capabilities.get(kind) or {}).get("listChanged"):
                ack[flag] = True
        uris = sub.requested.get("resourceSubscriptions") or []
        if uris and (capabilities.get("resources") or {}).get("subscribe"):
            subscribed = await self.add(sub, uris)
            self._subscribed[sub] = subscribed
            if subscribed:
                ack["resourceSubscriptions"] = list(subscribed)
        else:
            await self.add(sub, [])
        sub.acknowledge(ack)

    async def add(self, sub: Listener, uris: Sequence[str]) -> list[str]:
        self._subscriptions.append(sub)
        for uri in uris:
            if self._uris.get(uri, 0) == 0:
                await self._request(Method.SUBSCRIBE, {"uri": uri})
            self._uris[uri] = self._uris.get(uri, 0) + 1
        return list(uris)

    async def remove(self, sub: Listener) -> None:
        uris = self._subscribed.pop(sub, [])
        if sub in self._subscriptions:
            self._subscriptions.remove(sub)
        for uri in uris:
            count = self._uris.get(uri, 0) - 1
            if count > 0:
                self._uris[uri] = count
                continue
            self._uris.pop(uri, None)
            with contextlib.suppress(RPCError, TransportError):
                await self._request(Method.UNSUBSCRIBE, {"uri": uri})

    def offer(self, message: dict[str, Any]) -> None:
        """A session's unsolicited notification, to each subscription that asked for it."""
        for sub in list(self._subscriptions):
            self._offer(sub, message)

    def _offer(self, sub: Listener, message: dict[str, Any]) -> None:
        method = message.get("method")
        ack = sub.acknowledged or {}
        for flag, (_, note) in _FLAGS.items():
            if method == note and ack.get(flag):
                sub.put(message)
                return
        if method == Method.RESOURCE_UPDATED:
            params = message.get("params")
            uri = params.get("uri") if type(params) is dict else None
            if type(uri) is str and any(
                uri == u or uri.startswith(u.rstrip("/") + "/")
                for u in self._subscribed.get(sub, ())
            ):
                sub.put(message)

    def clear(self) -> None:
        for sub in self._subscriptions:
            sub.end()
        self._subscriptions.clear()
        self._uris.clear()
