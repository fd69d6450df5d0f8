"""One call's request path: params with its own `_meta`, the first round trip, then whatever
its `resultType` calls for.

A call (`tools/call`, `resources/read`, `prompts/get`) is the one kind of request that may not
be answered at once. `complete` ends it; `input_required` enters the MRTR loop
(`mcpkit.client.inputs.run_rounds`); a kind an extension registered
(`mcpkit.client.result_kinds`: the Tasks extension's `task`) is admitted by the extension's
check and returned for the caller to follow; any other is refused. The lists and `complete` do not come here: they are answered at once.

Takes the client's `ClientCore` (`mcpkit.client.core`). May import `mcpkit.types`,
`mcpkit.errors` and the client's own lower modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit.client.core import DEFAULT_TIMEOUT, ClientCore
from mcpkit.client.inputs import run_rounds
from mcpkit.client.options import LogHandler, ProgressHandler, call_notifications
from mcpkit.client.result_kinds import admit, is_extension_kind
from mcpkit.types.constants import LOG_LEVELS

__all__ = ["call"]


async def call(
    core: ClientCore,
    method: str,
    fields: dict[str, Any],
    what: str,
    *,
    progress: ProgressHandler | None = None,
    log: LogHandler | None = None,
    log_level: str | None = None,
    timeout: Any = DEFAULT_TIMEOUT,
    meta: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], bool]:
    """The call's result (a complete one, or an admitted extension kind), and whether it
    took input rounds; `progress` and `log` hear its notifications (`log`, else the client's
    `on_log`)."""
    await core.connect()
    token = core.next_token() if progress is not None else None
    if log is not None and log_level is None:
        log_level = core.options.log_level or "info"
    if log_level is not None and log_level not in LOG_LEVELS:
        raise ValueError(f"{what}: log_level must be one of {', '.join(LOG_LEVELS)}")
    params = core.params(fields, token, log_level, meta)
    on_note = None
    log = log or core.on_log
    if progress is not None or (log is not None and (log_level or core.options.log_level)):
        on_note = call_notifications(progress, log)

    async def send(sent: dict[str, Any]) -> dict[str, Any]:
        return await core.send(method, sent, on_note, timeout)

    result = await core.adapter.call(lambda: send(params), what)
    kind = result.get("resultType")
    rounds = False
    if kind is not None and kind != "complete" and not is_extension_kind(result):
        result = await run_rounds(send, params, result, what, core.inputs, core.server_info,
                                  core.options.max_rounds)
        rounds = True
    if is_extension_kind(result):
        admit(method, params, result, what)
    return result, rounds
