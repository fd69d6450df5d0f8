"""The official MCP Python SDK's client (`mcp==2.3.0`, in an environment of its own that
`tests/helpers/auth/sdk_process.py` makes) on the composed server: `python compose_client.py URL [legacy]`.

It lists everything, calls a tool of each mounted server, reads a namespaced resource and
gets a namespaced prompt, and prints one JSON line of what it saw: at 2026-07-28 (the SDK's
`auto` mode) or in its 2025-11-25 mode.
"""

from __future__ import annotations

import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, legacy: bool) -> None:
    async with Client(streamable_http_client(url), mode="legacy" if legacy else "auto") as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        added = await client.call_tool("quick_add", {"a": 2, "b": 3})
        echoed = await client.call_tool("quick_echo", {"text": "hi"})
        resources = [str(r.uri) for r in (await client.list_resources()).resources]
        templates = [t.uri_template for t in (await client.list_resource_templates()
                                              ).resource_templates]
        read = await client.read_resource("calendar://cal/week")
        prompt = await client.get_prompt("cal_prepare_week", {"focus": "sleep"})
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        print(json.dumps({
            "era": client.protocol_version, "tools": tools, "resources": resources,
            "templates": templates, "prompts": prompts, "added": added.structured_content,
            "echoed": echoed.content[0].text,
            "read": {"uri": str(read.contents[0].uri), "mimeType": read.contents[0].mime_type},
            "prompt": prompt.messages[0].content.text,
        }), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:] == ["legacy"]))
