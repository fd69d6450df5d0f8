"""A small notes server, the subject of docs/testing-servers.md and of the tests beside it.

    mcpkit run examples/testing/notes.py

`make_server()` builds a fresh server with its own notes, so each test starts from nothing.
"""

from mcpkit import Context, Server, ToolError


def make_server() -> Server:
    server = Server("notes", "1.0.0", instructions="Keeps short notes.")
    notes: dict[str, str] = {}

    @server.tool()
    async def add_note(ctx: Context, title: str, text: str = "") -> str:
        """Keep a note; asks the user for its text when none is given."""
        if not text:
            answer = await ctx.elicit("text", f"What should {title!r} say?", {"text": str})
            if not answer.accepted:
                raise ToolError(f"No note kept: {title!r} got no text.")
            text = answer["text"]
        notes[title] = text
        await ctx.info(f"kept {title!r}", logger="notes")
        return f"kept {title!r}"

    @server.resource("notes://index", mime_type="text/plain")
    def index() -> str:
        """The titles of every note, one a line."""
        return "\n".join(sorted(notes))

    return server


server = make_server()
