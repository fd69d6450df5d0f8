"""Typed content: the blocks of a tool's `content` and of a prompt message, and a resource's
contents, each a `WireObject` over the dict the server sent.

`content_block` picks the class by the block's `type`, `resource_contents` by whether the
contents hold `text` or `blob`; anything else is a `ProtocolViolation` naming its place (the
2026-07-28 schema's unions are closed). Base64 members are kept as sent and decoded on demand
(`.bytes`).

May import `mcpkit.errors`, `mcpkit.schema.problems`, `mcpkit.client.wire_object` and the
standard library.
"""

from __future__ import annotations

import base64
import binascii
import builtins
from typing import Any, Final

from mcpkit.client.wire_object import WireObject
from mcpkit.errors import ProtocolViolation
from mcpkit.schema.problems import describe_value

__all__ = [
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "Named",
    "ResourceContents",
    "ResourceDescription",
    "ResourceLink",
    "TextContent",
    "TextResourceContents",
    "blocks_of",
    "content_block",
    "resource_contents",
    "text_of",
]


class _Block(WireObject):
    __slots__ = ()

    @property
    def type(self) -> str:
        """The block's kind: `text`, `image`, `audio`, `resource_link` or `resource`."""
        return self._str("type")

    @property
    def annotations(self) -> dict[str, Any] | None:
        """Hints for the client (`audience`, `priority`, `lastModified`), when given."""
        return self._opt_dict("annotations")


class TextContent(_Block):
    """A text block."""

    __slots__ = ()

    @property
    def text(self) -> str:
        return self._str("text")


def _decoded(text: str, where: str, key: str) -> builtins.bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ProtocolViolation(f"{where}: {key!r} is not base64") from None


class _Media(_Block):
    __slots__ = ()

    @property
    def data(self) -> str:
        """The base64 text as sent (`bytes` decodes it)."""
        return self._str("data")

    @property
    def bytes(self) -> builtins.bytes:
        """The decoded data."""
        return _decoded(self._str("data"), self.where, "data")

    @property
    def mime_type(self) -> str:
        return self._str("mimeType")


class ImageContent(_Media):
    """An image block: `data` in base64, `mime_type` such as `image/png`."""

    __slots__ = ()


class AudioContent(_Media):
    """An audio block: `data` in base64, `mime_type` such as `audio/wav`."""

    __slots__ = ()


class Named(WireObject):
    """What every listed thing has: a `name` for programs, a `title` for people, a
    `description`, and `icons`."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return self._str("name")

    @property
    def title(self) -> str | None:
        """A name for people, when the server gives one (`name` is for programs)."""
        return self._opt_str("title")

    @property
    def description(self) -> str | None:
        return self._opt_str("description")

    @property
    def icons(self) -> list[dict[str, Any]]:
        return self._opt("icons", list, "a list") or []


class ResourceDescription(Named):
    """A resource as a list or a link describes it, without its contents."""

    __slots__ = ()

    @property
    def uri(self) -> str:
        return self._str("uri")

    @property
    def mime_type(self) -> str | None:
        return self._opt_str("mimeType")

    @property
    def size(self) -> int | None:
        """Its size in bytes, when the server knows it."""
        return self._opt("size", int, "an integer")

    @property
    def annotations(self) -> dict[str, Any] | None:
        """Hints for the client (`audience`, `priority`, `lastModified`), when given."""
        return self._opt_dict("annotations")


class ResourceLink(_Block, ResourceDescription):
    """A link to a resource the client may read (`client.read_resource(block.uri)`)."""

    __slots__ = ()


class _Contents(WireObject):
    __slots__ = ()

    @property
    def uri(self) -> str:
        return self._str("uri")

    @property
    def mime_type(self) -> str | None:
        return self._opt_str("mimeType")


class TextResourceContents(_Contents):
    """A resource's contents as text."""

    __slots__ = ()

    @property
    def text(self) -> str:
        return self._str("text")


class BlobResourceContents(_Contents):
    """A resource's contents as binary: `blob` in base64, `bytes` decoded."""

    __slots__ = ()

    @property
    def blob(self) -> str:
        return self._str("blob")

    @property
    def bytes(self) -> builtins.bytes:
        return _decoded(self._str("blob"), self.where, "blob")


ResourceContents = TextResourceContents | BlobResourceContents
"""One item of a `resources/read` result, or of an embedded resource."""


def resource_contents(raw: Any, where: str) -> ResourceContents:
    """The typed view of one resource contents object: text when it has `text`, else blob."""
    if not isinstance(raw, dict):
        raise ProtocolViolation(f"{where}: expected an object, got {describe_value(raw)}")
    if "text" in raw:
        return TextResourceContents(raw, where)
    if "blob" in raw:
        return BlobResourceContents(raw, where)
    raise ProtocolViolation(f"{where}: resource contents hold neither 'text' nor 'blob'")


class EmbeddedResource(_Block):
    """A resource's contents carried inside the answer."""

    __slots__ = ()

    @property
    def resource(self) -> ResourceContents:
        return resource_contents(self.raw.get("resource"), f"{self.where}.resource")


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
"""One block of a tool's `content` or a prompt message: narrow it with `isinstance`."""

_BLOCKS: Final[dict[str, type[ContentBlock]]] = {
    "text": TextContent, "image": ImageContent, "audio": AudioContent,
    "resource_link": ResourceLink, "resource": EmbeddedResource,
}


def content_block(raw: Any, where: str) -> ContentBlock:
    """The typed view of one content block, by its `type`."""
    if not isinstance(raw, dict):
        raise ProtocolViolation(f"{where}: expected a content block object, got {describe_value(raw)}")
    cls = _BLOCKS.get(raw.get("type"))  # type: ignore[arg-type]
    if cls is None:
        raise ProtocolViolation(
            f"{where}: content type {raw.get('type')!r} is none of {', '.join(_BLOCKS)} "
            "(read .raw for what the server sent)")
    return cls(raw, where)


def blocks_of(items: list[Any], where: str) -> list[ContentBlock]:
    """The typed blocks of a list member (`where` names it: "tools/call 'x' content")."""
    return [content_block(b, f"{where}[{i}]") for i, b in enumerate(items)]


def text_of(blocks: list[Any]) -> str:
    """The text blocks or text contents among `blocks`, one a line."""
    return "\n".join(b.text for b in blocks if isinstance(b, TextContent | TextResourceContents))


# -- results ------------------------------------------------------------------------------
