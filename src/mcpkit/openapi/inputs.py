"""An operation's parameters and request body as one tool input schema, and the table saying
where each argument goes on the wire.

Each parameter is one property, named as the parameter is; a name two locations share (`id`
in the path and in the query) is kept by the first of path, query, header, cookie and the
others get `__query`, `__header`, `__cookie`. The request body is the property `body`
(`request_body` when a parameter is called `body`). Unknown arguments are refused
(`additionalProperties: false`), so a misspelt one is said, not dropped.

Left out of the arguments, as the specification says to ignore them or because a model must
never be the one to send them: the `Accept`, `Content-Type` and `Authorization` header
parameters, the headers HTTP itself manages (`Host`, `Content-Length`, `Connection`, ...),
and every parameter that carries credentials: `Cookie`, `Proxy-Authorization` and the ones
the document's apiKey security schemes name, unless `OpenAPIOptions.client_credentials`
names them. Those come from configuration (`OpenAPIOptions.headers`, the client's own), and
so does any header `OpenAPIOptions.headers` sets: a configured header is never an argument.

A body is sent as the first of these its content offers: JSON (`application/json`, `*+json`),
a form (`application/x-www-form-urlencoded`, when its schema is an object of scalars and
lists of scalars), text (`text/*`), bytes (any other type, given as base64 text). A body that
offers none of these (only `multipart/form-data`, say) leaves its operation out when it is
required, and out of the arguments when it is not.

Imports: the standard library and `mcpkit.openapi` (dialect, documents, operations, options,
refs, styles).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from mcpkit.errors import UnsupportedOperationError
from mcpkit.openapi.dialect import SchemaSet
from mcpkit.openapi.documents import Document
from mcpkit.openapi.operations import Operation
from mcpkit.openapi.options import OpenAPIOptions
from mcpkit.openapi.refs import deref
from mcpkit.openapi.styles import DEFAULT_STYLES, STYLES

__all__ = [
    "Argument",
    "Body",
    "Inputs",
    "inputs_of",
    "is_json",
]

BodyKind = Literal["json", "form", "text", "binary"]
_LOCATIONS: Final = ("path", "query", "header", "cookie")
_IGNORED_HEADERS: Final = frozenset({
    "accept", "content-type", "authorization", "host", "content-length", "transfer-encoding",
    "connection", "te", "upgrade", "trailer", "keep-alive", "expect",
})
_CREDENTIAL_HEADERS: Final = frozenset({"authorization", "proxy-authorization", "cookie"})
_SCALARS: Final = frozenset({"string", "integer", "number", "boolean", "null"})


@dataclass(frozen=True, slots=True)
class Argument:
    """Where one argument goes: a parameter in the path, the query, a header or a cookie."""

    name: str
    """Its name among the tool's arguments."""
    location: str
    wire: str
    """The parameter's own name."""
    style: str
    explode: bool
    allow_reserved: bool = False
    as_json: bool = False
    """A parameter described by `content` rather than `schema`: its value is sent as JSON."""


@dataclass(frozen=True, slots=True)
class Body:
    name: str
    """The argument holding it."""
    media_type: str
    kind: BodyKind


@dataclass(frozen=True, slots=True)
class Inputs:
    schema: dict[str, Any]
    arguments: tuple[Argument, ...]
    body: Body | None
    resource_ready: bool
    """Whether a URI can name the operation: a GET whose required arguments are all scalar
    path parameters in the simple style."""


def is_json(media_type: str) -> bool:
    kind = media_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or kind.endswith("+json")


def _credentials(document: Document, options: OpenAPIOptions) -> set[tuple[str, str]]:
    """(location, name) of every parameter that carries credentials; header names lowered."""
    found = {("header", name) for name in _CREDENTIAL_HEADERS}
    components = document.data.get("components")
    schemes = components.get("securitySchemes") if isinstance(components, dict) else None
    if isinstance(schemes, dict):
        for raw in schemes.values():
            scheme = deref(document, raw, "a security scheme")
            if (isinstance(scheme, dict) and scheme.get("type") == "apiKey"
                    and isinstance(scheme.get("name"), str) and scheme.get("in") in _LOCATIONS):
                name = scheme["name"]
                found.add((scheme["in"], name.lower() if scheme["in"] == "header" else name))
    allowed = set(options.client_credentials)
    return {(loc, name) for loc, name in found
            if name not in allowed and not (loc == "header" and name in
                                             {a.lower() for a in allowed})}


def _unique(name: str, location: str, used: set[str]) -> str:
    candidate = name if name not in used else f"{name}__{location}"
    n = 1
    while candidate in used:
        n += 1
        candidate = f"{name}__{location}{n}"
    used.add(candidate)
    return candidate


def _annotated(schema: Any, parameter: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = dict(schema) if isinstance(schema, dict) else (
        {} if schema is True else {"not": {}})
    description = parameter.get("description")
    if isinstance(description, str) and description.strip() and "description" not in out:
        out["description"] = description.strip()
    if parameter.get("deprecated") is True:
        out["deprecated"] = True
    if "examples" not in out:
        if "example" in parameter:
            out["examples"] = [parameter["example"]]
        elif isinstance(parameter.get("examples"), dict):
            values = [e["value"] for e in parameter["examples"].values()
                      if isinstance(e, dict) and "value" in e]
            if values:
                out["examples"] = values
    return out


def _scalar_schema(schemas: SchemaSet, schema: Any) -> bool:
    resolved = schemas.resolved(schema)
    if resolved is True or resolved == {}:
        return True
    if not isinstance(resolved, dict):
        return False
    kind = resolved.get("type")
    kinds = [kind] if isinstance(kind, str) else kind
    return isinstance(kinds, list) and bool(kinds) and _SCALARS.issuperset(kinds)


def inputs_of(document: Document, operation: Operation, options: OpenAPIOptions) -> Inputs:
    """The tool input of `operation`; `UnsupportedOperationError` when it cannot be one."""
    schemas = SchemaSet(document, "request")
    credentials = _credentials(document, options)
    configured = {name.lower() for name in options.headers}
    used: set[str] = set()
    properties: dict[str, Any] = {}
    required: list[str] = []
    arguments: list[Argument] = []
    resource_ready = operation.method == "GET"
    where = operation.label
    ordered = sorted(operation.parameters, key=lambda p: _LOCATIONS.index(p["in"])
                     if p.get("in") in _LOCATIONS else len(_LOCATIONS))
    for parameter in ordered:
        location, wire = parameter["in"], parameter["name"]
        if location not in _LOCATIONS:
            raise UnsupportedOperationError(f"its parameter {wire!r} is in {location!r}, which is not sent "
                              "here (path, query, header and cookie are)")
        key = wire.lower() if location == "header" else wire
        if (location == "header" and (key in _IGNORED_HEADERS - _CREDENTIAL_HEADERS
                                       or key in configured)) or (location, key) in credentials:
            continue
        style = parameter.get("style", DEFAULT_STYLES[location])
        if style not in STYLES[location]:
            raise UnsupportedOperationError(f"its parameter {wire!r} has style {style!r}, which a {location} "
                              f"parameter cannot have")
        explode = parameter.get("explode", style == "form")
        as_json = False
        if "schema" in parameter:
            raw_schema = parameter["schema"]
        elif isinstance(parameter.get("content"), dict) and parameter["content"]:
            media, entry = next(iter(parameter["content"].items()))
            if not is_json(media):
                raise UnsupportedOperationError(f"its parameter {wire!r} is described as {media}, which is "
                                  "not sent here (JSON is)")
            raw_schema = entry.get("schema", True) if isinstance(entry, dict) else True
            as_json = True
        else:
            raw_schema = True
        name = _unique(wire, location, used)
        properties[name] = _annotated(schemas.schema(raw_schema, f"{where}: parameter {wire!r}"),
                                      parameter)
        is_required = location == "path" or parameter.get("required") is True
        if is_required:
            required.append(name)
            if location != "path" or style != "simple" or as_json or not _scalar_schema(
                    schemas, raw_schema):
                resource_ready = False
        arguments.append(Argument(name, location, wire, style, bool(explode),
                                  parameter.get("allowReserved") is True, as_json))
    body = _body(document, operation, schemas, used, properties, required)
    if body is not None and body.name in required:
        resource_ready = False
    root: dict[str, Any] = {"type": "object", "properties": properties,
                            "additionalProperties": False}
    if required:
        root["required"] = required
    return Inputs(schemas.attach(root), tuple(arguments), body, resource_ready)


def _body(document: Document, operation: Operation, schemas: SchemaSet, used: set[str],
          properties: dict[str, Any], required: list[str]) -> Body | None:
    raw = operation.data.get("requestBody")
    if raw is None:
        return None
    where = f"{operation.label}: request body"
    request = deref(document, raw, where)
    content = request.get("content") if isinstance(request, dict) else None
    if not isinstance(content, dict) or not content:
        return None
    chosen = _choose(schemas, content)
    is_required = isinstance(request, dict) and request.get("required") is True
    if chosen is None:
        if is_required:
            raise UnsupportedOperationError(f"its request body is sent only as {', '.join(content)}, which "
                              "is not sent here (JSON, forms, text and bytes are)")
        return None
    media, kind = chosen
    entry = content[media] if isinstance(content[media], dict) else {}
    if kind in ("json", "form"):
        schema = _annotated(schemas.schema(entry.get("schema", True), where), {})
    elif kind == "text":
        schema = {"type": "string"}
    else:
        schema = {"type": "string", "contentEncoding": "base64", "contentMediaType": media}
    description = request.get("description") if isinstance(request, dict) else None
    if isinstance(description, str) and description.strip() and "description" not in schema:
        schema["description"] = description.strip()
    if kind == "binary" and "description" not in schema:
        schema["description"] = f"The {media} body, as base64 text."
    name = "body" if "body" not in used else _unique("request_body", "body", used)
    used.add(name)
    properties[name] = schema
    if is_required:
        required.append(name)
    sent = "application/octet-stream" if media in ("*/*", "application/*") else media
    return Body(name, sent, kind)


def _choose(schemas: SchemaSet, content: dict[str, Any]) -> tuple[str, BodyKind] | None:
    media_types = list(content)
    for media in media_types:
        if media.split(";", 1)[0].strip().lower() == "application/json":
            return media, "json"
    for media in media_types:
        if is_json(media):
            return media, "json"
    for media in media_types:
        if media.split(";", 1)[0].strip().lower() == "application/x-www-form-urlencoded":
            entry = content[media]
            schema = entry.get("schema") if isinstance(entry, dict) else None
            if _simple_object(schemas, schema):
                return media, "form"
    for media in media_types:
        if media.lower().startswith("text/"):
            return media, "text"
    for media in media_types:
        kind = media.split(";", 1)[0].strip().lower()
        if not kind.startswith("multipart/") and kind != "application/x-www-form-urlencoded":
            return media, "binary"
    return None


def _simple_object(schemas: SchemaSet, schema: Any) -> bool:
    resolved = schemas.resolved(schema)
    if not isinstance(resolved, dict) or not isinstance(resolved.get("properties"), dict):
        return False
    for sub in resolved["properties"].values():
        if _scalar_schema(schemas, sub):
            continue
        inner = schemas.resolved(sub)
        if not (isinstance(inner, dict) and inner.get("type") == "array"
                and _scalar_schema(schemas, inner.get("items", True))):
            return False
    return True
