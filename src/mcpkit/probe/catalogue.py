"""A server's catalogue as one client sees it: its tools, prompts, resources and templates,
listed to the last page, for one set of client capabilities.

A server may list different tools to clients that declare different capabilities (the
reference server lists 13, 15 or 17), so the probe lists once per capability set. `CAPSETS` is
the table of named sets `--caps` accepts; a JSON object there is a set of its own. For a modern
server the capabilities travel in each request's `_meta`, so one connection serves every set;
a legacy server learns them once per session, so each set opens a session of its own.

Paging is bounded (`MAX_PAGES`) and stops on a cursor seen before: a server that pages forever
is reported, not followed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

import orjson

from mcpkit.probe.walk import Session, describe
from mcpkit.types.methods import Method

__all__ = [
    "CAPSETS",
    "LISTS",
    "MAX_PAGES",
    "Catalogue",
    "list_catalogue",
    "parse_caps",
]

_ELICITATION: dict[str, Any] = {"form": {}, "url": {}}
CAPSETS: Final[Mapping[str, dict[str, Any]]] = MappingProxyType({
    "none": {},
    "roots": {"roots": {"listChanged": True}},
    "sampling": {"sampling": {}},
    "elicitation": {"elicitation": _ELICITATION},
    "all": {"roots": {"listChanged": True}, "sampling": {}, "elicitation": _ELICITATION},
})
"""`--caps` name -> the client capabilities declared under it."""

LISTS: Final = (
    (Method.TOOLS_LIST, "tools", "tools"),
    (Method.PROMPTS_LIST, "prompts", "prompts"),
    (Method.RESOURCES_LIST, "resources", "resources"),
    (Method.RESOURCES_TEMPLATES_LIST, "resourceTemplates", "resources"),
)
"""(list method, the result's member, the server capability that offers it)."""

MAX_PAGES: Final = 100


def parse_caps(text: str) -> list[tuple[str, dict[str, Any]]]:
    """`none,elicitation,all` or a JSON object -> [(name, capabilities)]; ValueError names
    what is wrong and what is accepted."""
    text = text.strip()
    if text.startswith("{"):
        try:
            caps = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"--caps: the JSON does not parse: {exc}") from None
        if type(caps) is not dict or any(type(v) is not dict for v in caps.values()):
            raise ValueError("--caps: a JSON value must be an object of capability objects, "
                             'e.g. {"elicitation": {"form": {}}}')
        return [("+".join(sorted(caps)) or "none", caps)]
    out: list[tuple[str, dict[str, Any]]] = []
    for name in (n.strip() for n in text.split(",")):
        if name not in CAPSETS:
            raise ValueError(f"--caps: unknown capability set {name!r}; use "
                             f"{', '.join(CAPSETS)} (comma-separated) or a JSON object")
        if name not in (n for n, _ in out):
            out.append((name, dict(CAPSETS[name])))
    return out


@dataclass(slots=True)
class Catalogue:
    """Everything listed under one capability set."""

    capset: str
    capabilities: dict[str, Any]
    tools: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    resources: list[dict[str, Any]] = field(default_factory=list)
    resourceTemplates: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """What went wrong while listing (an error, a page that is not a list, endless paging)."""


async def list_catalogue(session: Session, capset: str, capabilities: dict[str, Any],
                         offered: Mapping[str, Any]) -> Catalogue:
    """List every kind the server's capabilities (`offered`) say it has, for `capabilities`."""
    catalogue = Catalogue(capset, capabilities)
    session.capabilities = capabilities
    for method, member, capability in LISTS:
        if capability not in offered:
            continue
        items, problem = await _list_all(session, method, member)
        setattr(catalogue, member, items)
        if problem is not None:
            catalogue.problems.append(problem)
    return catalogue


async def _list_all(session: Session, method: str, member: str
                    ) -> tuple[list[dict[str, Any]], str | None]:
    items: list[dict[str, Any]] = []
    cursors: set[str] = set()
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        exchange = await session.call(method, {"cursor": cursor} if cursor is not None else None)
        result = exchange.result
        if result is None:
            return items, f"{method}: {describe(exchange)}"
        page = result.get(member)
        if type(page) is not list:
            return items, f"{method}: the result's {member} is not a list"
        items += [item for item in page if type(item) is dict]
        dropped = sum(1 for item in page if type(item) is not dict)
        if dropped:
            return items, f"{method}: {dropped} entries are not objects"
        following = result.get("nextCursor")
        if following is None:
            return items, None
        if type(following) is not str or following in cursors:
            return items, f"{method}: the cursor {following!r} repeats or is not a string"
        cursors.add(following)
        cursor = following
    return items, f"{method}: still paging after {MAX_PAGES} pages; the rest is not listed"
