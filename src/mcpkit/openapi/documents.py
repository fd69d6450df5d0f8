"""An OpenAPI document read and checked before anything is built from it.

The document comes as parsed data, as bytes, from a file or from an http(s) URL, in JSON or
YAML. Each step is bounded before the next one runs, so a hostile document is refused in one
line rather than by a stack overflow, an exhausted memory or minutes of work:

1. its size (`OpenAPIOptions.max_document_bytes`), read no further than that;
2. a copy of it as plain JSON data, made without recursion: at most `MAX_NODES` objects, lists
   and list items, counted as visited, so YAML aliases that repeat a node a billion times are
   counted a billion times and refused, and nested at most `MAX_DEPTH` levels; keys are
   strings (YAML's `200:` becomes `"200"`), dates become ISO text, and what JSON cannot carry
   (NaN, integers past 64 bits, keys of other types) is refused naming its place;
3. its version: OpenAPI 3.0.x or 3.1.x;
4. at most `OpenAPIOptions.max_operations` operations;
5. its `$ref`s, by the walk every schema mcpkit accepts goes through (`mcpkit.schema.walk`):
   every one stays in the document (one that leaves it is refused: bundle the document first)
   and names something there; none comes back to where it started without descending (`A`
   referring to `B` referring to `A`), and no reuse of definitions makes one value meet more
   than `MAX_FAN_OUT` subschemas;
6. then only, the document against the official OpenAPI schema of its version and the
   specification's other rules (unique operation ids, path parameters declared), by
   openapi-spec-validator, with no handler to fetch anything: the steps above are what keep
   it from recursing without end or fetching a URL or a file a `$ref` names.

Imports: the standard library, httpx (a document's URL), orjson, `mcpkit.protocol.extras` and
`mcpkit.schema.walk`; PyYAML and openapi-spec-validator (the `openapi` extra) when used.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from mcpkit.errors import OpenAPIError
from mcpkit.openapi.options import OpenAPIOptions
from mcpkit.protocol.extras import require
from mcpkit.schema.walk import check_schema_structure
from mcpkit.schema.walked import Limits, Wording

__all__ = [
    "MAX_DEPTH",
    "MAX_FAN_OUT",
    "MAX_NODES",
    "METHODS",
    "Document",
    "OpenAPIError",
    "load_document",
]

MAX_NODES: Final = 1_000_000
MAX_DEPTH: Final = 64
MAX_FAN_OUT: Final = 10_000
_MAX_EXPANDED: Final = 100_000_000
_FETCH_TIMEOUT_S: Final = 30.0
_INT64: Final = 2**63
METHODS: Final = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
"""The operations of a path item, in the order the specification lists them."""
_VERSIONS: Final = {"3.0": "3.0", "3.1": "3.1"}

_WORDING: Final = Wording(
    too_many="{where}: too large: more than {max_nodes} objects, lists and list items",
    too_deep="{where}: nested more than {max_depth} levels deep",
    outside=("{where}: $ref {ref!r} at {at} leaves the document ({kind} references are not "
             "followed); bundle the document into one file whose references all start with '#/'"),
    no_target="{where}: $ref {ref!r} at {at} points to nothing in the document",
    no_anchor="{where}: $ref {ref!r} at {at} names an anchor the document does not declare",
    loop=("{where}: $ref {ref!r} at {at} leads back to where it started without descending into "
          "a property or an item, so it describes nothing; break the loop"),
    fan_out=("{where}: too costly to check: more than {max_fan_out} schemas apply to one value "
             "once its $refs are followed (anyOf/oneOf/allOf branches reusing the same "
             "definitions count them again)"),
    expanded=("{where}: too costly to check: with its $refs followed it spans more than "
              "{max_expanded} schemas"),
)
_LIMITS: Final = Limits(MAX_NODES, MAX_DEPTH, MAX_FAN_OUT, _MAX_EXPANDED)


@dataclass(frozen=True, slots=True)
class Document:
    """An OpenAPI document, checked: plain JSON data, its version, where it came from."""

    data: dict[str, Any]
    version: str
    """"3.0" or "3.1"."""
    source: str
    """How messages name it: its path, its URL, or "the OpenAPI document"."""
    url: str | None = None
    """The URL it was read from, against which relative server URLs resolve."""

    @property
    def title(self) -> str:
        info = self.data.get("info")
        title = info.get("title") if isinstance(info, dict) else None
        return title if isinstance(title, str) and title.strip() else "openapi"

    @property
    def info_version(self) -> str:
        info = self.data.get("info")
        version = info.get("version") if isinstance(info, dict) else None
        return version if isinstance(version, str) and version else "0.0.0"


def load_document(spec: Any, options: OpenAPIOptions | None = None) -> Document:
    """Read and check an OpenAPI 3.0 or 3.1 document: a mapping (already parsed), bytes, a
    path (`str` or `os.PathLike`) or an http(s) URL, in JSON or YAML. Raises `OpenAPIError`
    in one line for a document it refuses, `MissingExtraError` without the `openapi` extra."""
    options = options or OpenAPIOptions()
    if isinstance(spec, Document):
        return spec
    require("openapi_spec_validator", "an OpenAPI document")
    url = None
    if isinstance(spec, Mapping):
        source, raw = "the OpenAPI document", spec
    elif isinstance(spec, bytes | bytearray):
        source = "the OpenAPI document"
        raw = _parse(bytes(spec), source, options)
    elif isinstance(spec, str) and spec.startswith(("http://", "https://")):
        source = url = spec
        raw = _parse(_fetch(spec, options), source, options)
    elif isinstance(spec, str | os.PathLike):
        source = os.fspath(spec)
        raw = _parse(_read(Path(source), options), source, options)
    else:
        raise TypeError(f"an OpenAPI document is a mapping, bytes, a path or an http(s) URL, "
                        f"not {type(spec).__name__}")
    data = plain_copy(raw, source)
    if not isinstance(data, dict):
        raise OpenAPIError(f"{source}: an OpenAPI document is an object, not "
                           f"{type(data).__name__}")
    document = Document(data, _version(data, source), source, url)
    _count_operations(document, options)
    try:
        check_schema_structure(data, source, _LIMITS, _WORDING)
    except ValueError as exc:
        raise OpenAPIError(str(exc)) from None
    _validate(document)
    return document


# -- reading --------------------------------------------------------------------------------


def _too_big(source: str, options: OpenAPIOptions) -> OpenAPIError:
    return OpenAPIError(f"{source}: larger than {options.max_document_bytes} bytes "
                        "(OpenAPIOptions.max_document_bytes)")


def _read(path: Path, options: OpenAPIOptions) -> bytes:
    try:
        with path.open("rb") as file:
            data = file.read(options.max_document_bytes + 1)
    except OSError as exc:
        raise OpenAPIError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > options.max_document_bytes:
        raise _too_big(str(path), options)
    return data


def _fetch(url: str, options: OpenAPIOptions) -> bytes:
    """The document at `url`, read as it streams and no further than the size bound."""
    import httpx

    try:
        with httpx.Client(timeout=_FETCH_TIMEOUT_S, follow_redirects=True) as http, \
                http.stream("GET", url, headers={"accept": "application/json, application/yaml, "
                                                 "text/yaml, */*"}) as answer:
            if answer.status_code != 200:
                raise OpenAPIError(f"{url}: answered {answer.status_code} "
                                   f"{answer.reason_phrase}, not the document")
            chunks: list[bytes] = []
            size = 0
            for chunk in answer.iter_bytes():
                size += len(chunk)
                if size > options.max_document_bytes:
                    raise _too_big(url, options)
                chunks.append(chunk)
    except httpx.HTTPError as exc:
        raise OpenAPIError(f"{url}: could not be fetched ({type(exc).__name__}: {exc})"
                           ) from None
    return b"".join(chunks)


def _parse(data: bytes, source: str, options: OpenAPIOptions) -> Any:
    if len(data) > options.max_document_bytes:
        raise _too_big(source, options)
    text = data.lstrip()
    if text.startswith((b"{", b"[")):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise OpenAPIError(f"{source}: not JSON: {exc}") from None
    yaml = require("yaml", "an OpenAPI document in YAML")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(data, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise OpenAPIError(f"{source}: neither JSON nor YAML{where}: {problem}") from None
    except RecursionError:
        raise OpenAPIError(f"{source}: nested more than {MAX_DEPTH} levels deep") from None


def _place(path: list[str]) -> str:
    return "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in path)


def plain_copy(value: Any, source: str) -> Any:
    """`value` as plain JSON data (dicts, lists, str, int, float, bool, None), copied without
    recursion within `MAX_NODES` and `MAX_DEPTH`; `OpenAPIError` names what it cannot be."""
    root: list[Any] = [None]
    # (the value, the container to put its copy in, the key or index there, its path, depth)
    todo: list[tuple[Any, Any, Any, list[str], int]] = [(value, root, 0, [], 0)]
    count = 0
    while todo:
        node, parent, key, path, depth = todo.pop()
        count += 1
        if count > MAX_NODES:
            raise OpenAPIError(f"{source}: too large: more than {MAX_NODES} objects, lists and "
                               "list items (YAML aliases count each time they are used)")
        if isinstance(node, Mapping):
            if depth >= MAX_DEPTH:
                raise OpenAPIError(f"{source}: nested more than {MAX_DEPTH} levels deep "
                                   f"(at {_place(path)})")
            copy: dict[str, Any] = {}
            parent[key] = copy
            for name, item in node.items():
                text = _key(name, source, path)
                copy[text] = None
                todo.append((item, copy, text, [*path, text], depth + 1))
        elif isinstance(node, list | tuple):
            if depth >= MAX_DEPTH:
                raise OpenAPIError(f"{source}: nested more than {MAX_DEPTH} levels deep "
                                   f"(at {_place(path)})")
            items: list[Any] = [None] * len(node)
            parent[key] = items
            for index, item in enumerate(node):
                todo.append((item, items, index, [*path, str(index)], depth + 1))
        else:
            parent[key] = _scalar(node, source, path)
    return root[0]


def _key(name: Any, source: str, path: list[str]) -> str:
    if isinstance(name, str):
        return name
    if isinstance(name, int) and not isinstance(name, bool):
        return str(name)  # a status code written without quotes in YAML
    raise OpenAPIError(f"{source}: the key {name!r} at {_place(path)} is not a string; quote it")


def _scalar(value: Any, source: str, path: list[str]) -> Any:
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, int):
        if not -_INT64 <= value < 2**64:
            raise OpenAPIError(f"{source}: the integer at {_place(path)} is too large for JSON "
                               "(past 64 bits); write it as a string")
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise OpenAPIError(f"{source}: the number at {_place(path)} ({value}) is not one "
                               "JSON can carry")
        return value
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()  # YAML reads `version: 2024-01-01` as a date
    raise OpenAPIError(f"{source}: the value at {_place(path)} ({type(value).__name__}) is not "
                       "JSON data")


# -- checks ---------------------------------------------------------------------------------


def _version(data: dict[str, Any], source: str) -> str:
    if "swagger" in data:
        raise OpenAPIError(f"{source}: a Swagger {data.get('swagger')} document; convert it to "
                           "OpenAPI 3.0 or 3.1 first")
    declared = data.get("openapi")
    if not isinstance(declared, str):
        raise OpenAPIError(f"{source}: no 'openapi' version field; this reads OpenAPI 3.0 and "
                           "3.1 documents")
    major_minor = ".".join(declared.split(".")[:2])
    version = _VERSIONS.get(major_minor)
    if version is None:
        raise OpenAPIError(f"{source}: OpenAPI {declared} is not read here; this reads "
                           "OpenAPI 3.0 and 3.1 documents")
    return version


def _count_operations(document: Document, options: OpenAPIOptions) -> None:
    paths = document.data.get("paths")
    if not isinstance(paths, dict):
        return
    count = sum(1 for item in paths.values() if isinstance(item, dict)
                for method in METHODS if method in item)
    if count > options.max_operations:
        raise OpenAPIError(f"{document.source}: {count} operations, more than "
                           f"{options.max_operations} (OpenAPIOptions.max_operations; checking "
                           "every schema of a document takes time that grows with it)")


def _validate(document: Document) -> None:
    """The document against the official OpenAPI schema of its version and the rules of the
    specification, by openapi-spec-validator; the first problem in one line."""
    import openapi_spec_validator as validators

    base = (validators.OpenAPIV30SpecValidator if document.version == "3.0"
            else validators.OpenAPIV31SpecValidator)
    # No handlers: nothing a $ref names is ever fetched or read (the walk refused those).
    checker = type("Checker", (base,), {"resolver_handlers": {}})
    try:
        error = next(iter(checker(document.data).iter_errors()), None)
    except RecursionError:
        raise OpenAPIError(f"{document.source}: nested too deeply to be checked") from None
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        # The checker walks `$ref`s before it checks what they point at, and a keyword of the
        # wrong type there (`"allOf": null` behind a reference) breaks its walk.
        detail = " ".join(str(exc).split())[:80]
        raise OpenAPIError(f"{document.source}: not a valid OpenAPI {document.version} document:"
                           f" a schema it refers to is malformed ({type(exc).__name__}: "
                           f"{detail})") from None
    if error is None:
        return
    message = str(getattr(error, "message", error)).strip().splitlines()[0]
    path = [str(part) for part in getattr(error, "absolute_path", ())]
    at = f" at {_place(path)}" if path else ""
    raise OpenAPIError(f"{document.source}: not a valid OpenAPI {document.version} document"
                       f"{at}: {message}")
