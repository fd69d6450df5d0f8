"""Where the legacy sessions of an HTTP server live when its store URL names a shared store.

A server opened on `postgresql://...` or `redis://...` (`ServerOptions.store`, MCPKIT_STORE,
`mcpkit run --store`) keeps its 2025-11-25 sessions and their resumable SSE events there too,
so any replica behind a load balancer serves any session. Stores named in `HTTPOptions`
(`session_store`, `event_store`) win; with no shared URL nothing changes (sessions in this
process). The app tests `session_store is None`, never its truth: an empty store has len() 0.

Its broker becomes a `SharedBroker` on the same engine (`mcpkit.server.broker.share_broker`),
whether or not legacy clients are served.

Imports: `mcpkit.legacy.session` (the state kept per session), `mcpkit.server.broker`,
`mcpkit.store.legacy.opening` (the stores on the backend's engine).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mcpkit.legacy.session import LegacyState
from mcpkit.server.broker import share_broker
from mcpkit.store.legacy.opening import event_store, session_store

__all__ = ["shared_stores"]


def shared_stores(server: Any, options: Any) -> Any:
    """`options` (an `HTTPOptions`) with the shared store's session and event stores filled
    in where it names none; `options` itself when the server's store is not shared."""
    backend = getattr(getattr(server, "sealer", None), "backend", None)
    if backend is None or not backend.shared:
        return options
    share_broker(server)  # changes, legacy answers, task controls between replicas
    changes: dict[str, Any] = {}
    if options.session_store is None:
        changes["session_store"] = session_store(
            backend, LegacyState, max_sessions=options.sessions.max_sessions,
            idle_s=options.session_idle_s)
    if options.event_store is None:
        changes["event_store"] = event_store(backend)
    return dataclasses.replace(options, **changes) if changes else options
