"""One calendar, three ways: a tool writes events, a resource lists the week, a prompt plans it.

    mcpkit run examples/calendar/server.py

`create_event` asks the user when an event starts if the call did not say. The question ends
the call with `input_required`; the client retries with the answer, and any process of this
user can complete it, because everything the call needs travels in the sealed `requestState`
and every process seals with the same persisted key ring (docs/state.md). The answer counts
once: the retries already used are recorded in a file beside the calendar's database (its own
file, so the store's connection and the events' never wait on each other), so replaying one, to
this process or another, cannot create the event twice. Whoever writes an event, listeners of
calendar://week hear of it (`mcpkit listen SERVER --uri calendar://week`).

A host that shows MCP Apps renders what `create_event` returns in a week view (week.html, one
file with its script and styles inline, served as ui://calendar/week); the view fills in the
rest of that week with `week_events`, a tool only the view calls, so a client without Apps is
never shown it. Every other client gets the event as text, as before (docs/apps.md).
"""

import asyncio
from datetime import date, datetime
from pathlib import Path
from typing import Annotated

from changes import CalendarChanges
from store import Event, add_event, database_path, events_of_week, revision
from store import week_events as upcoming_events

from mcpkit import CacheHint, Context, Elicit, Server, ServerOptions, ToolError
from mcpkit.ext import apps
from mcpkit.store import SQLiteStore

WEEK = "calendar://week"
WEEK_VIEW = "ui://calendar/week"
changes = CalendarChanges(WEEK, revision)
server = Server(
    "calendar",
    "1.0.0",
    instructions="A personal calendar. Read calendar://week before planning.",
    options=ServerOptions(store=SQLiteStore(database_path().with_suffix(".retries.sqlite3"))),
    broker=changes,
)


@server.tool(scopes=["calendar:write"])  # behind OAuth, writing needs more than reading
async def create_event(
    ctx: Context,
    title: Annotated[str, "What the event is, e.g. 'Dentist'"],
    startsAt: Annotated[datetime | None, "When it starts (ISO 8601); asked for if missing"] = None,
) -> Event:
    """Create a calendar event and return it."""
    if startsAt is None:
        # A client that cannot show a form gets -32021 naming the capability it lacks.
        when = Elicit(f'When should "{title}" start?', {"startsAt": datetime})
        answer = (await ctx.ask({"startsAt": when}, single_use=True))["startsAt"]
        if not answer.accepted:  # declined or cancelled: do nothing, say so
            raise ToolError(f'No event created: the user did not say when "{title}" starts.')
        startsAt = answer["startsAt"]
    event = await asyncio.to_thread(add_event, title, startsAt)
    await changes.announce()
    return event


@server.tool()
async def week_events(
    day: Annotated[date, "Any day of the week to show (YYYY-MM-DD)"],
) -> list[Event]:
    """The events of the week (Monday to Sunday, UTC) that holds `day`, in time order."""
    return await asyncio.to_thread(events_of_week, day)


apps.add_view(
    server,
    WEEK_VIEW,
    Path(__file__).with_name("week.html"),
    name="week-view",
    title="Week view",
    description="The week around an event, as a grid of seven days.",
    prefers_border=True,
)
apps.link(server, "create_event", WEEK_VIEW)
apps.link(server, "week_events", WEEK_VIEW, visibility=["app"])  # the view's own data source


@server.resource(
    WEEK,
    name="week",
    title="This week's events",
    mime_type="application/json",
    cache=CacheHint(60_000, "private"),
)
def week() -> list[Event]:
    """Events from today to seven days ahead, in time order."""
    return upcoming_events()


@server.prompt()
def prepare_week(focus: Annotated[str | None, "What to focus the plan on"] = None) -> str:
    """Draft a plan for the week from the calendar."""
    return f"Read calendar://week and draft a plan. Focus: {focus or 'balance'}."
