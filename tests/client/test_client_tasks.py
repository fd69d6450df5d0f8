"""The client's side of Tasks against a scripted server (tests/helpers/client/task_peer.py): waiting,
answering input once per key, the three ends, timeouts and cancellation, handles, reattaching,
notifications, and the results a client must refuse (TASK-2, TASK-3)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from helpers.client.schema_tap import SchemaTap
from helpers.client.task_peer import TASKS, TaskPeer, confirm, done, state

from mcpkit.client import ClientOptions
from mcpkit.clients import Client
from mcpkit.errors import (
    InputRoundsExceededError,
    InternalError,
    InvalidParamsError,
    ProtocolViolation,
    RequestTimeoutError,
    TaskCancelledError,
)
from mcpkit.ext.tasks.watch import MAX_POLL_S, MIN_POLL_S, TaskWatch, poll_delay

TID = "t" * 24
DECLARE = ClientOptions(extensions={TASKS: {}}, timeout=10)
MakePeer = Callable[..., tuple[Client, TaskPeer]]


@pytest.fixture
def peer(taps: list[SchemaTap], clients: list[Client]) -> MakePeer:
    def make(tasks: dict[str, Any], *, options: ClientOptions | None = DECLARE,
             **kwargs: Any) -> tuple[Client, TaskPeer]:
        tap = SchemaTap(check_server=False)
        taps.append(tap)
        server = TaskPeer(tap, tasks, **{k: v for k, v in kwargs.items()
                                         if k in ("offer", "notify", "always_task")})
        handlers = {k: v for k, v in kwargs.items() if k in ("elicit",)}
        client = Client(server, options=options, **handlers)
        clients.append(client)
        return client, server

    return make


def answers(calls: list[Any]) -> Callable[[Any], dict[str, Any]]:
    def elicit(request: Any) -> dict[str, Any]:
        calls.append(request)
        return {"action": "accept", "content": {"ok": True}}

    return elicit


async def test_a_call_that_becomes_a_task_returns_the_tasks_result(peer: MakePeer) -> None:
    seen: list[Any] = []
    asked: list[Any] = []
    steps = [state(TID, "working"), state(TID, "input_required", inputRequests=confirm()),
             state(TID, "input_required", inputRequests=confirm()),  # the same key, polled again
             state(TID, "working"), done(TID, "all done")]
    client, server = peer({"job": ({"taskId": TID}, steps)}, elicit=answers(asked))
    result = await client.call_tool("job", {}, on_status=seen.append)
    assert result["content"][0]["text"] == "all done"
    assert len(asked) == 1 and asked[0].key == "confirm"  # answered once, however often asked
    assert server.updates == [{"confirm": {"action": "accept", "content": {"ok": True}}}]
    statuses = [s["status"] for s in seen]
    assert statuses[0] == "working" and "input_required" in statuses and statuses[-1] == "completed"
    for sent in server.sent("tasks/get") + server.sent("tasks/update"):
        assert sent["params"]["taskId"] == TID
        assert TASKS in sent["params"]["_meta"][
            "io.modelcontextprotocol/clientCapabilities"]["extensions"]


async def test_a_failed_task_raises_its_error_as_its_class(peer: MakePeer) -> None:
    failed = state(TID, "failed", statusMessage="upstream refused",
                   error={"code": -32602, "message": "bad range"})
    client, _ = peer({"job": ({"taskId": TID}, [failed])})
    with pytest.raises(InvalidParamsError, match="bad range") as caught:
        await client.call_tool("job")
    assert any("upstream refused" in n for n in caught.value.__notes__)


async def test_a_cancelled_task_raises_task_cancelled(peer: MakePeer) -> None:
    client, server = peer({"job": ({"taskId": TID}, [state(TID, "cancelled")])})
    with pytest.raises(TaskCancelledError, match="was cancelled") as caught:
        await client.call_tool("job")
    assert caught.value.task_id == TID
    assert server.cancelled == []  # it ended on its own: nothing to cancel


async def test_a_tool_error_inside_a_task_is_a_result(peer: MakePeer) -> None:
    err = state(TID, "completed", result={"content": [{"type": "text", "text": "no"}],
                                          "isError": True})
    client, _ = peer({"job": ({"taskId": TID}, [err])})
    assert (await client.call_tool("job"))["isError"] is True


async def test_a_task_for_a_request_that_did_not_declare_it_is_refused(peer: MakePeer) -> None:
    client, _ = peer({"job": ({"taskId": TID}, [done(TID, "x")])}, options=None,
                     always_task=True)
    with pytest.raises(ProtocolViolation, match="did not declare"):
        await client.call_tool("job")


async def test_a_task_for_a_read_is_refused(peer: MakePeer) -> None:
    client, _ = peer({})
    with pytest.raises(ProtocolViolation, match="only tools/call may"):
        await client.read_resource("file:///x")


async def test_a_wait_past_the_timeout_cancels_the_task(peer: MakePeer) -> None:
    forever = [state(TID, "working")]  # tasks/get never moves it on
    client, server = peer({"job": ({"taskId": TID}, forever)})
    with pytest.raises(RequestTimeoutError, match=TID):
        await client.call_tool("job", timeout=0.3)
    assert server.cancelled == [TID]


async def test_cancelling_the_awaiting_coroutine_sends_tasks_cancel(peer: MakePeer) -> None:
    client, server = peer({"job": ({"taskId": TID}, [state(TID, "working")])})
    waiting = asyncio.ensure_future(client.call_tool("job"))
    for _ in range(200):  # until the task exists and is being polled
        await asyncio.sleep(0.01)
        if server.sent("tasks/get"):
            break
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert server.cancelled == [TID]


async def test_a_handler_that_fails_cancels_the_task(peer: MakePeer) -> None:
    def refuse(request: Any) -> dict[str, Any]:
        raise RuntimeError("no user here")

    steps = [state(TID, "input_required", inputRequests=confirm())]
    client, server = peer({"job": ({"taskId": TID}, steps)}, elicit=refuse)
    with pytest.raises(RuntimeError, match="no user here"):
        await client.call_tool("job")
    assert server.cancelled == [TID] and server.updates == []


async def test_an_input_request_without_a_handler_is_refused(peer: MakePeer) -> None:
    steps = [state(TID, "input_required", inputRequests=confirm())]
    client, server = peer({"job": ({"taskId": TID}, steps)})
    with pytest.raises(ProtocolViolation, match="did not declare"):
        await client.call_tool("job")
    assert server.updates == []


async def test_start_tool_hands_back_the_task(peer: MakePeer) -> None:
    steps = [state(TID, "working", statusMessage="half"),
             state(TID, "input_required", inputRequests=confirm("k1")), done(TID, "fin")]
    client, server = peer({"job": ({"taskId": TID}, steps)}, options=ClientOptions())
    handle = await client.start_tool("job", {"n": 1})
    assert handle.task_id == TID and not handle.done
    assert (await handle.status())["statusMessage"] == "half"
    parked = await handle.status()
    assert parked["status"] == "input_required" and "k1" in parked["inputRequests"]
    await handle.update({"k1": {"action": "decline"}})
    assert server.updates == [{"k1": {"action": "decline"}}]
    assert (await handle.wait())["content"][0]["text"] == "fin"
    assert handle.done
    await handle.cancel()  # a finished task: nothing is sent
    assert server.cancelled == []


async def test_start_tool_on_a_server_without_tasks_is_a_done_handle(peer: MakePeer) -> None:
    client, server = peer({"job": ({"taskId": TID}, [])}, options=ClientOptions(), offer=False)
    handle = await client.start_tool("job")
    assert handle.task_id is None and handle.done
    assert (await handle.wait())["content"][0]["text"] == "sync"
    assert (await handle.status())["status"] == "completed"
    with pytest.raises(ValueError, match="no task"):
        await handle.update({"k": {"action": "accept"}})
    assert server.sent("tasks/get") == []


async def test_a_task_is_reattached_by_id_from_another_client(peer: MakePeer) -> None:
    client, server = peer({"job": ({"taskId": TID}, [state(TID, "working"), done(TID, "later")])})
    handle = await client.start_tool("job")
    await client.close()
    again = Client(server, options=ClientOptions(timeout=10))
    try:
        result = await again.task(TID).wait()
    finally:
        await again.close()
    assert result["content"][0]["text"] == "later"
    with pytest.raises(ValueError, match="non-empty string"):
        again.task("")
    assert handle.task_id == TID


async def test_an_unknown_task_id_is_invalid_params(peer: MakePeer) -> None:
    client, _ = peer({})
    with pytest.raises(InvalidParamsError, match="not found"):
        await client.task("nope" * 6).status()


async def test_notifications_replace_polling_when_the_server_agrees(peer: MakePeer) -> None:
    steps = [state(TID, "working"), state(TID, "working", statusMessage="75%"),
             done(TID, "pushed")]
    seen: list[str] = []
    client, server = peer({"job": ({"taskId": TID}, steps)}, notify=True)
    result = await client.call_tool("job", on_status=lambda t: seen.append(t["status"]))
    assert result["content"][0]["text"] == "pushed"
    listen = server.sent("subscriptions/listen")
    assert [m["params"]["notifications"] for m in listen] == [{"taskIds": [TID]}]
    assert TASKS in listen[0]["params"]["_meta"][
        "io.modelcontextprotocol/clientCapabilities"]["extensions"]
    assert len(server.sent("tasks/get")) <= 1  # one look for what changed before the stream
    assert seen[-1] == "completed"


async def test_without_the_servers_agreement_the_client_polls(peer: MakePeer) -> None:
    client, server = peer({"job": ({"taskId": TID}, [state(TID, "working"), done(TID, "ok")])})
    assert (await client.call_tool("job"))["content"][0]["text"] == "ok"
    assert len(server.sent("subscriptions/listen")) == 1 and server.sent("tasks/get")


# -- the pure rules ------------------------------------------------------------------------

@pytest.mark.parametrize(("interval", "remaining", "expected"), [
    (0, None, MIN_POLL_S), (86_400_000, None, MAX_POLL_S), (2500, None, 2.5),
    (2500, 1.0, 1.0), (None, None, 1.0), (True, None, 1.0), (5000, -1.0, 0.0)])
def test_poll_intervals_are_clamped(interval: Any, remaining: Any, expected: float) -> None:
    assert poll_delay(interval, remaining) == expected


def created() -> dict[str, Any]:
    return {"resultType": "task", **state(TID, "working")}


def test_a_finished_task_stays_finished() -> None:
    watch = TaskWatch.created(created(), "tools/call 'x'")
    assert watch.see(done(TID, "a"))
    assert not watch.see(state(TID, "working"))
    assert watch.outcome()["content"][0]["text"] == "a"


@pytest.mark.parametrize(("seen", "says"), [
    (state("other" * 5, "working"), "answered about"),
    (state(TID, "completed"), "must carry result"),
    ({**state(TID, "working"), "status": "paused"}, "status must be one of"),
])
def test_a_wrong_state_is_a_protocol_violation(seen: dict[str, Any], says: str) -> None:
    watch = TaskWatch.created(created(), "tools/call 'x'")
    with pytest.raises(ProtocolViolation, match=says):
        watch.see(seen)


@pytest.mark.parametrize(("bad", "says"), [
    ({"requestState": "s"}, "must not carry requestState"),
    ({"ttl": 5}, "must not carry ttl"),
    ({"ttlMs": 1.5}, "ttlMs"),
])
def test_a_malformed_create_task_result_is_refused(bad: dict[str, Any], says: str) -> None:
    with pytest.raises(ProtocolViolation, match=says):
        TaskWatch.created({**created(), **bad}, "tools/call 'x'")


def test_keys_are_answered_once_and_rounds_are_bounded() -> None:
    watch = TaskWatch.created(created(), "tools/call 'x'", max_rounds=2)
    watch.see(state(TID, "input_required", inputRequests={**confirm("a"), **confirm("b")}))
    assert set(watch.pending()) == {"a", "b"}
    watch.answering(["a"])
    assert set(watch.pending()) == {"b"}
    watch.answering(["b"])
    assert watch.pending() == {}
    watch.see(state(TID, "input_required", inputRequests=confirm("c")))
    with pytest.raises(InputRoundsExceededError, match="after 2 rounds"):
        watch.answering(["c"])


def test_a_failed_task_without_a_known_code_is_an_rpc_error() -> None:
    watch = TaskWatch.created(created(), "tools/call 'x'")
    watch.see(state(TID, "failed", error={"code": -32603, "message": "boom"}))
    with pytest.raises(InternalError, match="boom"):
        watch.outcome()


async def test_a_task_created_already_completed_is_fetched_for_its_result(peer: MakePeer) -> None:
    client, server = peer({"job": ({"taskId": TID, "status": "completed"}, [done(TID, "quick")])})
    assert (await client.call_tool("job"))["content"][0]["text"] == "quick"
    assert len(server.sent("tasks/get")) == 1
