"""Servers made of servers: `Server.mount` (live) and `Server.include` (a copy), namespaced.

A namespace `billing` names a tool or prompt `billing_<name>` (as FastMCP spells it) and
puts itself as the first path segment of a resource URI or template:

    pay                     ->  billing_pay
    invoice://2026/7        ->  invoice://billing/2026/7
    invoice://{year}/{n}    ->  invoice://billing/{year}/{n}
    file:///srv/a.txt       ->  file://billing//srv/a.txt     (the authority, then the rest)
    urn:isbn:123            ->  urn:billing/isbn:123          (a URI without an authority)

The rule is one insertion after `scheme://` (or `scheme:`), so it reverses exactly: the
namespace is taken out again to find the mounted server's URI, whatever the rest holds. A
resource keeps its scheme, so a client still tells resources apart by it.

`mount` keeps a live link: the entries of the other server appear in this one's registries
(so its lists, capabilities, scopes and the HTTP checks read them as their own), each one
delegating its calls to the other server, which serves them with its own middleware, its own
`Context` (`ctx.server` is the mounted server, its lifespan is entered with this one's) and
its own names; what it registers, removes or announces later appears here as it happens
(list changes and `notifications/resources/updated` are forwarded, namespaced). `include`
copies the entries as they are now: they run as this server's own (this server's middleware
and lifespan, `ctx.server` this server), and later changes of the other do not appear.

Either way a name or URI that would collide is refused at once, in one line naming every
collision; a later registration in a mounted server that would collide here is refused by
that server's `add_*`. The other server's extensions (their settings) and the methods they
added are merged: a method this server does not serve is routed to it; an extension offered
by both with different settings is a collision. A mounted server's completion handler
completes its prompts and templates.

Imports the server's own modules, `mcpkit.errors` and `mcpkit.types`; of the servers it joins
it reads and writes their view `Composed`, defined here.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from mcpkit.server.calls import call_in
from mcpkit.server.context import Context
from mcpkit.server.resources import UriTemplate
from mcpkit.types.constants import SERVER_INFO_KEY
from mcpkit.types.methods import Method

if TYPE_CHECKING:
    from mcpkit.server.extensions import Extensions
    from mcpkit.server.prompts import Prompt
    from mcpkit.server.resources import Resource, ResourceTemplate
    from mcpkit.server.tool_filters import ToolFilter
    from mcpkit.server.tools import Tool
    from mcpkit.server.view import Handler, RunsRequests

__all__ = [
    "KINDS",
    "Composed",
    "Link",
    "namespaced_name",
    "namespaced_uri",
    "plain_uri",
]

_NAMESPACE: Final = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")

KINDS: Final = ("tools", "resources", "templates", "prompts")
"""The registries a link fills, by the word `Server._changed` says ("resources" covers both
resources and templates)."""

_NOUN: Final = {"tools": "tool", "resources": "resource", "templates": "resource template",
                "prompts": "prompt"}


@runtime_checkable
class Composed(Protocol):
    """A server as a link sees the two it joins (`Server` is one by its shape): the registries
    it fills and reads, the extensions, routes and filters it merges, the admission of a tool
    and an update's announcement; and of a mounted server what its parent asks of it (its
    completion handler, the servers below it, being held running and by whom)."""

    tools: dict[str, Tool]
    prompts: dict[str, Prompt]
    resources: dict[str, Resource]
    templates: list[ResourceTemplate]
    routes: dict[str, Handler]
    tool_filters: list[ToolFilter]

    @property
    def name(self) -> str: ...

    @property
    def extensions(self) -> Extensions: ...

    @property
    def chain(self) -> RunsRequests | None: ...

    @property
    def completion(self) -> Callable[..., Any] | None: ...

    def admit_tool(self, tool: Tool) -> None: ...

    def notify_resource_updated(self, uri: str, *, changes: int = 1) -> None: ...

    def running(self) -> AbstractAsyncContextManager[Any]: ...

    def _descendants(self) -> list[Composed]: ...

    def _held_by(self, link: Link) -> None: ...

    def _completes(self) -> bool: ...


def namespaced_name(namespace: str | None, name: str) -> str:
    return name if not namespace else f"{namespace}_{name}"


def _split(uri: str) -> tuple[str, str, str]:
    """(the scheme with its `:` or `://`, the rest); ValueError for a URI without a scheme."""
    scheme, colon, rest = uri.partition(":")
    if not colon or not scheme or "{" in scheme:
        raise ValueError(f"URI {uri!r} has no scheme to keep before a namespace")
    if rest.startswith("//"):
        return scheme, "://", rest[2:]
    return scheme, ":", rest


def namespaced_uri(namespace: str | None, uri: str) -> str:
    if not namespace:
        return uri
    scheme, sep, rest = _split(uri)
    return f"{scheme}{sep}{namespace}/{rest}"


def plain_uri(namespace: str | None, uri: str) -> str | None:
    """The URI `namespaced_uri` made this one from, or None when it holds no such namespace."""
    if not namespace:
        return uri
    try:
        scheme, sep, rest = _split(uri)
    except ValueError:
        return None
    head = f"{namespace}/"
    return f"{scheme}{sep}{rest[len(head):]}" if rest.startswith(head) else None


def _own_meta(result: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """A delegated result speaks for the server the client asked (`serverInfo` in `_meta`)."""
    meta = result.get("_meta")
    if type(meta) is dict and SERVER_INFO_KEY in meta:
        return {**result, "_meta": {**meta, **ctx.server.result_meta}}
    return result


class Delegation:
    """Serves an entry of a mounted server by asking that server (`Tool.delegate`, ...):
    `target` is its name or URI there (None for a template: taken from the URI read)."""

    __slots__ = ("kind", "link", "target")

    def __init__(self, link: Link, kind: str, target: str | None) -> None:
        self.link, self.kind, self.target = link, kind, target

    async def __call__(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        link, child = self.link, self.link.child
        if self.kind == "tools":
            return _own_meta(await call_in(child, Method.TOOLS_CALL,
                                           {**params, "name": self.target}, ctx), ctx)
        if self.kind == "prompts":
            return _own_meta(await call_in(child, Method.PROMPTS_GET,
                                           {**params, "name": self.target}, ctx), ctx)
        uri = self.target if self.target is not None else link.plain(params["uri"])
        result = await call_in(child, Method.RESOURCES_READ, {**params, "uri": uri}, ctx)
        return link.renamed_contents(result, ctx)

    async def complete(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """`completion/complete` of this prompt or template, by the mounted server."""
        ref = dict(params["ref"])
        if self.kind == "prompts":
            ref["name"] = self.target
        else:
            ref["uri"] = self.link.plain(ref["uri"])
        return await call_in(self.link.child, Method.COMPLETE, {**params, "ref": ref}, ctx)


class Relay:
    """An entry copied (`include`) from a server that delegates it itself: the inner
    delegation, with this link's namespace taken out of the URI on the way in and put back
    into the contents on the way out."""

    __slots__ = ("inner", "kind", "link")

    def __init__(self, link: Link, kind: str, inner: Any) -> None:
        self.link, self.kind, self.inner = link, kind, inner

    async def __call__(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        if self.kind in ("tools", "prompts"):
            return await self.inner(params, ctx)  # type: ignore[no-any-return]
        result = await self.inner({**params, "uri": self.link.plain(params["uri"])}, ctx)
        return self.link.renamed_contents(result, ctx)

    async def complete(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        ref = dict(params["ref"])
        if self.kind not in ("tools", "prompts"):
            ref["uri"] = self.link.plain(ref["uri"])
        return await self.inner.complete({**params, "ref": ref}, ctx)  # type: ignore[no-any-return]


class Link:
    """`parent` holding the entries of `child` under `namespace`: live (`mount`) or a copy
    (`include`)."""

    def __init__(
        self, parent: Composed, child: Composed, namespace: str | None, live: bool,
        claim: Callable[[str, str], None], announce: Callable[[str | None], None],
    ) -> None:
        if namespace is not None and not _NAMESPACE.match(namespace):
            raise ValueError(
                f"namespace {namespace!r}: use 1-64 characters from A-Z a-z 0-9 _ - . (it "
                "begins tool and prompt names, which allow only those)")
        self.parent = parent
        self.child = child
        self.namespace = namespace
        self.live = live
        self._claim = claim
        """The parent's check of a new name against where it is mounted in turn."""
        self._announce = announce
        """The parent's registry-changed announcement (a cache cleared, lists notified)."""
        self.owned: dict[str, set[Any]] = {kind: set() for kind in KINDS}
        """The keys of the parent's registries this link filled, by kind (template strings
        for templates)."""

    def __repr__(self) -> str:
        how = "mount" if self.live else "include"
        return f"<{how} of {self.child.name!r} as {self.namespace!r} in {self.parent.name!r}>"

    # -- names ----------------------------------------------------------------------------------

    def name(self, name: str) -> str:
        return namespaced_name(self.namespace, name)

    def uri(self, uri: str) -> str:
        return namespaced_uri(self.namespace, uri)

    def plain(self, uri: str) -> str:
        found = plain_uri(self.namespace, uri)
        return uri if found is None else found

    def key(self, kind: str, name: str) -> str:
        """The parent's key of the child's entry `name` of `kind`."""
        return self.name(name) if kind in ("tools", "prompts") else self.uri(name)

    def renamed_contents(self, result: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """A delegated read's result with each content's URI as the parent names it."""
        contents = result.get("contents")
        if type(contents) is not list:
            return _own_meta(result, ctx)
        renamed = [{**c, "uri": self.uri(c["uri"])} if type(c) is dict and type(c.get("uri"))
                   is str else c for c in contents]
        return _own_meta({**result, "contents": renamed}, ctx)

    # -- entries --------------------------------------------------------------------------------

    def _delegate(self, kind: str, entry: Any, target: str | None) -> Any:
        if self.live:
            return Delegation(self, kind, target)
        inner = entry.delegate
        return None if inner is None else Relay(self, kind, inner)

    def entries(self, kind: str) -> list[tuple[str, Any]]:
        """The child's entries of `kind` as the parent holds them: (key, entry)."""
        child = self.child
        made: list[tuple[str, Any]] = []
        if kind == "tools":
            for tool in child.tools.values():
                name = self.name(tool.name)
                made.append((name, dataclasses.replace(
                    tool, name=name, definition={**tool.definition, "name": name},
                    delegate=self._delegate(kind, tool, tool.name))))
        elif kind == "prompts":
            for prompt in child.prompts.values():
                name = self.name(prompt.name)
                made.append((name, dataclasses.replace(
                    prompt, name=name, definition={**prompt.definition, "name": name},
                    delegate=self._delegate(kind, prompt, prompt.name))))
        elif kind == "resources":
            for resource in child.resources.values():
                uri = self.uri(resource.uri)
                made.append((uri, dataclasses.replace(
                    resource, uri=uri, definition={**resource.definition, "uri": uri},
                    delegate=self._delegate(kind, resource, resource.uri))))
        else:
            for template in child.templates:
                text = self.uri(template.template.template)
                made.append((text, dataclasses.replace(
                    template, template=UriTemplate(text),
                    definition={**template.definition, "uriTemplate": text},
                    delegate=self._delegate(kind, template, None))))
        return made

    def collisions(self, kinds: tuple[str, ...] = KINDS) -> list[str]:
        """What the child's entries would collide with in the parent (not this link's own)."""
        found: list[str] = []
        for kind in kinds:
            taken = _keys(self.parent, kind) - self.owned[kind]
            found += [f"{_NOUN[kind]} {key!r}" for key, _ in self.entries(kind) if key in taken]
        return found

    def install(self, kind: str) -> None:
        """Put the child's entries of `kind` in the parent, replacing this link's previous."""
        parent = self.parent
        owned = self.owned[kind]
        if kind == "tools":
            for key in owned:
                parent.tools.pop(key, None)
        elif kind == "prompts":
            for key in owned:
                parent.prompts.pop(key, None)
        elif kind == "resources":
            for key in owned:
                parent.resources.pop(key, None)
        else:
            parent.templates[:] = [t for t in parent.templates
                                   if t.template.template not in owned]
        made = self.entries(kind)
        self.owned[kind] = {key for key, _ in made}
        for key, entry in made:
            if kind == "tools":
                parent.admit_tool(entry)
                parent.tools[key] = entry
            elif kind == "prompts":
                parent.prompts[key] = entry
            elif kind == "resources":
                parent.resources[key] = entry
            else:
                parent.templates.append(entry)

    # -- the live link: what the child does later -------------------------------------------------

    def claims(self, kind: str, name: str) -> None:
        """ValueError when the child's new entry `name` of `kind` would collide here."""
        key = self.key(kind, name)
        if key in _keys(self.parent, kind) and key not in self.owned[kind]:
            raise ValueError(
                f"{_NOUN[kind]} {name!r} of server {self.child.name!r} would be {key!r} in "
                f"server {self.parent.name!r} (mounted as {self.namespace!r}), which has one "
                "of that name already")
        self._claim(kind, key)

    def changed(self, kind: str | None) -> None:
        """The child's registry of `kind` changed (None: something else it offers)."""
        if kind == "resources":
            self.install("resources")
            self.install("templates")
        elif kind in ("tools", "prompts"):
            self.install(kind)
        self._announce(kind)

    def updated(self, uri: str, count: int) -> None:
        self.parent.notify_resource_updated(self.uri(uri), changes=count)


def _keys(server: Composed, kind: str) -> set[Any]:
    if kind == "tools":
        return set(server.tools)
    if kind == "prompts":
        return set(server.prompts)
    if kind == "resources":
        return set(server.resources)
    return {t.template.template for t in server.templates}


def merged_extensions(link: Link) -> list[str]:
    """Collisions of the child's extensions with the parent's (different settings)."""
    offered = link.parent.extensions.offered
    return [f"extension {ident!r} (offered by both with different settings)"
            for ident, settings in link.child.extensions.offered.items()
            if ident in offered and offered[ident] != settings]


def merge_extensions(link: Link) -> None:
    """Offer the child's extensions here, and route the methods they added that this server
    does not serve to the child."""
    parent, child = link.parent, link.child
    for ident, settings in child.extensions.offered.items():
        if ident not in parent.extensions.offered:
            parent.extensions.declare(ident, settings)
    for name in child.routes:
        if name not in parent.routes:
            parent.routes[name] = _routed(child, name)
    for admits in child.tool_filters:
        parent.tool_filters.append(_scoped_filter(link, admits))


def _routed(child: Composed, method: str) -> Callable[..., Any]:
    async def routed(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return await call_in(child, method, params, ctx)
    return routed


def _scoped_filter(link: Link, admits: Callable[..., bool]) -> Callable[..., bool]:
    """A filter of the child's tools, applied to them alone among the parent's."""
    def scoped(tool: Any, ctx: Context) -> bool:
        return tool.name not in link.owned["tools"] or admits(tool, ctx)
    return scoped
