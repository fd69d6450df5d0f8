"""Registered resources and resource templates: definitions, `resources/*` and URI matching.

A static resource is found by an exact dict lookup; templates (RFC 6570 `{var}` and `{+var}`)
are compiled to regular expressions at registration and tried in registration order. The
methods (`resources/list`, `resources/templates/list`, `resources/read`) are at the end.

A read that fails is a JSON-RPC error naming the URI: -32602 when no resource has it (or its
function returned None), -32603 when its function raised (with an error id, the traceback in
the log: `mcpkit.server.failures`) or returned what cannot be sent (saying what).
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, TypedDict
from urllib.parse import unquote

from mcpkit.errors import (
    InternalError,
    MethodNotFoundError,
    ResourceNotFoundError,
    RPCError,
)
from mcpkit.schema import Signature, derive_signature, output_to_json
from mcpkit.server.content import Blob, blob_block, json_refusal, json_text
from mcpkit.server.context import Context, inject, raises_failures
from mcpkit.server.dependencies import Depends, call_handler, check_dependencies
from mcpkit.server.failures import failure_text
from mcpkit.server.listing import page
from mcpkit.server.mrtr import in_rounds
from mcpkit.server.scopes import viewer, visible
from mcpkit.types.methods import Method

__all__ = [
    "CacheHint",
    "Fallback",
    "Resource",
    "ResourceOptions",
    "ResourceTemplate",
    "TemplateOptions",
    "UriTemplate",
    "has_variables",
    "list_resources",
    "list_templates",
    "read_contents",
    "read_failure",
    "read_resource",
]


@dataclass(frozen=True, slots=True)
class CacheHint:
    """`ttlMs` and `cacheScope` for a cacheable result (CACHE-1)."""

    ttl_ms: int = 0
    scope: str = "public"

    def __post_init__(self) -> None:
        if type(self.ttl_ms) is not int or self.ttl_ms < 0:
            raise ValueError(f"ttl_ms must be a non-negative integer, got {self.ttl_ms!r}")
        if self.scope not in ("public", "private"):
            raise ValueError(f'cache scope must be "public" or "private", got {self.scope!r}')

    def apply(self, result: dict[str, Any]) -> dict[str, Any]:
        result["ttlMs"] = self.ttl_ms
        result["cacheScope"] = self.scope
        return result


class TemplateOptions(TypedDict, total=False):
    """What may be said about a resource template besides its URI and function."""

    name: str | None
    """Defaults to the function's name."""
    title: str | None
    description: str | None
    """Defaults to the function's docstring."""
    mime_type: str | None
    annotations: Mapping[str, Any] | None
    icons: list[dict[str, Any]] | None
    meta: Mapping[str, Any] | None
    cache: CacheHint | None
    """Overrides `ServerOptions.read_cache` for reads of it."""
    scopes: Iterable[str] | None
    """OAuth scopes a read needs (`mcpkit.server.scopes`)."""


class ResourceOptions(TemplateOptions, total=False):
    """What may be said about a resource besides its URI and function."""

    size: int | None
    """Its size in bytes, when known before it is read (a template serves many: none)."""


_VAR = re.compile(r"\{([+#]?)([A-Za-z0-9_.,]+)\}")

log = logging.getLogger("mcpkit.server")


def has_variables(uri: str) -> bool:
    """Whether `uri` is a template: a URI never holds a brace (RFC 3986), a template does."""
    return "{" in uri or "}" in uri


class UriTemplate:
    """A URI template of RFC 6570 levels 1-2 (`{var}`, `{+var}`, `{#var}`), matched against URIs."""

    __slots__ = ("names", "pattern", "template")

    def __init__(self, template: str) -> None:
        self.template = template
        names: list[str] = []
        parts: list[str] = []
        pos = 0
        for m in _VAR.finditer(template):
            parts.append(self._literal(template, template[pos : m.start()]))
            op, name = m.group(1), m.group(2)
            if "," in name:
                raise ValueError(f"URI template {template!r}: one variable per expression")
            if not name.isidentifier():
                # Each variable is passed to the function as the parameter of that name, and
                # the name also becomes a regex group: it must be a Python identifier.
                raise ValueError(
                    f"URI template {template!r}: variable {name!r} is not a Python identifier "
                    "(it names a parameter of the function)"
                )
            if name in names:
                raise ValueError(f"URI template {template!r}: variable {name!r} appears twice")
            names.append(name)
            if op == "#":
                # Fragment expansion writes "#" before the value (RFC 6570 3.2.4): match it
                # there, so the variable gets the value alone.
                parts.append(f"\\#(?P<{name}>.+?)")
            elif op == "+":
                parts.append(f"(?P<{name}>.+?)")
            else:
                parts.append(f"(?P<{name}>[^/?#]+?)")
            pos = m.end()
        parts.append(self._literal(template, template[pos:]))
        if not names:
            raise ValueError(f"URI template {template!r} has no variables; use a resource")
        self.names = tuple(names)
        self.pattern = re.compile("".join(parts) + r"\Z")

    @staticmethod
    def _literal(template: str, text: str) -> str:
        """The regex of the text between expressions; a brace there is an expression we do not
        support (`{?q}`, `{/path}`, `{}`) or an unbalanced one, which would otherwise be matched
        as literal text and the template would never serve the URIs it was meant for."""
        if "{" in text or "}" in text:
            raise ValueError(
                f"URI template {template!r}: unsupported or unbalanced expression near {text!r} "
                "(only {var}, {+var} and {#var} are supported)"
            )
        return re.escape(text)

    def match(self, uri: str) -> dict[str, str] | None:
        m = self.pattern.match(uri)
        if m is None:
            return None
        return {k: unquote(v) for k, v in m.groupdict().items()}


@dataclass(slots=True)
class Readable:
    """What `resources/read` needs of a resource or a template, built at registration."""

    fn: Callable[..., Any]
    signature: Signature
    definition: dict[str, Any]
    mime_type: str | None
    cache: CacheHint | None
    is_async: bool

    def __post_init__(self) -> None:
        # Checked at registration: a wrong hint would otherwise fail only on the first read.
        cache: object = self.cache  # typed, but callers may pass anything
        if cache is not None and not isinstance(cache, CacheHint):
            where = self.definition.get("uri") or self.definition.get("uriTemplate")
            raise TypeError(
                f"resource {where!r}: cache must be a CacheHint(ttl_ms, scope), "
                f"not {type(cache).__name__}"
            )


Delegate = Callable[[dict[str, Any], Context], Awaitable[dict[str, Any]]]
"""Who serves a read instead: the mounted server a resource came from (`Server.mount`)."""


@dataclass(slots=True)
class Resource(Readable):
    uri: str
    scopes: tuple[str, ...] = ()
    """The OAuth scopes a read needs (`mcpkit.server.scopes`)."""
    delegate: Delegate | None = None


@dataclass(slots=True)
class Fallback(Readable):
    """What reads the URIs no resource or template serves (`Server.set_resource_fallback`):
    its function takes the URI as `uri`."""

    delegate: Delegate | None = None
    """Always None: a mounted server's fallback stays its own (`Server.mount` does not copy it)."""


@dataclass(slots=True)
class ResourceTemplate(Readable):
    template: UriTemplate
    scopes: tuple[str, ...] = ()
    """The OAuth scopes a read of any URI it matches needs."""
    delegate: Delegate | None = None


def describe(
    key: str,
    value: str,
    *,
    name: str,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    annotations: Mapping[str, Any] | None,
    icons: list[dict[str, Any]] | None,
    meta: Mapping[str, Any] | None,
    size: int | None = None,
) -> dict[str, Any]:
    d: dict[str, Any] = {key: value, "name": name}
    if title:
        d["title"] = title
    if description:
        d["description"] = description
    if mime_type:
        d["mimeType"] = mime_type
    if size is not None:
        d["size"] = size
    if annotations:
        d["annotations"] = dict(annotations)
    if icons:
        d["icons"] = list(icons)
    if meta:
        d["_meta"] = dict(meta)
    return d


def signature_of(fn: Callable[..., Any], where: str) -> tuple[Signature, bool]:
    sig = derive_signature(fn, injectables=(Context,), markers=(Depends,),
                           structured_output=False)
    check_dependencies(sig.provided, f"resource {where!r}")
    return sig, inspect.iscoroutinefunction(fn)


def read_contents(uri: str, mime_type: str | None, value: Any) -> list[dict[str, Any]]:
    """`contents` of a ReadResourceResult from what a resource function returned; raises
    InternalError, saying why, for data that cannot be sent as JSON."""
    if isinstance(value, str):
        out: dict[str, Any] = {"uri": uri, "text": value}
        if mime_type:
            out["mimeType"] = mime_type
        return [out]
    if isinstance(value, bytes | bytearray):
        return [blob_block(uri, bytes(value), mime_type or "application/octet-stream")]
    if isinstance(value, Blob):
        return [value.contents()]
    if isinstance(value, list) and value and all(isinstance(v, Blob) for v in value):
        return [v.contents() for v in value]
    try:
        data = output_to_json(value)
    except TypeError as exc:
        raise _unsendable(uri, f"a value that is not JSON data: {exc}") from None
    try:
        text = json_text(data)
    except TypeError as exc:
        raise _unsendable(uri, json_refusal(data, exc)) from None
    return [{"uri": uri, "mimeType": mime_type or "application/json", "text": text}]


def _unsendable(uri: str, problem: str) -> InternalError:
    """The error of a read whose result cannot be sent; logged, since the server is at fault."""
    message = f"resource {uri!r} returned {problem}"
    log.error("%s", message)
    return InternalError(message, {"uri": uri})


class _Offers(Protocol):
    """What refusing a resource method reads of the server: whether it offers any resource."""

    @property
    def resources(self) -> Mapping[str, Resource]: ...

    @property
    def templates(self) -> Sequence[ResourceTemplate]: ...

    @property
    def resource_fallback(self) -> Fallback | None: ...


def _require(server: _Offers, method: str) -> None:
    if not server.resources and not server.templates and server.resource_fallback is None:
        raise MethodNotFoundError(
            f"Method not found: {method} (this server offers no resources)", {"method": method}
        )


async def list_resources(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    server = ctx.server
    _require(server, Method.RESOURCES_LIST)
    seen_by = viewer(ctx)
    return page(server, "resources", "resources", params,
                lambda: visible(server.resources.values(), ctx, seen_by), seen_by)


async def list_templates(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    server = ctx.server
    _require(server, Method.RESOURCES_TEMPLATES_LIST)
    seen_by = viewer(ctx)
    return page(server, "templates", "resourceTemplates", params,
                lambda: visible(server.templates, ctx, seen_by), seen_by)


async def read_resource(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """`resources/read`: the resource of that URI, or the first template matching it."""
    server = ctx.server
    _require(server, Method.RESOURCES_READ)
    uri = params["uri"]  # a string: the row's params check (guards.py) saw to it
    kwargs: dict[str, Any]
    entry: Any = server.resources.get(uri)
    if entry is not None:
        kwargs = {}
    else:
        for template in server.templates:
            found = template.template.match(uri)
            if found is not None:
                entry, kwargs = template, found
                break
        else:
            entry = server.resource_fallback
            if entry is None:
                raise ResourceNotFoundError(uri)
            kwargs = {"uri": uri}
    if entry.delegate is not None:
        delegated: dict[str, Any] = await entry.delegate(params, ctx)
        return delegated
    if entry.signature.injected:
        inject(entry.signature.injected, kwargs, ctx)
    return await in_rounds(ctx, uri, None, params, partial(_read, ctx, entry, uri, kwargs))


def _contents(uri: str, entry: Readable, value: Any) -> list[dict[str, Any]]:
    if value is None:
        raise ResourceNotFoundError(uri)
    return read_contents(uri, entry.mime_type, value)


def read_failure(uri: str, exc: Exception, ctx: Context) -> InternalError:
    """The -32603 of the resource `uri` whose function raised `exc` (its error id in `data`,
    the traceback logged)."""
    text, error_id = failure_text("resource", uri, exc, expose=ctx.server.options.expose_errors)
    return InternalError(text, {"uri": uri, "errorId": error_id})


async def _read(ctx: Context, entry: Readable, uri: str, kwargs: dict[str, Any]
                ) -> dict[str, Any]:
    server = ctx.server
    try:
        contents = await call_handler(entry, kwargs, ctx, partial(_contents, uri, entry))
    except RPCError:
        raise  # a refusal the function means (not found, a missing capability) or ours
    except Exception as exc:
        if raises_failures(ctx):
            raise  # a middleware chain is above: the function's exception goes up through it
        raise read_failure(uri, exc, ctx) from None
    result = {"resultType": "complete", "contents": contents}
    cache: CacheHint = entry.cache or server.options.read_cache
    return cache.apply(result)
