"""The params of each request a server serves, as `TypedDict`s: the method table's params column.

These are our own words for the official schema's `*RequestParams` definitions (the schema
files are not shipped with the package), written as types so that the project's schema
compiler turns each into the check a request's params pass before its handler runs
(`mcpkit.schema.params`). `tests/types/test_params_against_schema.py` holds each one to the
official definition, over the official examples and a set of wrong values.

`_meta` is left out of every one: `mcpkit.protocol.envelope.read_meta` checks it, with its own
words, before routing. A field the server always took `null` for as absent is `| None` here
(`arguments`, `context`, `cursor`, the listen flags); the schema says the field is left out
instead, and the test lists those as tolerated. `inputResponses` and `requestState` are left
out too: they are read, and checked in words that name the question they answer, only when the
tool, prompt or resource asks (`mcpkit.server.mrtr`); one that never asks ignores them, as it
always has. A field's `Annotated` words say what it holds:
a refusal quotes them after the problem.

Imports the standard library only; no I/O.
"""

from typing import Annotated, Any, Literal, NotRequired, TypedDict

__all__ = [
    "CallToolParams",
    "CompleteParams",
    "GetPromptParams",
    "ListenParams",
    "PaginatedParams",
    "ReadResourceParams",
    "RequestParams",
]


class RequestParams(TypedDict):
    """Params with nothing but `_meta` (`server/discover`)."""


class PaginatedParams(TypedDict):
    """The params of a list request: where the previous page ended."""

    cursor: NotRequired[Annotated[str | None, "the nextCursor of the previous page"]]


class CallToolParams(TypedDict):
    name: Annotated[str, "the tool's name"]
    arguments: NotRequired[Annotated[dict[str, Any] | None, "an object of the tool's arguments"]]


class GetPromptParams(TypedDict):
    name: Annotated[str, "the prompt's name"]
    arguments: NotRequired[Annotated[dict[str, str] | None, "an object of strings, one per argument"]]


class ReadResourceParams(TypedDict):
    uri: Annotated[str, "the resource's URI"]


class PromptReference(TypedDict):
    type: Literal["ref/prompt"]
    name: str
    title: NotRequired[str]


class ResourceTemplateReference(TypedDict):
    type: Literal["ref/resource"]
    uri: str


class CompletionArgument(TypedDict):
    name: str
    value: str


class CompletionContext(TypedDict):
    arguments: NotRequired[dict[str, str]]


class CompleteParams(TypedDict):
    ref: Annotated[PromptReference | ResourceTemplateReference, (
        '{"type": "ref/prompt", "name": ...} or {"type": "ref/resource", "uri": ...}')]
    argument: Annotated[CompletionArgument, '{"name": str, "value": str}']
    context: NotRequired[CompletionContext | None]


class SubscriptionFilter(TypedDict):
    """The notifications one listen stream opts in to."""

    toolsListChanged: NotRequired[bool | None]
    promptsListChanged: NotRequired[bool | None]
    resourcesListChanged: NotRequired[bool | None]
    resourceSubscriptions: NotRequired[list[str] | None]


class ListenParams(TypedDict):
    notifications: Annotated[SubscriptionFilter, 'an object of opt-ins, e.g. {"toolsListChanged": true}']
