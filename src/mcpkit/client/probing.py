"""Sending the dual-era probe: one `server/discover`, and what came back (`Probe`).

Over a stream (stdio, memory) the probe is sent once: a silent server is left to the
handshake with the probe still in flight (`late_answer` reads it if it comes), and a stdio
server that died on it is said so. Over HTTP a legacy server answers (an error or a 4xx,
VER-12) rather than keep silent, so silence, a broken connection or a busy server says nothing
of its era: the probe is sent again until an answer or the connect budget runs out. A 401 or
403 is never read as "a legacy server": it is about the credentials. What the answer says of
the era is `mcpkit.client.era.read_probe`'s; what follows is the opener's
(`mcpkit.client.opening`).

May import `mcpkit.types`, `mcpkit.errors` and the client's own lower modules.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.client.era import NoCommonVersionError, ProbeOutcome, read_probe
from mcpkit.client.options import ClientOptions, RequestTimeoutError
from mcpkit.client.transport import ClientTransport, http_status
from mcpkit.errors import AuthError, TransportError
from mcpkit.types.era import MODERN

__all__ = [
    "Probe",
    "late_answer",
    "send_probe",
]

log = logging.getLogger("mcpkit.client")

_AUTHORIZATION_STATUSES: Final = frozenset({401, 403})
"""Statuses the probe never reads as "a legacy server": they are about the credentials."""
_NOT_IMPLEMENTED: Final = 501
_BUSY: Final = frozenset({502, 503, 504})
"""Statuses of a server (or a proxy before it) that is busy now: the HTTP probe tries again."""
_BREAKS: Final = 3
"""Broken answers to the HTTP probe in all before the last one's error is raised: a reset is
tried again, a port that never answers HTTP is said so quickly."""
_FIRST_PAUSE: Final = 0.05
"""Seconds before the HTTP probe is sent again after a broken connection (doubling, up to
`probe_timeout`)."""


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def send_probe(transport: ClientTransport, message: Callable[[], dict[str, Any]],
                     kind: str | None, options: ClientOptions) -> Probe:
    """One probe's answer: the response, or None when silent; whether the server died.
    `message` makes each probe sent (a new id each); `kind` is the connector's (None: a
    transport given as it is)."""
    if kind == "http":
        return await _probe_http(transport, message, options)
    task = asyncio.ensure_future(transport.request(message()))
    done, _ = await asyncio.wait({task}, timeout=options.probe_timeout)
    while not done and _authorizing(transport):
        done, _ = await asyncio.wait({task}, timeout=options.probe_timeout)
    if not done:
        # Silent (VER-9 c): initialize next, without a cancellation (a legacy server may
        # dislike notifications before initialize). The probe stays in flight: a late
        # answer still proves a slow modern server (`late_answer`).
        task.add_done_callback(_consume)
        return Probe(None, late=task)
    got = _outcome(task)
    if isinstance(got, Probe):
        return got
    if kind == "stdio":
        return Probe(None, died=True)
    raise got


async def _probe_http(transport: ClientTransport, message: Callable[[], dict[str, Any]],
                      options: ClientOptions) -> Probe:
    """The probe over HTTP, where a legacy server answers `server/discover` (with an error
    or a 4xx, VER-12) rather than keep silent: silence, a broken connection or a busy
    server says nothing of its era. So the probe is sent again, each `probe_timeout` of
    silence and after a break (a short pause first, `_BREAKS` breaks at most), until an
    answer or the connect budget (`ClientOptions.timeout`) runs out; the first answer
    decides. A connection refused (nothing listens) is said so at once."""
    loop = asyncio.get_running_loop()
    budget = options.timeout
    wait = options.probe_timeout
    deadline = math.inf if budget is None else loop.time() + max(budget, wait)
    flying: set[asyncio.Future[dict[str, Any]]] = set()
    pause, broke, sent, breaks = _FIRST_PAUSE, False, 0, 0
    try:
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise RequestTimeoutError(
                    f"server/discover: no answer within {budget} s ({sent} probes); the "
                    "server is busy or slow (raise the client's timeout), or no MCP server "
                    "answers at this URL")
            if broke and not flying:
                await asyncio.sleep(min(pause, left))
                pause = min(2 * pause, wait)
            if not flying or not broke:
                flying.add(asyncio.ensure_future(transport.request(message())))
                sent += 1
            broke = False
            done, flying = await asyncio.wait(flying, timeout=min(wait, left),
                                              return_when=asyncio.FIRST_COMPLETED)
            while not done and _authorizing(transport):
                # A 401 started a sign-in (it may take the user minutes): the server
                # answered, so wait for the authorized answer.
                done, flying = await asyncio.wait(flying, timeout=wait,
                                                  return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                got = _outcome(task)
                if isinstance(got, Probe):
                    return got
                status = http_status(got)
                breaks += 1
                if got.unreached or breaks >= _BREAKS or (
                        status is not None and status not in _BUSY):
                    raise got
                log.info("server/discover: %s; probing again", got)
                broke = True
    finally:
        for task in flying:
            task.cancel()
            task.add_done_callback(_consume)


def _outcome(task: asyncio.Future[dict[str, Any]]) -> Probe | TransportError:
    """What a finished probe brought: its answer, or what an HTTP refusal in its place says
    (`_refusal`); else the error it met, for the caller to judge."""
    try:
        return Probe(task.result())
    except TransportError as exc:
        return _refusal(exc) or exc


@dataclass(frozen=True, slots=True)
class Probe:
    """What one `server/discover` probe brought."""

    response: dict[str, Any] | None
    died: bool = False
    status: int | None = None
    """The HTTP status that came instead of a JSON-RPC answer (a 4xx: VER-12)."""
    late: asyncio.Future[dict[str, Any]] | None = None
    """The probe left in flight when it was silent (stdio): its answer may still come."""


async def late_answer(probe: Probe | None, sent: str, wait: float) -> ProbeOutcome | None:
    """A silent probe's answer, if it comes within `wait` more seconds, read as a modern
    server's; else None."""
    task = probe.late if probe is not None else None
    if task is None:
        return None
    if not task.done():
        await asyncio.wait({task}, timeout=wait)
    if not task.done() or task.cancelled() or task.exception() is not None:
        return None
    try:
        outcome = read_probe(task.result(), sent)
    except NoCommonVersionError:
        return None
    return outcome if outcome.era == MODERN else None


def _authorization_needed(status: int | None) -> AuthError:
    return AuthError(
        f"server/discover: the server answered HTTP {status}: it requires authorization; "
        "give the connector auth= (mcpkit.transports.oauth.flow.OAuth) or sign in with "
        "`mcpkit login URL`")


def _refusal(exc: TransportError) -> Probe | None:
    """What an HTTP error in place of the probe's answer says: authorization is needed (raised:
    not a sign of a legacy server, and initialize would meet the same refusal), or the probe
    was not answered as a request (a 4xx without a modern error body, VER-12); None: neither."""
    status = http_status(exc)
    if status in _AUTHORIZATION_STATUSES:
        raise _authorization_needed(status) from None
    if status is not None and _not_answered(status):
        return Probe(None, status=status)
    return None


def _not_answered(status: int) -> bool:
    """An HTTP status without a JSON-RPC message that says "not this request": a 4xx
    (VER-12), or 501, a web server that takes no POST at all."""
    return 400 <= status < 500 or status == _NOT_IMPLEMENTED


def _authorizing(transport: ClientTransport) -> bool:
    """Whether the transport's authorization flow is answering a 401 or 403 now (an HTTP
    transport with `auth=`; others have no such flow)."""
    auth = getattr(transport, "auth", None)
    return bool(getattr(auth, "authorizing", 0))
