"""What the client's calls return: `CallToolResult`, `ReadResourceResult`, `GetPromptResult`,
and the items of the lists (`Tool`, `Resource`, `ResourceTemplate`, `Prompt`), each a typed view
of the server's answer with the wire dict at `.raw` (`mcpkit.client.wire_object`).

A `CallToolResult` is generic in the type of its `data`: the structured content read into the
type the call named (`call_tool(..., result=Sum)` gives a `CallToolResult[Sum]`,
`mcpkit.client.structured`), or the structured content itself when it named none.

May import `mcpkit.errors` and the client's `wire_object` and `content`.
"""

from __future__ import annotations

from typing import Any, Final, Generic, TypeVar, cast

from mcpkit.client.content import (
    ContentBlock,
    Named,
    ResourceContents,
    ResourceDescription,
    blocks_of,
    content_block,
    resource_contents,
    text_of,
)
from mcpkit.client.wire_object import WireObject, item_of
from mcpkit.errors import ToolError

__all__ = [
    "CallToolResult",
    "GetPromptResult",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "Resource",
    "ResourceTemplate",
    "Tool",
]

T = TypeVar("T")

_UNTYPED: Final[Any] = object()


class CallToolResult(WireObject, Generic[T]):
    """A tool's answer. `content` is what the model reads, `structured` the JSON value the tool
    returned (`structuredContent`), `is_error` whether the tool failed, and `data` the
    structured value as the type the call named (`call_tool(..., result=Sum)`), or as plain
    JSON when it named none."""

    __slots__ = ("_data",)

    def __init__(self, raw: dict[str, Any], where: str | None = None, *,
                 data: Any = _UNTYPED) -> None:
        super().__init__(raw, where)
        self._data = data

    @property
    def content(self) -> list[ContentBlock]:
        """The content blocks, typed by kind."""
        return blocks_of(self._list("content"), f"{self.where} content")

    @property
    def structured(self) -> dict[str, Any] | None:
        """`structuredContent`: the tool's JSON result, when it returned one."""
        return self._opt_dict("structuredContent")

    @property
    def is_error(self) -> bool:
        """Whether the tool failed; `content` then says why."""
        return self.raw.get("isError") is True

    @property
    def text(self) -> str:
        """The text blocks of `content`, one a line."""
        return text_of(self.content)

    @property
    def data(self) -> T:
        """The structured result as the type the call named (None when it named none and the
        tool sent no structured content). Raises `ToolError`, with the tool's text, when the
        tool failed: a failed call has no data."""
        if self.is_error:
            raise ToolError(f"{self.where} failed: {self.text or 'no reason given'}")
        if self._data is _UNTYPED:
            return cast(T, self.structured)
        return cast(T, self._data)


class ReadResourceResult(WireObject):
    """What `resources/read` answered: the resource's `contents` (often one item)."""

    __slots__ = ()

    @property
    def contents(self) -> list[ResourceContents]:
        return [resource_contents(c, f"{self.where} contents[{i}]")
                for i, c in enumerate(self._list("contents"))]

    @property
    def text(self) -> str:
        """The text contents, one a line (empty when every item is binary)."""
        return text_of(self.contents)


class PromptMessage(WireObject):
    """One message of a prompt: who says it (`role`) and what (`content`)."""

    __slots__ = ()

    @property
    def role(self) -> str:
        """`user` or `assistant`."""
        return self._str("role")

    @property
    def content(self) -> ContentBlock:
        return content_block(self.raw.get("content"), f"{self.where}.content")


class GetPromptResult(WireObject):
    """What `prompts/get` answered: the prompt's `messages`, and a `description`."""

    __slots__ = ()

    @property
    def description(self) -> str | None:
        return self._opt_str("description")

    @property
    def messages(self) -> list[PromptMessage]:
        return [item_of(PromptMessage, m, f"{self.where} messages[{i}]")
                for i, m in enumerate(self._list("messages"))]



# -- list items ---------------------------------------------------------------------------


class Tool(Named):
    """A tool the server offers, as `tools/list` described it."""

    __slots__ = ()

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of its arguments."""
        return self._get("inputSchema", dict, "an object")

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of its structured result, when it declares one."""
        return self._opt_dict("outputSchema")

    @property
    def annotations(self) -> dict[str, Any] | None:
        """Hints about its behaviour (`readOnlyHint`, `destructiveHint`, ...): a server's
        claims, never to be trusted for safety decisions."""
        return self._opt_dict("annotations")


class Resource(ResourceDescription):
    """A resource the server lists."""

    __slots__ = ()


class ResourceTemplate(Named):
    """A family of resources named by a URI template (RFC 6570)."""

    __slots__ = ()

    @property
    def uri_template(self) -> str:
        return self._str("uriTemplate")

    @property
    def mime_type(self) -> str | None:
        return self._opt_str("mimeType")


class PromptArgument(WireObject):
    """One argument a prompt takes (prompt arguments are strings)."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return self._str("name")

    @property
    def description(self) -> str | None:
        return self._opt_str("description")

    @property
    def required(self) -> bool:
        return self.raw.get("required") is True


class Prompt(Named):
    """A prompt the server offers."""

    __slots__ = ()

    @property
    def arguments(self) -> list[PromptArgument]:
        listed = self._opt("arguments", list, "a list") or []
        return [item_of(PromptArgument, a, f"{self.where} arguments[{i}]")
                for i, a in enumerate(listed)]
