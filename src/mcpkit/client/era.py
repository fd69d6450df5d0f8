"""Which era a server speaks: reading the `server/discover` probe, and remembering the answer.

`read_probe` is the decision table of the probing algorithm (VER-9 for stdio, VER-12 for HTTP)
as a pure function of what came back: a `DiscoverResult` means modern at the highest version
both sides speak; a recognised modern error (-32022, -32021, -32020) means modern, with a version
taken from `data.supported` when the server named some; anything else (-32601, -32602, any
other error, a result that is not a DiscoverResult, silence, an HTTP 4xx without a modern error
body) means legacy. The fallback is never keyed to one error code (VER-10).

`Era` is the one era type (`mcpkit.types.era`), importable from here as well.

`EraCache` (`mcpkit.store.era_cache`, importable from here as well) remembers the decision per
server (`Connector.key`); `PROCESS_ERAS` is the one every `Client` of this process shares.

May import `mcpkit.types`, `mcpkit.errors` and `mcpkit.store`; does no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcpkit.errors import NoCommonVersionError
from mcpkit.store.era_cache import EraCache
from mcpkit.types.constants import LEGACY_VERSIONS, MODERN_VERSION
from mcpkit.types.era import LEGACY, MODERN, Era

__all__ = [
    "MODERN_ERROR_CODES",
    "Era",
    "EraCache",
    "NoCommonVersionError",
    "ProbeOutcome",
    "read_probe",
]

MODERN_ERROR_CODES = frozenset({-32020, -32021, -32022})
"""Errors only a modern server sends: receiving one proves the server is modern (VER-9 b)."""

MODERN_CLIENT_VERSIONS: tuple[str, ...] = (MODERN_VERSION,)
"""Modern versions this client speaks, newest first."""


@dataclass(frozen=True, slots=True)
class ProbeOutcome:
    era: Era
    version: str | None
    """The modern version to use; None for legacy (initialize negotiates it)."""
    discover: dict[str, Any] | None = None
    """The DiscoverResult, when the probe got one for `version`."""
    retry: bool = False
    """Modern, but the probe must be sent again with `version` (it named another one)."""


def _is_discover_result(result: Any) -> bool:
    return (
        type(result) is dict
        and type(result.get("supportedVersions")) is list
        and type(result.get("capabilities")) is dict
    )


def _choose(supported: Sequence[Any], ours: Sequence[str], sent: str, origin: str) -> ProbeOutcome:
    common = sorted((v for v in supported if v in ours), reverse=True)
    if common:
        return ProbeOutcome(MODERN, common[0], retry=common[0] != sent)
    if any(v in LEGACY_VERSIONS for v in supported):
        return ProbeOutcome(LEGACY, None)
    raise NoCommonVersionError(
        f"server/discover: the server supports {', '.join(map(str, supported)) or 'no versions'} "
        f"({origin}); this client speaks {', '.join(ours)} and {', '.join(LEGACY_VERSIONS[:1])}"
    )


def read_probe(
    response: Mapping[str, Any] | None,
    sent: str,
    ours: Sequence[str] = MODERN_CLIENT_VERSIONS,
) -> ProbeOutcome:
    """Decide the era from the response to a `server/discover` sent with version `sent`.

    `response` is the JSON-RPC response message, or None when none came (a timeout, or an
    HTTP error without a JSON-RPC body).
    """
    if response is None:
        return ProbeOutcome(LEGACY, None)
    error = response.get("error")
    if type(error) is dict:
        code = error.get("code")
        if code not in MODERN_ERROR_CODES:
            return ProbeOutcome(LEGACY, None)
        data = error.get("data")
        supported = data.get("supported") if type(data) is dict else None
        if code == -32022 and type(supported) is list:
            outcome = _choose(supported, ours, sent, "as listed in its -32022 error")
            return ProbeOutcome(outcome.era, outcome.version, retry=outcome.era == MODERN)
        return ProbeOutcome(MODERN, sent)
    result = response.get("result")
    if not _is_discover_result(result):
        # Some legacy servers answer any method with an empty result (CONF note on VER).
        return ProbeOutcome(LEGACY, None)
    assert type(result) is dict
    outcome = _choose(result["supportedVersions"], ours, sent, "in its DiscoverResult")
    if outcome.era == MODERN and not outcome.retry:
        return ProbeOutcome(MODERN, outcome.version, discover=result)
    return outcome


PROCESS_ERAS = EraCache()
"""Decisions made in this process, shared by every Client (VER-13)."""
