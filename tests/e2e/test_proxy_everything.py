"""The MCP reference "everything" server behind `mcpkit proxy`: a 2025-11-25-only server over
stdio, served as a dual-era server over Streamable HTTP.

Through the proxy a stateless 2026-07-28 client discovers it (`server/discover` answered with
2026-07-28), lists its tools, calls `echo`, and completes the tool that elicits in two rounds
(the upstream's `elicitation/create` held by the proxy between them); a 2025-11-25 client of
the same proxy gets that `elicitation/create` itself. `mcpkit probe` reports the proxy as a
modern server. Every message each client sends and receives is checked against the official
schema of its revision (the proxy is ours, so its answers are checked too).

The reference server lists 13 tools to a client that declares no capabilities, and 4 more
(`get-roots-list`, `trigger-elicitation-request`, `trigger-url-elicitation`,
`trigger-sampling-request`) to one declaring roots, elicitation and sampling, which the proxy
does unless `--asks none`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from helpers.client.schema_tap import SchemaTap, TappedConnector
from helpers.everything_catalogue import COMMAND, npm_env
from helpers.everything_catalogue import installed as installed  # the fixture, shared
from helpers.proxy.proxy_command import ROOT, ProxyProcess
from test_server_everything import elicit, sample

from mcpkit.client import Client, ClientOptions
from mcpkit.transports.http_client.transport import HTTPConnector

pytestmark = pytest.mark.node

BASE_TOOLS = {"echo", "get-annotated-message", "get-env", "get-resource-links",
              "get-resource-reference", "get-structured-content", "get-sum", "get-tiny-image",
              "gzip-file-as-resource", "toggle-simulated-logging", "toggle-subscriber-updates",
              "trigger-long-running-operation", "simulate-research-query"}
ASKING_TOOLS = {"get-roots-list", "trigger-elicitation-request", "trigger-url-elicitation",
                "trigger-sampling-request"}


@pytest.fixture(scope="module")
def proxy(installed: None) -> Iterator[ProxyProcess]:
    with ProxyProcess(COMMAND, env=npm_env()) as running:
        yield running


@pytest.fixture
def clients() -> Iterator[list[tuple[Client, SchemaTap]]]:
    made: list[tuple[Client, SchemaTap]] = []
    yield made
    for _, tap in made:
        tap.assert_clean()


def fill(request: Any) -> dict[str, Any]:
    """The reference server's form answered field by field, defaults included: a number's
    default (3.14) filled in by the client would be off both schemas, whose ElicitResult
    values are strings, integers, booleans and string lists."""
    answer = elicit(request)
    for name, spec in request.schema.get("properties", {}).items():
        if spec.get("type") == "number":
            answer["content"][name] = 7
    return answer


def client_of(proxy: ProxyProcess, made: list[tuple[Client, SchemaTap]], era: str,
              **handlers: Any) -> Client:
    tap = SchemaTap()
    client = Client(TappedConnector(HTTPConnector(proxy.url), tap),
                    options=ClientOptions(era=era), **handlers)  # type: ignore[arg-type]
    made.append((client, tap))
    return client


def test_server_discover_is_answered_with_2026_07_28_over_http(proxy: ProxyProcess) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}}
    answer = httpx.post(proxy.url, json=body, headers={
        "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "server/discover"}, timeout=30)
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert "2026-07-28" in result["supportedVersions"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == (
        "mcp-servers/everything")
    assert {"tools", "resources", "prompts"} <= set(result["capabilities"])


async def test_a_modern_client_lists_calls_echo_and_completes_an_elicitation_in_two_rounds(
        proxy: ProxyProcess, clients: list[tuple[Client, SchemaTap]]) -> None:
    client = client_of(proxy, clients, "auto", elicit=fill, sample=sample)
    async with client:
        assert (client.era, client.protocol_version) == ("modern", "2026-07-28")
        tools = {t.name for t in await client.list_tools()}
        assert tools == BASE_TOOLS | ASKING_TOOLS and client.rejected_tools == []
        assert (await client.call_tool("echo", {"message": "hello"})).text == "Echo: hello"
        elicited = await client.call_tool("trigger-elicitation-request", {})
        assert "User provided the requested information" in elicited.text
        assert "Name: Ada" in elicited.text
        tap = clients[-1][1]
        rounds = tap.requests("tools/call")[-2:]
        assert [m["params"]["name"] for m in rounds] == ["trigger-elicitation-request"] * 2
        assert "requestState" not in rounds[0]["params"]
        assert isinstance(rounds[1]["params"]["requestState"], str)
        (answered,) = rounds[1]["params"]["inputResponses"].values()
        assert answered["action"] == "accept" and answered["content"]["name"] == "Ada"
        sampled = await client.call_tool("trigger-sampling-request",
                                         {"prompt": "Capital of France?", "maxTokens": 20})
        assert "Paris" in sampled.text


async def test_a_legacy_client_of_the_same_proxy_gets_elicitation_create(
        proxy: ProxyProcess, clients: list[tuple[Client, SchemaTap]]) -> None:
    asked: list[tuple[str, str | None]] = []

    def answer(request: Any) -> dict[str, Any]:
        asked.append((request.method, request.key))  # no key: a real request of the server's
        return fill(request)

    client = client_of(proxy, clients, "legacy", elicit=answer)
    async with client:
        assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
        elicited = await client.call_tool("trigger-elicitation-request", {})
        assert "User provided the requested information" in elicited.text
    assert asked == [("elicitation/create", None)]
    assert len(clients[-1][1].requests("tools/call")) == 1  # one call: no rounds to retry


def test_mcpkit_probe_reports_the_proxy_as_a_modern_server(proxy: ProxyProcess) -> None:
    done = subprocess.run([sys.executable, "-m", "mcpkit", "probe", proxy.url, "--json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    identity = json.loads(done.stdout)["identity"]
    assert (identity["era"], identity["version"]) == ("modern", "2026-07-28"), identity
    assert identity["serverInfo"]["name"] == "mcp-servers/everything"
    assert identity["steps"][0]["sent"] == "server/discover (2026-07-28)"


def test_with_asks_none_the_reference_server_lists_its_13_tools(installed: None) -> None:
    with ProxyProcess(COMMAND, "--asks", "none", env=npm_env()) as plain:
        done = subprocess.run([sys.executable, "-m", "mcpkit", "tools", plain.url, "--json"],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    names = {tool["name"] for tool in json.loads(done.stdout)["tools"]}
    assert names == BASE_TOOLS and len(names) == 13
