"""What the connected server offers, as the page shows it: its lists, the token budget of each
tool and of everything, and the evidence of how its era was found.

The budget is the probe's (`mcpkit.probe.budget`): each entry's compact JSON counted in
`o200k_base`, a tool's weight split by member, the instructions counted apart; without the
counter's extra installed the page says which extra to install. The evidence is the probe's
wording (`mcpkit.probe.walk.describe`) of this connection's own opening exchanges, as the
wire saw them: `server/discover (2026-07-28) → DiscoverResult: 2026-07-28, 2025-11-25`, or a
probe refused and the `initialize` that followed.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcpkit.client import Client
from mcpkit.client.wire_object import WireObject
from mcpkit.errors import MCPError, MissingExtraError
from mcpkit.ext.apps import FLAT_RESOURCE_URI, VISIBILITY
from mcpkit.probe.budget import Counter, budget
from mcpkit.probe.catalogue import Catalogue
from mcpkit.probe.channels import Exchange
from mcpkit.probe.walk import Step
from mcpkit.types.constants import PROTOCOL_VERSION_KEY
from mcpkit.types.methods import Method

__all__ = [
    "counted",
    "evidence",
    "gather",
    "view_of",
]

_LISTS = (("tools", "tools"), ("resources", "resources"),
          ("resourceTemplates", "resources"), ("prompts", "prompts"))


def evidence(openings: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The steps of a connection's opening: each request sent and its answer in a few words."""
    steps = []
    for opening in openings:
        sent = opening["sent"]
        params = sent.get("params")
        params = params if isinstance(params, dict) else {}
        if sent.get("method") == Method.DISCOVER:
            meta = params.get("_meta")
            version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
        else:
            version = params.get("protocolVersion")
        exchange = Exchange(sent, opening.get("response"), opening.get("status"),
                            note="" if opening.get("response") else "no answer")
        step = Step.of(f"{sent.get('method')} ({version})", exchange)
        steps.append({"sent": step.sent, "answer": step.answer})
    return steps


def view_of(tool: dict[str, Any]) -> dict[str, Any] | None:
    """The MCP App view a tool is linked to, and who may call it, or None."""
    meta = tool.get("_meta")
    if not isinstance(meta, dict):
        return None
    ui = meta.get("ui")
    uri = ui.get("resourceUri") if isinstance(ui, dict) else None
    if not isinstance(uri, str):
        uri = meta.get(FLAT_RESOURCE_URI)
    if not isinstance(uri, str) or not uri.startswith("ui://"):
        return None
    visibility = ui.get("visibility") if isinstance(ui, dict) else None
    if not isinstance(visibility, list) or not visibility:
        visibility = list(VISIBILITY)
    return {"uri": uri, "visibility": [v for v in visibility if isinstance(v, str)]}


async def gather(client: Client) -> dict[str, Any]:
    """Every list the server's capabilities offer (their budget comes from `counted`)."""
    offered = client.server_capabilities or {}
    out: dict[str, Any] = {"tools": [], "resources": [], "resourceTemplates": [],
                           "prompts": [], "rejected": [], "problems": []}
    listing: dict[str, Callable[..., Awaitable[Sequence[WireObject]]]] = {
        "tools": client.list_tools, "resources": client.list_resources,
        "resourceTemplates": client.list_resource_templates, "prompts": client.list_prompts}
    for member, capability in _LISTS:
        if capability not in offered:
            continue
        try:
            out[member] = [item.raw for item in await listing[member](fresh=True)]
        except MCPError as exc:
            out["problems"].append(f"{member}: {exc}")
    out["rejected"] = [{"name": r.name, "reason": r.reason} for r in client.rejected_tools]
    out["views"] = {tool["name"]: view for tool in out["tools"]
                    if (view := view_of(tool)) is not None}
    out["budget"] = {"counting": True}
    return out


async def counted(lists: dict[str, Any], instructions: str | None) -> dict[str, Any]:
    """The token budget of what `gather` listed. Counting takes a while the first time (the
    vocabulary loads), so it runs off the event loop, after the lists are shown."""
    return await asyncio.to_thread(_budget, lists, instructions)


@functools.cache
def _counter() -> Counter:
    return Counter()


def _budget(lists: dict[str, Any], instructions: str | None) -> dict[str, Any]:
    try:
        counter = _counter()
    except MissingExtraError:
        return {"missing": str(MissingExtraError("counting tokens", "dev"))}
    catalogue = Catalogue("dev", {}, tools=lists["tools"],
                          prompts=lists["prompts"], resources=lists["resources"],
                          resourceTemplates=lists["resourceTemplates"])
    counted = budget(catalogue, instructions, counter)
    return {
        "encoding": counted.encoding,
        "tools": {c.key: {"tokens": c.tokens, "weight": c.weight} for c in counted.of("tools")},
        "totals": {kind: counted.total(kind) for kind in
                   ("tools", "prompts", "resources", "resourceTemplates")},
        "instructions": counted.instructions,
        "all": counted.total(),
        "repeated": [{"name": r.name, "tools": list(r.tools), "wasted": r.wasted}
                     for r in counted.repeated],
    }

