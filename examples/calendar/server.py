"""One calendar, three ways: a tool writes events, a resource lists the week, a prompt plans it.

    mcpkit run examples/calendar/server.py
"""

from datetime import datetime, timezone
from typing import Annotated

from store import Event, add_event, week_events

from mcpkit import CacheHint, Server

server = Server(
    "calendar",
    "1.0.0",
    instructions="A personal calendar. Read calendar://week before planning.",
)


@server.tool()
def create_event(
    title: Annotated[str, "What the event is, e.g. 'Dentist'"],
    startsAt: Annotated[datetime | None, "When it starts (ISO 8601); default: now"] = None,
) -> Event:
    """Create a calendar event and return it."""
    return add_event(title, startsAt or datetime.now(timezone.utc))


@server.resource(
    "calendar://week",
    name="week",
    title="This week's events",
    mime_type="application/json",
    cache=CacheHint(60_000, "private"),
)
def week() -> list[Event]:
    """Events from today to seven days ahead, in time order."""
    return week_events()


@server.prompt()
def prepare_week(focus: Annotated[str | None, "What to focus the plan on"] = None) -> str:
    """Draft a plan for the week from the calendar."""
    return f"Read calendar://week and draft a plan. Focus: {focus or 'balance'}."
