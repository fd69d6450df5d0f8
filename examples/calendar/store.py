"""The calendar's events, kept in SQLite so every process sees the same calendar.

The database is the file named by CALENDAR_DB, else `calendar.sqlite3` in the user's data
folder. Each call opens its own connection: the server keeps no state between requests. The
same file records the retries already used (`mcpkit_records`, `SQLiteStore`'s table), so no
two processes can both complete one.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TypedDict


class Event(TypedDict):
    id: str
    title: str
    startsAt: str


def database_path() -> Path:
    configured = os.environ.get("CALENDAR_DB")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "mcpkit-calendar" / "calendar.sqlite3"


def _connect() -> sqlite3.Connection:
    path = database_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=10)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE TABLE IF NOT EXISTS events (id TEXT PRIMARY KEY, title TEXT NOT NULL, "
        "starts_at TEXT NOT NULL)"
    )
    return db


def add_event(title: str, starts_at: datetime) -> Event:
    if starts_at.tzinfo is None:
        starts_at = starts_at.replace(tzinfo=UTC)
    event = Event(id=uuid.uuid4().hex[:12], title=title, startsAt=starts_at.isoformat())
    with _connect() as db:
        db.execute(
            "INSERT INTO events (id, title, starts_at) VALUES (?, ?, ?)",
            (event["id"], event["title"], event["startsAt"]),
        )
    return event


def revision() -> int:
    """Grows with every write: events are only ever added (`CalendarChanges` watches it)."""
    with _connect() as db:
        (count,) = db.execute("SELECT count(*) FROM events").fetchone()
    return int(count)


def week_events(now: datetime | None = None) -> list[Event]:
    """Events from the start of today (UTC) to seven days later, in time order."""
    now = now or datetime.now(UTC)
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    end = start + timedelta(days=7)
    with _connect() as db:
        rows = db.execute("SELECT id, title, starts_at FROM events").fetchall()
    events = [Event(id=i, title=t, startsAt=s) for i, t, s in rows]
    in_week = [e for e in events if start <= datetime.fromisoformat(e["startsAt"]) < end]
    return sorted(in_week, key=lambda e: datetime.fromisoformat(e["startsAt"]))


def events_of_week(day: date) -> list[Event]:
    """Events of the week (Monday to Sunday, UTC) that holds `day`, in time order: what the
    week view shows around an event."""
    monday = datetime(day.year, day.month, day.day, tzinfo=UTC) - timedelta(days=day.weekday())
    return week_events(monday)
