"""What may be said about turning an API into MCP: the rules that pick what each operation
becomes, and the bounds of every document read and every request sent.

`Rule`s are read in order and the first that matches an operation decides it, as a router's
routes are; an operation no rule matches becomes a tool. A rule matches on any of the criteria
it names being absent or met: its methods, a regular expression searched in the path template,
any one of its tags, or its operation ids.

Imports: the standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = [
    "DEFAULT_MAX_OPERATIONS",
    "OpenAPIOptions",
    "Route",
    "Rule",
]

Route = Literal["tool", "resource", "exclude"]
"""What an operation becomes: a tool, a resource (a template when its path has parameters),
or nothing."""
_ROUTES: Final = ("tool", "resource", "exclude")
_METHODS: Final = frozenset({"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"})
DEFAULT_MAX_OPERATIONS: Final = 1000


@dataclass(frozen=True, slots=True)
class Rule:
    """Send the operations that match to `to`: `"tool"`, `"resource"` or `"exclude"`.

    `methods` (`"GET"`, ...), `path` (a regular expression searched in the path template, e.g.
    `r"^/admin/"`), `tags` (any one of them) and `operations` (operation ids) each narrow the
    match; a rule naming none matches every operation. `"resource"` matches only operations a
    URI can name, GET operations whose required parameters are all in the path: the others go
    on to the next rule.
    """

    to: Route
    methods: Collection[str] = ()
    path: str | None = None
    tags: Collection[str] = ()
    operations: Collection[str] = ()
    _pattern: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.to not in _ROUTES:
            raise ValueError(f"Rule(to={self.to!r}): expected one of {', '.join(_ROUTES)}")
        for name in ("methods", "tags", "operations"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise TypeError(f"Rule({name}=...) takes a list of names, not the string "
                                f"{value!r}: write [{value!r}]")
        methods = frozenset(str(m).upper() for m in self.methods)
        unknown = sorted(methods - _METHODS)
        if unknown:
            raise ValueError(f"Rule(methods=...): {', '.join(unknown)} is no HTTP method an "
                             f"OpenAPI document describes ({', '.join(sorted(_METHODS))})")
        object.__setattr__(self, "methods", methods)
        object.__setattr__(self, "tags", frozenset(self.tags))
        object.__setattr__(self, "operations", frozenset(self.operations))
        if self.path is not None:
            try:
                object.__setattr__(self, "_pattern", re.compile(self.path))
            except re.error as exc:
                raise ValueError(f"Rule(path={self.path!r}): not a regular expression ({exc})"
                                 ) from None

    def matches(self, method: str, path: str, tags: Collection[str],
                operation_id: str | None) -> bool:
        """Whether the operation `method path` (its tags, its id) is one this rule names."""
        if self.methods and method.upper() not in self.methods:
            return False
        if self._pattern is not None and self._pattern.search(path) is None:
            return False
        if self.tags and not any(tag in self.tags for tag in tags):
            return False
        return not self.operations or operation_id in self.operations


@dataclass(frozen=True, slots=True)
class OpenAPIOptions:
    """How an OpenAPI document becomes tools and resources, and the bounds of each call."""

    rules: Sequence[Rule] = ()
    """Read in order, the first match deciding; an operation none matches is a tool. E.g.
    `[Rule("exclude", tags=["admin"]), Rule("resource", methods=["GET"])]`."""
    names: Mapping[str, str] = field(default_factory=dict)
    """operationId -> the name to publish it under, instead of the one made from the id."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Sent with every request (an `Authorization` or API key header): credentials come from
    here or from the `httpx.AsyncClient` given, never from the MCP client."""
    client_credentials: Collection[str] = ()
    """Parameters the MCP client may fill although they carry credentials (the names of the
    document's apiKey security schemes, `Authorization`, `Cookie`); left out, such parameters
    are never published as arguments."""
    timeout_s: float = 30.0
    """The longest one request may take, from sending it to its last byte read."""
    max_response_bytes: int = 2 * 1024 * 1024
    """The largest response body read; a larger one is a tool error naming this option."""
    error_excerpt_chars: int = 500
    """How much of an error response's body a tool error quotes."""
    description_chars: int = 4000
    """The longest description published for one tool or resource; longer ones are cut."""
    max_document_bytes: int = 16 * 1024 * 1024
    """The largest document read from a file or URL."""
    max_operations: int = DEFAULT_MAX_OPERATIONS
    """The most operations a document may describe (all of them, before the rules): checking
    a document's every schema takes time that grows with it."""
    resource_prefix: str = "api://"
    """What a resource's URI starts with, the path template following it
    (`api://pets/{petId}`)."""

    def __post_init__(self) -> None:
        if isinstance(self.client_credentials, str):
            raise TypeError("OpenAPIOptions(client_credentials=...) takes a list of names, not "
                            f"the string {self.client_credentials!r}")
        for name in ("timeout_s", "max_response_bytes", "error_excerpt_chars",
                     "description_chars", "max_document_bytes", "max_operations"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"OpenAPIOptions({name}={value!r}): expected a number above 0")
        if ":" not in self.resource_prefix:
            raise ValueError(f"OpenAPIOptions(resource_prefix={self.resource_prefix!r}): a URI "
                             "prefix names its scheme, e.g. 'api://'")
        for rule in self.rules:
            if not isinstance(rule, Rule):
                raise TypeError(f"OpenAPIOptions(rules=...): {rule!r} is not a Rule")
