"""A user's file that uses the client passes `mypy --strict`, and what it reads is typed
precisely: the result types, `data` as the type the call named, the typed lists and contents,
the sync client and the multi-server client (no `Any` where the user asked for a type)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

USER_FILE = '''
import asyncio
from dataclasses import dataclass
from typing import TypedDict

import pydantic

from mcpkit import Client, Clients, StdioServer, SyncClient
from mcpkit.client import TextContent


class Sum(TypedDict):
    sum: int


@dataclass
class Point:
    x: float


class Model(pydantic.BaseModel):
    name: str


async def main() -> None:
    async with Client(StdioServer("mcpkit run server.py")) as client:
        typed = await client.call_tool("add", {"a": 1, "b": 2}, result=Sum)
        reveal_type(typed)  # CallToolResult[Sum]
        reveal_type(typed.data)  # Sum
        reveal_type(typed.data["sum"])  # int
        plain = await client.call_tool("add")
        reveal_type(plain.data)  # structured
        reveal_type(plain.is_error)  # bool
        reveal_type(plain.content)  # blocks
        block = plain.content[0]
        if isinstance(block, TextContent):
            reveal_type(block.text)  # str
        reveal_type((await client.call_tool("where", result=Point)).data)  # Point
        reveal_type((await client.call_tool("who", result=Model)).data)  # Model
        reveal_type((await client.call_tool("n", result=list[int])).data)  # list[int]
        tools = await client.list_tools()
        reveal_type(tools)  # tools
        reveal_type(tools[0].input_schema)  # schema
        reveal_type((await client.read_resource("x://y")).contents)  # contents
        reveal_type((await client.get_prompt("p")).messages[0].role)  # str
        handle = await client.start_tool("add", result=Sum)
        reveal_type((await handle.wait()).data)  # Sum
        reveal_type(client.task("id", result=Point))  # TaskHandle[Point]
    reveal_type(Client.from_config("mcp.json", "calendar"))  # Client
    with SyncClient(StdioServer("mcpkit run server.py")) as sync:
        reveal_type(sync.call_tool("add", result=Sum).data)  # Sum
        reveal_type(sync.list_prompts())  # prompts
    async with Clients.from_config("mcp.json") as many:
        reveal_type((await many.list_tools())[0].server)  # str
        reveal_type((await many.call_tool("calendar__add", result=Sum)).data)  # Sum


asyncio.run(main())
'''

EXPECTED = {
    "CallToolResult[Sum]": "mcpkit.client.results.CallToolResult[TypedDict(user.Sum, {'sum': int})]",
    "Sum": "TypedDict(user.Sum, {'sum': int})",
    "int": "int",
    "structured": "dict[str, Any] | None",
    "bool": "bool",
    "blocks": "list[mcpkit.client.content.TextContent | mcpkit.client.content.ImageContent"
              " | mcpkit.client.content.AudioContent | mcpkit.client.content.ResourceLink"
              " | mcpkit.client.content.EmbeddedResource]",
    "str": "str",
    "Point": "user.Point",
    "Model": "user.Model",
    "list[int]": "list[int]",
    "tools": "list[mcpkit.client.results.Tool]",
    "schema": "dict[str, Any]",
    "contents": "list[mcpkit.client.content.TextResourceContents"
                " | mcpkit.client.content.BlobResourceContents]",
    "TaskHandle[Point]": "mcpkit.ext.tasks.handles.TaskHandle[user.Point]",
    "Client": "mcpkit.clients.Client",
    "prompts": "list[mcpkit.client.results.Prompt]",
}


def test_a_users_client_code_passes_mypy_strict_with_precise_types(tmp_path: Path) -> None:
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent(USER_FILE))
    cache = ROOT / ".cache" / "mypy-user"
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--show-absolute-path", "--no-pretty",
         "--cache-dir", str(cache), "--no-error-summary", str(user)],
        capture_output=True, text=True, cwd=tmp_path, timeout=110)
    lines = done.stdout.splitlines()
    errors = [line for line in lines if ": error:" in line]
    assert not errors, "\n".join(errors)
    revealed = {int(m.group(1)): m.group(2).replace('"', "") for line in lines
                if (m := re.search(r":(\d+): note: Revealed type is (.*)$", line))}
    source = user.read_text().splitlines()
    wanted = {n: source[n - 1].rsplit("# ", 1)[1] for n in range(1, len(source) + 1)
              if "reveal_type(" in source[n - 1]}
    assert set(revealed) == set(wanted), done.stdout + done.stderr
    for line, label in wanted.items():
        assert revealed[line] == EXPECTED[label], f"line {line} ({label}): {revealed[line]}"
        assert revealed[line] != "Any"
