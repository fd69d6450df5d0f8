"""Two `mcpkit proxy` replicas behind a round-robin nginx with no affinity, sharing PostgreSQL
or Redis, each in front of a 2025-11-25 upstream of its own (the test upstream over stdio,
pinned legacy): a held call's retry that nginx gives to the other replica is relayed to the
replica holding the call, through the store's broker, and answered as if held there (its
progress too); a retry after the holder was killed, or after its hold time, is told the call
is gone; a 2025-11-25 client's answer posted to the other replica reaches the held call.
Requests that must land on a given replica go to its own port; the others go through nginx,
whose access log says which replica served each. Every message the proxy sends is checked
against the official schema."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.client.schema_tap import SchemaTap, TappedConnector
from helpers.proxy.proxy_command import ProxyProcess, python_upstream
from helpers.transports.http_peer import Peer
from helpers.wire import LEGACY
from nginx import Balancer, nginx_binary

from mcpkit.client import Client, ClientOptions
from mcpkit.errors import InvalidParamsError
from mcpkit.transports.http_client.transport import HTTPConnector

ENGINES = ["postgres", "redis"]
HOLD_S = 3.0
RELAY_WAIT_S = 2.0
WAIT_S = 30.0
OK = {"action": "accept", "content": {"ok": True}}


class ProxyCluster:
    """Two proxy replicas (A, B) on ports of their own, behind one nginx."""

    def __init__(self, store: str) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="mcpkit-proxies-"))
        env = {"HOME": str(self.home / "home"), "XDG_DATA_HOME": str(self.home / "data"),
               "MCPKIT_STATE_KEYS": "", "MCPKIT_STORE": ""}
        self.replicas = {name: ProxyProcess(
            python_upstream(), "--era", "legacy", "--store", store, "--hold", str(HOLD_S),
            "--relay-wait", str(RELAY_WAIT_S), "--quiet-upstream",
            env={**env, "REPLICA": name}) for name in "AB"}
        self.balancer: Balancer | None = None

    def start(self) -> None:
        for replica in self.replicas.values():
            replica.start()
        self.balancer = Balancer([r.port for r in self.replicas.values()])
        self.balancer.start()

    @property
    def url(self) -> str:
        assert self.balancer is not None
        return self.balancer.url

    def served_by(self) -> list[str]:
        """Which replica (A or B) served each request through nginx, in order."""
        assert self.balancer is not None
        by_port = {f"127.0.0.1:{r.port}": name for name, r in self.replicas.items()}
        return [by_port.get(address, address) for address in self.balancer.served_by()]

    def ensure_running(self) -> None:
        for replica in self.replicas.values():
            if not replica.running:
                replica.start()

    def stop(self) -> None:
        if self.balancer is not None:
            self.balancer.stop()
        for replica in self.replicas.values():
            replica.stop()
        shutil.rmtree(self.home, ignore_errors=True)


@pytest.fixture(scope="module", params=ENGINES)
def cluster(request: pytest.FixtureRequest) -> Iterator[ProxyCluster]:
    nginx_binary()  # skip (or fail under CI) before starting anything
    made = ProxyCluster(request.getfixturevalue(f"{request.param}_url"))
    try:
        made.start()
        yield made
    finally:
        made.stop()


@pytest.fixture
async def proxies(cluster: ProxyCluster) -> AsyncIterator[ProxyCluster]:
    cluster.ensure_running()
    yield cluster
    cluster.ensure_running()


@pytest.fixture
def taps() -> Iterator[list[SchemaTap]]:
    made: list[SchemaTap] = []
    yield made
    for tap in made:
        assert not tap.problems, tap.problems


def client(url: str, taps: list[SchemaTap], era: str = "modern", **handlers: Any) -> Client:
    tap = SchemaTap()
    taps.append(tap)
    return Client(TappedConnector(HTTPConnector(url), tap), options=ClientOptions(
        era=era, timeout=WAIT_S), elicit=handlers.pop("elicit", lambda r: OK),  # type: ignore[arg-type]
        **handlers)


async def first_round(c: Client, tag: str) -> dict[str, Any]:
    asked = await c.request("tools/call", {"name": "confirm", "arguments": {"tag": tag}})
    assert asked["resultType"] == "input_required", asked
    return asked  # type: ignore[no-any-return]


async def retry(c: Client, tag: str, asked: dict[str, Any], **options: Any) -> dict[str, Any]:
    (key,) = asked["inputRequests"]
    return await c.request("tools/call", {  # type: ignore[no-any-return]
        "name": "confirm", "arguments": {"tag": tag}, "requestState": asked["requestState"],
        "inputResponses": {key: OK}}, **options)


async def test_a_retry_at_the_other_replica_is_relayed_to_the_one_holding_the_call(
        proxies: ProxyCluster, taps: list[SchemaTap]) -> None:
    progress: list[tuple[Any, ...]] = []
    async with client(proxies.url, taps) as c:
        before = len(proxies.served_by())
        asked = await first_round(c, "relayed")
        done = await retry(c, "relayed", asked, progress=lambda *a: progress.append(a))
        holder, answerer = proxies.served_by()[before:before + 2]
    assert holder != answerer, "nginx gave both rounds to one replica"
    # The upstream call ran behind the holder, the retry was answered by the other replica.
    assert done["content"][0]["text"] == f"relayed: yes on {holder}"
    assert (1, 2, "going ahead with relayed") in progress  # relayed from the holder


async def test_a_retry_after_the_holder_was_killed_is_told_the_call_is_gone(
        proxies: ProxyCluster, taps: list[SchemaTap]) -> None:
    a, b = proxies.replicas["A"], proxies.replicas["B"]
    async with client(a.url, taps) as at_a, client(b.url, taps) as at_b:
        asked = await first_round(at_a, "orphan")
        a.kill()
        with pytest.raises(InvalidParamsError) as raised:  # HeldCallGoneError, -32602
            await retry(at_b, "orphan", asked)
    assert f"did not answer within {RELAY_WAIT_S} s" in raised.value.message
    assert "call again without the requestState" in raised.value.message


async def test_a_retry_after_the_hold_time_is_told_the_call_is_gone_by_the_holder(
        proxies: ProxyCluster, taps: list[SchemaTap]) -> None:
    a, b = proxies.replicas["A"], proxies.replicas["B"]
    async with client(a.url, taps) as at_a, client(b.url, taps) as at_b:
        asked = await first_round(at_a, "expired")
        async with asyncio.timeout(WAIT_S):  # the holder says it cancelled the call
            while "confirm': no answer came within" not in a.output():
                await asyncio.sleep(0.05)
        with pytest.raises(InvalidParamsError) as raised:
            await retry(at_b, "expired", asked)
    assert "no longer held" in raised.value.message


async def test_a_legacy_clients_answer_posted_to_the_other_replica_reaches_the_held_call(
        proxies: ProxyCluster) -> None:
    """A 2025-11-25 session opened on A, its call served by B: B holds the upstream call and
    sends its `elicitation/create` on the call's stream; the answer, posted to A, reaches B
    (the broker relays a legacy session's answers) and the call completes there."""
    a, b = proxies.replicas["A"], proxies.replicas["B"]
    async with httpx.AsyncClient(timeout=WAIT_S) as http:
        opener = Peer(a.url, http)
        await opener.initialize({"elicitation": {}})
        on_b = Peer(b.url, http)
        on_b.session, on_b.revision, on_b.ids = opener.session, LEGACY, 10
        call = on_b.request_message("tools/call", {"name": "confirm",
                                                    "arguments": {"tag": "session"}},
                                    with_meta=False)
        async with on_b.stream(call) as events:
            async with asyncio.timeout(WAIT_S):
                asked = await anext(events)
                assert asked["method"] == "elicitation/create", asked
                assert asked["params"]["message"] == "Go ahead with session?"
                posted = await opener.post({"jsonrpc": "2.0", "id": asked["id"], "result": OK},
                                           mirror=False)
                assert posted.status == 202, posted.body
                done = await anext(events)
                while "method" in done:  # its progress, then its answer
                    done = await anext(events)
        assert done["id"] == call["id"]
        assert done["result"]["content"][0]["text"] == "session: yes on B"
