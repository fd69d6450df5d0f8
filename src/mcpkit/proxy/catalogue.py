"""The upstream's lists as the proxy's own: tools, resources, templates and prompts, registered
on the proxy's server and kept in step with the upstream's list changes.

Each item the upstream lists is checked (`mcpkit.proxy.checked`) and registered through the
server's own API, with a handler that forwards its call (`mcpkit.proxy.bridge`): a tool under
the upstream's input and output schemas (so the proxy refuses arguments the upstream would, and
holds the upstream to the output it promised), a resource, a prompt with its declared
arguments, a template (matched as RFC 6570 levels 1 and 2; any read no listed item serves goes
upstream through the server's resource fallback all the same). An item that cannot be served
(a name off the rules, a schema that cannot be compiled) is left out with a warning naming it:
it never reaches a client. So the proxy's lists, pages, cache hints, change notifications and
scope filters are the server's own, in both eras.

`follow` listens to the upstream (`Client.listen`) for as long as the proxy runs: a list change
reads that list again and registers the difference, a resource update is announced to the
proxy's listeners, and when the upstream's stream ends (a restarted process, a new session)
every list is read again. The resources it subscribes to upstream are the ones listed and
those the proxy's own listeners asked for (`listen_part`), a bounded number of each.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import logging
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final

from mcpkit.client import Client
from mcpkit.client.listen import Subscription
from mcpkit.errors import (
    InternalError,
    MCPError,
    MethodNotFoundError,
    ProtocolViolation,
    ResourceNotFoundError,
    RPCError,
    ToolError,
    TransportError,
)
from mcpkit.proxy import checked
from mcpkit.proxy.bridge import failure
from mcpkit.schema import derive_signature
from mcpkit.server.content import Blob, ToolResult
from mcpkit.server.context import Context
from mcpkit.server.prompts import Message
from mcpkit.server.resources import ResourceTemplate, UriTemplate
from mcpkit.types.constants import SERVER_INFO_KEY
from mcpkit.types.methods import Method

if TYPE_CHECKING:
    from mcpkit.proxy.server import ProxyServer

__all__ = ["Catalogue"]

log = logging.getLogger("mcpkit.proxy")

KINDS: Final = ("tools", "resources", "prompts")
MAX_SUBSCRIBED: Final = 256
"""Most URIs of each source (listed, asked for by listeners) subscribed to upstream."""
_RETRY_S: Final = (0.2, 5.0)
_NOTHING: Final = re.compile(r"(?!)")
"""A pattern no URI matches."""
_LIST_NOTES: Final = {
    Method.TOOLS_LIST_CHANGED: "tools",
    Method.PROMPTS_LIST_CHANGED: "prompts",
    Method.RESOURCES_LIST_CHANGED: "resources",
}


class _Matcher(UriTemplate):
    """An upstream template's URIs, each handed to the read whole (`{"uri": ...}`); one past
    RFC 6570 levels 1 and 2 matches nothing here, and its reads go to the fallback."""

    __slots__ = ()

    def __init__(self, template: str) -> None:
        try:
            super().__init__(template)
        except ValueError:
            self.template, self.names, self.pattern = template, (), _NOTHING

    def match(self, uri: str) -> dict[str, str] | None:
        return {"uri": uri} if self.pattern.match(uri) else None


def _meta(raw: dict[str, Any]) -> dict[str, Any] | None:
    """A result's `_meta` without the upstream's own server info (the proxy adds its own)."""
    meta = raw.get("_meta")
    if type(meta) is not dict:
        return None
    return {k: v for k, v in meta.items() if k != SERVER_INFO_KEY} or None


def _unusable(where: str, exc: ProtocolViolation) -> str:
    log.warning("%s: the upstream's answer cannot be passed on: %s", where, exc)
    return f"{where}: the upstream server's answer cannot be passed on: {exc}"


def _tool_result(raw: dict[str, Any], where: str) -> ToolResult:
    """A `CallToolResult` of the upstream, checked, as the proxy's tool returns it; one that
    cannot be passed on is the tool's failure, saying why."""
    try:
        blocks = checked.content(raw.get("content", []), f"{where} content")
    except ProtocolViolation as exc:
        raise ToolError(_unusable(where, exc)) from None
    structured = raw.get("structuredContent")
    if structured is not None and type(structured) is not dict:
        log.warning("%s: left out structuredContent that is not an object", where)
        structured = None
    return ToolResult(blocks, structured, raw.get("isError") is True, _meta(raw))


def _read_result(raw: dict[str, Any], uri: str, where: str) -> list[Blob]:
    """A `ReadResourceResult`'s contents, checked, as the proxy's resource returns them."""
    try:
        listed = raw.get("contents")
        if type(listed) is not list:
            raise ProtocolViolation(f"{where}: contents must be a list")
        items = [checked.contents(item, f"{where} contents[{i}]") for i, item in enumerate(listed)]
    except ProtocolViolation as exc:
        raise InternalError(_unusable(where, exc)) from None
    if not items:
        raise ResourceNotFoundError(uri, f"{where}: the upstream server has nothing there")
    return [Blob(c["uri"], c["text"] if "text" in c else base64.b64decode(c["blob"]),
                 c.get("mimeType"), meta=c.get("_meta")) for c in items]


class Catalogue:
    """What the upstream lists, registered on the proxy; see the module docstring."""

    def __init__(self, proxy: ProxyServer) -> None:
        self._proxy = proxy
        self._tools: dict[str, dict[str, Any]] = {}
        self._resources: dict[str, dict[str, Any]] = {}
        self._templates: dict[str, tuple[dict[str, Any], ResourceTemplate]] = {}
        self._prompts: dict[str, dict[str, Any]] = {}
        self._asked_uris: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._resubscribe = asyncio.Event()
        #: Set while a listen stream to the upstream is open and the lists were read after it
        #: opened: from then on no upstream change goes unseen. Clear while reconnecting.
        self.following = asyncio.Event()

    # -- registering -------------------------------------------------------------------------

    async def sync(self, client: Client, kinds: Iterable[str] = KINDS) -> set[str]:
        """Read the lists of `kinds` the upstream offers and register what changed; the
        kinds whose registrations changed."""
        caps = client.server_capabilities or {}
        changed = set()
        for kind in kinds:
            offered = kind in caps
            if kind == "tools":
                tools = await client.list_tools(fresh=True) if offered else []
                for rejected in client.rejected_tools:
                    log.warning("left out the upstream's tool %r: %s", rejected.name,
                                rejected.reason)
                moved = self._sync(self._tools, [t.raw for t in tools], "name", checked.tool,
                                   self._add_tool, self._proxy.remove_tool, "tools")
            elif kind == "prompts":
                prompts = await client.list_prompts(fresh=True) if offered else []
                moved = self._sync(self._prompts, [p.raw for p in prompts], "name",
                                   checked.prompt, self._add_prompt, self._remove_prompt,
                                   "prompts")
            else:
                listed = await client.list_resources(fresh=True) if offered else []
                templates = await client.list_resource_templates(fresh=True) if offered else []
                moved = self._sync(self._resources, [r.raw for r in listed], "uri",
                                   checked.resource, self._add_resource, self._remove_resource,
                                   "resources")
                moved = self._sync_templates([t.raw for t in templates]) or moved
            if moved:
                changed.add(kind)
        if "completions" in caps and self._proxy.completion is None:
            self._proxy.set_completion(self._complete)
        return changed

    def _sync(self, known: dict[str, dict[str, Any]], listed: list[Any], key: str,
              check: Callable[[Any, str], dict[str, Any]], add: Callable[[dict[str, Any]], None],
              remove: Callable[[str], None], kind: str) -> bool:
        wanted: dict[str, dict[str, Any]] = {}
        for i, raw in enumerate(listed):
            try:
                item = check(raw, f"the upstream's {kind}[{i}]")
            except ProtocolViolation as exc:
                log.warning("left out one of the upstream's %s: %s", kind, exc)
                continue
            wanted.setdefault(item[key], item)
        gone = [n for n in known if wanted.get(n) != known[n]]
        for name in gone:
            del known[name]
            remove(name)
        added = False
        for name, item in wanted.items():
            if name in known:
                continue
            try:
                add(item)
            except (ValueError, TypeError, MCPError) as exc:
                log.warning("left out the upstream's %s %r: %s", kind.rstrip("s"), name, exc)
                continue
            known[name] = item
            added = True
        return added or bool(gone)

    def _add_tool(self, d: dict[str, Any]) -> None:
        name = d["name"]
        bridge = self._proxy.bridge
        where = f"tools/call {name!r}"

        async def call(ctx: Context, **arguments: Any) -> ToolResult:
            result = await bridge.call(ctx, Method.TOOLS_CALL,
                                       {"name": name, "arguments": arguments}, where)
            return _tool_result(result, where)

        options: dict[str, Any] = {k: d[k] for k in ("title", "annotations", "icons") if k in d}
        if "_meta" in d:
            options["meta"] = d["_meta"]
        if "outputSchema" in d:
            options["output_schema"] = d["outputSchema"]
        self._proxy.add_tool(call, name, input_schema=d["inputSchema"],
                             description=d.get("description", ""), **options)

    def _add_prompt(self, d: dict[str, Any]) -> None:
        name = d["name"]
        bridge = self._proxy.bridge
        where = f"prompts/get {name!r}"

        async def get(ctx: Context, **arguments: str) -> list[Message]:
            fields: dict[str, Any] = {"name": name, "arguments": arguments}
            result = await bridge.call(ctx, Method.PROMPTS_GET, fields, where)
            try:
                listed = checked.messages(result.get("messages"), f"{where} messages")
            except ProtocolViolation as exc:
                raise InternalError(_unusable(where, exc)) from None
            return [Message(m["role"], m["content"]) for m in listed]

        self._proxy.add_prompt(get, name=name, title=d.get("title"),
                               description=d.get("description", ""), icons=d.get("icons"),
                               meta=d.get("_meta"), arguments=d.get("arguments", []))

    def _remove_prompt(self, name: str) -> None:
        if self._proxy.prompts.pop(name, None) is not None:
            self._proxy.notify_prompts_changed()

    def _add_resource(self, d: dict[str, Any]) -> None:
        uri = d["uri"]

        async def read(ctx: Context) -> list[Blob]:
            return await self.read(ctx, uri)

        self._proxy.add_resource(
            uri, read, name=d["name"], title=d.get("title"), description=d.get("description", ""),
            mime_type=d.get("mimeType"), size=d.get("size"), annotations=d.get("annotations"),
            icons=d.get("icons"), meta=d.get("_meta"))
        self._resubscribe.set()

    def _remove_resource(self, uri: str) -> None:
        if self._proxy.resources.pop(uri, None) is not None:
            self._proxy.notify_resources_changed()
            self._resubscribe.set()

    async def read(self, ctx: Context, uri: str) -> list[Blob]:
        """Read `uri` upstream: a listed resource, a template's URI or any other."""
        where = f"resources/read {uri!r}"
        result = await self._proxy.bridge.call(ctx, Method.RESOURCES_READ, {"uri": uri}, where)
        return _read_result(result, uri, where)

    def _sync_templates(self, listed: list[Any]) -> bool:
        proxy = self._proxy
        wanted: dict[str, dict[str, Any]] = {}
        for i, raw in enumerate(listed):
            try:
                item = checked.template(raw, f"the upstream's resourceTemplates[{i}]")
            except ProtocolViolation as exc:
                log.warning("left out one of the upstream's resource templates: %s", exc)
                continue
            wanted.setdefault(item["uriTemplate"], item)
        changed = False
        for key in [k for k in self._templates if wanted.get(k) != self._templates[k][0]]:
            _, entry = self._templates.pop(key)
            proxy.templates.remove(entry)
            changed = True
        for key, item in wanted.items():
            if key not in self._templates:
                entry = self._template_entry(item)
                proxy.templates.append(entry)
                self._templates[key] = (item, entry)
                changed = True
        if changed:
            proxy.notify_resources_changed()
        return changed

    def _template_entry(self, d: dict[str, Any]) -> ResourceTemplate:
        read = self.read
        signature = derive_signature(read, injectables=(Context,), structured_output=False)
        definition: dict[str, Any] = {k: d[k] for k in ("uriTemplate", "name", "title", "description",
                                        "mimeType", "annotations", "icons", "_meta") if k in d}
        return ResourceTemplate(read, signature, definition, d.get("mimeType"), None, True,
                                template=_Matcher(d["uriTemplate"]))

    async def _complete(self, ref: dict[str, Any], argument: dict[str, Any],
                        context: dict[str, Any]) -> dict[str, Any]:
        given = context.get("arguments") if type(context) is dict else None
        known = {k: v for k, v in given.items() if type(v) is str} if type(given) is dict else None
        where = "completion/complete"
        try:
            answer = await self._proxy.upstream.main.complete(
                ref, argument["name"], argument["value"], context=known or None)
            return checked.completion(answer, "the upstream's completion")
        except ProtocolViolation as exc:
            raise InternalError(_unusable(where, exc)) from None
        except (RPCError, TransportError) as exc:
            raise failure(where)(exc) from None

    # -- following the upstream ----------------------------------------------------------------

    def listen_part(self) -> Any:
        """The part of the proxy's `subscriptions/listen` that notes which URIs its listeners
        follow, so the proxy subscribes to them upstream (`Server.listen_parts`)."""
        catalogue = self

        async def part(notifications: dict[str, Any], ctx: Context) -> None:
            uris = notifications.get("resourceSubscriptions")
            if type(uris) is list:
                catalogue.asked(u for u in uris if type(u) is str)

        return part

    def asked(self, uris: Iterable[str]) -> None:
        """Follow these URIs upstream too (those listed are followed already)."""
        grown = False
        for uri in uris:
            if uri in self._resources:
                continue
            if uri in self._asked_uris:
                self._asked_uris.move_to_end(uri)
                continue
            self._asked_uris[uri] = None
            grown = True
            while len(self._asked_uris) > MAX_SUBSCRIBED:
                self._asked_uris.popitem(last=False)
        if grown:
            self._resubscribe.set()

    def _subscribed(self) -> list[str]:
        listed = list(self._resources)[:MAX_SUBSCRIBED]
        return list(dict.fromkeys([*listed, *self._asked_uris]))

    async def follow(self) -> None:
        """Follow the upstream's changes until cancelled (the proxy stops)."""
        delay, longest = _RETRY_S
        warned = False
        while True:
            client = self._proxy.upstream.main
            try:
                await self._follow_once(client)
                delay = _RETRY_S[0]
                warned = False
            except asyncio.CancelledError:
                raise
            except MethodNotFoundError:
                log.warning("the upstream server has no way to announce changes; the proxy's "
                            "lists stay as they were read")
                return
            except Exception as exc:
                if not warned:
                    log.warning("following the upstream's changes failed (%s); trying again", exc)
                    warned = True
            await asyncio.sleep(delay)
            delay = min(delay * 2, longest)

    async def _listen(self, client: Client) -> Subscription:
        """A listen stream to the upstream for every list it offers and the URIs to follow."""
        caps = client.server_capabilities or {}
        self._resubscribe.clear()
        uris = self._subscribed() if caps.get("resources", {}).get("subscribe") else []
        return await client.listen(tools="tools" in caps, prompts="prompts" in caps,
                                   resources="resources" in caps, uris=uris).start()

    async def _follow_once(self, client: Client) -> None:
        """One upstream session's changes, until its stream ends. When the URIs to follow
        change, a new stream opens before the old one closes, so no change falls between."""
        sub = await self._listen(client)
        try:
            await self.sync(client)  # after listening, so no change falls in between
            self.following.set()
            while True:
                note = asyncio.ensure_future(sub.__anext__())
                again = asyncio.ensure_future(self._resubscribe.wait())
                try:
                    await asyncio.wait({note, again}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for waiting in (note, again):
                        if not waiting.done():
                            waiting.cancel()
                    await asyncio.gather(note, again, return_exceptions=True)
                if not note.cancelled():
                    try:
                        message = note.result()
                    except StopAsyncIteration:
                        return
                    await self._changed(client, message)
                if self._resubscribe.is_set():
                    old, sub = sub, await self._listen(client)
                    await old.close()
        finally:
            self.following.clear()
            await sub.close()

    def _announce(self, kind: str) -> None:
        proxy = self._proxy
        {"tools": proxy.notify_tools_changed, "prompts": proxy.notify_prompts_changed,
         "resources": proxy.notify_resources_changed}[kind]()

    async def _changed(self, client: Client, message: dict[str, Any]) -> None:
        method = message.get("method")
        kind = _LIST_NOTES.get(method) if type(method) is str else None
        if kind is not None:
            if not await self.sync(client, (kind,)):
                self._announce(kind)  # the upstream says it changed: so does the proxy
        elif method == Method.RESOURCE_UPDATED:
            params = message.get("params")
            uri = params.get("uri") if type(params) is dict else None
            if type(uri) is str:
                self._proxy.notify_resource_updated(uri)
