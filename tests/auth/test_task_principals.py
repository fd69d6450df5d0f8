"""Tasks are bound to the principal that created them, over HTTP with two real tokens: the real
authorization server (authlib, its own process) issues a client-credentials token to each of
two registered clients, whose subjects differ; a protected mcpkit server under uvicorn on
127.0.0.1 checks them against the server's JWKS. A task created with one token is, to the
other, exactly an unknown id: `tasks/get`, `tasks/update` and `tasks/cancel` answer the same
-32602 in the same words, and a listen's `notifications.taskIds` leaves it out. Every message
both ways is checked against the official schema (`Peer`)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from helpers.auth.as_process import AuthServer
from helpers.transports.http_peer import Peer
from helpers.transports.listening import listening

from mcpkit import Context, Server, ServerOptions
from mcpkit.auth.server_config import ProtectedResource
from mcpkit.ext.tasks import TaskOptions, runtime_of
from mcpkit.protocol.extensions import TASKS
from mcpkit.transports.http_server.auth_jwt import JWTVerifier
from mcpkit.transports.http_server.options import HTTPOptions

CAPS = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}
WAIT_S = 20.0


def task_server(issuer: str) -> Any:
    server = Server("task-principals", "1.0.0", options=ServerOptions(
        extensions={"tasks": TaskOptions(store="memory:", sync_budget_s=0.05)}))

    @server.tool(task="required")
    async def audit(ctx: Context) -> str:
        """A long audit for whoever asked."""
        await asyncio.sleep(600)
        return f"audited for {ctx.principal.subject}"

    resource = ProtectedResource(issuers=issuer, verifier=JWTVerifier(f"{issuer}/jwks"))
    return server, server.asgi(HTTPOptions(path="/mcp", auth=resource))


def client_token(auth: AuthServer, resource: str) -> tuple[str, str]:
    """(subject, access token) of a newly registered machine client, for `resource`."""
    machine = auth.register(grant_types=["client_credentials"],
                            token_endpoint_auth_method="client_secret_basic")
    answer = httpx.post(f"{auth.issuer}/token", trust_env=False,
                        auth=(machine["client_id"], machine["client_secret"]),
                        data={"grant_type": "client_credentials", "resource": resource})
    assert answer.status_code == 200, answer.text
    return machine["client_id"], answer.json()["access_token"]


class Caller:
    """One token's requests to the endpoint."""

    def __init__(self, url: str, http: httpx.AsyncClient, token: str) -> None:
        self.peer = Peer(url, http)
        self.auth = {"Authorization": f"Bearer {token}"}

    async def task(self, method: str, task_id: str, **params: Any) -> tuple[int, dict[str, Any]]:
        message = self.peer.request_message(method, {"taskId": task_id, **params}, **CAPS)
        reply = await self.peer.post(message, {**self.auth, "Mcp-Name": task_id})
        return reply.status, reply.message

    async def listen_ack(self, task_ids: list[str]) -> dict[str, Any]:
        message = self.peer.request_message("subscriptions/listen", {
            "notifications": {"taskIds": task_ids}}, **CAPS)
        async with self.peer.stream(message, self.auth) as events, asyncio.timeout(WAIT_S):
            ack = await anext(events)
        assert ack["method"] == "notifications/subscriptions/acknowledged", ack
        notifications: dict[str, Any] = ack["params"]["notifications"]
        return notifications


def same_shape(theirs: dict[str, Any], unknown: dict[str, Any], task_id: str,
               other_id: str) -> None:
    """The two errors are one error with the id swapped: code, message and data."""
    assert theirs["error"]["code"] == unknown["error"]["code"] == -32602, (theirs, unknown)
    assert theirs["error"]["message"].replace(task_id, "ID") == \
        unknown["error"]["message"].replace(other_id, "ID")
    assert theirs["error"].get("data") == {"taskId": task_id}
    assert unknown["error"].get("data") == {"taskId": other_id}


async def test_a_task_is_invisible_to_another_tokens_subject(auth_server: AuthServer) -> None:
    server, app = task_server(auth_server.issuer)
    async with listening(app) as served, httpx.AsyncClient(timeout=WAIT_S,
                                                           trust_env=False) as http:
        alice_sub, alice_token = await asyncio.to_thread(client_token, auth_server, served.url)
        bob_sub, bob_token = await asyncio.to_thread(client_token, auth_server, served.url)
        assert alice_sub != bob_sub
        alice, bob = Caller(served.url, http, alice_token), Caller(served.url, http, bob_token)
        created = await alice.peer.post(alice.peer.request_message(
            "tools/call", {"name": "audit", "arguments": {}}, **CAPS), alice.auth)
        task_id = created.message["result"]["taskId"]
        unknown_id = "u" * len(task_id)
        for method, extra in (("tasks/get", {}), ("tasks/cancel", {}), ("tasks/update", {
                "inputResponses": {"go": {"action": "accept", "content": {}}}})):
            status, theirs = await bob.task(method, task_id, **extra)
            unknown_status, unknown = await bob.task(method, unknown_id, **extra)
            assert status == unknown_status, (method, status, unknown_status)
            same_shape(theirs, unknown, task_id, unknown_id)
        assert await bob.listen_ack([task_id, unknown_id]) == {"taskIds": []}
        assert await alice.listen_ack([task_id, unknown_id]) == {"taskIds": [task_id]}
        status, mine = await alice.task("tasks/get", task_id)
        assert status == 200 and mine["result"]["status"] == "working"  # bob's cancel did nothing
        record = runtime_of(server).jobs[task_id].record
        assert alice_sub in (record.owner or "") and bob_sub not in (record.owner or "")
        status, cancelled = await alice.task("tasks/cancel", task_id)
        assert status == 200 and cancelled["result"]["resultType"] == "complete"
