"""The upstream server of the proxy's tests: one of each kind of thing a proxy passes on.

Served in this process (`InMemory(server)`, the proxy's client pinned to either era), or as a
process (`mcpkit run tests/helpers/proxy/upstream_server.py`, stdio or HTTP) for the command line,
replica and end-to-end tests. Its tools:

- `echo(text)`, `add(a, b)` (structured, with an output schema), `whoami()` (REPLICA);
- `greet(name="")`: two rounds of elicitation when no name is given, with progress and a log
  message before each question;
- `confirm(tag, then_wait=False)`: asks once (then waits for `release:TAG`), noting a
  cancellation; `refuse()`: a JSON-RPC error with data;
- `pick()`: asks for a sampled answer and for the client's roots in one round;
- `wait_here(tag)`: waits until cancelled or released (`release(tag)`), noting either in
  the server's `events` and in its log, so a test sees a cancellation arrive;
- `change(what)`: registers a tool, a prompt or a resource (or announces an update of
  `notes://board`), so the proxy's lists must follow.

Resources `notes://board` and the template `notes://item/{n}`; prompts `welcome(name)` and
`letter` (whose argument `first-name` is no Python name); completion of `welcome`'s `name`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import defaultdict
from typing import TypedDict

from mcpkit import Context, Elicit, InvalidParamsError, ListRoots, Message, Sample, Server

log = logging.getLogger("upstream")


class Sum(TypedDict):
    sum: int


class Upstream(Server):
    """The server, with `events`: `cancelled:TAG`, `started:TAG`, `release:TAG`, what
    happened to its `wait_here` calls."""

    events: defaultdict[str, asyncio.Event]


def make_server() -> Upstream:
    """A fresh upstream (a test that changes its lists changes only its own)."""
    server = Upstream("upstream", "3.1.4", title="The proxied server",
                      instructions="A server the proxy's tests stand behind.")
    server.events = defaultdict(asyncio.Event)
    events = server.events

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool()
    def add(a: int, b: int) -> Sum:
        """Add two integers."""
        return {"sum": a + b}

    @server.tool()
    def whoami() -> str:
        """The replica this upstream runs behind (REPLICA)."""
        return os.environ.get("REPLICA", "?")

    @server.tool()
    async def greet(ctx: Context, name: str = "") -> str:
        """Greet someone, asking who (and whether to shout) when no name is given."""
        await ctx.report_progress(1, 3, "looking up the name")
        await ctx.info(f"greeting {name or 'someone'}", logger="upstream")
        if not name:
            who = (await ctx.ask({"who": Elicit("Who are you?", {"name": str})}))["who"]
            if not who.accepted:
                return "Hello, stranger!"
            name = who["name"]
            await ctx.report_progress(2, 3, "choosing the tone")
            loud = (await ctx.ask({"loud": Elicit(f"Shout at {name}?", {"loud": bool})}))["loud"]
            if loud.accepted and loud["loud"]:
                return f"HELLO, {name.upper()}!"
        return f"Hello, {name}!"

    @server.tool()
    async def confirm(ctx: Context, tag: str, then_wait: bool = False) -> str:
        """Ask to go ahead with `tag` (then wait for `release:TAG` when `then_wait`), noting a
        cancellation as `cancelled:TAG`."""
        try:
            answer = await ctx.elicit("go", f"Go ahead with {tag}?", {"ok": bool})
            await ctx.report_progress(1, 2, f"going ahead with {tag}")
            if then_wait:
                events[f"started:{tag}"].set()
                await events[f"release:{tag}"].wait()
        except asyncio.CancelledError:
            events[f"cancelled:{tag}"].set()
            raise
        where = f" on {os.environ['REPLICA']}" if "REPLICA" in os.environ else ""
        return f"{tag}: {'yes' if answer.accepted and answer['ok'] else 'no'}{where}"

    @server.tool()
    def refuse() -> str:
        """Refuse every call, as a JSON-RPC error with data."""
        raise InvalidParamsError("refuse: refused by the upstream", {"why": "always"})

    @server.tool()
    async def pick(ctx: Context) -> str:
        """Ask the client's model for a city and the client for its roots."""
        answers = await ctx.ask({
            "city": Sample("Name a city.", max_tokens=20),
            "roots": ListRoots(),
        })
        roots = ", ".join(root.uri for root in answers["roots"])
        return f"{answers['city'].text} in {roots}"

    @server.tool()
    async def wait_here(ctx: Context, tag: str) -> str:
        """Wait until released or cancelled (a test's handle on a call in flight)."""
        events[f"started:{tag}"].set()
        log.warning("wait_here %s started", tag)
        try:
            await events[f"release:{tag}"].wait()
        except asyncio.CancelledError:
            events[f"cancelled:{tag}"].set()
            log.warning("wait_here %s cancelled", tag)
            raise
        return f"released {tag}"

    @server.tool()
    def change(what: str) -> str:
        """Register a tool, a prompt or a resource named after `what`, or announce an update of
        the board (`what="board"`)."""
        if what == "board":
            server.notify_resource_updated("notes://board")
        elif what.startswith("tool-"):
            server.add_tool(lambda: what, what.replace("-", "_"), description=f"added: {what}")
        elif what.startswith("prompt-"):
            server.add_prompt(lambda: what, name=what.replace("-", "_"))
        else:
            server.add_resource(f"notes://{what}", lambda: what, name=what)
        return f"changed {what}"

    @server.resource("notes://board", name="board", mime_type="text/plain")
    def board() -> str:
        """The board."""
        return "the board"

    @server.resource("notes://item/{n}", name="item", mime_type="text/plain")
    def item(n: str) -> str:
        """One item of the board."""
        return f"item {n}"

    @server.prompt()
    def welcome(name: str) -> str:
        """Welcome someone by name."""
        return f"Welcome, {name}!"

    async def letter(**arguments: str) -> list[Message]:
        return [Message("user", f"Dear {arguments.get('first-name', 'friend')},"),
                Message("assistant", "Yours truly.")]

    server.add_prompt(letter, description="A letter to someone.",
                      arguments=[{"name": "first-name", "description": "Who it is for",
                                  "required": True}])

    @server.completer()
    def complete(ref: dict[str, str], argument: dict[str, str], context: dict[str, str]) -> list[str]:
        names = ["Ada", "Alan", "Grace"]
        return [n for n in names if n.lower().startswith(argument["value"].lower())]

    return server


server = make_server()
