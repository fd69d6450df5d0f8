"""What a server announces when its registries change: the list changes and the updates of
a resource, to the broker that feeds `subscriptions/listen`, to the change listeners (the
response cache) and to every server it is mounted in.

The bottom of `Server`'s bases: every registration and every mount ends in `_changed`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcpkit.server.subscriptions import Broker, Change

if TYPE_CHECKING:
    from mcpkit.server.composition import Link

__all__ = [
    "Announcing",
]


class Announcing:
    """The change announcements of `Server` (its attributes are set by `Server.__init__`)."""

    generation: int
    result_cache: dict[Any, dict[str, Any]]
    broker: Broker
    change_listeners: list[Callable[[Change], None]]
    _parents: list[Link]

    def _changed(self, kind: str | None = None) -> None:
        self.generation += 1
        self.result_cache.clear()
        if kind is not None:
            change = Change(kind)
            self.broker.publish(change)
            for listener in self.change_listeners:
                listener(change)
        for link in self._parents:  # where it is mounted, the change appears too
            link.changed(kind)

    def notify_tools_changed(self) -> None:
        """Tell listening clients that the tool list changed (registration does it itself)."""
        self._changed("tools")

    def notify_prompts_changed(self) -> None:
        self._changed("prompts")

    def notify_resources_changed(self) -> None:
        self._changed("resources")

    def notify_resource_updated(self, uri: str, *, changes: int = 1) -> None:
        """Tell clients subscribed to `uri` (or a parent of it) that its contents changed;
        `changes`: how many changes this one notification stands for, when several were
        coalesced (it travels in the notification's `_meta`, `CHANGES_KEY`)."""
        change = Change("resource", uri, max(1, changes))
        self.broker.publish(change)
        for listener in self.change_listeners:
            listener(change)
        for link in self._parents:
            link.updated(uri, max(1, changes))
