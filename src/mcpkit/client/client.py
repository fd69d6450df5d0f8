"""`Client`: one class that talks to any MCP server, modern or legacy, on any transport.

Connecting decides the era (`mcpkit.client.era`, `mcpkit.client.opening`): a `server/discover`
probe, a fallback to the 2025-11-25 `initialize` handshake, a restart of a stdio server that
died on the probe. The opener hands back the connection's era adapter (`EraAdapter`,
`mcpkit.client.adapter`), and every method reads the same in both eras: what an era changes
(the `_meta` of a request, an expired session, a -32042, the DiscoverResult, the server's own
requests and notifications, subscriptions) is the adapter's, so nothing here branches on the
era. The modern adapter is `mcpkit.client.modern`; the legacy one, and everything else the
2025-11-25 era means on the client, is `mcpkit.client.legacy`.

The request path is short on purpose: build params, one transport round trip, look at
`resultType` (`mcpkit.client.calls`). Only an `input_required` result enters the MRTR loop, and
only list and read results touch the cache. A kind an extension registered
(`mcpkit.client.result_kinds`) is the extension's client class's to follow: `mcpkit.Client`
mixes in the Tasks extension's (`mcpkit.ext.tasks.TaskClient`: `start_tool`, `task`, and
`call_tool` waiting on a task), over the public `core` and the pieces of
`mcpkit.client.tool_calls`.

May import `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol`, `mcpkit._version`; transports
arrive as objects (a `Connector` or a `ClientTransport`), never by import.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Self, TypeVar, Unpack, overload

from mcpkit._version import __version__
from mcpkit.client.calls import call
from mcpkit.client.core import DEFAULT_TIMEOUT, ClientCore
from mcpkit.client.era import Era
from mcpkit.client.inputs import ElicitationHandler, InputHandlers, RootsHandler, SamplingHandler
from mcpkit.client.legacy.completions import Completions, ElicitationCompleteHandler
from mcpkit.client.legacy.opening import INITIALIZE_OPENING
from mcpkit.client.listen import Subscription
from mcpkit.client.messages import completion_of, read_error, require_list
from mcpkit.client.modern import ModernAdapter
from mcpkit.client.opening import opening
from mcpkit.client.options import (
    ClientOptions,
    LogHandler,
    ProgressHandler,
    call_notifications,
    log_options,
)
from mcpkit.client.paging import list_through_cache
from mcpkit.client.result_kinds import refuse_unfollowed
from mcpkit.client.results import (
    CallToolResult,
    GetPromptResult,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcpkit.client.tool_calls import CallOptions, call_once, checked_result, reader_of, tool_call
from mcpkit.client.tools import RejectedTool
from mcpkit.client.transport import ClientTransport, Connector
from mcpkit.client.wire_object import typed_list
from mcpkit.errors import InvalidParamsError
from mcpkit.types.methods import Method

__all__ = [
    "DEFAULT_TIMEOUT",
    "Client",
    "Structured",
]

log = logging.getLogger("mcpkit.client")

T = TypeVar("T")
Structured = dict[str, Any] | None
"""What `CallToolResult.data` is when the call names no type: the structured content."""
_UNSET_INFO: dict[str, Any] = {"name": "mcpkit", "version": __version__}
_OPENING = opening(INITIALIZE_OPENING)
"""How a Client opens a connection: the dual-era probe, falling back to `initialize`."""


class Client:
    """An MCP client. `async with Client(connector) as client: await client.list_tools()`.

    `target` is a `Connector` (`StdioServer`, `InMemory`, an HTTP connector), which lets the
    client restart a stdio server and remember its era, or an already open `ClientTransport`.
    Handlers (`elicit`, `elicit_url`, `sample`, `roots`) answer what the server asks for; the
    capabilities each request declares are exactly those with a handler. A legacy server's
    -32042 raises `URLElicitationRequiredError`; with `elicit_url` the user is asked to open each
    page and the call is retried once, and `on_elicitation_complete(elicitation_id)` hears the
    server report a page done.
    """

    def __init__(
        self,
        target: Connector | ClientTransport,
        *,
        client_info: Mapping[str, Any] | None = None,
        elicit: ElicitationHandler | None = None,
        elicit_url: ElicitationHandler | None = None,
        sample: SamplingHandler | None = None,
        roots: RootsHandler | Sequence[Mapping[str, Any]] | None = None,
        on_log: LogHandler | None = None,
        on_elicitation_complete: ElicitationCompleteHandler | None = None,
        options: ClientOptions | None = None,
    ) -> None:
        opts = log_options(options or ClientOptions(), on_log)
        inputs = InputHandlers(
            elicit, elicit_url, sample, roots, dict(opts.sampling_capability or {}),
            Completions(on_elicitation_complete),
        )
        info = dict(client_info) if client_info else dict(_UNSET_INFO)
        self._core = ClientCore(target, opts, inputs, info, on_log, ModernAdapter, _OPENING)
        self.rejected_tools: list[RejectedTool] = []
        """Tool definitions the last `list_tools()` dropped as unusable, with the reason."""

    # -- what the core knows -----------------------------------------------------------------

    @property
    def core(self) -> ClientCore:
        """What the client is made of (its connection, options, handlers, tool list): the
        seam an extension's client half builds on, as `mcpkit.ext.tasks.TaskClient` does."""
        return self._core

    @property
    def options(self) -> ClientOptions:
        return self._core.options

    @property
    def capabilities(self) -> dict[str, Any]:
        """What every request declares (CAP-1), derived from the handlers."""
        return self._core.capabilities

    @property
    def client_info(self) -> dict[str, Any]:
        return self._core.client_info

    @property
    def on_log(self) -> LogHandler | None:
        return self._core.on_log

    @property
    def era(self) -> Era | None:
        """`"modern"` or `"legacy"` once connected."""
        return self._core.era

    @property
    def protocol_version(self) -> str | None:
        return self._core.protocol_version

    @property
    def server_info(self) -> dict[str, Any] | None:
        """Self-reported by the server: display it, never trust it (META-8)."""
        return self._core.server_info

    @property
    def server_capabilities(self) -> dict[str, Any] | None:
        return self._core.server_capabilities

    @property
    def instructions(self) -> str | None:
        return self._core.instructions

    @property
    def tools(self) -> dict[str, Tool]:
        """The usable tools from the last `list_tools()`, by name."""
        return self._core.tools

    # -- connection ------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> Self:
        """Open the transport and settle the era (done on first use when not called)."""
        await self._core.connect()
        return self

    @property
    def transport(self) -> ClientTransport | None:
        return self._core.transport

    async def close(self) -> None:
        """Close listen streams and the transport (for stdio: end the server process)."""
        await self._core.close()

    # -- lists, with the cache -------------------------------------------------------------

    async def _list(self, method: str, key: str, fresh: bool) -> list[dict[str, Any]]:
        await self._core.connect()
        items, rejected = await list_through_cache(self._core, method, key, fresh)
        if method == Method.TOOLS_LIST:
            self.rejected_tools = rejected
        return items

    # -- the public methods ----------------------------------------------------------------

    @property
    def server_extensions(self) -> dict[str, Any]:
        """What `server/discover` offered, by identifier (empty for a legacy server)."""
        return ext if type(ext := (self.server_capabilities or {}).get("extensions")) is dict else {}

    async def request(self, method: str, params: Mapping[str, Any] | None = None, *,
                      meta: Mapping[str, Any] | None = None,
                      progress: ProgressHandler | None = None, log: LogHandler | None = None,
                      log_level: str | None = None,
                      timeout: float | None = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """Send `method` with this era's `_meta`; its result as the server sent it, or it
        raises. For an extension's method, or a call driven by hand (a proxy's): an
        `input_required` result comes back as it is, unanswered, and a task is not followed.

        `progress(progress, total, message)` and `log(level, data, logger)` hear this
        request's notifications (values as the server sent them: check them before use);
        `log_level` is the level asked for (`ClientOptions.log_level`, else "info", when only
        `log` is given); `timeout` bounds the wait (None: wait forever)."""
        core = self._core
        await core.connect()
        token = core.next_token() if progress is not None else None
        if log is not None and log_level is None:
            log_level = core.options.log_level or "info"
        on_note = call_notifications(progress, log) if progress or log else None
        return await core.send(
            method, core.params(dict(params or {}), token, log_level, meta), on_note, timeout)

    async def discover(self, *, fresh: bool = False) -> dict[str, Any]:
        """The server's DiscoverResult (in the legacy era, the same shape built from initialize)."""
        await self._core.connect()
        return await self._core.adapter.discover(fresh)

    async def list_tools(self, *, fresh: bool = False) -> list[Tool]:
        """Every usable tool, all pages; invalid definitions land in `rejected_tools`."""
        items = await self._list(Method.TOOLS_LIST, "tools", fresh)
        tools = typed_list(Tool, items, "tools/list tools")
        self._core.tools = {tool.name: tool for tool in tools}
        return tools

    async def list_resources(self, *, fresh: bool = False) -> list[Resource]:
        """Every resource the server lists, all pages."""
        items = await self._list(Method.RESOURCES_LIST, "resources", fresh)
        return typed_list(Resource, items, "resources/list resources")

    async def list_resource_templates(self, *, fresh: bool = False) -> list[ResourceTemplate]:
        """Every resource template, all pages."""
        items = await self._list(Method.RESOURCES_TEMPLATES_LIST, "resourceTemplates", fresh)
        return typed_list(ResourceTemplate, items, "resources/templates/list resourceTemplates")

    async def list_prompts(self, *, fresh: bool = False) -> list[Prompt]:
        """Every prompt, all pages."""
        items = await self._list(Method.PROMPTS_LIST, "prompts", fresh)
        return typed_list(Prompt, items, "prompts/list prompts")

    @overload
    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        result: None = None, **options: Unpack[CallOptions]
                        ) -> CallToolResult[Structured]: ...

    @overload
    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        result: type[T], **options: Unpack[CallOptions]
                        ) -> CallToolResult[T]: ...

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        result: Any = None, **options: Unpack[CallOptions]
                        ) -> CallToolResult[Any]:
        """Call a tool; returns its `CallToolResult` (a tool's failure is a result with
        `is_error`, not raised).

        `result=Sum` (a TypedDict, dataclass, pydantic model or any annotation a parameter
        may have) reads the structured content into `Sum` as `.data`, once it passed the
        tool's `outputSchema` (the tool list is read first when it is not known): a value
        that does not fit raises `ResultTypeError`.

        `progress(progress, total, message)` and `log(level, data, logger)` see this call's
        notifications; `timeout` bounds each round trip (None: wait forever). A call the
        server makes a task is followed by `mcpkit.Client` (`mcpkit.ext.tasks.TaskClient`);
        this core class refuses one, as it does any result kind it does not follow.
        """
        reader = await reader_of(self._core, self.list_tools, name, result)
        fields, what = tool_call(name, arguments)
        answer = await call_once(self._core, self.list_tools, fields, what, **options)
        refuse_unfollowed(answer, what)
        return checked_result(self._core, name, answer, what, reader)

    async def read_resource(
        self,
        uri: str,
        *,
        fresh: bool = False,
        progress: ProgressHandler | None = None,
        log: LogHandler | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        meta: Mapping[str, Any] | None = None,
        max_bytes: int | None = None,
    ) -> ReadResourceResult:
        """Read a resource; a fresh cached read is returned without a round trip.

        `max_bytes` lets the answer be that large, past the transport's own message limit,
        for a resource the caller knows to be large (a skill file, sized by its entry). The
        transport cannot tell one answer from another before it has read it, so while the
        read runs it accepts any message up to `max_bytes`."""
        what = f"resources/read {uri!r}"
        if self.options.cache and not fresh:
            cached = self._core.cache.get(Method.RESOURCES_READ, uri)
            if cached is not None:
                return ReadResourceResult(cached, what)
        allowance: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
        if max_bytes is not None:
            await self._core.connect()
            allowing = getattr(self._core.transport, "allowing", None)
            if allowing is not None:
                allowance = allowing(max_bytes)
        try:
            with allowance:
                result, rounds = await call(
                    self._core, Method.RESOURCES_READ, {"uri": uri}, what,
                    progress=progress, log=log, timeout=timeout, meta=meta,
                )
        except InvalidParamsError as exc:
            raise read_error(exc, uri) from None
        require_list(result, "contents", what)
        if self.options.cache and not rounds:
            self._core.cache.put(Method.RESOURCES_READ, uri, result)
        return ReadResourceResult(result, what)

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        progress: ProgressHandler | None = None,
        log: LogHandler | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        meta: Mapping[str, Any] | None = None,
    ) -> GetPromptResult:
        """Get a prompt's messages, filled in with `arguments` (strings)."""
        fields: dict[str, Any] = {"name": name}
        if arguments is not None:
            fields["arguments"] = dict(arguments)
        what = f"prompts/get {name!r}"
        result, _ = await call(
            self._core, Method.PROMPTS_GET, fields, what,
            progress=progress, log=log, timeout=timeout, meta=meta,
        )
        require_list(result, "messages", what)
        return GetPromptResult(result, what)

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> dict[str, Any]:
        """Completion values for one argument; `ref` is `{"type": "ref/prompt", "name": ...}`
        or `{"type": "ref/resource", "uri": ...}`. Returns the `completion` object."""
        core = self._core
        await core.connect()
        fields: dict[str, Any] = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        if context:
            fields["context"] = {"arguments": dict(context)}
        return completion_of(
            await core.send(Method.COMPLETE, core.params(fields), timeout=timeout))

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        uris: Sequence[str] = (),
    ) -> Subscription:
        """A `subscriptions/listen` stream: `async with client.listen(tools=True) as sub:
        async for note in sub: ...`. Changes also invalidate the cache."""
        return Subscription(self._core, tools=tools, prompts=prompts, resources=resources, uris=uris)

    def invalidate(self) -> None:
        """Forget every cached result."""
        self._core.cache.clear()

    def __repr__(self) -> str:
        core = self._core
        where = core.connector if core.connector is not None else core.transport
        state = f"{self.era} {self.protocol_version}" if self.era else "not connected"
        return f"Client({where!r}, {state})"
