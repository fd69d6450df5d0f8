"""`completion/complete`: the application's completion handler, its request and its answer.

The request's `ref` and `argument` are checked here before the handler sees them, and what the
handler returns (a list of values, or a dict with `total`/`hasMore`) becomes the result's
`completion`, cut at the 100 values a result may carry.

Imports `mcpkit.errors` and `mcpkit.types`, and `mcpkit.server.context` (which imports none of the server's modules that import this one).
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcpkit.errors import InvalidParamsError, MethodNotFoundError
from mcpkit.server.context import Context
from mcpkit.types.methods import Method

__all__ = [
    "complete",
    "completion_of",
]


async def complete(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    server = ctx.server
    delegate = _delegate_of(server, params["ref"])
    if delegate is not None:  # a prompt or template of a mounted server: it completes it
        result: dict[str, Any] = await delegate.complete(params, ctx)
        return result
    handler = server.completion
    if handler is None:
        raise MethodNotFoundError(
            "Method not found: completion/complete (this server offers no completions)",
            {"method": Method.COMPLETE},
        )
    # Their shapes (a prompt's or a template's reference; a name and a value) are the row's
    # params check's (guards.py); what they name is this server's to know.
    ref, argument = params["ref"], params["argument"]
    if ref["type"] == "ref/prompt" and ref["name"] not in server.prompts:
        raise InvalidParamsError(f"completion/complete: unknown prompt {ref['name']!r}")
    context = params.get("context") or {}
    outcome = handler(ref, argument, context)
    if asyncio.iscoroutine(outcome):
        outcome = await outcome
    return {"resultType": "complete", "completion": completion_of(outcome)}


def _delegate_of(server: Any, ref: dict[str, Any]) -> Any:
    """The delegation of the prompt or template `ref` names, when a mounted server serves it
    (`ref` is a PromptReference or a ResourceTemplateReference: the row's params check)."""
    if ref["type"] == "ref/prompt":
        return getattr(server.prompts.get(ref["name"]), "delegate", None)
    for template in server.templates:
        if template.template.template == ref["uri"]:
            return template.delegate
    return getattr(server.resources.get(ref["uri"]), "delegate", None)


def completion_of(outcome: Any) -> dict[str, Any]:
    """`completion` of a CompleteResult: from a list of values or a dict with total/hasMore."""
    if outcome is None:
        return {"values": []}
    if isinstance(outcome, dict):
        values = list(outcome.get("values", []))
        extra = {k: outcome[k] for k in ("total", "hasMore") if k in outcome}
    else:
        values, extra = list(outcome), {}
    if not all(isinstance(v, str) for v in values):
        raise TypeError("completion values must be strings")
    if len(values) > 100:
        extra.setdefault("total", len(values))
        extra["hasMore"] = True
        values = values[:100]
    return {"values": values, **extra}
