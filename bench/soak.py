#!/usr/bin/env python3
"""The soak: a mixed workload for minutes at a fixed concurrency against one `mcpkit run --http`,
watching the server's memory and counting every error.

    python bench/soak.py                     # 10 minutes at c=64, RSS every 30 s
    python bench/soak.py --minutes 1 --json bench/results/soak.json

The server is `mcpkit run bench/servers/mcpkit_soak.py --http 127.0.0.1:PORT` (both eras, the
default limits). Each of `--concurrency` workers repeats one fixed cycle of ten jobs:

- six plain calls (`tools/call echo`, 2026-07-28, JSON answer);
- three multi round-trip calls (`tools/call greet`: the `input_required` result, then the
  retry carrying `inputResponses` and the sealed `requestState`, which is redeemed once);
- one 2025-11-25 session: `initialize`, `notifications/initialized`, `tools/call echo` in the
  session, then `DELETE` (so sessions open and close all the time).

Each worker holds one keep-alive connection of its own (`benchkit.httpclient`, a small
HTTP/1.1 client on asyncio; with httpx the driver spent six times the server's CPU, so the soak
measured the driver), so concurrency is bounded by the workers. Every answer is checked (the
status, the result's text, the session id); anything else, an exception or a 30 s silence
included, counts as an error and the first few are printed. The server's RSS is read from /proc
every `--interval` seconds. The figures are a memory and robustness check, not a throughput
benchmark: the Python driver shares the machine with the server.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchkit.httpclient import HOST, Connection, Response
from benchkit.procs import free_port, load_average, rss_kb

REPO = Path(__file__).resolve().parent.parent
SERVER = REPO / "bench" / "servers" / "mcpkit_soak.py"
MODERN, LEGACY = "2026-07-28", "2025-11-25"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "1.0.0"},
}
ACCEPT = "application/json, text/event-stream"
CYCLE = ("call",) * 6 + ("mrtr",) * 3 + ("session",)
"""The jobs of one worker's cycle, in order (shifted per worker so the mix is even at every
moment)."""
KEEP_ERRORS = 10
TIMEOUT_S = 30.0
"""Longest wait for one answer before it counts as an error."""


class Wrong(Exception):
    """An answer that is not the one the job expects."""


@dataclass
class Tally:
    """What the workers did so far."""

    jobs: dict[str, int] = field(default_factory=lambda: dict.fromkeys(set(CYCLE), 0))
    requests: int = 0
    errors: int = 0
    samples: list[str] = field(default_factory=list)

    def failed(self, job: str, exc: BaseException) -> None:
        self.errors += 1
        if len(self.samples) < KEEP_ERRORS:
            self.samples.append(f"{job}: {type(exc).__name__}: {str(exc)[:300]}")


class Jobs:
    """The three jobs of one worker, each a short exchange on the worker's connection whose
    every answer is checked."""

    def __init__(self, port: int, path: str, tally: Tally, ids: Iterator[int]) -> None:
        self.port = port
        self.path = path
        self.tally = tally
        self.ids = ids
        self.connection: Connection | None = None

    async def exchange(self, method: str, headers: dict[str, str], body: bytes = b"") -> Response:
        """One request on the worker's connection (opened again after a failure)."""
        self.tally.requests += 1
        if self.connection is None:
            self.connection = await Connection.open(self.port)
        lines = [f"{method} {self.path} HTTP/1.1", f"Host: {HOST}:{self.port}",
                 f"Content-Length: {len(body)}", f"Accept: {ACCEPT}",
                 *(f"{name}: {value}" for name, value in headers.items())]
        if body:
            lines.append("Content-Type: application/json")
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        try:
            response = await asyncio.wait_for(self.connection.send(raw), TIMEOUT_S)
        except BaseException:
            self.connection.close()
            self.connection = None
            raise
        if response.headers.get("connection", "").lower() == "close":
            self.connection.close()
            self.connection = None
        return response

    async def post(self, message: dict[str, Any], headers: dict[str, str],
                   status: int = 200) -> Any:
        response = await self.exchange("POST", headers, json.dumps(message).encode())
        if response.status != status:
            raise Wrong(f"{message.get('method')}: HTTP {response.status} "
                        f"{response.body[:200]!r}")
        if status == 202:
            return None
        if response.content_type.split(";")[0] != "application/json":
            raise Wrong(f"{message.get('method')}: {response.content_type}")
        answer = json.loads(response.body)
        if answer.get("id") != message["id"] or "result" not in answer:
            raise Wrong(f"{message.get('method')}: {response.body[:200]!r}")
        return answer["result"], response

    def modern_call(self, tool: str, arguments: dict[str, Any], **extra: Any
                    ) -> tuple[dict[str, Any], dict[str, str]]:
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments, "_meta": META, **extra}}
        headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": tool}
        return message, headers

    async def call(self, n: int) -> None:
        text = f"soak {n}"
        result, _ = await self.post(*self.modern_call("echo", {"text": text}))
        if result.get("content") != [{"type": "text", "text": text}]:
            raise Wrong(f"echo: {result}")

    async def mrtr(self, n: int) -> None:
        first, _ = await self.post(*self.modern_call("greet", {"greeting": "Hi"}))
        state = first.get("requestState")
        if first.get("resultType") != "input_required" or not isinstance(state, str):
            raise Wrong(f"greet, round 1: {first}")
        answers = {"name": {"action": "accept", "content": {"name": f"user{n}"}}}
        final, _ = await self.post(*self.modern_call(
            "greet", {"greeting": "Hi"}, inputResponses=answers, requestState=state))
        if final.get("content") != [{"type": "text", "text": f"Hi, user{n}!"}]:
            raise Wrong(f"greet, round 2: {final}")

    async def session(self, n: int) -> None:
        opened, response = await self.post({
            "jsonrpc": "2.0", "id": next(self.ids), "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {},
                       "clientInfo": {"name": "soak", "version": "1.0.0"}}}, {})
        session = response.headers.get("mcp-session-id")
        if not session or opened.get("protocolVersion") != LEGACY:
            raise Wrong(f"initialize: {opened}")
        headers = {"mcp-session-id": session, "mcp-protocol-version": LEGACY}
        try:
            await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"},
                            headers, status=202)
            text = f"session {n}"
            result, _ = await self.post({
                "jsonrpc": "2.0", "id": next(self.ids), "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": text}}}, headers)
            if result.get("content") != [{"type": "text", "text": text}]:
                raise Wrong(f"echo in a session: {result}")
        finally:
            closed = await self.exchange("DELETE", headers)
            if closed.status != 200:
                raise Wrong(f"DELETE: HTTP {closed.status}")


async def worker(jobs: Jobs, index: int, deadline: float) -> None:
    """One client: the cycle, from its own place in it, until the deadline."""
    for n in itertools.count(index):
        if time.monotonic() >= deadline:
            return
        job = CYCLE[n % len(CYCLE)]
        try:
            await getattr(jobs, job)(n)
        except Exception as exc:  # every failure is counted; the soak goes on
            jobs.tally.failed(job, exc)
        else:
            jobs.tally.jobs[job] += 1


async def sampler(pid: int, tally: Tally, start: float, deadline: float, interval: float,
                  samples: list[dict[str, Any]]) -> None:
    """The server's RSS (and the counts so far) at the start and every `interval` seconds."""
    while True:
        now = time.monotonic()
        sample = {"t_s": round(now - start), "rss_mib": round(rss_kb(pid) / 1024, 1),
                  "requests": tally.requests, "errors": tally.errors,
                  "load": round(load_average(), 1)}
        samples.append(sample)
        print(f"  t={sample['t_s']:>4} s  server RSS {sample['rss_mib']:6.1f} MiB  "
              f"requests {sample['requests']:>9}  errors {sample['errors']}  "
              f"load {sample['load']}", flush=True)
        if now >= deadline:
            return
        await asyncio.sleep(min(interval, max(0.0, deadline - now)))


def start_server(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcpkit", "run", str(SERVER), "--http", f"127.0.0.1:{port}"],
            cwd=REPO, stdout=out, stderr=out, stdin=subprocess.DEVNULL)
    for _ in range(400):
        found = re.search(r"serving \S+ at (http://\S+)", log.read_text(errors="replace"))
        if found:
            return proc, found.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"the soak server did not start:\n{log.read_text(errors='replace')}")


async def soak(url: str, pid: int, minutes: float, concurrency: int, interval: float
               ) -> dict[str, Any]:
    tally = Tally()
    parts = urlsplit(url)
    assert parts.port is not None
    ids = itertools.count(1)
    workers = [Jobs(parts.port, parts.path, tally, ids) for _ in range(concurrency)]
    # One cycle first, unmeasured (imports, the key ring, the first session); a failure here
    # stops the soak at once with its reason.
    for i, job in enumerate(CYCLE):
        await getattr(workers[0], job)(i)
    tally.requests = tally.errors = 0
    tally.jobs = dict.fromkeys(set(CYCLE), 0)
    start = time.monotonic()
    deadline = start + minutes * 60
    samples: list[dict[str, Any]] = []
    watch = asyncio.create_task(sampler(pid, tally, start, deadline, interval, samples))
    await asyncio.gather(*(worker(jobs, i, deadline) for i, jobs in enumerate(workers)))
    await watch
    elapsed = time.monotonic() - start
    for jobs in workers:
        if jobs.connection is not None:
            jobs.connection.close()
    return {"minutes": minutes, "concurrency": concurrency, "elapsed_s": round(elapsed, 1),
            "requests": tally.requests, "requests_per_s": round(tally.requests / elapsed),
            "jobs": tally.jobs, "errors": tally.errors, "error_samples": tally.samples,
            "rss": samples, "cpus": os.cpu_count()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--interval", type=float, default=30.0,
                        help="seconds between RSS samples (default 30)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if args.minutes <= 0 or not 1 <= args.concurrency <= 1024 or args.interval <= 0:
        parser.error("--minutes and --interval must be positive, --concurrency 1..1024")
    log = Path(tempfile.mkstemp(prefix="mcpkit-soak-", suffix=".log")[1])
    proc, url = start_server(log)
    # SIGTERM (or the terminal's hang-up) ends the soak through `finally`, server included.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(130))
    print(f"soak: {args.minutes:g} min at c={args.concurrency} against {url} "
          f"(server pid {proc.pid}, log {log}); load average {load_average():.1f}", flush=True)
    try:
        figures = asyncio.run(soak(url, proc.pid, args.minutes, args.concurrency,
                                   args.interval))
        alive = proc.poll() is None
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
    tracebacks = log.read_text(errors="replace").count("Traceback")
    figures.update(server_alive=alive, server_tracebacks=tracebacks)
    rss = [s["rss_mib"] for s in figures["rss"]]
    print(f"soak: {figures['requests']} requests in {figures['elapsed_s']} s "
          f"({figures['requests_per_s']}/s), jobs {figures['jobs']}, errors {figures['errors']}, "
          f"server RSS {rss[0]} -> {rss[-1]} MiB (max {max(rss)}), tracebacks in the log "
          f"{tracebacks}, server alive at the end: {alive}")
    for sample in figures["error_samples"]:
        print("  error:", sample)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if figures["errors"] == 0 and alive and not tracebacks else 1


if __name__ == "__main__":
    sys.exit(main())
