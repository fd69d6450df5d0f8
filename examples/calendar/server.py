"""One calendar, three ways: a tool writes events, a resource lists the week, a prompt plans it.

    mcpkit run examples/calendar/server.py

`create_event` asks the user when an event starts if the call did not say. The question ends
the call with `input_required`; the client retries with the answer, and any process started
with the same MCPKIT_STATE_KEYS can complete it, because everything the call needs travels
in the sealed `requestState`.
"""

import asyncio
from datetime import UTC, datetime
from typing import Annotated

from store import Event, add_event, week_events

from mcpkit import CacheHint, Context, Elicit, Server, ToolError

server = Server(
    "calendar",
    "1.0.0",
    instructions="A personal calendar. Read calendar://week before planning.",
)


@server.tool()
async def create_event(
    ctx: Context,
    title: Annotated[str, "What the event is, e.g. 'Dentist'"],
    startsAt: Annotated[datetime | None, "When it starts (ISO 8601); asked for if missing"] = None,
) -> Event:
    """Create a calendar event and return it."""
    if startsAt is None:
        when = Elicit(f'When should "{title}" start?', {"startsAt": datetime})
        if ctx.can_ask(when):
            answer = (await ctx.ask({"startsAt": when}))["startsAt"]
            if not answer.accepted:  # declined or cancelled: do nothing, say so
                raise ToolError(f'No event created: the user did not say when "{title}" starts.')
            startsAt = answer["startsAt"]
        else:  # a client that cannot show a form: start now
            startsAt = datetime.now(UTC)
    return await asyncio.to_thread(add_event, title, startsAt)


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
