"""A user's code type-checks against mcpkit under `mypy --strict`: the package ships its
`py.typed` marker, and the public API keeps what the user wrote (a decorated function keeps its
own signature) instead of turning it into `Any`.

The user's file below is checked as a user's project would check it: mypy run on it alone, with
mcpkit found where it is installed. Each `reveal_type` line names the type mypy must reveal, so
a decorator that loses the signature, or an attribute that turns into `Any`, fails here.
(The wheel itself holding the marker is checked in tests/e2e/test_bare_install.py.)
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

USER_FILE = textwrap.dedent('''
    """A user's server and client, as the README writes them."""
    from __future__ import annotations

    import asyncio
    from typing import Annotated, TypedDict

    from pydantic import Field

    from mcpkit import (CacheHint, Client, Context, InMemory, Message, Param, Server,
                        ServerOptions, ToolError, ToolResult)
    from mcpkit.testing import connect

    server = Server("typed", "1.0.0", options=ServerOptions())


    class Sum(TypedDict):
        sum: int


    @server.tool()
    def add(a: int, b: int) -> Sum:
        """Add two integers."""
        return {"sum": a + b}


    @server.tool(title="Slow echo", task="optional")
    async def slow(text: Annotated[str, Param(description="what to echo")],
                   times: Annotated[int, Field(ge=1, le=3)], ctx: Context) -> str:
        """Echo, with progress."""
        await ctx.report_progress(1, 2, "half way")
        await ctx.info("echoing")
        answer = await ctx.elicit("sure", "Echo it?", {"ok": bool})
        reveal_type(answer)  # mcpkit.server.asking.Elicited
        reveal_type(answer.accepted)  # bool
        reveal_type(ctx.state)  # dict[str, Any]
        if not answer.accepted:
            raise ToolError("not echoed")
        return text * times


    @server.tool()
    def blocking(ctx: Context) -> None:
        """A plain function reporting from its worker thread."""
        ctx.info("from a thread")


    @server.resource("typed://note", mime_type="text/plain", cache=CacheHint(1000, "private"))
    def note() -> str:
        return "a note"


    @server.resource_template("typed://notes/{name}")
    def named_note(name: str) -> str:
        return name


    @server.prompt(title="Greeting")
    def greet(name: str) -> Message:
        return Message("user", f"Hello {name}")


    @server.tool()
    def spelled() -> ToolResult:
        return ToolResult(content="spelled out", structured={"n": 1})


    reveal_type(add)  # def (a: int, b: int) -> TypedDict(user.Sum, {'sum': int})
    reveal_type(add(1, 2)["sum"])  # int
    reveal_type(slow)  # def (text: str, times: int, ctx: mcpkit.server.context.Context) -> typing.Coroutine[Any, Any, str]
    reveal_type(blocking)  # def (ctx: mcpkit.server.context.Context)
    reveal_type(note)  # def () -> str
    reveal_type(named_note)  # def (name: str) -> str
    reveal_type(greet)  # def (name: str) -> mcpkit.server.prompts.Message
    reveal_type(server)  # mcpkit.app.Server
    reveal_type(server.asgi())  # mcpkit.transports.http_server.app.HTTPApp


    async def main() -> None:
        async with Client(InMemory(server)) as client:
            reveal_type(client)  # mcpkit.clients.Client
            reveal_type(client.era)  # Literal['modern'] | Literal['legacy'] | None
            reveal_type(client.protocol_version)  # str | None
        async with connect(server) as client:
            reveal_type(client)  # mcpkit.clients.Client


    asyncio.run(main())
''')
_REVEALED = re.compile(r'^user\.py:(\d+): note: Revealed type is "(.*)"$')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str],
                                                               dict[int, str]]:
    """mypy --strict on the user's file, and the type revealed on each line."""
    folder = tmp_path_factory.mktemp("user-project")
    (folder / "user.py").write_text(USER_FILE)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--show-traceback", "--no-pretty",
         "--no-error-summary", "--hide-error-context", "--no-color-output",
         "--cache-dir", str(folder / ".mypy_cache"), "user.py"],
        capture_output=True, text=True, cwd=folder, timeout=300)
    revealed = {int(m[1]): m[2] for m in map(_REVEALED.match, done.stdout.splitlines()) if m}
    return done, revealed


def test_a_users_file_passes_mypy_strict(
    checked: tuple[subprocess.CompletedProcess[str], dict[int, str]],
) -> None:
    done, _ = checked
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert not errors, "\n".join(errors)
    assert done.returncode == 0, done.stdout + done.stderr


def test_what_the_public_api_gives_back_is_what_the_user_wrote_never_any(
    checked: tuple[subprocess.CompletedProcess[str], dict[int, str]],
) -> None:
    _, revealed = checked
    lines = USER_FILE.splitlines()
    expected = {number: line.split("  # ", 1)[1] for number, line in enumerate(lines, 1)
                if line.lstrip().startswith("reveal_type(")}
    assert revealed.keys() == expected.keys(), (revealed, expected)
    for number, wanted in expected.items():
        assert revealed[number] != "Any", lines[number - 1]
        assert revealed[number] == wanted, f"line {number}: {lines[number - 1].strip()}"


def test_the_package_carries_the_typed_marker() -> None:
    assert (ROOT / "src" / "mcpkit" / "py.typed").is_file()
