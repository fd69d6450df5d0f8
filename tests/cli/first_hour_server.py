"""A server for the first-hour command-line tests: a tool that logs, one that fails
unexpectedly after writing lines to stderr, one taking a model, one taking any extra
argument, one that asks before it acts (appending a line to FIRST_HOUR_DONE each time it
does), ones taking dates and an integer or a string, and a prompt."""

import logging
import os
import sys
from datetime import date, datetime
from typing import TypedDict

from mcpkit import Context, Elicit, Server, ToolError

server = Server("first-hour", "1.0.0")


class Point(TypedDict):
    """Where on the grid."""

    x: int
    y: int


@server.tool()
async def chatty(ctx: Context, text: str) -> str:
    """Logs the text at info and at debug, then returns it."""
    await ctx.info(f"heard {text}", logger="chatty")
    await ctx.debug(f"debug detail of {text}", logger="chatty")
    return text


@server.tool()
def crash(reason: str = "boom") -> str:
    """Writes two lines to stderr, logs at debug, then raises an exception nobody catches."""
    logging.getLogger("first_hour").debug("about to crash on purpose")
    sys.stderr.write("first stderr line\nsecond stderr line\n")
    sys.stderr.flush()
    raise RuntimeError(f"the secret reason is {reason}")


@server.tool()
def place(where: Point, label: str = "") -> str:
    """Places a point."""
    return f"{label}@{where['x']},{where['y']}"


def _tag(**fields: object) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(fields.items()))


server.add_tool(_tag, name="tag", description="Takes any named fields.",
                input_schema={"type": "object", "properties": {"name": {"type": "string"}},
                              "additionalProperties": True})


@server.tool()
def book(day: date, at: datetime | None = None, seats: list[int] | None = None) -> str:
    """Books a day, at a time if given, taking the seats' numbers."""
    return f"{day.isoformat()} {at.isoformat() if at else '-'} {seats}"


@server.tool()
def ident(key: int | str) -> str:
    """Says what it was given: an integer or a string."""
    return f"{type(key).__name__} {key}"


@server.prompt()
def greet(who: str) -> str:
    """Greets someone."""
    return f"Say hello to {who}."


@server.tool()
async def confirm(ctx: Context, what: str) -> str:
    """Asks whether to go ahead (a single-use retry); on yes, records that it did."""
    answer = (await ctx.ask({"ok": Elicit(f"Really {what}?", {"ok": bool})},
                           single_use=True))["ok"]
    if not answer.accepted or not answer["ok"]:
        raise ToolError(f"did not {what}")
    with open(os.environ["FIRST_HOUR_DONE"], "a", encoding="utf-8") as done:
        done.write(f"{what}\n")
    return f"did {what}"
