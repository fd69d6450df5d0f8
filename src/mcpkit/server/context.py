"""`Context`: what a handler may know and do about the request it is serving.

A handler gets one by annotating a parameter with `Context` (any name). The context reads the
request's checked `_meta` (never anything remembered from other requests) and sends only
request-scoped notifications: progress when the request gave a progress token, log messages
when it asked for a log level and at or above it. Both go to the `notify` callable that the
transport handed to `Server.handle`, so they travel on this request's own stream. An async
handler awaits them (`await ctx.info(...)`); a plain one calls them (`ctx.info(...)`) from the
worker thread it runs in, and each is sent on the request's event loop before the call returns.

In `tools/call`, `prompts/get` and `resources/read` a handler may also ask the client for
input (`ask`, `elicit`, `elicit_url`, `sample`, `roots`) and keep `state` across the rounds
of a multi round-trip request; the bookkeeping is in `mcpkit.server.mrtr`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from mcpkit.errors import AuthError
from mcpkit.protocol.codec import RequestId, notification_message
from mcpkit.protocol.envelope import RequestMeta
from mcpkit.protocol.extensions import declared
from mcpkit.server.asking import (
    Elicit,
    Elicited,
    ElicitURL,
    ListRoots,
    Question,
    Root,
    Sample,
    Sampled,
)
from mcpkit.server.threads import serving_loop
from mcpkit.types.constants import LOG_LEVELS, PROGRESS_TOKEN_KEY
from mcpkit.types.era import LEGACY, MODERN, Era
from mcpkit.types.methods import Method

if TYPE_CHECKING:
    from mcpkit.server.mrtr import Round

__all__ = [
    "Context",
    "Notify",
    "called_by",
    "caller_of",
    "inject",
    "raise_failures",
    "raises_failures",
]

Notify = Callable[[dict[str, Any]], Awaitable[None]]
_RANK = {name: i for i, name in enumerate(LOG_LEVELS)}


class _Sent:
    """What a report returns when there is nothing left to await: nothing to send, or sent
    already (from a plain handler). Awaiting it does nothing."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield


_SENT: Final = _Sent()


async def _notified(notify: Notify, message: dict[str, Any]) -> None:
    await notify(message)


def inject(injected: Mapping[str, type], kwargs: dict[str, Any], ctx: Context) -> None:
    """Hand `ctx` to every parameter of a handler annotated with `Context` (by type, never by
    name): `injected` is the signature's table of them."""
    for name in injected:
        kwargs[name] = ctx


class Context:
    """The request being served, as a handler sees it."""

    __slots__ = (
        "_caller", "_held", "_last_progress", "_notify", "_raise_failures", "_round",
        "in_request_only", "meta", "method", "principal", "request_id", "server"
    )
    # `_caller` (the context of the handler whose `ctx.call_tool` made this request) and
    # `_raise_failures` (a middleware chain turns the handler's exceptions into answers, so
    # they pass up through it) are set only when they apply, and read with `getattr`: a plain
    # request never pays for them.
    _caller: Context | None
    _raise_failures: bool

    def __init__(
        self,
        server: Any,
        method: str,
        request_id: RequestId | None,
        meta: RequestMeta,
        notify: Notify | None,
        principal: Any = None,
    ) -> None:
        self.server = server
        self.method = method
        self.request_id = request_id
        self.meta = meta
        self.principal = principal
        self.in_request_only = False
        """The answer must come in this request, never later through a task: a request of a
        2025-11-25 session, whose client has no way to declare the Tasks extension (its
        adapter, `mcpkit.legacy.session`, says so through `dispatch.call`). A task tool then
        runs as a plain call."""
        self._notify = notify
        self._last_progress: float | None = None
        self._round: Round | None = None
        self._held: list[Awaitable[None]] | None = None
        """The reports of a plain handler running on the event loop's thread (`run_inline`),
        sent once it returns."""

    @property
    def era(self) -> Era:
        """The era the client speaks: "modern" (2026-07-28) or "legacy" (a 2025-11-25
        session, whose requests the adapter serves as modern ones)."""
        return LEGACY if self.in_request_only else MODERN

    @property
    def depth(self) -> int:
        """0 for a request a client sent; 1 for one a handler made with `call_tool`,
        `read_resource` or `get_prompt`, and so on down."""
        depth, caller = 0, caller_of(self)
        while caller is not None:
            depth += 1
            caller = caller_of(caller)
        return depth

    @property
    def lifespan_context(self) -> Any:
        """What the server's lifespan yielded (`Server(lifespan=...)`), entered once per
        process by the transport serving it; RuntimeError naming the fix while it is not."""
        return self.server.lifespan_context

    @property
    def client_info(self) -> dict[str, Any] | None:
        """Self-reported by the client: for display and logs, never for decisions (META-8)."""
        return self.meta.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.meta.client_capabilities

    def client_supports(self, extension: str) -> bool:
        """Whether this request declared `extension` (never anything an earlier request said)."""
        return declared(self.meta.client_capabilities, extension) is not None

    def client_extension(self, extension: str) -> dict[str, Any] | None:
        """The settings this request declared for `extension` (e.g. the Apps extension's
        `mimeTypes`), or None when it did not declare it."""
        return declared(self.meta.client_capabilities, extension)

    async def upstream_token(self) -> str:
        """The caller's access token at the identity provider they signed in at, for a tool
        that calls that provider's API on their behalf, when the server signs users in
        through an authorization proxy (`mcpkit.auth.proxy`). Only a tool that asks gets it:
        the token the client sent is for this server only and never reaches a tool. It is
        refreshed at the provider when it is about to expire. An `AuthError` when there is
        none (no proxy, a revoked sign-in, a provider token that cannot be refreshed)."""
        fetch = getattr(self.principal, "upstream", None)
        if fetch is None:
            raise AuthError(f"{self.method}: no upstream token: this request was not signed in "
                            "through an authorization proxy (mcpkit.auth.proxy)")
        token: str = await fetch()
        return token

    @property
    def protocol_version(self) -> str:
        return self.meta.protocol_version

    @property
    def trace(self) -> dict[str, str]:
        """W3C trace context (`traceparent`, `tracestate`, `baggage`) the request carried."""
        return self.meta.trace

    # -- reporting: `await ctx.info(...)` in an async handler, `ctx.info(...)` in a plain one --

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> Awaitable[None]:
        """Send `notifications/progress`, if the client asked for progress on this request.

        Progress must grow with each report (PROG-3); a report that does not is a bug in the
        handler and raises ValueError rather than confusing the client.
        """
        token = self.meta.progress_token
        if token is None or self._notify is None:
            return _SENT
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(
                f"{self.method}: progress must increase with each report "
                f"({progress} after {self._last_progress})"
            )
        self._last_progress = progress
        params: dict[str, Any] = {PROGRESS_TOKEN_KEY: token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        return self._send(notification_message(Method.PROGRESS, params))

    def log_enabled(self, level: str) -> bool:
        wanted = self.meta.log_level
        return wanted is not None and _RANK[level] >= _RANK[wanted]

    def log(self, level: str, data: Any, logger: str | None = None) -> Awaitable[None]:
        """Send `notifications/message` if the request opted in at this level or lower."""
        if level not in _RANK:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        if self._notify is None or not self.log_enabled(level):
            return _SENT
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        return self._send(notification_message(Method.MESSAGE, params))

    def debug(self, data: Any, logger: str | None = None) -> Awaitable[None]:
        return self.log("debug", data, logger)

    def info(self, data: Any, logger: str | None = None) -> Awaitable[None]:
        return self.log("info", data, logger)

    def warning(self, data: Any, logger: str | None = None) -> Awaitable[None]:
        return self.log("warning", data, logger)

    def error(self, data: Any, logger: str | None = None) -> Awaitable[None]:
        return self.log("error", data, logger)

    def _send(self, message: dict[str, Any]) -> Awaitable[None]:
        """The notification for an async handler to await; from a plain handler (in its worker
        thread, where nothing awaits), sent on the request's event loop before this returns,
        so its reports arrive in order and before its result."""
        notify = self._notify
        assert notify is not None
        held = self._held
        if held is not None:
            held.append(notify(message))
            return _SENT
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            return notify(message)
        loop = serving_loop()
        if loop is None:
            raise RuntimeError(
                f"{self.method}: the context reports from the thread running the handler (or "
                "awaited in an async handler), not from a thread the handler started"
            )
        asyncio.run_coroutine_threadsafe(_notified(notify, message), loop).result()
        return _SENT

    def route_notifications(self, sink: Notify | None) -> Notify | None:
        """Send this request's notifications (its progress and log messages) to `sink` from now
        on, and return where they went until now. For an extension that takes a call over and
        answers it later (a task): the handler's reports are then the extension's to keep or
        to pass on (None: they are dropped)."""
        previous, self._notify = self._notify, sink
        return previous

    def ask_through(self, round: Round) -> None:
        """Put the handler's questions and `state` through `round` from now on (a `Round`
        subclass an extension keeps beyond this request, as a task keeps its input channel)."""
        self._round = round

    async def run_inline(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        """Call a plain handler declared never to wait (`blocking=False`) on the event loop's
        thread. Its reports cannot be awaited by it: they are held, and sent in order once it
        returns (or raises), before its result, as from a worker thread."""
        held: list[Awaitable[None]] = []
        self._held = held
        try:
            return fn(**kwargs)
        finally:
            self._held = None
            for report in held:
                await report

    # -- asking the client for input (multi round-trip requests) ------------------------------

    def _asking(self) -> Round:
        if self._round is None:
            raise RuntimeError(
                f"{self.method}: only tools/call, prompts/get and resources/read may ask the "
                "client for input or keep ctx.state"
            )
        return self._round

    @property
    def state(self) -> dict[str, Any]:
        """JSON data the handler keeps across the rounds of this request (sealed into
        `requestState`, so the server holds nothing between rounds)."""
        return self._asking().state

    def can_ask(self, question: Question) -> bool:
        """Whether this request declared the capability `question` needs."""
        return self._asking().can_ask(self.meta.client_capabilities, question)

    async def ask(
        self,
        questions: Mapping[str, Question],
        *,
        single_use: bool = False,
        skip_unsupported: bool = False,
    ) -> dict[str, Any]:
        """The answers to several questions at once, by key.

        When the request lacks some, this round ends with an `input_required` result asking
        for them and the handler runs again on the retry. `single_use`: the answers count
        only once (a replayed retry is rejected). `skip_unsupported`: questions the client
        cannot answer are left out (their answer is None) instead of failing with -32021.
        """
        return await self._asking().ask(
            self.meta.client_capabilities, questions,
            single_use=single_use, skip_unsupported=skip_unsupported,
        )

    async def elicit(
        self, key: str, message: str, schema: Mapping[str, Any] | None = None, *,
        single_use: bool = False,
    ) -> Elicited:
        """Ask the user to fill in a form: `schema` maps field names to types (or is a JSON
        Schema object); None asks for a plain accept or decline."""
        answers = await self.ask({key: Elicit(message, schema)}, single_use=single_use)
        return answers[key]  # type: ignore[no-any-return]

    async def elicit_url(
        self, key: str, message: str, url: str, *, single_use: bool = False
    ) -> Elicited:
        """Send the user to `url` (for secrets, payments, third-party sign-in)."""
        answers = await self.ask({key: ElicitURL(message, url)}, single_use=single_use)
        return answers[key]  # type: ignore[no-any-return]

    async def sample(
        self, key: str, prompt: str | Sequence[Mapping[str, Any]], *, max_tokens: int,
        system_prompt: str | None = None, temperature: float | None = None,
    ) -> Sampled:
        """A completion from the client's model (more options: `ask` with a `Sample`)."""
        question = Sample(prompt, max_tokens=max_tokens, system_prompt=system_prompt,
                          temperature=temperature)
        return (await self.ask({key: question}))[key]  # type: ignore[no-any-return]

    async def roots(self, key: str = "roots") -> list[Root]:
        """The `file://` roots the client exposes."""
        return (await self.ask({key: ListRoots()}))[key]  # type: ignore[no-any-return]

    async def consume_state(self) -> bool:
        """Accept this request's `requestState` only once (for one-time actions); False when
        it carried none. States sealed later in this request are single-use too."""
        return await self._asking().redeem()

    def mint_handle(self, kind: str, data: Any, *, ttl: float | None = None) -> str:
        """An opaque handle for `data`, bound to this caller and `kind`, valid `ttl` seconds."""
        from mcpkit.server.handles import DEFAULT_HANDLE_TTL, mint_handle

        return mint_handle(self.server.sealer, self.principal, kind, data,
                           DEFAULT_HANDLE_TTL if ttl is None else ttl)

    def open_handle(self, kind: str, handle: Any) -> Any:
        """The data of a handle this caller got from `mint_handle`, or HandleError."""
        from mcpkit.server.handles import open_handle

        where = self._round.where if self._round is not None else self.method
        return open_handle(self.server.sealer, self.principal, kind, handle, where)

    # -- the same server's own tools, resources and prompts ------------------------------------

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None
                        ) -> dict[str, Any]:
        """Call this server's tool `name` as a client would, through the same argument check,
        scopes and middleware: the `CallToolResult` (a tool's failure is `isError` in it); an
        `RPCError` when the request itself is refused (an unknown tool). From an async
        handler; questions the tool asks are asked in this request's round."""
        from mcpkit.server.calls import call_own

        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await call_own(self, Method.TOOLS_CALL, params)

    async def read_resource(self, uri: str) -> dict[str, Any]:
        """Read this server's resource `uri` as a client would (`ReadResourceResult`)."""
        from mcpkit.server.calls import call_own

        return await call_own(self, Method.RESOURCES_READ, {"uri": uri})

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None
                         ) -> dict[str, Any]:
        """Get this server's prompt `name` as a client would (`GetPromptResult`)."""
        from mcpkit.server.calls import call_own

        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await call_own(self, Method.PROMPTS_GET, params)


# -- the flags a request's path sets on its Context ---------------------------------------------
# Set only when they apply and read with `getattr`, so a plain request pays nothing for them;
# the server's own modules set and read them through these, never by the slot's name.

def called_by(ctx: Context, caller: Context) -> None:
    """`ctx` serves a request the handler of `caller` made of its own server (`ctx.call_tool`,
    ...): its `depth` counts from there."""
    ctx._caller = caller


def caller_of(ctx: Context) -> Context | None:
    """The context whose handler made the request `ctx` serves; None for a client's request."""
    return getattr(ctx, "_caller", None)


def raise_failures(ctx: Context, through: bool) -> None:
    """Whether a handler's exception passes up (`through`: a middleware chain is above it, and
    answers what reaches it) rather than become the request's answer where it is raised."""
    ctx._raise_failures = through


def raises_failures(ctx: Context) -> bool:
    """Whether a handler's exception passes up to a middleware chain (`raise_failures`)."""
    return getattr(ctx, "_raise_failures", False)
