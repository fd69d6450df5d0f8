"""The Tasks extension's params from a hostile client: `tasks/get`, `tasks/update`,
`tasks/cancel` and `tools/call` with task metadata, their ids and members of any type and size,
over the byte stream stdio serves with.

What must hold, from the extension's text (TASK-8/10/11/14/18 in the digest) rather than the
code: each request is answered; an id naming no task of the caller is -32602; a request that
does not declare the extension is -32021; a v1 `task` member never turns a plain tool into a
task; nothing is -32603, nothing logs a traceback, and the connection answers after each.
"""

from __future__ import annotations

import asyncio
from typing import Any

from checked_connection import watching
from hypothesis import given
from hypothesis import strategies as st
from peer_values import json_values

from mcpkit import Server
from mcpkit.ext.tasks import TaskOptions
from mcpkit.protocol.extensions import TASKS
from mcpkit.server.server import ServerOptions
from mcpkit.types.constants import CLIENT_CAPABILITIES_KEY

DECLARING = {CLIENT_CAPABILITIES_KEY: {"elicitation": {}, "extensions": {TASKS: {}}}}


def task_server() -> Server:
    server = Server("fuzz-tasks",
                    options=ServerOptions(extensions={"tasks": TaskOptions(store="memory:")}))

    @server.tool()
    def plain(name: str = "x") -> str:
        return f"Hello, {name}!"

    @server.tool(task="required")
    async def job(n: int = 0) -> str:
        return f"done {n}"

    return server


HOSTILE_IDS = st.one_of(
    st.sampled_from(["", " ", "\x00", "../../etc/passwd", "' OR 1=1 --", "*", "%", "\u202e",
                     "x" * 100_000, "\ud800".encode("utf-8", "surrogatepass").decode("utf-8",
                                                                                     "replace")]),
    st.text(max_size=40), json_values(4),
)
METHODS = st.sampled_from(["tasks/get", "tasks/update", "tasks/cancel"])
TASK_MEMBERS = st.fixed_dictionaries({}, optional={
    "task": json_values(3) | st.fixed_dictionaries({}, optional={
        "ttl": st.integers(-(2**63), 2**64 - 1) | json_values(2),
        "pollInterval": json_values(2)}),
    "ttl": json_values(2), "inputResponses": json_values(4), "requestState": json_values(2),
    "taskId": HOSTILE_IDS,
})


@st.composite
def requests(draw: st.DrawFn, created: list[str]) -> dict[str, Any]:
    declare = draw(st.sampled_from([True, True, True, False]))
    meta: dict[str, Any] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                            "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
                            CLIENT_CAPABILITIES_KEY: {}}
    if declare:
        meta.update(DECLARING)
    kind = draw(st.sampled_from(["task method", "task method", "call"]))
    if kind == "call":
        params: dict[str, Any] = {"name": draw(st.sampled_from(["plain", "job"])),
                                  "arguments": draw(st.sampled_from([{}, {"n": 1}])),
                                  **draw(TASK_MEMBERS)}
        method = "tools/call"
    else:
        method = draw(METHODS)
        task_id = draw(st.sampled_from(created) | HOSTILE_IDS) if created else draw(HOSTILE_IDS)
        params = {"taskId": task_id, **draw(TASK_MEMBERS.map(
            lambda m: {k: v for k, v in m.items() if k != "taskId"}))}
        if draw(st.booleans()):
            params = draw(st.sampled_from([{}, {"taskId": None}, params]))
    params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": draw(st.integers(1000, 10**6)), "method": method,
            "params": params, "declared": declare}


def expected(request: dict[str, Any], reply: dict[str, Any], created: list[str]) -> None:
    method, params = request["method"], request["params"]
    if not request["declared"] and method != "tools/call":
        assert reply["error"]["code"] == -32021, reply
        return
    if method == "tools/call":
        result = reply.get("result")
        if params["name"] == "plain":
            assert result is not None and result["resultType"] == "complete", reply
        elif not request["declared"]:
            assert reply["error"]["code"] == -32021, reply
        return
    if params.get("taskId") not in created:
        assert reply.get("error", {}).get("code") == -32602, reply
        return
    if "error" in reply:  # a known task, refused for its other members (inputResponses)
        assert reply["error"]["code"] == -32602, reply


async def scenario(data: st.DataObject) -> None:
    async with watching(task_server()) as conn:
        created: list[str] = []
        conn.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "job", "arguments": {}, "_meta": {**conn.wire.meta(), **DECLARING}}})
        first = await conn.wire.next(timeout=10)
        created.append(first["result"]["taskId"])
        for n in range(data.draw(st.integers(1, 6), label="requests")):
            request = data.draw(requests(created), label="request")
            wire = {k: v for k, v in request.items() if k != "declared"}
            conn.send(wire)
            while True:
                reply = await conn.wire.next(timeout=30)
                if reply.get("id") == request["id"]:
                    break
            expected(request, reply, created)
            result = reply.get("result") or {}
            if result.get("resultType") == "task":
                created.append(result["taskId"])
            await conn.ping(n)


@given(data=st.data())
def test_task_params_of_any_shape_are_answered_as_the_extension_says(data: Any) -> None:
    asyncio.run(scenario(data))
