"""A server with one of everything the inspector draws, for its browser tests.

`plan` takes nested objects, a list, an enum, a date, defaults and an optional number, and
returns what it got; `media` returns every kind of content block; `consult` asks a page to be
opened (URL elicitation), a sample from the client's model and the client's roots; `broken`
fails, its traceback on stderr; `notes://`
is a template whose `topic` completes, as does the `brief` prompt's. `media` is shown in an MCP
App view that declares an origin to connect to, and the view tries to call `plan`, which it
may not (its visibility is the model's alone). Icons are given as data and as an address
elsewhere, which the page must not load.
"""

from __future__ import annotations

import base64
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from mcpkit import Audio, Blob, Context, Image, ResourceLink, Server, Text, ToolResult
from mcpkit.ext import apps

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
WAV = (b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00"
       b"\x02\x00\x10\x00data\x00\x00\x00\x00")
TOPICS = ["tides", "tidal pools", "waves"]
VIEW = "ui://showcase/media"

server = Server("showcase", "1.0.0", instructions="Every kind of content, form and question.")


class Stop(TypedDict):
    city: Annotated[str, "where"]
    nights: int


@server.tool(annotations={"readOnlyHint": True, "idempotentHint": True},
             icons=[{"src": "data:image/png;base64," + base64.b64encode(PNG).decode(),
                     "mimeType": "image/png"},
                    {"src": "https://icons.example.com/plan.png", "mimeType": "image/png"}])
def plan(traveller: Annotated[str, "who travels"], start: date, stops: list[Stop],
         mode: Literal["train", "plane"] = "train", budget: float | None = None) -> dict[str, Any]:
    """Plan a trip and say back what was asked."""
    return {"traveller": traveller, "start": start.isoformat(), "stops": stops, "mode": mode,
            "budget": budget}


@server.tool(annotations={"destructiveHint": True},
             icons=[{"src": "https://icons.example.com/media.png"}])
def media() -> ToolResult:
    """One content block of each kind."""
    return ToolResult([Text("a picture and a sound"), Image(PNG, "image/png"),
                       Audio(WAV, "audio/wav"), Blob("notes://hello", "hello, embedded", "text/plain"),
                       ResourceLink("notes://tides", "tides", mime_type="text/plain")])


@server.tool()
async def consult(ctx: Context) -> str:
    """Ask for a page to be opened, a sample and the roots."""
    page = await ctx.elicit_url("page", "Confirm on the partner's site",
                                "https://partner.example.com/confirm?order=7")
    sampled = await ctx.sample("sample", "Say hello", max_tokens=20)
    roots = await ctx.roots()
    return (f"page {page.action}; the model said {sampled.text!r}; roots "
            f"{[root.uri for root in roots]}")


@server.tool()
def broken() -> str:
    """Fail unexpectedly (its traceback goes to stderr, under an error id)."""
    raise RuntimeError("boom")


@server.resource("notes://{topic}", mime_type="text/plain")
def note(topic: str) -> str:
    """Notes on a topic."""
    return f"notes on {topic}"


@server.prompt()
def brief(topic: str, tone: str = "plain") -> str:
    """A briefing on a topic."""
    return f"Brief me on {topic}, in a {tone} tone."


@server.completer()
def complete(ref: dict[str, Any], argument: dict[str, Any], context: Any) -> list[str]:
    if argument["name"] != "topic":
        return []
    return [topic for topic in TOPICS if topic.startswith(argument["value"])]


apps.add_view(server, VIEW, Path(__file__).with_name("showcase_view.html"), name="media-view",
              csp=apps.Csp(connect_domains=["https://api.example.com"]), prefers_border=False)
apps.link(server, "media", VIEW)
