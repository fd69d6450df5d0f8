"""`server.run()`: `python server.py` serves stdio as `mcpkit run server.py` does (stdout
carries the protocol only) and `run(http=...)` serves Streamable HTTP, each a real subprocess
driven by mcpkit's Client in both eras with every message schema-checked; `serve_http()` in a
running loop; and the mistakes `run()` refuses before serving."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers.client.schema_tap import SchemaTap
from helpers.transports.http_peer import ServerProcess, checked_transport
from helpers.transports.stdio_peer import StdioPeer
from helpers.wire import LEGACY, check_server_message

from mcpkit import Client, ClientOptions, Server
from mcpkit.transports.stdio.client import StdioServer

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart" / "server.py"
ERAS = ["modern", "legacy"]

NOISY = '''
import sys
from mcpkit import Server

print("loading the noisy server")  # at import, before run(): buffered, not yet flushed

server = Server("noisy", "1.0.0")


@server.tool()
def shout(text: str) -> str:
    """Upper-case the text, printing as it goes."""
    print("shouting", text)
    return text.upper()


if __name__ == "__main__":
    server.run({args})
'''


BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
"""The environment a host gives a server it launches: Python's own buffering of stdout (what
a script prints while it loads is still in the buffer when `run()` claims stdout). With
PYTHONUNBUFFERED such output is already written by then; `mcpkit run` claims stdout before the
script is imported and keeps even that off the wire."""


def script(tmp_path: Path, args: str = "") -> Path:
    path = tmp_path / "server.py"
    path.write_text(NOISY.format(args=args))
    return path


@pytest.mark.parametrize("era", ERAS)
async def test_python_quickstart_serves_stdio_in_both_eras(era: str) -> None:
    tap = SchemaTap()
    server = StdioServer([sys.executable, str(QUICKSTART)], cwd=ROOT, stderr="capture", tap=tap)
    async with Client(server, options=ClientOptions(era=era)) as client:  # type: ignore[arg-type]
        assert client.era == era
        assert [t["name"] for t in await client.list_tools()] == ["echo", "add"]
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result["structuredContent"] == {"sum": 5}
    tap.assert_clean()


async def test_a_script_run_keeps_stdout_for_the_protocol_and_prints_go_to_stderr(
    tmp_path: Path
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script(tmp_path)), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT, env=BUFFERED)
    peer = StdioPeer(proc)
    try:
        reply = await peer.request("tools/call", {"name": "shout", "arguments": {"text": "hi"}})
        assert reply["result"]["content"] == [{"type": "text", "text": "HI"}]
    finally:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.close()
        rest = await asyncio.wait_for(proc.stdout.read(), 10)
        errors = (await asyncio.wait_for(proc.stderr.read(), 10)).decode()
        status = await asyncio.wait_for(proc.wait(), 10)
    assert rest == b""  # every byte on stdout was a message (read and checked above)
    assert status == 0
    assert "loading the noisy server" in errors and "shouting hi" in errors
    assert "serving noisy over stdio" not in errors  # stdin is a pipe: no hint for people


@pytest.fixture
def http_script(tmp_path: Path) -> Iterator[ServerProcess]:
    """`python server.py` calling `server.run(http="127.0.0.1:0")`, its URL read from the line
    it announces on stderr."""
    handle, name = tempfile.mkstemp(prefix="mcpkit-run-", suffix=".log")
    os.close(handle)
    log = Path(name)
    path = script(tmp_path, 'http="127.0.0.1:0"')
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, str(path)], cwd=ROOT, stdout=out, stderr=out,
                                stdin=subprocess.DEVNULL)
    found = None
    for _ in range(1000):
        found = re.search(r"serving noisy at (http://\S+)", log.read_text(errors="replace"))
        if found or proc.poll() is not None:
            break
        time.sleep(0.02)
    if found is None:
        proc.kill()
        proc.wait()
        raise AssertionError(f"the server did not start: {log.read_text(errors='replace')}")
    served = ServerProcess(proc, log, found.group(1))
    yield served
    served.stop()


@pytest.mark.parametrize("era", ERAS)
async def test_run_http_serves_a_script_in_both_eras(http_script: ServerProcess,
                                                     era: str) -> None:
    assert http_script.url.endswith("/mcp")
    transport = checked_transport(http_script.url, check_server=True)
    async with Client(transport, options=ClientOptions(era=era)) as client:  # type: ignore[arg-type]
        assert client.era == era
        result = await client.call_tool("shout", {"text": "hi"})
        assert result["content"] == [{"type": "text", "text": "HI"}]
        # SIGTERM while the client holds a stream open (a modern listen stream, a legacy
        # session's GET stream), waited for before the signal: the drain ends it cleanly.
        async with client.listen(tools=True) as listening:
            async with asyncio.timeout(15):
                if era == "legacy":
                    await transport.session_stream_open.wait()
                http_script.proc.terminate()
                if era == "legacy":
                    while transport.session_stream_open.is_set():
                        await asyncio.sleep(0.02)
                else:
                    assert [note async for note in listening] == []  # its result ends it
    # SIGTERM: a graceful shutdown, after which uvicorn lets the signal end the process.
    assert await asyncio.to_thread(http_script.proc.wait, 15) in (0, -15)
    output = http_script.output()
    assert "shouting hi" in output and "Traceback" not in output, output


async def test_serve_http_serves_in_the_running_loop_until_cancelled(
    capfd: pytest.CaptureFixture[str]
) -> None:
    server = Server("in-loop", "1.0.0")

    @server.tool()
    async def ping_back() -> str:
        """Answer."""
        return "pong"

    task = asyncio.create_task(server.serve_http("127.0.0.1:0/rpc"))
    found = None
    seen = ""
    for _ in range(500):
        seen += capfd.readouterr().err
        found = re.search(r"serving in-loop at (http://\S+)", seen)
        if found or task.done():
            break
        await asyncio.sleep(0.02)
    assert found is not None, seen
    assert found.group(1).endswith("/rpc")
    async with Client(checked_transport(found.group(1), check_server=True)) as client:
        assert (await client.call_tool("ping_back", {}))["content"][0]["text"] == "pong"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)


async def test_serve_http_takes_the_session_limits(capfd: pytest.CaptureFixture[str]) -> None:
    from mcpkit.legacy.session_quota import SessionLimits

    server = Server("limited", "1.0.0")
    limits = SessionLimits(rate_per_s=0.01, burst=1, limit_loopback=True)
    task = asyncio.create_task(server.serve_http("127.0.0.1:0", sessions=limits))
    seen, found = "", None
    for _ in range(500):
        seen += capfd.readouterr().err
        found = re.search(r"serving limited at (http://\S+)", seen)
        if found or task.done():
            break
        await asyncio.sleep(0.02)
    assert found is not None, seen
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "limits-test", "version": "1"}}}
    headers = {"accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(timeout=30) as http:
        first = await http.post(found.group(1), json=initialize, headers=headers)
        second = await http.post(found.group(1), json=initialize, headers=headers)
    assert first.status_code == 200
    check_server_message(LEGACY, first.json(), "initialize")
    assert second.status_code == 429 and "retry-after" in second.headers  # the burst of one
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)


# -- what run() refuses -------------------------------------------------------------------------

@pytest.mark.parametrize(("http", "form"), [
    (None, "await server.serve_stdio()"),
    ("127.0.0.1:8000/mcp", "await server.serve_http('127.0.0.1:8000/mcp')"),
])
async def test_run_inside_a_running_loop_points_to_the_async_form(
    http: str | None, form: str
) -> None:
    with pytest.raises(RuntimeError, match=re.escape(form)):
        Server("x").run(http)


@pytest.mark.parametrize("http", ["nowhere:port", "host:", "127.0.0.1:99999"])
def test_run_refuses_a_bad_address_before_serving(http: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"Server.run(http={http!r}): expected "
                                                   "[HOST:]PORT[/PATH]")):
        Server("x").run(http=http)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"http": True}, "takes an address such as"),
    ({"http": 8000, "allowed_hosts": "mcp.example.com"}, "takes a list of names, not the string"),
    ({"http": 8000, "allowed_origins": [""]}, "is not a host or origin name"),
])
def test_run_refuses_options_of_the_wrong_kind(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(TypeError, match=re.escape(message)):
        Server("x").run(**kwargs)  # type: ignore[arg-type]


def test_a_script_run_from_a_terminal_says_what_it_waits_for(tmp_path: Path) -> None:
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, str(script(tmp_path))], cwd=ROOT,
                                stdin=follower, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=BUFFERED)
        os.close(follower)
        follower = -1
        os.write(leader, b"\x04")  # Ctrl-D: the end of input
        out, err = proc.communicate(timeout=30)
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert out == b""
    assert b"mcpkit: serving noisy over stdio" in err
