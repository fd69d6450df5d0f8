"""An OpenAPI document's operations registered on a server: tools, resources, templates.

`add_openapi` reads the document (`mcpkit.openapi.documents`), names every operation, asks the
rules what each becomes, builds its input schema (`inputs`) and output schema (`outputs`), and
registers it through the server's public `add_tool`, `add_resource` and
`add_resource_template`, which compile every schema with mcpkit's own checks: the arguments
of a call are validated before any request is made. An operation the bridge cannot express
(a body sent only as `multipart/form-data`, a schema past mcpkit's bounds) is left out,
logged and listed in `Bridged.skipped` with the reason; a document it cannot read at all is
an `OpenAPIError`.

A GET routed to `"resource"` is a resource when its path has no parameters and a resource
template otherwise, its URI `OpenAPIOptions.resource_prefix` followed by the path template
(`api://pets/{petId}`). A read of it is the GET: the template's values are checked against the
path parameters' schemas first (a 400 of our own, never a request), a 404 is "resource not
found", any other error status is an internal error naming it.

Imports: the standard library, httpx, `mcpkit._version`, `mcpkit.errors`, `mcpkit.schema`,
`mcpkit.server` (the public core `Server` and content helpers) and `mcpkit.openapi`.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urljoin

import httpx

from mcpkit._version import __version__
from mcpkit.errors import (
    InternalError,
    InvalidParamsError,
    ResourceNotFoundError,
    ToolError,
    UnsupportedOperationError,
)
from mcpkit.openapi.calls import exchange
from mcpkit.openapi.documents import Document, OpenAPIError, load_document
from mcpkit.openapi.inputs import Inputs, inputs_of, is_json
from mcpkit.openapi.operations import Operation, operations_of, route_of
from mcpkit.openapi.options import OpenAPIOptions
from mcpkit.openapi.outputs import Answer, Output, excerpt, output_of, tool_result
from mcpkit.openapi.requests import build_request
from mcpkit.schema import ArgumentsError
from mcpkit.schema.raw import compile_raw
from mcpkit.server.content import Blob
from mcpkit.server.server import Server

__all__ = [
    "Bridged",
    "add_openapi",
    "new_client",
]

log = logging.getLogger("mcpkit.openapi")

_IDENT: Final = re.compile(r"\W+")
_VARIABLE: Final = re.compile(r"\{([^{}]+)\}")


@dataclass(slots=True)
class Bridged:
    """What `add_openapi` made of a document."""

    document: Document
    tools: list[str] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    """URIs of the resources, then of the templates (`templates` lists those alone)."""
    templates: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    """The operations a rule excluded, by label."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(operation, reason) for each operation the bridge cannot express."""

    def summary(self) -> str:
        """One line: how many of what, from which document."""
        parts = [f"{len(self.tools)} tools"]
        plain = len(self.resources) - len(self.templates)
        if plain:
            parts.append(f"{plain} resources")
        if self.templates:
            parts.append(f"{len(self.templates)} resource templates")
        if self.excluded:
            parts.append(f"{len(self.excluded)} excluded")
        if self.skipped:
            parts.append(f"{len(self.skipped)} left out")
        return f"{self.document.source}: {', '.join(parts)}"


def new_client(options: OpenAPIOptions, **settings: Any) -> httpx.AsyncClient:
    """The client made when none is given: no redirects followed, the calls' timeout."""
    return httpx.AsyncClient(timeout=options.timeout_s, follow_redirects=False,
                             headers={"user-agent": f"mcpkit/{__version__}"}, **settings)


def add_openapi(server: Server, spec: Any, *, client: httpx.AsyncClient | None = None,
                base_url: str | None = None, options: OpenAPIOptions | None = None) -> Bridged:
    """Register the operations of the OpenAPI document `spec` on `server` (see the module).

    `spec` is a mapping, bytes, a path or an http(s) URL (`load_document`). Requests go
    through `client` (one of our own when None) to `base_url`, else to the client's own base
    URL, else to the document's first server (relative ones resolved against the URL the
    document came from)."""
    options = options or OpenAPIOptions()
    if client is not None and not isinstance(client, httpx.AsyncClient):
        raise TypeError(f"client= takes an httpx.AsyncClient, not {type(client).__name__}")
    document = load_document(spec, options)
    http = client if client is not None else new_client(options)
    has_base = client is not None and bool(str(client.base_url))
    bridged = Bridged(document)
    for operation in operations_of(document, options):
        try:
            inputs = inputs_of(document, operation, options)
        except UnsupportedOperationError as exc:
            _skip(bridged, operation, str(exc))
            continue
        route = route_of(operation, options, inputs.resource_ready)
        if route == "exclude":
            bridged.excluded.append(operation.label)
            continue
        base = _base(document, operation, base_url, has_base)
        output = output_of(document, operation)
        try:
            if route == "resource":
                _resource(server, bridged, operation, inputs, output, http, base, options)
            else:
                if operation.name in server.tools:
                    raise OpenAPIError(f"{document.source}: {operation.label}: a tool named "
                                       f"{operation.name!r} is already registered; name it "
                                       "otherwise with OpenAPIOptions(names=...)")
                _tool(server, operation, inputs, output, http, base, options)
                bridged.tools.append(operation.name)
        except (ValueError, TypeError) as exc:
            if isinstance(exc, OpenAPIError):
                raise
            _skip(bridged, operation, str(exc))
    return bridged


def _skip(bridged: Bridged, operation: Operation, reason: str) -> None:
    log.warning("%s: %s is left out: %s", bridged.document.source, operation.label, reason)
    bridged.skipped.append((operation.label, reason))


def _server_url(document: Document, servers: Any) -> str | None:
    if not isinstance(servers, list | tuple) or not servers or not isinstance(servers[0], dict):
        return None
    first = servers[0]
    url = first.get("url")
    if not isinstance(url, str):
        return None
    listed = first.get("variables")
    variables: dict[str, Any] = listed if isinstance(listed, dict) else {}

    def default(found: re.Match[str]) -> str:
        entry = variables.get(found.group(1))
        value = entry.get("default") if isinstance(entry, dict) else None
        return value if isinstance(value, str) else found.group(0)

    return _VARIABLE.sub(default, url)


def _base(document: Document, operation: Operation, base_url: str | None,
          has_base: bool) -> str | None:
    """Where `operation`'s requests go; None: the client's own base URL."""
    if base_url:
        return base_url
    url = _server_url(document, operation.servers) or _server_url(
        document, document.data.get("servers"))
    if url is not None and url.startswith(("http://", "https://")):
        return url
    if url is not None and document.url is not None:
        return urljoin(document.url, url)
    if url is not None and has_base:
        return url  # a path under the client's base URL
    if has_base:
        return None
    named = f"its server URL {url!r} is relative" if url else "it names no servers"
    raise OpenAPIError(f"{document.source}: no base URL for {operation.label}: {named}; pass "
                       "base_url= (mcpkit run --base-url URL) or a client with a base_url")


def _description(operation: Operation, options: OpenAPIOptions) -> str | None:
    parts = [p for p in (operation.text("summary"), operation.text("description")) if p]
    if operation.data.get("deprecated") is True:
        parts.insert(0, "Deprecated.")
    text = "\n\n".join(parts)
    if len(text) > options.description_chars:
        text = text[: options.description_chars] + "..."
    return text or None


def _annotations(method: str) -> dict[str, Any]:
    hints: dict[str, Any] = {"openWorldHint": True}
    if method in ("GET", "HEAD", "OPTIONS"):
        hints["readOnlyHint"] = True
    else:
        hints["readOnlyHint"] = False
        hints["destructiveHint"] = method in ("DELETE", "PUT", "PATCH")
        hints["idempotentHint"] = method in ("PUT", "DELETE")
    return hints


def _tool(server: Server, operation: Operation, inputs: Inputs, output: Output,
          http: httpx.AsyncClient, base: str | None, options: OpenAPIOptions) -> None:
    async def call(**arguments: Any) -> Any:
        try:
            outgoing = build_request(operation.method, operation.path, inputs, arguments,
                                     output.accept)
        except ValueError as exc:
            raise ToolError(f"Invalid arguments for tool {operation.name!r}: {exc}") from None
        answer = await exchange(http, base, outgoing, options, operation.name)
        return tool_result(operation, output, answer, options.error_excerpt_chars)

    call.__name__ = call.__qualname__ = operation.name
    extra: dict[str, Any] = {}
    summary = operation.text("summary")
    if summary:
        extra["title"] = summary[:200]
    if output.schema is not None:
        extra["output_schema"] = output.schema
    server.add_tool(call, operation.name, description=_description(operation, options) or "",
                    input_schema=inputs.schema, annotations=_annotations(operation.method),
                    **extra)


# -- resources ------------------------------------------------------------------------------


def _kind(root: Mapping[str, Any], schema: Any) -> str | None:
    """The JSON type a path parameter's schema names, following its `$defs` references."""
    for _ in range(32):
        if not isinstance(schema, dict):
            return None
        ref = schema.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            break
        schema = root.get("$defs", {}).get(ref.removeprefix("#/$defs/"))
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else None


def _coerced(text: str, kind: str | None) -> Any:
    """A URI's text as the value the parameter's type takes (left as text when it is not one:
    the check then says what is wrong with it)."""
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            number = float(text)
            return int(number) if number.is_integer() and "." not in text else number
    except ValueError:
        return text
    if kind == "boolean" and text in ("true", "false"):
        return text == "true"
    return text


def _resource(server: Server, bridged: Bridged, operation: Operation, inputs: Inputs,
              output: Output, http: httpx.AsyncClient, base: str | None,
              options: OpenAPIOptions) -> None:
    path_args = [a for a in inputs.arguments if a.location == "path"]
    variables: dict[str, str] = {}  # template variable -> argument name
    uri = options.resource_prefix + operation.path.lstrip("/")
    for argument in path_args:
        ident = _IDENT.sub("_", argument.wire).strip("_") or "value"
        if ident[0].isdigit():
            ident = f"p_{ident}"
        while ident in variables:
            ident += "_"
        variables[ident] = argument.name
        uri = uri.replace("{" + argument.wire + "}", "{" + ident + "}")
    schema = inputs.schema
    kinds = {name: _kind(schema, schema["properties"][name]) for name in variables.values()}
    check = None
    if variables:
        part = {"type": "object", "properties": {n: schema["properties"][n] for n in kinds},
                "required": list(kinds)}
        if "$defs" in schema:
            part["$defs"] = schema["$defs"]
        check = compile_raw(part, f"resource template {uri!r}", parameter_names=frozenset(kinds),
                            pass_extra=True)

    async def read(**values: str) -> Blob:
        concrete = uri
        for ident, text in values.items():
            concrete = concrete.replace("{" + ident + "}", text)
        arguments = {variables[ident]: _coerced(text, kinds[variables[ident]])
                     for ident, text in values.items()}
        if check is not None:
            try:
                check(arguments)
            except ArgumentsError as exc:
                raise InvalidParamsError(f"resource {concrete!r}: {exc}",
                                         {"uri": concrete}) from None
        try:
            outgoing = build_request("GET", operation.path, inputs, arguments, output.accept)
            answer = await exchange(http, base, outgoing, options, operation.name)
        except (ToolError, ValueError) as exc:
            raise InternalError(f"resource {concrete!r}: {exc}", {"uri": concrete}) from None
        return _contents(concrete, operation, answer, options)

    read.__name__ = read.__qualname__ = operation.name
    read.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(ident, inspect.Parameter.KEYWORD_ONLY, annotation=str)
         for ident in variables])
    description = _description(operation, options)
    register: Callable[..., Any] = (server.add_resource_template if variables
                                    else server.add_resource)
    register(uri, read, name=operation.name, description=description,
             mime_type=output.mime_type)
    bridged.resources.append(uri)
    if variables:
        bridged.templates.append(uri)


def _contents(uri: str, operation: Operation, answer: Answer, options: OpenAPIOptions) -> Blob:
    if answer.status == 404:
        raise ResourceNotFoundError(uri)
    if not 200 <= answer.status < 300:
        quoted = excerpt(answer.body, options.error_excerpt_chars)
        raise InternalError(f"resource {uri!r}: {operation.method} {answer.url} answered "
                            f"{answer.status} {answer.reason}" + (f": {quoted}" if quoted else ""),
                            {"uri": uri})
    media = answer.media_type or None
    if is_json(answer.media_type) or (media or "").startswith("text/"):
        return Blob(uri, answer.body.decode("utf-8", "replace"), media)
    return Blob(uri, answer.body, media)
