"""A long-running tool as a task: it reports progress and asks for a confirmation half way.

Run it with `mcpkit run examples/long_job/server.py` (stdio) or `--http 8000`. A client that
speaks the Tasks extension gets a task at once and follows it (`tasks/get`, or
`notifications/tasks` on a listen stream), answering the confirmation with `tasks/update`; any
other client gets the same work as a plain call, with progress notifications.

Tasks are kept in the SQLite file `tasks.sqlite3` of the user's data folder, so a finished
report survives a restart of this server until its TTL (an hour by default).
"""

from __future__ import annotations

import asyncio

from mcpkit import Context, Server

server = Server("long-job", "1.0.0", instructions="Builds reports; each one takes a while.")


@server.tool(task="optional")
async def build_report(topic: str, ctx: Context, sections: int = 4,
                       seconds_per_section: float = 1.0) -> str:
    """Write a report on `topic`, one section at a time; asks before publishing it."""
    written = []
    for number in range(1, sections + 1):
        await asyncio.sleep(seconds_per_section)
        written.append(f"{number}. {topic}: part {number}")
        await ctx.report_progress(number, sections + 1, f"wrote section {number} of {sections}")
    answer = await ctx.elicit("publish", f"The report on {topic} is written. Publish it?",
                              {"publish": bool})
    publish = answer.accepted and bool((answer.content or {}).get("publish"))
    await ctx.report_progress(sections + 1, sections + 1, "published" if publish else "kept")
    verdict = "published" if publish else "kept as a draft"
    return "\n".join([f"Report on {topic} ({verdict}):", *written])


if __name__ == "__main__":
    server.run()
