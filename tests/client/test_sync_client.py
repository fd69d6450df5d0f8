"""`SyncClient`: the client without `await`, on an event loop thread of its own."""

from __future__ import annotations

import asyncio
import gc
import inspect
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, TypedDict

import pytest
from helpers.client.client_server import make_server
from helpers.client.schema_tap import ROOT, SchemaTap

from mcpkit import Client, Context, Elicit, Server, SyncClient
from mcpkit import client as core
from mcpkit.client import InputRequest
from mcpkit.client.sync import SyncSubscription
from mcpkit.errors import InvalidParamsError, ResourceNotFoundError
from mcpkit.ext.tasks import SyncTaskHandle, TaskHandle
from mcpkit.transports.memory import InMemory
from mcpkit.transports.stdio.client import StdioServer

QUICKSTART = str(ROOT / "examples" / "quickstart" / "server.py")


class Sum(TypedDict):
    sum: int


def stdio(tap: SchemaTap) -> StdioServer:
    return StdioServer([sys.executable, "-m", "mcpkit", "run", QUICKSTART], stderr="capture",
                       tap=tap)


def test_a_script_calls_a_stdio_server_without_await_and_closing_ends_it() -> None:
    tap = SchemaTap()
    with SyncClient(stdio(tap)) as client:
        assert client.era == "modern"
        assert {t.name for t in client.list_tools()} == {"echo", "add"}
        assert client.call_tool("add", {"a": 2, "b": 3}, result=Sum).data == {"sum": 5}
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
        transport: Any = client.client.transport
        runner = client._runner
    assert transport.proc.returncode is not None, "the server process ended with the client"
    assert not runner.thread.is_alive(), "the loop thread ended too"
    assert client.closed
    with pytest.raises(RuntimeError, match="it was closed"):
        client.list_tools()
    tap.assert_clean()


def test_errors_are_the_async_clients_classes() -> None:
    with SyncClient(InMemory(make_server())) as client:
        with pytest.raises(InvalidParamsError):
            client.call_tool("no_such_tool")
        with pytest.raises(ResourceNotFoundError) as caught:
            client.read_resource("mem://nothing")
        assert caught.value.uri == "mem://nothing"


async def test_it_works_inside_a_running_event_loop_as_in_a_notebook() -> None:
    assert asyncio.get_running_loop() is not None
    with SyncClient(InMemory(make_server())) as client:
        assert client.call_tool("add", {"a": 1, "b": 1}).structured == {"sum": 2}
        assert client.read_resource("mem://items/pen").text == "item pen"
        assert client.get_prompt("greet", {"name": "Ada"}).messages[0].role == "user"


def test_a_handler_that_calls_the_client_back_fails_at_once_instead_of_hanging() -> None:
    server = Server("asks")

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Asks for a name."""
        answer = (await ctx.ask({"who": Elicit("Who?", {"name": str})}))["who"]
        return str(answer["name"] if answer.accepted else "nobody")

    holder: list[SyncClient] = []

    def elicit(request: InputRequest) -> dict[str, Any]:
        holder[0].list_tools()  # on the client's own loop: refused
        return {"action": "accept", "content": {"name": "Ada"}}

    with SyncClient(InMemory(server), elicit=elicit) as client:
        holder.append(client)
        with pytest.raises(RuntimeError, match="called from its own event loop"):
            client.call_tool("ask")


def test_tasks_and_listening_without_await() -> None:
    server = make_server()

    @server.tool()
    def grow() -> str:
        """Adds a tool, so the tool list changes."""
        server.add_tool(lambda: "new", name="grown", description="Grown.")
        return "grown"

    with SyncClient(InMemory(server)) as client:
        handle = client.start_tool("add", {"a": 4, "b": 5}, result=Sum)
        assert isinstance(handle, SyncTaskHandle) and handle.task_id is None and handle.done
        assert handle.wait().data == {"sum": 9}
        with client.listen(tools=True) as sub:
            assert isinstance(sub, SyncSubscription)
            assert sub.acknowledged == {"toolsListChanged": True}
            client.call_tool("grow")
            note = next(iter(sub))
        assert note["method"] == "notifications/tools/list_changed"
        assert "grown" in {t.name for t in client.list_tools()}


def test_a_client_dropped_unclosed_still_ends_its_server_and_thread() -> None:
    tap = SchemaTap()
    client = SyncClient(stdio(tap))
    client.connect()
    transport: Any = client.client.transport
    thread = client._runner.thread
    del client
    gc.collect()
    thread.join(30)
    assert not thread.is_alive()
    assert transport.proc.returncode is not None
    tap.assert_clean()


INTERRUPTED = """
    import os, signal, sys, threading, time
    sys.path[:0] = [{tests_dir!r}]
    from helpers.client.client_server import make_server
    from mcpkit import SyncClient, InMemory

    server = make_server()
    client = SyncClient(InMemory(server))

    def interrupt():
        deadline = time.monotonic() + 30
        while not server.started.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    try:
        client.call_tool("wait_forever")
    except KeyboardInterrupt:
        deadline = time.monotonic() + 30
        while not server.cancelled.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        print("interrupted; the tool was cancelled:", server.cancelled.is_set())
    client.close()
"""


def test_ctrl_c_while_a_call_waits_cancels_that_call(tmp_path: Path) -> None:
    script = tmp_path / "interrupted.py"
    here = Path(__file__).resolve().parent
    script.write_text(textwrap.dedent(INTERRUPTED).format(
        tests_dir=str(here.parent)))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=90, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "interrupted; the tool was cancelled: True" in done.stdout


def _signature(method: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(method).parameters.values()]


def test_the_sync_api_is_the_async_api_method_for_method() -> None:
    # The core pair, the pair applications import (the Tasks halves mixed in), the handles;
    # `core` is the async client's seam for an extension's half, the sync one's is `run`.
    pairs = [(core.Client, core.SyncClient), (Client, SyncClient), (TaskHandle, SyncTaskHandle)]
    for async_cls, sync_cls in pairs:
        public = {n for n in dir(async_cls) if not n.startswith("_")}
        missing = public - set(dir(sync_cls)) - {"transport", "options", "on_log",
                                                  "client_info", "cancel_quietly", "core"}
        assert not missing, f"{sync_cls.__name__} lacks {sorted(missing)}"
        for name in sorted(public & set(dir(sync_cls))):
            a, s = getattr(async_cls, name), getattr(sync_cls, name)
            if callable(a) and not isinstance(a, property) and name not in ("connect",):
                assert _signature(a) == _signature(s), f"{sync_cls.__name__}.{name}"
    assert threading.current_thread() is threading.main_thread()
