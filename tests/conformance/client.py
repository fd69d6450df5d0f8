"""The conformance client: what the official suite's client scenarios expect a client to do.

The suite runs `client.py <server-url>` with `MCP_CONFORMANCE_SCENARIO` (which scenario),
`MCP_CONFORMANCE_PROTOCOL_VERSION` (the revision, and so the era) and, for some scenarios,
`MCP_CONFORMANCE_CONTEXT` (JSON data the scenario hands over). Everything goes through
`mcpkit.Client` on the Streamable HTTP transport; the scenario table below only decides which
calls to make. Exit status 0 means the client did what the scenario asked without an error.

Imports: `mcpkit`'s public client API and the standard library only.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

from auth_extensions import EXTENSIONS  # the authorization extensions' scenarios
from skills_client import SKILL_SCENARIOS  # the Skills extension's scenarios

from mcpkit import Client, ClientOptions, HTTPConnector, InputRequest
from mcpkit.store.tokens import MemoryTokenStorage
from mcpkit.transports.oauth.flow import OAuth

Scenario = Callable[[str], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}
REVISION = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2026-07-28")
MODERN = REVISION >= "2026-07-28"


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = fn
        return fn

    return register


def context() -> dict[str, Any]:
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    return json.loads(raw) if raw else {}


def accept_everything(request: InputRequest) -> dict[str, Any]:
    """Accept every form; the client fills in what the schema gives defaults for."""
    return {"action": "accept", "content": {}}


def describe_a_model(request: InputRequest) -> dict[str, Any]:
    return {"role": "assistant", "model": "conformance-model",
            "content": {"type": "text", "text": "A canned answer."}}


def client(url: str, auth: Any = None, **handlers: Any) -> Client:
    """A client for this run's revision: the modern era probes (and negotiates a version the
    server refuses), the legacy era goes straight to the initialize handshake."""
    if MODERN:
        options = ClientOptions(era="auto", timeout=60.0)
    else:
        options = ClientOptions(era="legacy", legacy_version=REVISION, timeout=60.0)
    return Client(
        HTTPConnector(url, auth=auth) if auth is not None else HTTPConnector(url),
        client_info={"name": "mcpkit-conformance-client", "version": "1.0.0"},
        options=options,
        **handlers,
    )


@scenario("initialize", "tools_call", "tools-call")
async def call_the_first_tool(url: str) -> None:
    async with client(url) as c:
        tools = await c.list_tools()
        names = [t.name for t in tools]
        name = "add_numbers" if "add_numbers" in names else (names[0] if names else None)
        if name is not None:
            await c.call_tool(name, {"a": 2, "b": 3})


@scenario("request-metadata")
async def discover_then_list(url: str) -> None:
    # Handlers for every kind of input, so the capabilities they declare are checked too.
    async with client(url, elicit=accept_everything, sample=describe_a_model,
                      roots=[{"uri": "file:///tmp", "name": "tmp"}]) as c:
        await c.discover(fresh=True)
        await c.list_tools()


@scenario("json-schema-ref-no-deref")
async def list_tools_only(url: str) -> None:
    async with client(url) as c:
        await c.list_tools()


@scenario("json-schema-2020-12-preservation")
async def echo_the_2020_12_schema(url: str) -> None:
    async with client(url) as c:
        tools = {t.name: t for t in await c.list_tools()}
        focal = tools.get("json_schema_2020_12_tool")
        if focal is None:
            rejected = [f"{r.name}: {r.reason}" for r in c.rejected_tools]
            raise SystemExit(f"json_schema_2020_12_tool is not usable (rejected: {rejected})")
        await c.call_tool("json_schema_echo", {"schema": focal.input_schema})


@scenario("http-standard-headers")
async def every_method_with_a_name(url: str) -> None:
    async with client(url) as c:
        for tool in await c.list_tools():
            await c.call_tool(tool.name, {})
        for resource in await c.list_resources():
            await c.read_resource(resource.uri)
        for prompt in await c.list_prompts():
            await c.get_prompt(prompt.name)


@scenario("http-custom-headers")
async def calls_from_the_context(url: str) -> None:
    async with client(url) as c:
        await c.list_tools()
        for call in context().get("toolCalls", []):
            await c.call_tool(call["name"], call.get("arguments", {}))


@scenario("http-invalid-tool-headers")
async def only_the_valid_tools(url: str) -> None:
    async with client(url) as c:
        for tool in await c.list_tools():
            properties = tool.input_schema.get("properties", {})
            await c.call_tool(tool.name, {k: "us-west1" for k in properties if k == "region"})


@scenario("sep-2322-client-request-state")
async def input_required_rounds(url: str) -> None:
    unrelated_done = False
    c: Client

    async def confirm(request: InputRequest) -> dict[str, Any]:
        nonlocal unrelated_done
        if not unrelated_done:
            # Between a first round and its retry: nothing of that call may leak into this one.
            unrelated_done = True
            await c.call_tool("test_mrtr_unrelated", {})
        return {"action": "accept", "content": {"confirmed": True}}

    async with client(url, elicit=confirm) as c:
        await c.list_tools()
        for name in ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_no_result_type"):
            await c.call_tool(name, {})
        if not unrelated_done:
            await c.call_tool("test_mrtr_unrelated", {})


@scenario("elicitation-sep1034-client-defaults", "elicitation-defaults")
async def elicitation_defaults(url: str) -> None:
    async with client(url, elicit=accept_everything) as c:
        await c.list_tools()
        await c.call_tool("test_client_elicitation_defaults", {})


@scenario("sse-retry")
async def reconnect_after_a_closed_stream(url: str) -> None:
    async with client(url) as c:
        await c.list_tools()
        await c.call_tool("test_reconnection", {})


CIMD_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://localhost:3000/callback"


def headless_oauth() -> OAuth:
    """The authorization code flow without a browser: the suite's authorization endpoint
    answers at once with a redirect to `REDIRECT_URI`, so "opening" the URL is one GET whose
    `Location` is read (never followed), and its query is the callback's."""
    answer: dict[str, str] = {}

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    def visit(url: str) -> None:
        opener = urllib.request.build_opener(NoRedirect)
        try:
            opener.open(url, timeout=30).close()
            raise SystemExit(f"the authorization endpoint did not redirect ({url})")
        except urllib.error.HTTPError as exc:
            location = exc.headers.get("location") or ""
        answer.clear()
        answer.update(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))

    async def open_in_browser(url: str) -> None:
        await asyncio.to_thread(visit, url)

    async def callback() -> dict[str, str]:
        return dict(answer)

    given = context()
    return OAuth(
        redirect_uri=REDIRECT_URI, redirect_handler=open_in_browser, callback_handler=callback,
        client_id=given.get("client_id"), client_secret=given.get("client_secret"),
        client_metadata_url=CIMD_URL, client_name="mcpkit-conformance-client",
        storage=MemoryTokenStorage(),
    )


async def authorized_flow(url: str) -> None:
    """What the auth scenarios ask once authorized: list tools, call one. The client signs
    in through `OAuth` when the server answers 401 (and steps up on a 403)."""
    async with client(url, auth=headless_oauth()) as c:
        await c.list_tools()
        await c.call_tool("test-tool", {})


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: client.py <server-url> (scenario in MCP_CONFORMANCE_SCENARIO)", file=sys.stderr)
        return 2
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    run = SCENARIOS.get(name) or EXTENSIONS.get(name) or SKILL_SCENARIOS.get(name) or (
        authorized_flow if name.startswith("auth/") else None)
    if run is None:
        print(f"client.py: no behaviour for scenario {name!r}", file=sys.stderr)
        return 2
    asyncio.run(run(argv[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
