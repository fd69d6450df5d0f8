#!/usr/bin/env python3
"""What a store adds to the calls that need it, per backend: memory, the default (no store
given: SQLite files in the user's data folder), PostgreSQL, Redis.

    python bench/store_latency.py [--n 2000] [--postgres URL] [--redis URL]

Two calls need the store, a third must not touch it, and a fourth is the Tasks extension's:

- a single-use retry: `tools/call` with the `requestState` of an `input_required` answer and
  the answer, which records the state's nonce (`Store.add`, first writer wins); on the default
  backend this is the durable single use every server given no store now has;
- a legacy (2025-11-25) session request: `tools/call` in a session, which loads the session
  from the store (and touches its last use);
- a plain modern `tools/call echo`, which needs no state: its figure must be the same on
  every backend, since nothing of the store is on its path;
- a task save (`TaskStore.save`: what each progress report, question and answer of a running
  task writes), straight to the backend's task store: memory, `tasks.sqlite3`, PostgreSQL,
  Redis.

Each call goes through mcpkit's ASGI app (no sockets, no ASGI server), so each figure is
mcpkit's work plus the store's round trips over loopback; the median and 90th percentile of
`--n` timed calls are printed in µs, with the difference from memory. Without URLs it starts
its own PostgreSQL and Redis like the tests do (tests/helpers/services.py), in a temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from mcpkit import Context, Server  # noqa: E402
from mcpkit.server.options import ServerOptions  # noqa: E402
from mcpkit.transports.http_server.app import HTTPApp  # noqa: E402

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "store-bench", "version": "1.0"}}
ACCEPT = {"confirm": {"action": "accept", "content": {}}}


def make_server(store: str | None) -> Server:
    server = Server("store-bench", options=ServerOptions(store=store))

    @server.tool()
    async def redeem(code: str, ctx: Context) -> str:
        """Single use: the retry records its nonce in the store."""
        answer = await ctx.elicit("confirm", f"Redeem {code}?", single_use=True)
        return "redeemed" if answer.accepted else "kept"

    @server.tool()
    async def echo(text: str) -> str:
        """Needs no state."""
        return text

    return server


class Driver:
    """Calls an ASGI app in-process and returns (status, headers, body)."""

    def __init__(self, app: HTTPApp) -> None:
        self.app = app
        self.ids = 0

    async def post(self, message: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[
            str, str], bytes]:
        body = orjson.dumps(message)
        raw = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream"),
               (b"content-length", b"%d" % len(body))]
        raw += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": raw,
                 "query_string": b"", "http_version": "1.1", "scheme": "http",
                 "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 50000)}
        sent = False
        status, out_headers, chunks = 0, {}, []

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                await asyncio.sleep(3600)
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(event: dict[str, Any]) -> None:
            nonlocal status
            if event["type"] == "http.response.start":
                status = event["status"]
                out_headers.update({k.decode(): v.decode() for k, v in event["headers"]})
            elif event["type"] == "http.response.body":
                chunks.append(event.get("body", b""))

        await self.app(scope, receive, send)
        return status, out_headers, b"".join(chunks)

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        return {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}


def _result(body: bytes) -> dict[str, Any]:
    text = body.decode()
    if text.startswith(("data:", "id:", "event:", ":")):  # an SSE body: its last message
        lines = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        text = [line for line in lines if line][-1]
    message: dict[str, Any] = orjson.loads(text)
    assert "result" in message, message
    return message["result"]  # type: ignore[no-any-return]


async def task_saves(store: str | None, n: int) -> list[float]:
    """µs of each of `n` saves of one running task in the backend's task store."""
    from mcpkit.ext.tasks.records import TaskRecord
    from mcpkit.ext.tasks.stores import store_for

    tasks = store_for("memory:" if store == "memory" else store, time.time)
    now = time.time()
    record = TaskRecord(f"bench-{now}", "bench-owner", "slow", None, "working", now, now,
                        3_600_000, 1000, lease_owner="bench", lease_until=now + 3600)
    await tasks.create(record)
    times = []
    for i in range(n + n // 10):
        record.status_message = f"step {i}"
        record.updated_at = time.time()
        start = time.perf_counter()
        assert await tasks.save(record, "bench")
        if i >= n // 10:
            times.append((time.perf_counter() - start) * 1e6)
    await tasks.close()
    return times


async def measure(store: str | None, n: int) -> dict[str, list[float]]:
    server = make_server(store)
    app = HTTPApp(server, path="/mcp", allowed_hosts=("127.0.0.1:8000",))
    drive = Driver(app)
    modern = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
    times: dict[str, list[float]] = {"retry": [], "legacy": [], "plain": []}
    cpus: dict[str, list[float]] = {"retry": [], "legacy": [], "plain": []}
    """This process's CPU time per call (its threads included): what the store costs mcpkit
    here, which moves far less than the elapsed time when other processes take the cores."""
    # A legacy session, opened once.
    _, headers, _ = await drive.post(drive.request("initialize", {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": {"name": "store-bench", "version": "1.0"}}), {})
    session = headers["mcp-session-id"]
    await drive.post({"jsonrpc": "2.0", "method": "notifications/initialized"},
                     {"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY})
    legacy = {"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
    # The plain calls first, on their own, with the pools already open (the session above),
    # so neither the store's connections nor its server's work after a burst of commits (on
    # the same two cores) falls into these figures.
    for i in range(n + n // 10):
        plain = drive.request("tools/call", {"name": "echo", "arguments": {"text": "hi"},
                                             "_meta": META})
        start, cpu = time.perf_counter(), time.process_time()
        _, _, echoed = await drive.post(plain, {**modern, "Mcp-Name": "echo"})
        took_plain, cpu_plain = time.perf_counter() - start, time.process_time() - cpu
        assert _result(echoed)["content"][0]["text"] == "hi"
        if i >= n // 10:
            times["plain"].append(took_plain * 1e6)
            cpus["plain"].append(cpu_plain * 1e6)
    for i in range(n + n // 10):  # the first tenth warms the pools and caches, untimed
        params = {"name": "redeem", "arguments": {"code": f"c{i}"}, "_meta": META}
        _, _, first = await drive.post(drive.request("tools/call", params),
                                       {**modern, "Mcp-Name": "redeem"})
        state = _result(first)["requestState"]
        retry = drive.request("tools/call", {**params, "inputResponses": ACCEPT,
                                             "requestState": state})
        start, cpu = time.perf_counter(), time.process_time()
        _, _, done = await drive.post(retry, {**modern, "Mcp-Name": "redeem"})
        took, cpu_retry = time.perf_counter() - start, time.process_time() - cpu
        assert _result(done)["content"][0]["text"] == "redeemed"
        start, cpu = time.perf_counter(), time.process_time()
        _, _, listed = await drive.post(drive.request("tools/call", {
            "name": "echo", "arguments": {"text": "hi"}}), legacy)
        took_legacy, cpu_legacy = time.perf_counter() - start, time.process_time() - cpu
        assert _result(listed)["content"][0]["text"] == "hi"
        if i >= n // 10:
            times["retry"].append(took * 1e6)
            times["legacy"].append(took_legacy * 1e6)
            cpus["retry"].append(cpu_retry * 1e6)
            cpus["legacy"].append(cpu_legacy * 1e6)
    app.close()
    if server.sealer.backend is not None:
        await server.sealer.backend.close()
    times["save"] = await task_saves(store, n)
    times.update({f"{call}_cpu": values for call, values in cpus.items()})
    return times


@contextlib.contextmanager
def services(postgres: str | None, redis: str | None) -> Iterator[dict[str, str]]:
    """The URLs to measure, starting the servers that were not given."""
    from helpers.services import _Postgres, _Redis

    started: list[Any] = []
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-") as folder:
        Path(folder).chmod(0o755)  # PostgreSQL runs as an unprivileged user under root
        try:
            if postgres is None:
                pg_dir = Path(folder) / "pg"
                pg_dir.mkdir()
                pg_dir.chmod(0o755)
                service: Any = _Postgres(pg_dir)
                service.start()
                started.append(service)
                postgres = service.url
            if redis is None:
                service = _Redis(Path(folder))
                service.start()
                started.append(service)
                redis = service.url
            os.environ["MCPKIT_DATA_DIR"] = str(Path(folder) / "data")  # the default's files
            os.environ.pop("MCPKIT_STORE", None)
            yield {"memory": "memory", "default": None, "postgresql": postgres, "redis": redis}
        finally:
            for service in started:
                service.stop()


def _row(label: str, values: list[float], base: list[float] | None,
         cpu: list[float] | None = None, cpu_base: list[float] | None = None) -> str:
    median = statistics.median(values)
    p90 = statistics.quantiles(values, n=10)[-1]
    added = "" if base is None else f"{median - statistics.median(base):+.0f}"
    if cpu is None:
        return f"| {label} | {median:.0f} | {p90:.0f} | {added} | | |"
    cpu_added = "" if cpu_base is None else \
        f"{statistics.median(cpu) - statistics.median(cpu_base):+.0f}"
    return (f"| {label} | {median:.0f} | {p90:.0f} | {added} | {statistics.median(cpu):.0f} | "
            f"{cpu_added} |")


async def main(n: int, postgres: str | None, redis: str | None) -> None:
    logging.getLogger("mcpkit").setLevel(logging.ERROR)
    with services(postgres, redis) as urls:
        results = {name: await measure(url, n) for name, url in urls.items()}
    print(f"n = {n} timed calls of each kind per backend (µs; added: median minus memory's; "
          f"CPU: this process's, median per call); load average {os.getloadavg()[0]:.2f}\n")
    print("| call | backend | median µs | p90 µs | added µs | CPU µs | added CPU µs |")
    print("|---|---|---|---|---|---|---|")
    for call, label in (("retry", "single-use retry"), ("legacy", "legacy session request"),
                        ("plain", "plain modern tools/call (no state)"),
                        ("save", "task save (TaskStore.save)")):
        base = results["memory"][call]
        cpu_base = results["memory"].get(f"{call}_cpu")
        for name, times in results.items():
            memory = name == "memory"
            print(_row(f"{label} | {name}", times[call], None if memory else base,
                       times.get(f"{call}_cpu"), None if memory else cpu_base))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--postgres", help="a PostgreSQL URL (default: start one)")
    parser.add_argument("--redis", help="a Redis URL (default: start one)")
    args = parser.parse_args()
    asyncio.run(main(args.n, args.postgres, args.redis))
