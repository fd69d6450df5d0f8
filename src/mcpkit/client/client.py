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
`resultType` (`mcpkit.client.calls`). Only an `input_required` result enters the MRTR loop, only
a `task` result the wait on a task (`mcpkit.client.tasks`), and only list and read results touch
the cache.

May import `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol`, `mcpkit._version`; transports
arrive as objects (a `Connector` or a `ClientTransport`), never by import.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, Unpack, cast, overload

from mcpkit._version import __version__
from mcpkit.client.adapter import EraAdapter
from mcpkit.client.cache import ResultCache
from mcpkit.client.calls import call
from mcpkit.client.era import Era
from mcpkit.client.inputs import ElicitationHandler, InputHandlers, RootsHandler, SamplingHandler
from mcpkit.client.legacy.completions import Completions, ElicitationCompleteHandler
from mcpkit.client.listen import Subscription
from mcpkit.client.messages import completion_of, read_error, require_list
from mcpkit.client.modern import ModernAdapter
from mcpkit.client.opening import Opener, exchange, result_of
from mcpkit.client.options import (
    ClientOptions,
    LogHandler,
    ProgressHandler,
    call_notifications,
    declared_capabilities,
    log_options,
)
from mcpkit.client.paging import list_through_cache
from mcpkit.client.results import (
    CallToolResult,
    GetPromptResult,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcpkit.client.structured import ResultReader, reader_for
from mcpkit.client.tasks import TaskHandle, task_meta
from mcpkit.client.tool_calls import (
    CallOptions,
    StartOptions,
    call_once,
    checked_result,
    handle_for,
    know_tool,
    reattached,
    tool_call,
)
from mcpkit.client.tools import OutputChecker, RejectedTool
from mcpkit.client.transport import ClientTransport, Connector
from mcpkit.client.wire_object import typed_list
from mcpkit.errors import InvalidParamsError, NotJSONError, TransportError
from mcpkit.protocol.codec import EncodeError
from mcpkit.protocol.tasks import is_create_task_result
from mcpkit.tracing.spans import active, client_exchange
from mcpkit.types.methods import Method

__all__ = ["DEFAULT_TIMEOUT", "Client", "Structured"]

log = logging.getLogger("mcpkit.client")

DEFAULT_TIMEOUT: Any = object()
"""A call's `timeout=` when it gives none: `ClientOptions.timeout` applies."""
T = TypeVar("T")
Structured = dict[str, Any] | None
"""What `CallToolResult.data` is when the call names no type: the structured content."""
_UNSET_INFO: dict[str, Any] = {"name": "mcpkit", "version": __version__}


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
        self.options = opts = log_options(options or ClientOptions(), on_log)
        self._connector: Connector | None = None
        self._given: ClientTransport | None = None
        if hasattr(target, "connect") and hasattr(target, "key"):
            self._connector = cast(Connector, target)
        else:
            self._given = target
        self._inputs = InputHandlers(
            elicit, elicit_url, sample, roots, dict(opts.sampling_capability or {}),
            Completions(on_elicitation_complete),
        )
        self.capabilities = declared_capabilities(self._inputs.capabilities(), opts)
        """What every request declares (CAP-1), derived from the handlers."""
        self.client_info = dict(client_info) if client_info else dict(_UNSET_INFO)
        self.on_log = on_log
        # Logs a request with no handler of its own asked for (lists too carry the level).
        self._logs = call_notifications(None, on_log) if on_log else None
        self._transport: ClientTransport | None = None
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)
        self._tokens = itertools.count(1)
        self._cache = ResultCache()
        self._outputs = OutputChecker()
        self._adapter: EraAdapter = ModernAdapter(self)
        """What the connection's era means; modern (with an empty `_meta`) until connected."""
        self.era: Era | None = None
        """`"modern"` or `"legacy"` once connected."""
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] | None = None
        """Self-reported by the server: display it, never trust it (META-8)."""
        self.server_capabilities: dict[str, Any] | None = None
        self.instructions: str | None = None
        self.tools: dict[str, Tool] = {}
        """The usable tools from the last `list_tools()`, by name."""
        self.rejected_tools: list[RejectedTool] = []
        """Tool definitions the last `list_tools()` dropped as unusable, with the reason."""

    # -- connection ------------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> Client:
        """Open the transport and settle the era (done on first use when not called)."""
        if self._transport is not None:
            return self
        async with self._lock:
            if self._transport is None:
                await self._open()
        return self

    @property
    def transport(self) -> ClientTransport | None:
        return self._transport

    async def close(self) -> None:
        """Close listen streams and the transport (for stdio: end the server process)."""
        self._adapter.close()
        transport, self._transport = self._transport, None
        if transport is not None:
            await transport.close()

    async def _open(self) -> None:
        opener = Opener(
            self._connector, self._given, self.options, self.capabilities, self.client_info,
            self._ids.__next__, self._unsolicited, self,
        )
        self._given = None
        opened = await opener.open()
        self.era = opened.era
        self.protocol_version = opened.version
        self.server_info = opened.server_info
        self.server_capabilities = opened.capabilities
        self.instructions = opened.instructions
        self._transport = opened.transport
        self._adapter = opened.adapter
        await opened.adapter.opened(opened.version, opened.discover)

    # -- the request path ------------------------------------------------------------------

    async def _request(
        self,
        method: str,
        params: dict[str, Any],
        on_notification: Any = None,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> dict[str, Any]:
        """One wire round trip; returns the result object or raises the error."""
        transport = self._transport
        if transport is None or not getattr(transport, "alive", True):
            # Not connected yet, or the server process died since the last call (STDIO-9).
            await self._reconnect(transport)
            transport = self._transport
            assert transport is not None
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        send = exchange if (tracer := active()) is None else client_exchange(
            tracer, exchange, self.protocol_version, self._connector or transport)
        wait = self.options.timeout if timeout is DEFAULT_TIMEOUT else timeout
        on_notification = on_notification or self._logs
        try:
            response = await send(transport, message, on_notification, wait)
        except EncodeError as exc:
            # Every transport encodes before it writes, so nothing of it reached the server.
            raise NotJSONError(
                f"{method}: the request cannot be sent as JSON ({exc}); an integer beyond "
                "the 64-bit range goes as a string, a set as a list") from None
        except TransportError as exc:
            if not self._adapter.expired(exc) or self._connector is None:
                raise
            # LEG-13: the legacy session ended before serving this request; a new handshake,
            # then the request once more.
            await self._reconnect(transport)
            transport = self._transport
            assert transport is not None
            message = {**message, "id": next(self._ids)}
            response = await send(transport, message, on_notification, wait)
        self._adapter.check(response, method)
        return result_of(response, method)

    async def _reconnect(self, dead: ClientTransport | None) -> None:
        if dead is not None:
            async with self._lock:
                if self._transport is dead:
                    self._transport = None
                    self._cache.clear()
                    with contextlib.suppress(Exception):
                        await dead.close()
        await self.connect()

    def _params(
        self, fields: dict[str, Any], token: Any = None, level: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Request params with the era's `_meta` (shared when nothing per-request is added)."""
        return self._adapter.params(fields, token, level, meta)

    async def _call(self, method: str, fields: dict[str, Any], what: str, *,
                    progress: ProgressHandler | None = None, log: LogHandler | None = None,
                    log_level: str | None = None, timeout: float | None = DEFAULT_TIMEOUT,
                    meta: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], bool]:
        """A call that may take input rounds or become a task (`mcpkit.client.calls`)."""
        await self.connect()
        token = f"p{next(self._tokens)}" if progress is not None else None
        return await call(self, method, fields, what, token=token, progress=progress, log=log,
                          on_log=self.on_log, log_level=log_level, timeout=timeout, meta=meta)

    async def _unsolicited(self, message: dict[str, Any]) -> None:
        """Notifications outside any request: a legacy session's changes and log messages."""
        self._cache.invalidate(message)
        if message.get("method") == Method.MESSAGE:
            if self._logs is not None:
                await self._logs(message)
            return
        await self._adapter.unsolicited(message)

    # -- lists, with the cache -------------------------------------------------------------

    async def _list(self, method: str, key: str, fresh: bool) -> list[dict[str, Any]]:
        await self.connect()
        items, rejected = await list_through_cache(self, method, key, fresh)
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
        await self.connect()
        token = f"p{next(self._tokens)}" if progress is not None else None
        if log is not None and log_level is None:
            log_level = self.options.log_level or "info"
        on_note = call_notifications(progress, log) if progress or log else None
        return await self._request(
            method, self._params(dict(params or {}), token, log_level, meta), on_note, timeout)

    async def discover(self, *, fresh: bool = False) -> dict[str, Any]:
        """The server's DiscoverResult (in the legacy era, the same shape built from initialize)."""
        await self.connect()
        return await self._adapter.discover(fresh)

    async def list_tools(self, *, fresh: bool = False) -> list[Tool]:
        """Every usable tool, all pages; invalid definitions land in `rejected_tools`."""
        items = await self._list(Method.TOOLS_LIST, "tools", fresh)
        tools = typed_list(Tool, items, "tools/list tools")
        self.tools = {tool.name: tool for tool in tools}
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
        notifications; `timeout` bounds each round trip (None: wait forever). When the
        request declares Tasks (`ClientOptions.extensions`) and the server makes it a task,
        the task is waited on (`on_status` hears each state) and its result returned; then
        `timeout` also bounds the whole wait, and a wait that times out, fails on this side
        or is cancelled cancels the task (`tasks/cancel`, best effort).
        """
        on_status = options.pop("on_status", None)
        reader = await self._reader(name, result)
        fields, what = tool_call(name, arguments)
        answer = await call_once(self, fields, what, **options)
        if is_create_task_result(answer):
            handle = handle_for(self, answer, what, name, reader)
            timeout = options.get("timeout", DEFAULT_TIMEOUT)
            try:
                return await handle.wait(on_status=on_status, timeout=self.options.timeout
                                         if timeout is DEFAULT_TIMEOUT else timeout)
            except BaseException:
                if not handle.done:
                    await handle.cancel_quietly()
                raise
        return checked_result(self, name, answer, what, reader)

    async def _reader(self, name: str, result: Any) -> ResultReader[Any] | None:
        """The reader of the type a call names (compiled before anything is sent)."""
        if result is None:
            return None
        reader = reader_for(result)
        await self.connect()
        await know_tool(self, name)
        return reader

    @overload
    async def start_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                         result: None = None, **options: Unpack[StartOptions]
                         ) -> TaskHandle[Structured]: ...

    @overload
    async def start_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                         result: type[T], **options: Unpack[StartOptions]
                         ) -> TaskHandle[T]: ...

    async def start_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                         result: Any = None, **options: Unpack[StartOptions]
                         ) -> TaskHandle[Any]:
        """Call a tool and return its task's handle at once, declaring Tasks for this request
        whatever `ClientOptions.extensions` says. A server that answers at once gives a
        handle already done (`task_id` None); `handle.wait()` returns the result either way,
        read into `result=` as `call_tool` reads it. The options are `call_tool`'s.
        """
        await self.connect()
        reader = await self._reader(name, result)
        fields, what = tool_call(name, arguments)
        options["meta"] = task_meta(self, options.get("meta"))
        answer = await call_once(self, fields, what, **options)
        if is_create_task_result(answer):
            return handle_for(self, answer, what, name, reader)
        return TaskHandle(self, None, checked_result(self, name, answer, what, reader))

    @overload
    def task(self, task_id: str, *, result: None = None) -> TaskHandle[Structured]: ...

    @overload
    def task(self, task_id: str, *, result: type[T]) -> TaskHandle[T]: ...

    def task(self, task_id: str, *, result: Any = None) -> TaskHandle[Any]:
        """The handle of a task started earlier, by its id (after a restart, say); its first
        `status()` or `wait()` asks the server about it. `result=` reads its result's
        structured content as `call_tool` does (the tool is unknown, so its `outputSchema`
        is not checked)."""
        return reattached(self, task_id, None if result is None else reader_for(result))

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
            cached = self._cache.get(Method.RESOURCES_READ, uri)
            if cached is not None:
                return ReadResourceResult(cached, what)
        allowance: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
        if max_bytes is not None:
            await self.connect()
            allowing = getattr(self._transport, "allowing", None)
            if allowing is not None:
                allowance = allowing(max_bytes)
        try:
            with allowance:
                result, rounds = await self._call(
                    Method.RESOURCES_READ, {"uri": uri}, what,
                    progress=progress, log=log, timeout=timeout, meta=meta,
                )
        except InvalidParamsError as exc:
            raise read_error(exc, uri) from None
        require_list(result, "contents", what)
        if self.options.cache and not rounds:
            self._cache.put(Method.RESOURCES_READ, uri, result)
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
        result, _ = await self._call(
            Method.PROMPTS_GET, fields, what,
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
        await self.connect()
        fields: dict[str, Any] = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        if context:
            fields["context"] = {"arguments": dict(context)}
        return completion_of(
            await self._request(Method.COMPLETE, self._params(fields), timeout=timeout))

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
        return Subscription(self, tools=tools, prompts=prompts, resources=resources, uris=uris)

    def invalidate(self) -> None:
        """Forget every cached result."""
        self._cache.clear()

    def __repr__(self) -> str:
        where = self._connector if self._connector is not None else self._transport
        state = f"{self.era} {self.protocol_version}" if self.era else "not connected"
        return f"Client({where!r}, {state})"
