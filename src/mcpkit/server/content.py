"""Content blocks, and how a handler's return value becomes one.

Handlers return plain Python: `str` becomes text, `bytes` becomes an image, audio or blob
resource (sniffed from the first bytes), the helpers below become their block, a list of text,
bytes and blocks becomes a list of blocks, and structured values become `structuredContent`
with a JSON text fallback (TOOL-11). The conversion is here once, for tools, prompts and
resources alike.

`json_problem` says why a value cannot be sent as JSON: every message is encoded by orjson,
which refuses integers outside the 64-bit range, and a refusal found by the transport would
end the request with no response at all, so results are checked where they are built and the
refusal names the handler and the place of the number.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

__all__ = [
    "JSON_INTEGERS",
    "Audio",
    "Blob",
    "Content",
    "ContentBlock",
    "Image",
    "ResourceLink",
    "Text",
    "ToolResult",
    "big_integer",
    "blob_block",
    "is_content_block",
    "json_problem",
    "json_refusal",
    "sniff_mime_type",
    "text_block",
    "to_content",
]

_REQUIRED: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "image": ("data", "mimeType"),
    "audio": ("data", "mimeType"),
    "resource_link": ("uri", "name"),
    "resource": (),
}
"""The string fields each block type needs (an embedded `resource` needs its `resource`)."""


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"OggS", "audio/ogg"),
    (b"ID3", "audio/mpeg"),
    (b"fLaC", "audio/flac"),
)


def sniff_mime_type(data: bytes) -> str:
    """A MIME type from magic bytes, or application/octet-stream."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "application/octet-stream"


class ContentBlock:
    """Base of the content helpers: each knows its wire form."""

    __slots__ = ()

    def to_block(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Text(ContentBlock):
    text: str
    annotations: Mapping[str, Any] | None = None

    def to_block(self) -> dict[str, Any]:
        block = text_block(self.text)
        if self.annotations:
            block["annotations"] = dict(self.annotations)
        return block


@dataclass(frozen=True, slots=True)
class Image(ContentBlock):
    """Image bytes; the MIME type is sniffed when not given."""

    data: bytes
    mime_type: str | None = None
    annotations: Mapping[str, Any] | None = None

    def to_block(self) -> dict[str, Any]:
        block: dict[str, Any] = {
            "type": "image",
            "data": _b64(self.data),
            "mimeType": self.mime_type or sniff_mime_type(self.data),
        }
        if self.annotations:
            block["annotations"] = dict(self.annotations)
        return block


@dataclass(frozen=True, slots=True)
class Audio(ContentBlock):
    """Audio bytes; the MIME type is sniffed when not given."""

    data: bytes
    mime_type: str | None = None
    annotations: Mapping[str, Any] | None = None

    def to_block(self) -> dict[str, Any]:
        block: dict[str, Any] = {
            "type": "audio",
            "data": _b64(self.data),
            "mimeType": self.mime_type or sniff_mime_type(self.data),
        }
        if self.annotations:
            block["annotations"] = dict(self.annotations)
        return block


def blob_block(uri: str, data: bytes, mime_type: str | None) -> dict[str, Any]:
    """`BlobResourceContents`."""
    out = {"uri": uri, "blob": _b64(data)}
    if mime_type:
        out["mimeType"] = mime_type
    return out


@dataclass(frozen=True, slots=True)
class Blob(ContentBlock):
    """An embedded resource: text or bytes under a URI."""

    uri: str
    data: str | bytes
    mime_type: str | None = None
    annotations: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    """The contents' `_meta` (an MCP App's view carries its `ui` settings there)."""

    def contents(self) -> dict[str, Any]:
        if isinstance(self.data, str):
            out: dict[str, Any] = {"uri": self.uri, "text": self.data}
            if self.mime_type:
                out["mimeType"] = self.mime_type
        else:
            out = blob_block(self.uri, self.data, self.mime_type or sniff_mime_type(self.data))
        if self.meta:
            out["_meta"] = dict(self.meta)
        return out

    def to_block(self) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "resource", "resource": self.contents()}
        if self.annotations:
            block["annotations"] = dict(self.annotations)
        return block


@dataclass(frozen=True, slots=True)
class ResourceLink(ContentBlock):
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None

    def to_block(self) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        if self.title:
            block["title"] = self.title
        if self.description:
            block["description"] = self.description
        if self.mime_type:
            block["mimeType"] = self.mime_type
        return block


Content = str | bytes | bytearray | ContentBlock | dict[str, Any]
"""One piece of a result's content: text, bytes (an image, audio or a blob by what they hold),
a helper (`Text`, `Image`, ...) or a content block dict."""


@dataclass(slots=True)
class ToolResult:
    """A tool's result spelled out: content, structured content, error flag and `_meta`."""

    content: Content | Sequence[Content] = field(default_factory=list)
    structured: Any = None
    is_error: bool = False
    meta: Mapping[str, Any] | None = None


def is_content_block(value: Any) -> bool:
    """A helper, or a block dict with the fields its type needs.

    A dict that names a block type but lacks its fields is data, not a block: passed on as a
    block it would make the whole result invalid on the wire.
    """
    if isinstance(value, ContentBlock):
        return True
    if type(value) is not dict:
        return False
    kind = value.get("type")
    required = _REQUIRED.get(kind) if type(kind) is str else None
    if required is None or not all(type(value.get(key)) is str for key in required):
        return False
    if value["type"] == "resource":
        inner = value.get("resource")
        return type(inner) is dict and type(inner.get("uri")) is str and (
            type(inner.get("text")) is str or type(inner.get("blob")) is str
        )
    return True


def _block(value: Any) -> dict[str, Any]:
    if isinstance(value, ContentBlock):
        return value.to_block()
    if type(value) is dict:
        return value
    if isinstance(value, str):
        return text_block(value)
    if isinstance(value, bytes | bytearray):
        data = bytes(value)
        mime = sniff_mime_type(data)
        if mime.startswith("image/"):
            return Image(data, mime).to_block()
        if mime.startswith("audio/"):
            return Audio(data, mime).to_block()
        return Blob("mcpkit:bytes", data, mime).to_block()
    raise TypeError(f"cannot turn {type(value).__name__} into a content block")


def to_content(value: Any) -> list[dict[str, Any]] | None:
    """Content blocks for a return value that is content, or None when it is structured data."""
    if value is None:
        return []
    if isinstance(value, str):
        return [text_block(value)]
    if isinstance(value, ContentBlock | bytes | bytearray):
        return [_block(value)]
    if isinstance(value, list | tuple) and value and all(
        is_content_block(v) or isinstance(v, str | bytes | bytearray) for v in value
    ):
        return [_block(v) for v in value]
    return None


def json_text(value: Any) -> str:
    """Compact JSON text; raises TypeError for what JSON cannot carry (see `json_refusal`)."""
    return orjson.dumps(value).decode()


JSON_INTEGERS: Final = range(-(2**63), 2**64)
"""The integers a JSON number may carry on our wire: orjson encodes every message and refuses
the others, and peers that read a number as a 64-bit integer or a double would alter them."""


def big_integer(value: Any) -> tuple[str, int] | None:
    """The place and value of the first integer outside `JSON_INTEGERS` in JSON data, if any.

    Walked with a stack rather than by recursion: the value may be nested deeper than Python's
    recursion limit (orjson refuses that too, and this must not fail while explaining it).
    """
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        place, item = stack.pop()
        kind = type(item)
        if kind is int and item not in JSON_INTEGERS:
            return place, item
        if kind is dict:
            entries = [(f"{place}.{key}" if place else str(key), v) for key, v in item.items()]
        elif kind is list or kind is tuple:
            entries = [(f"{place}[{i}]", v) for i, v in enumerate(item)]
        else:
            continue
        stack.extend(reversed(entries))
    return None


def json_refusal(value: Any, exc: TypeError) -> str:
    """What orjson's refusal (`exc`) to encode `value` means, in words its author can act on."""
    found = big_integer(value)
    if found is not None:
        place, number = found
        at = f" at {place}" if place else ""
        # Huge integers are not printed: str() of one past 4300 digits raises ValueError.
        shown = str(number) if number.bit_length() <= 256 else f"{number.bit_length()} bits"
        return (
            f"an integer outside the 64-bit range a JSON number can carry{at} ({shown}); "
            "send it as a string"
        )
    return f"a value that cannot be sent as JSON ({exc})"


def json_problem(value: Any) -> str | None:
    """Why `value` cannot be sent as JSON (`json_refusal`), or None when it can."""
    try:
        orjson.dumps(value)
    except TypeError as exc:
        return json_refusal(value, exc)
    return None
