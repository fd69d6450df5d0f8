"""The client's reading of the answers to its own requests, whatever a server answers.

A real server sits behind an in-memory connection; for one request of the client's, the
server's response is replaced on its way back by any result or error object (members of the
right names with values of any type, result types it does not know, an input request that
makes no sense). Each public call either returns or raises one of mcpkit's own errors
(ProtocolViolation, the RPCError the server sent, InputRoundsExceededError, ...), never
TypeError, KeyError or AttributeError from a field read without its type check; and the same
client then makes a clean call to the same server. Both eras.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from helpers.sample_server import make_server
from hypothesis import example, given
from hypothesis import strategies as st
from peer_values import json_values

from mcpkit.client import Client, ClientOptions
from mcpkit.errors import MCPError
from mcpkit.transports.memory import InMemory

ERAS = ["modern", "legacy"]

CALLS: dict[str, Callable[[Client], Awaitable[Any]]] = {
    "tools/list": lambda c: c.list_tools(fresh=True),
    "tools/call": lambda c: c.call_tool("add", {"a": 1, "b": 2}),
    "resources/list": lambda c: c.list_resources(fresh=True),
    "resources/templates/list": lambda c: c.list_resource_templates(fresh=True),
    "resources/read": lambda c: c.read_resource("test://static"),
    "prompts/list": lambda c: c.list_prompts(fresh=True),
    "prompts/get": lambda c: c.get_prompt("greet", {"name": "Ada"}),
    "completion/complete": lambda c: c.complete(
        {"type": "ref/prompt", "name": "greet"}, "name", "A"),
}

_ITEM = st.fixed_dictionaries({}, optional={
    "name": st.sampled_from(["add", "echo"]) | json_values(1),
    "uri": st.sampled_from(["test://static"]) | json_values(1),
    "uriTemplate": st.sampled_from(["test://item/{id}/data", "{"]) | json_values(1),
    "inputSchema": st.just({"type": "object"}) | json_values(3),
    "outputSchema": st.just({"type": "object"}) | json_values(3),
    "arguments": json_values(3), "description": json_values(1), "mimeType": json_values(1),
    "text": json_values(1), "blob": json_values(1), "type": json_values(1),
    "role": st.sampled_from(["user", "assistant"]) | json_values(1),
    "content": json_values(3),
}) | json_values(2)
_LIST = st.lists(_ITEM, max_size=3) | json_values(2)
RESULTS = st.fixed_dictionaries({}, optional={
    "resultType": st.sampled_from(["complete", "input_required", "later"]) | json_values(1),
    "tools": _LIST, "resources": _LIST, "resourceTemplates": _LIST, "prompts": _LIST,
    "contents": _LIST, "messages": _LIST, "content": _LIST,
    "structuredContent": json_values(3), "isError": json_values(1),
    "nextCursor": st.text(max_size=4) | json_values(1),
    "completion": st.fixed_dictionaries({}, optional={
        "values": json_values(3), "total": json_values(1), "hasMore": json_values(1)})
    | json_values(2),
    "inputRequests": st.dictionaries(st.text(max_size=3), json_values(3), max_size=2)
    | json_values(2),
    "requestState": st.text(max_size=6) | json_values(1),
    "_meta": json_values(3), "ttl": json_values(1), "cache": json_values(2),
})
ERRORS = st.fixed_dictionaries(
    {"code": st.integers(-32800, -32000) | st.sampled_from([-32002, -32042, 0, 7])},
    optional={"message": json_values(1), "data": json_values(3)},
) | json_values(2)
RESPONSES = st.one_of(
    RESULTS.map(lambda r: {"result": r}), RESULTS.map(lambda r: {"result": r}),
    ERRORS.map(lambda e: {"error": e}), json_values(3).map(lambda v: {"result": v}),
    st.just({}),
)


class _Tampering:
    """A real in-memory transport whose next response to `method` is replaced by `forged`."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.method: str | None = None
        self.forged: dict[str, Any] = {}

    async def request(self, message: dict[str, Any], *, on_notification: Any = None
                      ) -> dict[str, Any]:
        response = await self.inner.request(message, on_notification=on_notification)
        if message.get("method") == self.method:
            self.method = None
            return {"jsonrpc": "2.0", "id": message["id"], **self.forged}
        return response  # type: ignore[no-any-return]

    async def notify(self, message: dict[str, Any]) -> None:
        await self.inner.notify(message)

    def set_request_handler(self, handler: Any) -> None:
        self.inner.set_request_handler(handler)

    def set_notification_handler(self, handler: Any) -> None:
        self.inner.set_notification_handler(handler)

    async def close(self) -> None:
        await self.inner.close()


class _Connector:
    """Opens a tampering transport on a real server, so the era probe and the handshake are
    the server's own."""

    kind = "memory"
    key = "memory:fuzz"

    def __init__(self) -> None:
        self.server = make_server()
        self.opened: _Tampering | None = None

    async def connect(self) -> _Tampering:
        self.opened = _Tampering(await InMemory(self.server).connect())
        return self.opened


async def _decline(*_args: Any) -> dict[str, Any]:
    return {"action": "decline"}


async def _scenario(era: str, method: str, forged: dict[str, Any]) -> None:
    connector = _Connector()
    client = Client(connector, elicit=_decline,  # type: ignore[arg-type]
                    options=ClientOptions(era=era, max_rounds=3))  # type: ignore[arg-type]
    async with client:
        await client.list_tools()
        assert connector.opened is not None
        connector.opened.method, connector.opened.forged = method, forged
        try:
            await asyncio.wait_for(CALLS[method](client), 30)
        except MCPError:
            pass
        assert (await client.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"sum": 5}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("method", sorted(CALLS))
@given(forged=RESPONSES)
@example(forged={})
@example(forged={"result": {"resultType": "input_required", "inputRequests": {"k": 1}}})
def test_any_answer_is_read_or_refused_with_our_error(
    era: str, method: str, forged: dict[str, Any]
) -> None:
    asyncio.run(_scenario(era, method, forged))
