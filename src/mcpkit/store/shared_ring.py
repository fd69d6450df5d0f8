"""The state key ring kept in a shared store (PostgreSQL, Redis), for replicas on many hosts.

Every replica reads one record, so a `requestState` or handle sealed by one opens on all.
The record is created by the first replica that needs it (an insert that only succeeds when
none exists: of replicas starting at once, one wins and all use its key). MCPKIT_STATE_KEYS and
`ServerOptions.state_keys` still override it: a replica given keys never reads the record.

Rotation without downtime. Replicas cannot all see a new record at the same instant (each
reads it again every `refresh_s`), so a new key is published `lead` seconds before it starts
sealing: by then every replica has read it and opens what it seals. The previous key keeps
sealing until then and opening for `keep` seconds more. `rotate` is one atomic
read-modify-write of the record, so two rotations at once cannot drop each other's key.

Sealing happens in synchronous code, so the ring is read with the driver's synchronous client,
always in a thread of its own: when first needed the caller waits for it at most `deadline`
seconds (a store that is down or hangs is `StoreUnavailableError` for that request, and the
read, still running, keeps what it gets for the next), and then in the background when the
copy is older than `refresh_s`, while requests go on with the copy they have.

Imports: the standard library, `mcpkit.protocol.request_state`, `mcpkit.store.state_keys`,
`mcpkit.store.outage`.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Final, Protocol

from mcpkit.protocol.request_state import KeyRing
from mcpkit.store.outage import DEFAULT_DEADLINE_S, unavailable
from mcpkit.store.state_keys import DEFAULT_KEEP

__all__ = [
    "DEFAULT_LEAD",
    "RingSource",
    "SharedRing",
    "rotated",
    "sealing_and_open",
]

DEFAULT_LEAD: Final = 30.0
"""Seconds between a rotation and the new key's first seal (several refreshes)."""
DEFAULT_REFRESH: Final = 5.0


class RingSource(Protocol):
    """Where the record lives: a JSON text, read and changed atomically."""

    @property
    def engine(self) -> str:
        """The engine's name for people ("PostgreSQL")."""

    @property
    def name(self) -> str:
        """Its name in `data.unavailable` ("postgresql")."""

    def read(self) -> str | None: ...

    def create(self, text: str) -> str:
        """Store `text` unless a record exists; the record kept (this one or the winner's)."""

    def update(self, change: Callable[[str | None], str]) -> str:
        """Replace the record by `change(current)` atomically; the new record."""

    def close(self) -> None: ...


def _new_record(random_bytes: Callable[[int], bytes]) -> str:
    return json.dumps({"keys": [{"key": KeyRing.key_text(random_bytes(32)), "from": 0.0,
                                 "until": None}]})


def sealing_and_open(record: str, now: float) -> tuple[str, ...]:
    """The keys that open at `now`, the one that seals first: the newest key whose time to
    seal has come; keys published ahead of their time open already, retired ones until
    their date."""
    keys = json.loads(record)["keys"]
    live = [k for k in keys if k.get("until") is None or k["until"] > now]
    sealing = next((k for k in live if (k.get("from") or 0.0) <= now), None)
    if sealing is None:
        raise ValueError("the shared state key record has no key that seals now")
    return (sealing["key"], *(k["key"] for k in live if k is not sealing))


def rotated(record: str | None, now: float, keep: float, lead: float,
            random_bytes: Callable[[int], bytes] = os.urandom) -> str:
    """The record after a rotation at `now`: a new key sealing from `now + lead`, every key
    that seals before then retired at `now + lead + keep` (or its own earlier date), and keys
    past their date dropped."""
    if not keep >= 0 or not lead >= 0:
        raise ValueError(f"keep and lead must be seconds >= 0, not {keep!r} and {lead!r}")
    keys = json.loads(record)["keys"] if record else []
    start = now + lead
    until = start + keep
    kept = []
    for k in keys:
        if k.get("until") is not None and k["until"] <= now:
            continue
        if (k.get("from") or 0.0) > now:  # published but not sealing yet: retire it with them
            k = {**k, "from": min(k["from"], start)}
        own = k.get("until")
        kept.append({**k, "until": until if own is None else min(own, until)})
    fresh = {"key": KeyRing.key_text(random_bytes(32)), "from": start, "until": None}
    return json.dumps({"keys": [fresh, *kept]})


class SharedRing:
    """A `KeyRing` that follows the shared record (the `Sealer` asks it with `ring(now)`)."""

    def __init__(self, source: RingSource, *, refresh_s: float = DEFAULT_REFRESH,
                 random_bytes: Callable[[int], bytes] = os.urandom,
                 monotonic: Callable[[], float] = time.monotonic,
                 deadline: float = DEFAULT_DEADLINE_S) -> None:
        self.source = source
        self.refresh_s = refresh_s
        self.deadline = deadline
        self._random = random_bytes
        self._monotonic = monotonic
        self._record: str | None = None
        self._read_at = float("-inf")
        self._ring: KeyRing | None = None
        self._ring_for: tuple[str, ...] = ()
        self._guard = threading.Lock()
        self._reading: threading.Event | None = None
        """Set when the read in flight ends (None: no read in flight)."""
        self._failure: Exception | None = None

    def load(self) -> str:
        """Read the record now (creating it if there is none), blocking."""
        record = self.source.read()
        if record is None:
            record = self.source.create(_new_record(self._random))
        self._record = record
        self._read_at = self._monotonic()
        return record

    def _read_in_background(self) -> threading.Event:
        """Start a read in a thread unless one is in flight; the event set when it ends."""
        with self._guard:
            if self._reading is not None:
                return self._reading
            reading = self._reading = threading.Event()

        def work() -> None:
            try:
                self.load()
                self._failure = None
            except Exception as exc:  # the store is down: keep the copy, try again later
                self._failure = exc
                self._read_at = self._monotonic()
            finally:
                with self._guard:
                    self._reading = None
                reading.set()

        threading.Thread(target=work, name="mcpkit-state-keys", daemon=True).start()
        return reading

    def _first_record(self) -> str:
        """The record, read for the first time: waited for at most `deadline` seconds."""
        if not self._read_in_background().wait(self.deadline):
            raise unavailable(self.source.engine, self.source.name, "reading the state keys",
                              TimeoutError(f"no answer within {self.deadline:g} s"))
        record, failure = self._record, self._failure
        if record is None and failure is not None:
            raise failure  # the store's own error: down, or its record unreadable
        assert record is not None, "a read that ended without a failure kept its record"
        return record

    def ring(self, now: float) -> KeyRing:
        record = self._record
        if record is None:
            record = self._first_record()
        elif self._monotonic() - self._read_at >= self.refresh_s:
            self._read_in_background()
        keys = sealing_and_open(record, now)
        if self._ring is None or keys != self._ring_for:
            self._ring = KeyRing(keys, os.urandom)
            self._ring_for = keys
        return self._ring

    def rotate(self, now: float, keep: float = DEFAULT_KEEP, lead: float = DEFAULT_LEAD) -> str:
        """Publish a new key (see the module's docstring); the new record."""
        record = self.source.update(lambda current: rotated(current, now, keep, lead,
                                                            self._random))
        self._record = record
        self._read_at = self._monotonic()
        return record

    def close(self) -> None:
        self.source.close()


def describe(record: str) -> list[dict[str, Any]]:
    """The record's keys without the keys themselves (for `mcpkit keys` and logs)."""
    return [{"from": k.get("from"), "until": k.get("until")} for k in json.loads(record)["keys"]]
