"""What the store tests and the long-running tests share: a store URL of each kind, kept apart
per test, and a clock the tests move by hand (no test waits for real time to pass).

PostgreSQL URLs get a schema of their own (`options=-csearch_path=...`, which psycopg passes
to the server), Redis URLs a key prefix of their own (`prefix=`), so tests never see each
other's records in the one server of the run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["KINDS", "SHARED", "Clock", "UrlMaker", "make_url"]

KINDS = ("memory", "sqlite", "postgresql", "redis")
SHARED = ("postgresql", "redis")


class Clock:
    """Unix seconds that move only when a test says so."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_url(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store URL of `kind` for this test (the servers start on first use)."""
    tag = os.urandom(6).hex()
    if kind == "memory":
        return "memory"
    if kind == "sqlite":
        return f"sqlite:{tmp_path / f'{tag}.db'}"
    if kind == "redis":
        base: str = request.getfixturevalue("redis_url")
        return f"{base}?prefix=t{tag}:"
    import psycopg

    base = request.getfixturevalue("postgres_url")
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA s{tag}")
    return f"{base}?options=-csearch_path%3Ds{tag}"


UrlMaker = Callable[[str], str]
