"""What both reference "everything" tests (stdio and Streamable HTTP) check of its catalogue.

The server is the same package on either transport, so one list of calls says what interop
means for tools, resources, prompts and completion; each test adds what its transport shows.
"""

from __future__ import annotations

from typing import Any

from mcpkit import Client


async def check_catalogue(client: Client, tools_expected: set[str]) -> dict[str, Any]:
    """Call one of each kind against the reference server; returns its tools by name."""
    tools = {t["name"]: t for t in await client.list_tools()}
    assert tools_expected <= set(tools)
    assert client.rejected_tools == []
    echo = await client.call_tool("echo", {"message": "hello"})
    assert echo["content"][0]["text"] == "Echo: hello"
    total = await client.call_tool("get-sum", {"a": 2, "b": 3})
    assert "5" in total["content"][0]["text"]
    resources = await client.list_resources()
    read = await client.read_resource(resources[0]["uri"])
    assert read["contents"][0]["uri"] == resources[0]["uri"]
    prompt = await client.get_prompt("args-prompt", {"city": "Paris"})
    assert "Paris" in prompt["messages"][0]["content"]["text"]
    completion = await client.complete({"type": "ref/prompt", "name": "completable-prompt"},
                                       "department", "E")
    assert "Engineering" in completion["values"]
    return tools
