"""An operation's answers: the output schema its 2xx responses promise, and an HTTP response
as the tool result or resource contents a client reads.

The output schema is published only when every 2xx response the operation declares carries
JSON (one that answers 204 with no body promises no structure); several different schemas are
one `anyOf`. A schema of objects is published as it is, any other is wrapped as
`{"result": ...}`, the value sent the same way, since a tool's structured content is an
object. A response whose JSON does not match the published schema is a tool error saying so:
the API broke the promise its document made, and the client would refuse the result anyway.

A 2xx response becomes: JSON text (with structured content when a schema is published), text
for `text/*`, an image or audio block for those types, and an embedded resource holding the
bytes of anything else (a PDF, a download). Any other status is a tool error naming it, with
a bounded excerpt of the body, stripped of control characters, so an error page can neither
flood the model nor write escape sequences to a terminal.

Imports: the standard library, orjson, `mcpkit.errors`, `mcpkit.schema.raw`,
`mcpkit.server.content` and `mcpkit.openapi` (dialect, documents, inputs, operations, refs).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import orjson

from mcpkit.errors import ToolError, UnsupportedOperationError
from mcpkit.openapi.dialect import SchemaSet
from mcpkit.openapi.documents import Document
from mcpkit.openapi.inputs import is_json
from mcpkit.openapi.operations import Operation
from mcpkit.openapi.refs import deref
from mcpkit.schema.raw import prepare_raw_schema
from mcpkit.server.content import Audio, Blob, Image, Text, ToolResult

__all__ = [
    "Answer",
    "Output",
    "excerpt",
    "output_of",
    "tool_result",
]

log = logging.getLogger("mcpkit.openapi")

_WRAPPED: Final = "result"


@dataclass(frozen=True, slots=True)
class Answer:
    """An HTTP response, read whole within the bounds."""

    status: int
    reason: str
    content_type: str
    body: bytes
    url: str
    """The URL asked (without its query), which an embedded resource is named by."""

    @property
    def media_type(self) -> str:
        return self.content_type.split(";", 1)[0].strip().lower()


@dataclass(frozen=True, slots=True)
class Output:
    schema: dict[str, Any] | None
    """The published outputSchema, or None."""
    wrap: bool
    """Whether the JSON answer is sent as `{"result": value}`."""
    accept: str
    """The `Accept` header: the media types the 2xx responses declare."""
    mime_type: str | None
    """The first media type the 2xx responses declare (a resource's `mimeType`)."""
    check: Callable[[Any], str | None] | None = None
    """The first problem of a value against `schema`, or None when it matches."""


def _successes(document: Document, operation: Operation) -> list[Any]:
    responses = operation.data.get("responses")
    if not isinstance(responses, dict):
        return []
    return [deref(document, raw, f"{operation.label}: response {code}")
            for code, raw in responses.items()
            if str(code).upper() == "2XX" or (len(str(code)) == 3 and str(code).startswith("2"))]


def output_of(document: Document, operation: Operation) -> Output:
    media_types: list[str] = []
    schemas: list[Any] = []
    all_json = True
    for response in _successes(document, operation):
        content = response.get("content") if isinstance(response, dict) else None
        if not isinstance(content, dict) or not content:
            all_json = False
            continue
        media_types += [m for m in content if m not in media_types]
        json_entries = [e for m, e in content.items() if is_json(m) and isinstance(e, dict)
                        and "schema" in e]
        if not json_entries:
            all_json = False
        schemas += [e["schema"] for e in json_entries]
    accept = ", ".join(media_types) or "*/*"
    mime = media_types[0] if media_types else None
    if not all_json or not schemas:
        return Output(None, False, accept, mime)
    try:
        return _published(document, operation, schemas, accept, mime)
    except (UnsupportedOperationError, ValueError, TypeError) as exc:
        # The tool still answers, with the JSON as text: its schema cannot be published.
        log.warning("%s: its response schema is not published: %s", operation.label, exc)
        return Output(None, False, accept, mime)


def _published(document: Document, operation: Operation, raw: list[Any], accept: str,
               mime: str | None) -> Output:
    schemas = SchemaSet(document, "response")
    where = f"{operation.label}: response"
    distinct = list({orjson.dumps(s, option=orjson.OPT_SORT_KEYS): s for s in raw}.values())
    if len(distinct) == 1:
        resolved = schemas.resolved(distinct[0])
        node = schemas.schema(resolved, where)
    else:
        node = {"anyOf": [schemas.schema(s, where) for s in distinct]}
    if isinstance(node, dict) and node.get("type") == "object":
        root, wrap = node, False
    else:
        root, wrap = {"type": "object", "properties": {_WRAPPED: node},
                      "required": [_WRAPPED]}, True
    root = schemas.attach(root)
    validator = prepare_raw_schema(root, f"{operation.name}: output schema")

    def check(value: Any) -> str | None:
        error = next(iter(validator.iter_errors(value)), None)
        if error is None:
            return None
        place = "".join(f"[{p!r}]" for p in error.absolute_path)
        return f"{place or 'the value'}: {error.message}"[:500]

    return Output(root, wrap, accept, mime, check)


def excerpt(body: bytes, limit: int) -> str:
    """At most `limit` characters of `body` as one line of printable text."""
    text = body[: limit * 4].decode("utf-8", "replace")
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text)
    line = " ".join(cleaned.split())
    return line if len(line) <= limit else line[:limit] + "..."


def tool_result(operation: Operation, output: Output, answer: Answer, limit: int) -> ToolResult:
    """The result of a call whose response is `answer`; `ToolError` for an error status and
    for a 2xx that breaks the document's promise."""
    said = f"{operation.name}: {operation.method} {answer.url}"
    if not 200 <= answer.status < 300:
        quoted = excerpt(answer.body, limit)
        raise ToolError(f"{said} answered {answer.status} {answer.reason}"
                        + (f": {quoted}" if quoted else ""))
    if output.schema is not None and not (answer.body and is_json(answer.media_type)):
        raise ToolError(f"{said} answered {answer.status} without the JSON body its document "
                        f"promises (content type {answer.content_type or 'none'})")
    if not answer.body:
        return ToolResult(content=Text(f"{answer.status} {answer.reason}".strip()))
    if is_json(answer.media_type):
        try:
            value = orjson.loads(answer.body)
        except orjson.JSONDecodeError:
            raise ToolError(f"{said} answered {answer.status} with a body that is not the JSON "
                            "its content type says") from None
        text = orjson.dumps(value).decode()
        if output.schema is None:
            return ToolResult(content=Text(text))
        structured = {_WRAPPED: value} if output.wrap else value
        problem = output.check(structured) if output.check is not None else None
        if problem is not None:
            raise ToolError(f"{said} answered {answer.status} with JSON that does not match the "
                            f"response schema of its document: {problem}")
        return ToolResult(content=Text(text), structured=structured)
    return ToolResult(content=_block(answer))


def _block(answer: Answer) -> Any:
    media = answer.media_type
    if media.startswith("text/") or media in ("application/xml", "application/yaml"):
        return Text(answer.body.decode(_charset(answer.content_type), "replace"))
    if media.startswith("image/"):
        return Image(answer.body, media)
    if media.startswith("audio/"):
        return Audio(answer.body, media)
    return Blob(answer.url, answer.body, media or None)


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            name = value.strip('"')
            try:
                "".encode(name)
            except LookupError:
                return "utf-8"
            return name
    return "utf-8"
