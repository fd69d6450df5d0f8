"""How a server holds others: `mount` (live, served by the child) and `include` (copied),
the collision claims a registration makes where its server is mounted, and the servers below.
The links themselves, and what each installs, are `mcpkit.server.composition`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from mcpkit.server.announcing import Announcing
from mcpkit.server.composition import Composed, Link, merge_extensions, merged_extensions

__all__ = [
    "Mounting",
]


class Mounting(Announcing):
    """The composition of `Server` (its attributes are set by `Server.__init__`). The servers
    it holds, and itself as their parent, are what a link sees of them (`Composed`): a
    `Server` is one, and this base, below the registries it fills, is not yet."""

    name: str
    completion: Callable[..., Any] | None
    _links: list[Link]

    def mounted_servers(self) -> list[Composed]:
        """The servers `mount`ed here (their lifespans are entered with this one's)."""
        return [link.child for link in self._links if link.live]

    def mount(self, other: Composed, namespace: str | None = None) -> None:
        """Serve `other`'s tools, resources and prompts here, live, under `namespace`
        (`billing_pay`, `invoice://billing/...`; `mcpkit.server.composition`): what it
        registers later appears here, and its calls are served by it, with its middleware and
        lifespan. A name or URI that would collide is refused (ValueError naming each)."""
        self._compose(other, namespace, live=True)

    def include(self, other: Composed, prefix: str | None = None) -> None:
        """Copy `other`'s tools, resources and prompts here, under `prefix` (namespaced as
        `mount` does): they are this server's own from now on, run with its middleware and
        lifespan; later changes of `other` do not appear."""
        self._compose(other, prefix, live=False)

    def _compose(self, other: Composed, namespace: str | None, *, live: bool) -> None:
        how = "mount" if live else "include"
        if not isinstance(other, Mounting):
            raise TypeError(f"{how}() takes a Server, not {type(other).__name__}")
        parent = cast("Composed", self)  # the `Server` this base is one of (see the class)
        if other is parent or parent in other._descendants():
            raise ValueError(f"{how}({other.name!r}): a server cannot hold itself")
        link = Link(parent, other, namespace, live, self._claim, self._changed)
        collisions = link.collisions() + merged_extensions(link)
        if collisions:
            raise ValueError(
                f"{how}({other.name!r}, {namespace!r}) into {self.name!r} collides: "
                f"{', '.join(collisions)} already registered here")
        for kind in ("tools", "resources", "templates", "prompts"):
            link.install(kind)
        merge_extensions(link)
        self._links.append(link)
        if live:
            other._held_by(link)
        for kind in ("tools", "resources", "prompts"):
            self._changed(kind)

    def _descendants(self) -> list[Composed]:
        found: list[Composed] = []
        for link in self._links:
            found += [link.child, *link.child._descendants()]
        return found

    def _claim(self, kind: str, name: str) -> None:
        """Refuse a new entry that would collide where this server is mounted."""
        for link in self._parents:
            link.claims(kind, name)

    def _held_by(self, link: Link) -> None:
        """This server is mounted through `link`: what it registers later appears there."""
        self._parents.append(link)

    def _completes(self) -> bool:
        """A server mounted here completes arguments of its prompts or templates."""
        return any(link.child.completion is not None or link.child._completes()
                   for link in self._links if link.live)
