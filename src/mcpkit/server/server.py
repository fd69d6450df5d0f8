"""`Server`: what an application registers, and the one entry point every transport calls.

Registration (`add_tool`, `add_resource`, `add_resource_template`, `add_prompt`,
`set_completion`, with decorators as sugar) builds every wire definition once. `handle` serves
one modern request and returns its response message. The routing and the exception boundary
live in `mcpkit.server.dispatch`, each method beside what it serves (`tools.py`, ...).

This is the core class, and it knows no transport (the server layer sits below them). The
`mcpkit.Server` applications import is its subclass in `mcpkit.app`, which adds `asgi()`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from mcpkit.protocol.framing import DEFAULT_MAX_MESSAGE_BYTES
from mcpkit.server.composition import Link, merge_extensions, merged_extensions
from mcpkit.server.context import Notify
from mcpkit.server.dispatch import handle as _handle
from mcpkit.server.dispatch import routes
from mcpkit.server.extension_options import check_extension_options, tool_option_owner
from mcpkit.server.extensions import (
    Extensions,
    MethodHandler,
    Service,
    ToolInterceptor,
    ToolOptionsCheck,
)
from mcpkit.server.lifespan import Lifespan, LifespanState
from mcpkit.server.middleware import Chain, FunctionMiddleware, Middleware, MiddlewareFunction
from mcpkit.server.prompts import Prompt, PromptOptions, build_prompt
from mcpkit.server.resources import (
    CacheHint,
    Fallback,
    Resource,
    ResourceOptions,
    ResourceTemplate,
    TemplateOptions,
    UriTemplate,
    describe,
    has_variables,
    signature_of,
)
from mcpkit.server.scopes import scopes_of
from mcpkit.server.sealing import Sealer
from mcpkit.server.subscriptions import Broker, Change, ListenPart, LocalBroker
from mcpkit.server.tool_filters import ToolFilter
from mcpkit.server.tools import CORE_TOOL_OPTIONS, Tool, ToolOptions, build_tool
from mcpkit.types.constants import SERVER_INFO_KEY

if TYPE_CHECKING:
    from mcpkit.store import Store

__all__ = ["Server", "ServerOptions"]

F = TypeVar("F", bound=Callable[..., Any])
K = TypeVar("K")


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """Settings that apply to the whole server; each has a safe default."""

    page_size: int = 100
    """Items per page of every list result."""
    list_cache: CacheHint = field(default_factory=lambda: CacheHint(60_000, "public"))
    """Caching hint of list results and `server/discover`."""
    read_cache: CacheHint = field(default_factory=lambda: CacheHint(0, "private"))
    """Default caching hint of `resources/read` (a resource may override it)."""
    logging: bool = True
    """Advertise `logging` so handlers may send log messages to clients that ask for them."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    """Largest message a transport accepts."""
    state_keys: tuple[str | bytes, ...] = ()
    """Keys sealing `requestState` and handles (base64 text or raw bytes, 32 bytes
    recommended): the first seals, all open, so a key rotates in before the old one is
    dropped. Empty: the MCPKIT_STATE_KEYS environment variable, else the key ring persisted in
    the user's data folder (`mcpkit keys path`), which every server of this user on this host
    shares, so a retry may reach any of them; only when that ring can be neither read nor
    created, a key of this process's own (said once in the log). Replicas on several hosts
    need the same keys, here or in MCPKIT_STATE_KEYS (docs/state.md). Make one with
    `mcpkit keys new` or `mcpkit.server.sealing.new_state_key()`."""
    state_ttl: float = 300.0
    """Seconds a sealed `requestState` stays valid."""
    store: Store | str | None = None
    """Where state is kept: a `Store` for single-use nonces, or a store URL for every seam
    (`mcpkit.store.urls`: "memory", "sqlite:///state.db", "postgresql://...", "redis://...";
    with PostgreSQL or Redis, replicas share single use, legacy sessions, their events and
    the state keys). None: the MCPKIT_STORE environment variable, else single use in an
    SQLite file beside the key ring in the user's data folder (so a restarted server, or any
    other of this user on this host, refuses a replay) and everything else in this process;
    "memory" keeps single use in this process too."""
    clock: Callable[[], float] = time.time
    """Unix time in seconds, for state and handle expiry."""
    expose_errors: bool = False
    """Put an unexpected exception's type and message in what the client sees (a tool's
    `isError` text, the -32603 of a resource or prompt). Off by default because a message may
    hold secrets (paths, queries, tokens): the client then gets only an error id, and the
    traceback goes to the server log under the same id. Meant for development
    (`mcpkit run --dev`)."""
    extensions: Mapping[str, Any] = field(default_factory=dict)
    """The options of the extensions the server runs, each under the name its extension
    registered with its type (`mcpkit.server.extension_options.register_options`; the Tasks
    extension's: `{"tasks": mcpkit.ext.tasks.TaskOptions(...)}`). An extension left out runs
    with its defaults; it reads its own with `extension`."""
    scoped_lists: bool = False
    """Leave out of `tools/list`, `resources/list`, `resources/templates/list` and
    `prompts/list` what the caller's token does not grant the `scopes=` of (AUTH-12); a
    caller without a principal (stdio, an unprotected server) still sees everything."""
    grace_s: float = 5.0
    """How long a stopping server (SIGTERM, `mcpkit run --grace SECONDS`) lets the requests and
    the tasks it runs finish. Resumable tasks are handed back at once; a request still running
    when it ends is answered with a retryable error (HTTP 503 with Retry-After), a task still
    running ends `failed`, saying why."""
    max_call_depth: int = 8
    """How deep handlers may nest calls of their own server (`ctx.call_tool`,
    `ctx.read_resource`, `ctx.get_prompt`): one more is -32603 naming the call."""

    def __post_init__(self) -> None:
        grace = self.grace_s
        if not isinstance(grace, int | float) or isinstance(grace, bool) or not (
                0 <= grace < float("inf")):
            raise ValueError(f"ServerOptions.grace_s must be seconds, 0 or more, not {grace!r}")
        depth = self.max_call_depth
        if type(depth) is not int or depth < 1:
            raise ValueError(f"ServerOptions.max_call_depth must be a positive integer, not "
                             f"{depth!r}")
        object.__setattr__(self, "extensions", check_extension_options(self.extensions))

    def extension(self, name: str, kind: type[K]) -> K:
        """The options of the extension registered as `name` (of type `kind`): those given in
        `extensions`, else `kind()`, its defaults."""
        given = self.extensions.get(name)
        if given is None:
            return kind()
        if not isinstance(given, kind):
            raise TypeError(f"ServerOptions.extensions[{name!r}] is a "
                            f"{type(given).__name__}, not a {kind.__name__}")
        return given


class Server:
    """An MCP server: register tools, resources and prompts, then serve it on any transport."""

    def __init__(
        self,
        name: str,
        version: str = "0.0.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        options: ServerOptions | None = None,
        broker: Broker | None = None,
        lifespan: Lifespan | None = None,
    ) -> None:
        info: dict[str, Any] = {"name": name, "version": version}
        if title:
            info["title"] = title
        if website_url:
            info["websiteUrl"] = website_url
        if icons:
            info["icons"] = list(icons)
        self.info = info
        self.name = name
        self.version = version
        self.instructions = instructions
        self.options = options or ServerOptions()
        self.sealer = Sealer(self.options)
        """Keys, clock and store for `requestState` and handles."""
        self.result_meta: dict[str, Any] = {SERVER_INFO_KEY: info}
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: list[ResourceTemplate] = []
        self.prompts: dict[str, Prompt] = {}
        self.completion: Callable[..., Any] | None = None
        self.resource_fallback: Fallback | None = None
        """Reads the URIs no resource or template serves (`set_resource_fallback`)."""
        self.broker: Broker = broker or LocalBroker()
        self.generation = 0
        """Bumped on every registration change; list caches and cursors are keyed by it."""
        self.result_cache: dict[Any, dict[str, Any]] = {}
        """The DiscoverResult and list pages as built for the current `generation` (cleared
        on every registration change), so every client's opening requests cost a lookup."""
        self.routes = routes()
        """Method name -> the function serving it, built once from the method registry."""
        self.extensions = Extensions()
        """The extensions `server/discover` offers (`extension`), with their settings."""
        self.tool_filters: list[ToolFilter] = []
        """Predicates `tools/list` applies per request (`add_tool_filter`)."""
        self.tool_interceptor: ToolInterceptor | None = None
        """Serves the calls of the tools an extension intercepts (`intercept_tool_calls`)."""
        self.tool_option_checks: dict[str, ToolOptionsCheck] = {}
        """Tool option -> the check of the extension that takes it (`take_tool_options`)."""
        self.services: list[Service] = []
        """What extensions run beside the server, started and drained by the transports
        (`add_service`)."""
        self.listen_parts: list[ListenPart] = []
        """What extensions add to `subscriptions/listen` (a list of ids to follow, say)."""
        self.chain: Chain | None = None
        """The middleware every request passes (`add_middleware`); None: none, and a request
        pays nothing for the chain."""
        self.lifespan_state = LifespanState(self, lifespan)
        """The lifespan and its holders (`running()`; a transport that cannot hold a block
        open calls its `acquire` and `release`)."""
        self._links: list[Link] = []
        """The servers mounted or included here (`mount`, `include`)."""
        self._parents: list[Link] = []
        """Where this server is mounted: what it registers later appears there."""
        self.change_listeners: list[Callable[[Change], None]] = []
        """Called with each change the server announces (a list, a resource's update), in
        the announcing thread: the response cache forgets what a change makes stale."""

    # -- middleware, lifespan -------------------------------------------------------------------

    def add_middleware(self, middleware: Middleware | MiddlewareFunction) -> None:
        """Add a link to the chain every request passes (`mcpkit.server.middleware`): a
        `Middleware`, or a function `(context, call_next) -> result` for every request. Links
        run in the order added, the first one outermost."""
        if not isinstance(middleware, Middleware):
            if not callable(middleware):
                raise TypeError(f"add_middleware takes a Middleware or a function (context, "
                                f"call_next), not {middleware!r}")
            middleware = FunctionMiddleware(middleware)
        links = [*(self.chain.links if self.chain is not None else ()), middleware]
        self.chain = Chain(links)

    def middleware(self, *methods: str) -> Callable[[F], F]:
        """Decorator form of `add_middleware` for a function `(context, call_next)`: it wraps
        every request, or only those of `methods` (`@server.middleware("tools/call")`)."""

        def register(fn: F) -> F:
            self.add_middleware(FunctionMiddleware(fn, methods or None))
            return fn

        return register

    def running(self) -> AbstractAsyncContextManager[Any]:
        """Hold the server's lifespan (`Server(lifespan=...)`) while the block runs; it is
        entered by the first holder and exited by the last. Every transport holds it while it
        serves; hold it yourself around a server you drive another way."""
        return self.lifespan_state.held()

    @property
    def lifespan_context(self) -> Any:
        """What the lifespan yielded; RuntimeError naming the fix while it is not entered."""
        return self.lifespan_state.context()

    def mounted_servers(self) -> list[Server]:
        """The servers `mount`ed here (their lifespans are entered with this one's)."""
        return [link.child for link in self._links if link.live]

    # -- composition ------------------------------------------------------------------------------

    def mount(self, other: Server, namespace: str | None = None) -> None:
        """Serve `other`'s tools, resources and prompts here, live, under `namespace`
        (`billing_pay`, `invoice://billing/...`; `mcpkit.server.composition`): what it
        registers later appears here, and its calls are served by it, with its middleware and
        lifespan. A name or URI that would collide is refused (ValueError naming each)."""
        self._compose(other, namespace, live=True)

    def include(self, other: Server, prefix: str | None = None) -> None:
        """Copy `other`'s tools, resources and prompts here, under `prefix` (namespaced as
        `mount` does): they are this server's own from now on, run with its middleware and
        lifespan; later changes of `other` do not appear."""
        self._compose(other, prefix, live=False)

    def _compose(self, other: Server, namespace: str | None, *, live: bool) -> None:
        how = "mount" if live else "include"
        if not isinstance(other, Server):
            raise TypeError(f"{how}() takes a Server, not {type(other).__name__}")
        if other is self or self in other._descendants():
            raise ValueError(f"{how}({other.name!r}): a server cannot hold itself")
        link = Link(self, other, namespace, live, self._claim, self._changed)
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
            other._parents.append(link)
        for kind in ("tools", "resources", "prompts"):
            self._changed(kind)

    def _descendants(self) -> list[Server]:
        found: list[Server] = []
        for link in self._links:
            found += [link.child, *link.child._descendants()]
        return found

    def _claim(self, kind: str, name: str) -> None:
        """Refuse a new entry that would collide where this server is mounted."""
        for link in self._parents:
            link.claims(kind, name)

    # -- registration -------------------------------------------------------------------

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

    def add_tool(
        self, fn: Callable[..., Any], name: str | None = None, **options: Unpack[ToolOptions]
    ) -> Tool:
        """Register `fn` as a tool; see `tool()` and `ToolOptions`."""
        tool = build_tool(fn, name, **options)
        if tool.name in self.tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self.admit_tool(tool)
        self._claim("tools", tool.name)
        self.tools[tool.name] = tool
        self._changed("tools")
        return tool

    def admit_tool(self, tool: Tool) -> None:
        """Refuse, before it is registered, a tool this server could not serve as declared: one
        carrying an option no extension installed here takes (`take_tool_options`); the
        extensions that take its options check their values and say whether its calls are
        intercepted (`Tool.intercepted`). A tool served by the server it came from (`mount`) is
        that server's to run."""
        if tool.delegate is not None or not tool.extension_options:
            return
        checks: list[ToolOptionsCheck] = []
        for option, value in tool.extension_options.items():
            check = self.tool_option_checks.get(option)
            if check is None:
                owner = tool_option_owner(option)
                if owner is None:
                    raise ValueError(
                        f"tool {tool.name!r}: {option}={value!r} is no option of the core "
                        "Server and no extension on this server takes it; install the one "
                        "that does before registering the tool, or use mcpkit.Server, which "
                        "installs the official ones")
                raise ValueError(f"tool {tool.name!r}: {option}={value!r} needs {owner.owner} "
                                 f"on this server; {owner.install}")
            if check not in checks:
                checks.append(check)
        tool.intercepted = any([check(tool) for check in checks])

    def take_tool_options(self, options: Iterable[str], check: ToolOptionsCheck) -> None:
        """An extension takes these tool options on this server: a tool registered with any
        of them is handed to `check` (`mcpkit.server.extensions.ToolOptionsCheck`) before it is
        admitted. An option the core knows, or one another extension takes, is refused."""
        if not callable(check):
            raise TypeError(f"take_tool_options takes a callable check, not {check!r}")
        for option in options:
            if option in CORE_TOOL_OPTIONS:
                raise ValueError(f"tool option {option!r} is the core's own")
            taken = self.tool_option_checks.get(option)
            if taken is not None and taken != check:
                raise ValueError(f"server {self.name!r}: the tool option {option!r} is taken "
                                 "already")
            self.tool_option_checks[option] = check

    def intercept_tool_calls(self, interceptor: ToolInterceptor) -> None:
        """Hand the calls of the tools an extension's check marked (`Tool.intercepted`) to
        `interceptor` (one per server), after the middleware chain and the method's own checks
        (`mcpkit.server.extensions.ToolInterceptor`)."""
        if not callable(interceptor):
            raise TypeError(f"intercept_tool_calls takes an async callable, not {interceptor!r}")
        if self.tool_interceptor is not None and self.tool_interceptor != interceptor:
            raise ValueError(f"server {self.name!r}: its tool calls are intercepted already")
        self.tool_interceptor = interceptor

    def add_service(self, service: Service) -> None:
        """Run `service` beside the server: every transport starts it when it starts serving
        and drains it, with `ServerOptions.grace_s`, when it stops
        (`mcpkit.server.extensions.Service`)."""
        if service not in self.services:
            self.services.append(service)

    def start_services(self) -> None:
        """The server starts serving: start what extensions run beside it."""
        for service in self.services:
            service.start()

    async def drain_services(self, grace_s: float) -> None:
        """The server is stopping: drain what extensions run beside it, all at once."""
        if self.services:
            await asyncio.gather(*(service.drain(grace_s) for service in self.services))

    def remove_tool(self, name: str) -> None:
        if self.tools.pop(name, None) is None:
            raise KeyError(f"no tool named {name!r}")
        self._changed("tools")

    def tool(
        self, name: str | None = None, **options: Unpack[ToolOptions]
    ) -> Callable[[F], F]:
        """Register a function as a tool.

        The input schema comes from the parameters' type hints (or `input_schema`), the
        description from the docstring, the output schema from the return annotation when
        it is structured. A parameter annotated `Context` receives the request context.
        """

        def register(fn: F) -> F:
            self.add_tool(fn, name, **options)
            return fn

        return register

    def add_resource(
        self,
        uri: str,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        cache: CacheHint | None = None,
        scopes: Iterable[str] | None = None,
    ) -> Resource | ResourceTemplate:
        """Register `fn` as the resource at `uri`; a URI with `{variables}` registers a
        template (`add_resource_template`), its variables passed as the parameters of the
        same names."""
        if has_variables(uri):
            if size is not None:
                raise ValueError(
                    f"resource template {uri!r}: size belongs to one resource; a template "
                    "serves many, so it has none"
                )
            return self.add_resource_template(
                uri, fn, name=name, title=title, description=description, mime_type=mime_type,
                annotations=annotations, icons=icons, meta=meta, cache=cache, scopes=scopes,
            )
        if uri in self.resources:
            raise ValueError(f"a resource with URI {uri!r} is already registered")
        self._claim("resources", uri)
        if "://" not in uri and ":" not in uri:
            raise ValueError(f"resource URI {uri!r} has no scheme")
        sig, is_async = signature_of(fn, uri)
        if sig.parameters:
            names = [p.name for p in sig.parameters]
            raise ValueError(
                f"resource {uri!r}: the function takes parameters ({', '.join(names)}) but the "
                f"URI has no variables to fill them; name each in the URI as a template "
                f"variable, e.g. {uri.rstrip('/')}/{{{names[0]}}}"
            )
        doc = description if description is not None else sig.description
        definition = describe(
            "uri", uri, name=name or fn.__name__, title=title, description=doc,
            mime_type=mime_type, annotations=annotations, icons=icons, meta=meta, size=size,
        )
        resource = Resource(fn, sig, definition, mime_type, cache, is_async, uri=uri,
                            scopes=scopes_of(scopes, f"resource {uri!r}"))
        self.resources[uri] = resource
        self._changed("resources")
        return resource

    def resource(self, uri: str, **options: Unpack[ResourceOptions]) -> Callable[[F], F]:
        """Register a function that returns a resource's contents (str, bytes or data).

        A URI with `{variables}` (`"user://{name}/profile"`) registers a resource template:
        each variable is passed as the function's parameter of that name.
        """

        def register(fn: F) -> F:
            self.add_resource(uri, fn, **options)
            return fn

        return register

    def add_resource_template(
        self,
        uri_template: str,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        cache: CacheHint | None = None,
        scopes: Iterable[str] | None = None,
    ) -> ResourceTemplate:
        template = UriTemplate(uri_template)
        sig, is_async = signature_of(fn, uri_template)
        params = [p.name for p in sig.parameters]
        unfilled = [v for v in template.names if v not in params]
        unmatched = [p for p in params if p not in template.names]
        if unfilled or unmatched:
            problems = []
            if unfilled:
                problems.append(f"no parameter takes the variable(s) {', '.join(unfilled)}")
            if unmatched:
                problems.append(f"the parameter(s) {', '.join(unmatched)} match no variable")
            raise ValueError(
                f"resource template {uri_template!r}: {'; '.join(problems)}; the function's "
                f"parameters must be exactly the template's variables "
                f"({', '.join(template.names)})"
            )
        doc = description if description is not None else sig.description
        definition = describe(
            "uriTemplate", uri_template, name=name or fn.__name__, title=title,
            description=doc, mime_type=mime_type, annotations=annotations, icons=icons, meta=meta,
        )
        entry = ResourceTemplate(fn, sig, definition, mime_type, cache, is_async, template=template,
                                 scopes=scopes_of(scopes, f"resource template {uri_template!r}"))
        if any(t.template.template == uri_template for t in self.templates):
            raise ValueError(f"a resource template {uri_template!r} is already registered")
        self._claim("templates", uri_template)
        self.templates.append(entry)
        self._changed("resources")
        return entry

    def resource_template(
        self, uri_template: str, **options: Unpack[TemplateOptions]
    ) -> Callable[[F], F]:
        """Register a function serving every URI that matches an RFC 6570 template."""

        def register(fn: F) -> F:
            self.add_resource_template(uri_template, fn, **options)
            return fn

        return register

    def add_prompt(
        self, fn: Callable[..., Any], *, name: str | None = None,
        scopes: Iterable[str] | None = None, **options: Unpack[PromptOptions],
    ) -> Prompt:
        """Register `fn` as a prompt; see `prompt()`."""
        prompt = build_prompt(fn, name=name, **options)
        prompt.scopes = scopes_of(scopes, f"prompt {prompt.name!r}")
        if prompt.name in self.prompts:
            raise ValueError(f"a prompt named {prompt.name!r} is already registered")
        self._claim("prompts", prompt.name)
        self.prompts[prompt.name] = prompt
        self._changed("prompts")
        return prompt

    def prompt(
        self, name: str | None = None, *, scopes: Iterable[str] | None = None,
        **options: Unpack[PromptOptions],
    ) -> Callable[[F], F]:
        """Register a function that returns a prompt's messages; its parameters are arguments.
        `scopes`: the OAuth scopes a `prompts/get` of it needs."""

        def register(fn: F) -> F:
            self.add_prompt(fn, name=name, scopes=scopes, **options)
            return fn

        return register

    def set_resource_fallback(self, fn: Callable[..., Any] | None, *,
                              mime_type: str | None = None,
                              cache: CacheHint | None = None) -> None:
        """Serve `resources/read` of every URI no resource or template matches: `fn(uri)`
        (with a `Context` parameter when it asks the client, reports progress or logs) returns
        what a resource function returns, or None when it has no such resource (a server
        holding a file tree, a proxy forwarding reads). Nothing of it is listed: list what it
        serves with `add_resource` or templates. None removes it."""
        if fn is None:
            self.resource_fallback = None
        else:
            sig, is_async = signature_of(fn, "resource fallback")
            names = [p.name for p in sig.parameters]
            if names != ["uri"]:
                raise ValueError(
                    "the resource fallback takes the URI read as its one parameter `uri` (and "
                    f"may take a Context), not ({', '.join(names)})"
                )
            definition = {"uri": "*", "name": getattr(fn, "__name__", "fallback")}
            self.resource_fallback = Fallback(fn, sig, definition, mime_type, cache, is_async)
        self._changed()  # the capabilities may change; no list does

    def set_completion(self, fn: Callable[..., Any]) -> None:
        """Set the `completion/complete` handler: fn(ref, argument, context) -> values."""
        if not callable(fn):
            raise TypeError("the completion handler must be callable")
        self.completion = fn
        self._changed()

    def completer(self) -> Callable[[F], F]:
        """Decorator form of `set_completion`."""

        def register(fn: F) -> F:
            self.set_completion(fn)
            return fn

        return register

    def extension(self, ident: str, settings: Mapping[str, Any] | None = None) -> None:
        """Offer the extension `ident` (`com.example/search`) in `server/discover`, with its
        settings object (`{}` when None). A prefix whose second label is `modelcontextprotocol`
        or `mcp` is the specification's (META-2): only its published extensions may use it.
        Declaring again replaces the settings."""
        self.extensions.declare(ident, settings)
        self._changed()

    def add_method(self, name: str, handler: MethodHandler, *, extension: str,
                   gated: bool = True) -> None:
        """Serve the request method `name` for the extension `extension` (declared first):
        `await handler(params, ctx)` returns its result. Only requests whose `_meta` declares
        the extension reach it; the others get -32021 naming it. `gated=False` is for an
        extension whose methods a client may call once the server offers it, declared or
        not (Skills: the offer is the commitment). Legacy sessions never reach either, since
        the 2025-11-25 handshake has no extensions."""
        self.routes[name] = self.extensions.gate(name, handler, extension, self.routes,
                                                  gated=gated)

    def add_tool_filter(self, admits: ToolFilter) -> None:
        """Show a tool in a request's `tools/list` only if `admits(tool, ctx)` says so (MCP
        Apps hides the tools meant only for its views from a caller without Apps). Lists are
        cached per set of tools left out; calls are not refused (`mcpkit.server.tool_filters`)."""
        if not callable(admits):
            raise TypeError(f"a tool filter is a callable (tool, ctx) -> bool, not {admits!r}")
        self.tool_filters.append(admits)
        self._changed("tools")

    # -- what the server offers ------------------------------------------------------------

    def _completes(self) -> bool:
        """A server mounted here completes arguments of its prompts or templates."""
        return any(link.child.completion is not None or link.child._completes()
                   for link in self._links if link.live)

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        if self.tools:
            caps["tools"] = {"listChanged": True}
        if self.resources or self.templates or self.resource_fallback is not None:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.prompts:
            caps["prompts"] = {"listChanged": True}
        if self.completion is not None or self._completes():
            caps["completions"] = {}
        if self.options.logging:
            caps["logging"] = {}
        if self.extensions.offered:
            caps["extensions"] = self.extensions.capabilities()
        return caps

    # -- serving ---------------------------------------------------------------------------

    def handle(
        self,
        request: Any,
        *,
        notify: Notify | None = None,
        principal: Any = None,
    ) -> Coroutine[Any, Any, dict[str, Any]]:
        """Serve one modern request: await it for the JSON-RPC response message (it never
        raises). A plain method handing back the core's coroutine, so a request pays for no
        extra frame or import here (measured: 2 µs of 35 per HTTP request)."""
        return _handle(self, request, notify, principal)

    def __repr__(self) -> str:
        return f"Server({self.name!r}, {self.version!r})"

