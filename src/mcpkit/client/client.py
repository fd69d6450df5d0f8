"""`Client`: one class that talks to any MCP server, modern or legacy, on any transport.

Connecting decides the era (`mcpkit.client.era`): a `server/discover` probe, a fallback to the
2025-11-25 `initialize` handshake, a restart of a stdio server that died on the probe. After
that every method reads the same in both eras: modern requests carry the per-request `_meta`
(version, capabilities derived from the handlers, client info, log level, trace context);
legacy requests carry what the handshake negotiated, and a legacy server's own requests
(elicitation, sampling, roots, ping) are answered by the handlers the modern MRTR loop uses.

The request path is short on purpose: build params, one transport round trip, look at
`resultType`. Only an `input_required` result enters the MRTR loop (`_rounds`), and only list
and read results touch the cache.

May import `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol`, `mcpkit._version`; transports
arrive as objects (a `Connector` or a `ClientTransport`), never by import.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from mcpkit._version import __version__
from mcpkit.client.cache import ResultCache
from mcpkit.client.era import PROCESS_ERAS, Era, EraCache, NoCommonVersionError, read_probe
from mcpkit.client.inputs import InputHandlers, InputRequest
from mcpkit.client.listen import Subscription
from mcpkit.client.options import (
    ClientOptions,
    InputRoundsExceededError,
    LogHandler,
    ProgressHandler,
    RequestTimeoutError,
    valid_trace_context,
)
from mcpkit.client.tools import OutputChecker, RejectedTool, vet_tools
from mcpkit.client.transport import ClientTransport, Connector
from mcpkit.errors import InvalidParamsError, ProtocolViolation, RPCError, TransportError
from mcpkit.protocol.codec import notification_message
from mcpkit.types.constants import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LEGACY_VERSIONS,
    LOG_LEVEL_KEY,
    LOG_LEVELS,
    PROGRESS_TOKEN_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    Method,
)

__all__ = ["Client"]

log = logging.getLogger("mcpkit.client")

_DEFAULT: Any = object()
_MAX_PAGES = 10_000
_UNSET_INFO: dict[str, Any] = {"name": "mcpkit", "version": __version__}


class Client:
    """An MCP client. `async with Client(connector) as client: await client.list_tools()`.

    `target` is a `Connector` (`StdioServer`, `InMemory`, an HTTP connector), which lets the
    client restart a stdio server and remember its era, or an already open `ClientTransport`.
    Handlers (`elicit`, `elicit_url`, `sample`, `roots`) answer what the server asks for; the
    capabilities each request declares are exactly those with a handler.
    """

    def __init__(
        self,
        target: Connector | ClientTransport,
        *,
        client_info: Mapping[str, Any] | None = None,
        elicit: Any = None,
        elicit_url: Any = None,
        sample: Any = None,
        roots: Any = None,
        on_log: LogHandler | None = None,
        options: ClientOptions | None = None,
    ) -> None:
        self.options = opts = options or ClientOptions()
        self._connector: Connector | None = None
        self._given: ClientTransport | None = None
        if hasattr(target, "connect") and hasattr(target, "key"):
            self._connector = cast(Connector, target)
        else:
            self._given = target
        self._inputs = InputHandlers(
            elicit, elicit_url, sample, roots, dict(opts.sampling_capability or {})
        )
        caps = self._inputs.capabilities()
        for name, value in (opts.capabilities or {}).items():
            caps[name] = {**caps.get(name, {}), **value} if isinstance(value, Mapping) else value
        self.capabilities: dict[str, Any] = caps
        """What every request declares (CAP-1), derived from the handlers."""
        self.client_info = dict(client_info) if client_info else dict(_UNSET_INFO)
        self.on_log = on_log
        self._eras = EraCache(opts.era_cache) if opts.era_cache is not None else None
        self._transport: ClientTransport | None = None
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)
        self._tokens = itertools.count(1)
        self._cache = ResultCache()
        self._outputs = OutputChecker()
        self._base_meta: dict[str, Any] = {}
        self._legacy_listeners: list[Subscription] = []
        self._legacy_uris: dict[str, int] = {}
        self.era: Era | None = None
        """`"modern"` or `"legacy"` once connected."""
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] | None = None
        """Self-reported by the server: display it, never trust it (META-8)."""
        self.server_capabilities: dict[str, Any] | None = None
        self.instructions: str | None = None
        self.tools: dict[str, dict[str, Any]] = {}
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
        for sub in list(self._legacy_listeners):
            self._legacy_listeners.remove(sub)
        transport, self._transport = self._transport, None
        if transport is not None:
            await transport.close()

    async def _new_transport(self) -> ClientTransport:
        if self._connector is not None:
            return await self._connector.connect()
        if self._given is None:
            raise TransportError("this Client was given a transport, which is closed now")
        transport, self._given = self._given, None
        return transport

    async def _open(self) -> None:
        transport = await self._new_transport()
        try:
            mode = self.options.era
            if mode == "legacy":
                await self._initialize(transport)
            elif mode == "modern":
                self._become_modern(transport, self.options.protocol_version or _preferred())
            else:
                transport = await self._probe(transport)
        except BaseException:
            await transport.close()
            raise

    def _remembered(self) -> Any:
        key = self._connector.key if self._connector is not None else None
        if key is None:
            return None
        return (self._eras.get(key) if self._eras is not None else None) or PROCESS_ERAS.get(key)

    def _remember(self, era: Era, version: str | None) -> None:
        if self._connector is None:
            return
        key = self._connector.key
        PROCESS_ERAS.put(key, era, version)
        if self._eras is not None:
            self._eras.put(key, era, version)

    def _forget(self) -> None:
        if self._connector is not None:
            PROCESS_ERAS.forget(self._connector.key)
            if self._eras is not None:
                self._eras.forget(self._connector.key)

    async def _restart(self, transport: ClientTransport, why: str) -> ClientTransport:
        """A new connection (for stdio, a new process), once, for the legacy handshake."""
        if self._connector is None:
            raise TransportError(f"{why}; give the Client a connector so it can reconnect")
        log.info("%s; connecting again for the initialize handshake", why)
        await transport.close()
        return await self._connector.connect()

    async def _probe(self, transport: ClientTransport) -> ClientTransport:
        """The dual-era probe (VER-9, VER-12); returns the transport that ended up connected."""
        remembered = self._remembered()
        if remembered is not None and remembered.era == "legacy":
            try:
                await self._initialize(transport)
                return transport
            except (RPCError, TransportError, ProtocolViolation) as exc:
                self._forget()
                transport = await self._restart(transport, f"initialize failed ({exc})")
        sent = self.options.protocol_version or _preferred()
        if remembered is not None and remembered.version and not self.options.protocol_version:
            sent = remembered.version
        response, died = await self._send_probe(transport, sent)
        if died:
            transport = await self._restart(transport, "the server closed on server/discover")
            await self._initialize(transport)
            self._remember("legacy", None)
            return transport
        outcome = read_probe(response, sent)
        if outcome.era == "modern":
            assert outcome.version is not None
            discover = outcome.discover
            if outcome.retry:
                response, died = await self._send_probe(transport, outcome.version)
                if died or response is None:
                    raise TransportError(
                        f"server/discover with version {outcome.version} got no answer"
                    )
                if "error" in response:
                    raise RPCError.from_wire(response["error"])
                discover = response.get("result")
            self._become_modern(transport, outcome.version, discover)
            self._remember("modern", outcome.version)
            return transport
        try:
            await self._initialize(transport)
        except (RPCError, TransportError) as exc:
            # A dual-era server that pinned this connection to the modern era on the probe,
            # or one that closed: a fresh process takes the handshake.
            transport = await self._restart(transport, f"initialize after the probe failed ({exc})")
            await self._initialize(transport)
        self._remember("legacy", None)
        return transport

    async def _send_probe(
        self, transport: ClientTransport, version: str
    ) -> tuple[dict[str, Any] | None, bool]:
        """(response or None when silent, whether the server died on it)."""
        message = {
            "jsonrpc": "2.0", "id": next(self._ids), "method": Method.DISCOVER,
            "params": {"_meta": self._meta_for(version)},
        }
        task = asyncio.ensure_future(transport.request(message))
        done, _ = await asyncio.wait({task}, timeout=self.options.probe_timeout)
        if not done:
            # Slow or silent: do not probe again, and do not cancel on the wire (a legacy
            # server may dislike notifications before initialize); a late answer is ignored.
            task.add_done_callback(_consume)
            return None, False
        try:
            return task.result(), False
        except TransportError as exc:
            status = getattr(exc, "status", None)
            if isinstance(status, int) and 400 <= status < 500:
                return None, False  # HTTP 4xx without a modern error body (VER-12)
            if self._connector is not None and self._connector.kind == "stdio":
                return None, True
            raise

    def _meta_for(self, version: str) -> dict[str, Any]:
        meta: dict[str, Any] = {
            PROTOCOL_VERSION_KEY: version,
            CLIENT_CAPABILITIES_KEY: self.capabilities,
        }
        if self.options.send_client_info:
            meta[CLIENT_INFO_KEY] = self.client_info
        if self.options.log_level is not None:
            meta[LOG_LEVEL_KEY] = self.options.log_level
        return meta

    def _become_modern(
        self, transport: ClientTransport, version: str, discover: dict[str, Any] | None = None
    ) -> None:
        self._transport = transport
        self.era = "modern"
        self.protocol_version = version
        self._base_meta = self._meta_for(version)
        _set_notification_handler(transport, self._unsolicited)
        if type(discover) is dict:
            self._learn(discover)
            if self.options.cache:
                self._cache.put(Method.DISCOVER, None, discover)

    def _learn(self, discover: dict[str, Any]) -> None:
        caps = discover.get("capabilities")
        self.server_capabilities = caps if type(caps) is dict else {}
        instructions = discover.get("instructions")
        self.instructions = instructions if type(instructions) is str else None
        meta = discover.get("_meta")
        info = meta.get(SERVER_INFO_KEY) if type(meta) is dict else None
        if type(info) is dict:
            self.server_info = info

    async def _initialize(self, transport: ClientTransport) -> None:
        """The 2025-11-25 handshake (LEG-1), then the session's log level (LEG-5)."""
        transport.set_request_handler(self._answer_server)
        _set_notification_handler(transport, self._unsolicited)
        params = {
            "protocolVersion": self.options.legacy_version,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        }
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": Method.INITIALIZE,
                   "params": params}
        response = await self._exchange(transport, message, None, self.options.timeout)
        result = _result_of(response, Method.INITIALIZE)
        version = result.get("protocolVersion")
        if version not in LEGACY_VERSIONS:
            raise NoCommonVersionError(
                f"initialize: the server answered protocol version {version!r}; this client "
                f"speaks {', '.join(LEGACY_VERSIONS)} in the initialize era"
            )
        await transport.notify(notification_message(Method.INITIALIZED, None))
        self._transport = transport
        self.era = "legacy"
        self.protocol_version = version
        caps = result.get("capabilities")
        self.server_capabilities = caps if type(caps) is dict else {}
        info = result.get("serverInfo")
        self.server_info = info if type(info) is dict else None
        instructions = result.get("instructions")
        self.instructions = instructions if type(instructions) is str else None
        level = self.options.log_level
        if level is not None and "logging" in self.server_capabilities:
            await self._request(Method.SET_LEVEL, {"level": level})

    # -- the request path ------------------------------------------------------------------

    async def _exchange(
        self,
        transport: ClientTransport,
        message: dict[str, Any],
        on_notification: Any,
        timeout: float | None,
    ) -> dict[str, Any]:
        if timeout is None:
            return await transport.request(message, on_notification=on_notification)
        try:
            async with asyncio.timeout(timeout):
                return await transport.request(message, on_notification=on_notification)
        except TimeoutError:
            raise RequestTimeoutError(
                f"{message['method']}: no response within {timeout} s; the request was "
                "cancelled (raise the timeout for slow servers)"
            ) from None

    async def _request(
        self,
        method: str,
        params: dict[str, Any],
        on_notification: Any = None,
        timeout: float | None = _DEFAULT,
    ) -> dict[str, Any]:
        """One wire round trip; returns the result object or raises the error."""
        transport = self._transport
        if transport is None:
            await self.connect()
            transport = self._transport
            assert transport is not None
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        response = await self._exchange(
            transport, message, on_notification,
            self.options.timeout if timeout is _DEFAULT else timeout,
        )
        return _result_of(response, method)

    def _params(
        self, fields: dict[str, Any], token: Any = None, level: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Request params with the era's `_meta` (shared when nothing per-request is added)."""
        trace = self.options.trace_context
        if self.era == "legacy":
            extra: dict[str, Any] = {}
            if token is not None:
                extra[PROGRESS_TOKEN_KEY] = token
            if trace is not None:
                extra.update(valid_trace_context(trace()))
            if meta:
                extra.update(meta)
            if extra:
                fields["_meta"] = extra
            return fields
        base = self._base_meta
        if token is None and level is None and trace is None and not meta:
            fields["_meta"] = base
            return fields
        own = dict(base)
        if trace is not None:
            own.update(valid_trace_context(trace()))
        if meta:
            own.update(meta)
        if token is not None:
            own[PROGRESS_TOKEN_KEY] = token
        if level is not None:
            own[LOG_LEVEL_KEY] = level
        fields["_meta"] = own
        return fields

    async def _call(
        self,
        method: str,
        fields: dict[str, Any],
        what: str,
        *,
        progress: ProgressHandler | None = None,
        log: LogHandler | None = None,
        log_level: str | None = None,
        timeout: float | None = _DEFAULT,
        meta: Mapping[str, Any] | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """A request that may need input rounds; returns (result, whether it took rounds)."""
        await self.connect()
        token = f"p{next(self._tokens)}" if progress is not None else None
        if log is not None and log_level is None:
            log_level = self.options.log_level or "info"
        if log_level is not None and log_level not in LOG_LEVELS:
            raise ValueError(f"{what}: log_level must be one of {', '.join(LOG_LEVELS)}")
        params = self._params(fields, token, log_level if self.era == "modern" else None, meta)
        on_note = None
        log = log or self.on_log
        if progress is not None or (log is not None and (log_level or self.options.log_level)):
            on_note = _notes(progress, log)
        result = await self._request(method, params, on_note, timeout)
        kind = result.get("resultType")
        if kind is None or kind == "complete":
            return result, False
        return await self._rounds(method, params, result, what, on_note, timeout), True

    async def _rounds(
        self,
        method: str,
        params: dict[str, Any],
        result: dict[str, Any],
        what: str,
        on_note: Any,
        timeout: float | None,
    ) -> dict[str, Any]:
        """The MRTR loop (MRTR-12..15): answer, retry with a new id, until complete."""
        limit = self.options.max_rounds
        rounds = 0
        while True:
            kind = result.get("resultType", "complete")
            if kind == "complete":
                return result
            if kind != "input_required":
                raise ProtocolViolation(
                    f"{what}: the server answered with resultType {kind!r}, which this client "
                    "does not know (expected complete or input_required)"
                )
            rounds += 1
            if rounds > limit:
                raise InputRoundsExceededError(
                    f"{what}: the server still asks for input after {limit} rounds; giving up "
                    "(raise ClientOptions.max_rounds if it legitimately needs more)"
                )
            requests = result.get("inputRequests")
            state = result.get("requestState")
            if requests is None and state is None:
                raise ProtocolViolation(
                    f"{what}: an input_required result needs inputRequests or requestState "
                    "(MRTR-5)"
                )
            if state is not None and type(state) is not str:
                raise ProtocolViolation(f"{what}: requestState must be a string")
            retry = dict(params)
            if requests is not None:
                retry["inputResponses"] = await self._fulfil(requests, what)
            if state is not None:
                retry["requestState"] = state  # byte for byte, never parsed (MRTR-13)
            result = await self._request(method, retry, on_note, timeout)

    async def _fulfil(self, requests: Any, what: str) -> dict[str, Any]:
        if type(requests) is not dict:
            raise ProtocolViolation(f"{what}: inputRequests must be an object of input requests")
        responses: dict[str, Any] = {}
        for key, entry in requests.items():
            method = entry.get("method") if type(entry) is dict else None
            if type(method) is not str:
                raise ProtocolViolation(f"{what}: input request {key!r} has no method")
            params = entry.get("params")
            request = InputRequest(
                method, params if type(params) is dict else {}, self.server_info, what, key
            )
            responses[key] = await self._inputs.answer(request)
        return responses

    async def _answer_server(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """A legacy server's own request, answered by the same handlers (LEG-7)."""
        if method == Method.PING:
            return {}
        request = InputRequest(method, params or {}, self.server_info, "a legacy server request")
        return await self._inputs.answer(request)

    async def _unsolicited(self, message: dict[str, Any]) -> None:
        """Notifications outside any request: a legacy session's changes and log messages."""
        self._cache.invalidate(message)
        method = message.get("method")
        if method == Method.MESSAGE and self.on_log is not None:
            params = message.get("params") or {}
            await _maybe(self.on_log(params.get("level", "info"), params.get("data"),
                                     params.get("logger")))
            return
        for sub in list(self._legacy_listeners):
            sub._offer_legacy(message)

    # -- lists, with the cache -------------------------------------------------------------

    async def _list(self, method: str, key: str, fresh: bool) -> list[dict[str, Any]]:
        await self.connect()
        use_cache = self.options.cache and not fresh
        items: list[dict[str, Any]] = []
        rejected: list[RejectedTool] = []
        cursor: str | None = None
        seen: set[str] = set()
        restarted = False
        while True:
            page = self._cache.get(method, cursor) if use_cache else None
            if page is None:
                fields: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
                try:
                    page = await self._request(method, self._params(fields))
                except InvalidParamsError:
                    if cursor is None or restarted:
                        raise
                    # An expired cursor: every cached page is suspect; start over (CACHE-8).
                    self._cache.drop(method)
                    restarted, cursor, items, rejected, seen = True, None, [], [], set()
                    continue
                page = self._complete_page(method, key, page)
                if method == Method.TOOLS_LIST:
                    kept, dropped = vet_tools(page[key])
                    if dropped:
                        page = {**page, key: kept, "_rejected": dropped}
                if self.options.cache:
                    self._cache.put(method, cursor, page)
            items.extend(page[key])
            rejected.extend(page.get("_rejected", ()))
            cursor = page.get("nextCursor")
            if cursor is None:
                break
            if type(cursor) is not str or cursor in seen or len(seen) >= _MAX_PAGES:
                raise ProtocolViolation(
                    f"{method}: the server's nextCursor {cursor!r} repeats or is not a string; "
                    "stopped paging"
                )
            seen.add(cursor)
        if method == Method.TOOLS_LIST:
            self.tools = {t["name"]: t for t in items}
            self.rejected_tools = rejected
        return items

    @staticmethod
    def _complete_page(method: str, key: str, page: dict[str, Any]) -> dict[str, Any]:
        kind = page.get("resultType", "complete")
        if kind != "complete":
            raise ProtocolViolation(
                f"{method}: the server answered with resultType {kind!r}; list results are "
                "always complete (MRTR-4)"
            )
        if type(page.get(key)) is not list:
            raise ProtocolViolation(f"{method}: the result has no {key} list")
        return page

    # -- the public methods ----------------------------------------------------------------

    async def discover(self, *, fresh: bool = False) -> dict[str, Any]:
        """The server's DiscoverResult (in the legacy era, the same shape built from initialize)."""
        await self.connect()
        if self.era == "legacy":
            result: dict[str, Any] = {
                "resultType": "complete",
                "supportedVersions": [self.protocol_version],
                "capabilities": self.server_capabilities or {},
            }
            if self.instructions is not None:
                result["instructions"] = self.instructions
            if self.server_info is not None:
                result["_meta"] = {SERVER_INFO_KEY: self.server_info}
            return result
        if self.options.cache and not fresh:
            cached = self._cache.get(Method.DISCOVER)
            if cached is not None:
                return cached
        result = await self._request(Method.DISCOVER, self._params({}))
        self._learn(result)
        if self.options.cache:
            self._cache.put(Method.DISCOVER, None, result)
        return result

    async def list_tools(self, *, fresh: bool = False) -> list[dict[str, Any]]:
        """Every usable tool, all pages; invalid definitions land in `rejected_tools`."""
        return await self._list(Method.TOOLS_LIST, "tools", fresh)

    async def list_resources(self, *, fresh: bool = False) -> list[dict[str, Any]]:
        return await self._list(Method.RESOURCES_LIST, "resources", fresh)

    async def list_resource_templates(self, *, fresh: bool = False) -> list[dict[str, Any]]:
        return await self._list(Method.RESOURCES_TEMPLATES_LIST, "resourceTemplates", fresh)

    async def list_prompts(self, *, fresh: bool = False) -> list[dict[str, Any]]:
        return await self._list(Method.PROMPTS_LIST, "prompts", fresh)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: ProgressHandler | None = None,
        log: LogHandler | None = None,
        log_level: str | None = None,
        timeout: float | None = _DEFAULT,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Call a tool; returns its CallToolResult (`isError: true` is a result, not raised).

        `progress(progress, total, message)` and `log(level, data, logger)` see this call's
        notifications; `timeout` bounds each round trip (None: wait forever).
        """
        fields: dict[str, Any] = {"name": name}
        if arguments is not None:
            fields["arguments"] = arguments
        result, _ = await self._call(
            Method.TOOLS_CALL, fields, f"tools/call {name!r}", progress=progress, log=log,
            log_level=log_level, timeout=timeout, meta=meta,
        )
        if "content" not in result or type(result["content"]) is not list:
            raise ProtocolViolation(f"tools/call {name!r}: the result has no content list")
        if self.options.validate_output:
            tool = self.tools.get(name)
            if tool is not None:
                self._outputs.check(tool, result)
        return result

    async def read_resource(
        self,
        uri: str,
        *,
        fresh: bool = False,
        progress: ProgressHandler | None = None,
        log: LogHandler | None = None,
        timeout: float | None = _DEFAULT,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Read a resource; a fresh cached read is returned without a round trip."""
        if self.options.cache and not fresh:
            cached = self._cache.get(Method.RESOURCES_READ, uri)
            if cached is not None:
                return cached
        result, rounds = await self._call(
            Method.RESOURCES_READ, {"uri": uri}, f"resources/read {uri!r}",
            progress=progress, log=log, timeout=timeout, meta=meta,
        )
        if type(result.get("contents")) is not list:
            raise ProtocolViolation(f"resources/read {uri!r}: the result has no contents list")
        if self.options.cache and not rounds:
            self._cache.put(Method.RESOURCES_READ, uri, result)
        return result

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        progress: ProgressHandler | None = None,
        log: LogHandler | None = None,
        timeout: float | None = _DEFAULT,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {"name": name}
        if arguments is not None:
            fields["arguments"] = dict(arguments)
        result, _ = await self._call(
            Method.PROMPTS_GET, fields, f"prompts/get {name!r}",
            progress=progress, log=log, timeout=timeout, meta=meta,
        )
        if type(result.get("messages")) is not list:
            raise ProtocolViolation(f"prompts/get {name!r}: the result has no messages list")
        return result

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout: float | None = _DEFAULT,
    ) -> dict[str, Any]:
        """Completion values for one argument; `ref` is `{"type": "ref/prompt", "name": ...}`
        or `{"type": "ref/resource", "uri": ...}`. Returns the `completion` object."""
        await self.connect()
        fields: dict[str, Any] = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        if context:
            fields["context"] = {"arguments": dict(context)}
        result = await self._request(Method.COMPLETE, self._params(fields), timeout=timeout)
        completion = result.get("completion")
        if type(completion) is not dict or type(completion.get("values")) is not list:
            raise ProtocolViolation("completion/complete: the result has no completion.values")
        return completion

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

    # -- listen plumbing (used by Subscription) --------------------------------------------

    async def _listen_request(self, notifications: dict[str, Any], on_note: Any) -> dict[str, Any]:
        params = self._params({"notifications": notifications})
        return await self._request(Method.SUBSCRIPTIONS_LISTEN, params, on_note, None)

    async def _legacy_listen(self, sub: Subscription, uris: Sequence[str]) -> list[str]:
        self._legacy_listeners.append(sub)
        done: list[str] = []
        for uri in uris:
            if self._legacy_uris.get(uri, 0) == 0:
                await self._request(Method.SUBSCRIBE, {"uri": uri})
            self._legacy_uris[uri] = self._legacy_uris.get(uri, 0) + 1
            done.append(uri)
        return done

    async def _legacy_unlisten(self, sub: Subscription, uris: Sequence[str]) -> None:
        if sub in self._legacy_listeners:
            self._legacy_listeners.remove(sub)
        for uri in uris:
            count = self._legacy_uris.get(uri, 0) - 1
            if count <= 0:
                self._legacy_uris.pop(uri, None)
                if self._transport is not None:
                    with contextlib.suppress(RPCError, TransportError):
                        await self._request(Method.UNSUBSCRIBE, {"uri": uri})
            else:
                self._legacy_uris[uri] = count

    def __repr__(self) -> str:
        where = self._connector if self._connector is not None else self._transport
        state = f"{self.era} {self.protocol_version}" if self.era else "not connected"
        return f"Client({where!r}, {state})"


def _preferred() -> str:
    from mcpkit.client.era import MODERN_CLIENT_VERSIONS

    return MODERN_CLIENT_VERSIONS[0]


def _result_of(response: dict[str, Any], method: str) -> dict[str, Any]:
    error = response.get("error")
    if error is not None:
        raise RPCError.from_wire(error if type(error) is dict else {"message": str(error)})
    result = response.get("result")
    if type(result) is not dict:
        raise ProtocolViolation(f"{method}: the response has no result object")
    return result


def _set_notification_handler(transport: ClientTransport, handler: Any) -> None:
    setter: Callable[[Any], None] | None = getattr(transport, "set_notification_handler", None)
    if setter is not None:
        setter(handler)


async def _maybe(value: Any) -> None:
    if inspect.isawaitable(value):
        await value


def _notes(progress: ProgressHandler | None, log: LogHandler | None) -> Any:
    async def on_note(message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params")
        if type(params) is not dict:
            return
        if method == Method.PROGRESS and progress is not None:
            await _maybe(progress(params.get("progress", 0), params.get("total"),
                                  params.get("message")))
        elif method == Method.MESSAGE and log is not None:
            await _maybe(log(params.get("level", "info"), params.get("data"), params.get("logger")))

    return on_note


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
