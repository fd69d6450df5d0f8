#!/usr/bin/env python3
"""Throughput of `tools/call echo` through nginx with 1 and with 2 mcpkit replicas, and the ratio.

    python bench/scaleout.py [--seconds 10 --rounds 3 --concurrency 32]

Each replica is `mcpkit run bench/servers/mcpkit_echo_async.py --http 127.0.0.1:PORT/mcp
--store redis://...` (a Redis started here on loopback, as a deployment would share one; a
plain call touches no store), behind the same nginx configuration the scale-out tests run and
docs/deploy.md shows (tests/scaleout/nginx.py: round-robin, HTTP/1.1 keep-alive upstreams, no
buffering). The load is benchkit's keep-alive client in this process: `--concurrency`
connections to nginx, each sending its next request when the last is answered, every answer
checked. Rounds alternate 1 and 2 replicas so a change in the machine's load hits both alike;
the median of the rounds is reported. Prints a markdown table; `--json PATH` writes the figures.

The load generator, nginx and the replicas share the machine's CPUs: on 2 cores, 2 replicas
cannot take a core each, and the ratio says how much a second process still buys there.

Beside the throughput it reads, from /proc, the CPU the replicas (together) and nginx (master
and workers) spent per request, and the context switches of the replicas per request; and,
before any load, each replica's CPU over `--idle` seconds with nothing to serve: what the
broker and the store cost a replica by themselves. `--store memory` runs the replicas without
Redis (no broker, no shared store), to tell what the shared backend adds from what the host's
two cores do.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests" / "scaleout"), str(REPO / "tests"), str(REPO / "bench")]

from benchkit.httpclient import build_request, load  # noqa: E402
from helpers.services import free_port  # noqa: E402
from nginx import Balancer, Replica  # noqa: E402

SERVER = str(REPO / "bench" / "servers" / "mcpkit_echo_async.py")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "scaleout-bench", "version": "1.0.0"},
}
BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "echo", "arguments": {"text": "hello world"}, "_meta": META}},
    separators=(",", ":")).encode()
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}


def start_redis(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--dir", str(folder)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    import socket

    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("redis-server did not start")


def check(response: Any, i: int) -> None:
    if b'"hello world"' not in response.body:
        raise AssertionError(f"unexpected answer: {response.body[:200]!r}")


def tree_cpu(pid: int) -> float:
    """utime+stime of a process and its children (nginx's workers), in seconds."""
    total = 0.0
    for current in [pid, *_children(pid)]:
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def switches(pid: int) -> int:
    """Voluntary and involuntary context switches of every thread of a process so far."""
    count = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for line in (task / "status").read_text().splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                count += int(line.split()[1])
    return count


async def measure(port: int, seconds: float, concurrency: int, replicas: list[int],
                  nginx: int) -> dict[str, float]:
    raw = build_request(port, BODY, HEADERS)
    await load(port, lambda i: raw, concurrency, 2_000, 2.0, check)  # warm up
    cpu0 = [tree_cpu(pid) for pid in replicas]
    nginx0, switches0 = tree_cpu(nginx), sum(switches(pid) for pid in replicas)
    result = await load(port, lambda i: raw, concurrency, 10**9, seconds, check)
    cpu = sum(tree_cpu(pid) for pid in replicas) - sum(cpu0)
    nginx_cpu = tree_cpu(nginx) - nginx0
    switched = sum(switches(pid) for pid in replicas) - switches0
    if result.errors:
        raise SystemExit(f"{result.errors} errors, first: {result.first_error}")
    latencies = sorted(result.latencies_ns)
    requests = max(result.requests, 1)
    return {"rps": result.requests / result.seconds,
            "p50_ms": latencies[len(latencies) // 2] / 1e6,
            "p99_ms": latencies[int(len(latencies) * 0.99)] / 1e6,
            "client_cpu_s": result.client_cpu_s, "seconds": result.seconds,
            "replica_cpu_us": cpu / requests * 1e6, "nginx_cpu_us": nginx_cpu / requests * 1e6,
            "switches_per_request": switched / requests}


def idle_cpu(replicas: list[Any], seconds: float) -> list[float]:
    """Each replica's CPU (in ms per second) while nothing is asked of it."""
    pids = [r.proc.pid for r in replicas]
    before = [tree_cpu(pid) for pid in pids]
    time.sleep(seconds)
    return [(tree_cpu(pid) - b) / seconds * 1000 for pid, b in zip(pids, before, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--store", choices=("redis", "memory"), default="redis",
                        help="the replicas' store: a shared Redis (default) or none (memory)")
    parser.add_argument("--idle", type=float, default=5.0,
                        help="seconds each replica's CPU is read with nothing to serve")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if shutil.which("nginx") is None and not os.path.exists("/usr/sbin/nginx"):
        raise SystemExit("nginx is not installed (apt-get install nginx)")
    folder = Path(tempfile.mkdtemp(prefix="mcpkit-scaleout-bench-"))
    redis, url = start_redis(folder)
    if args.store == "memory":
        url = "memory"
    env = {k: v for k, v in os.environ.items() if k not in ("MCPKIT_STORE", "MCPKIT_STATE_KEYS")}
    env.update(HOME=str(folder / "home"), XDG_DATA_HOME=str(folder / "data"))
    replicas = [Replica(name, SERVER, url, env) for name in ("A", "B")]
    balancers: dict[int, Balancer] = {}
    runs: dict[int, list[dict[str, float]]] = {1: [], 2: []}
    try:
        for replica in replicas:
            replica.start()
        time.sleep(1.0)  # past the start: the key ring's first read, the broker's subscription
        idle = idle_cpu(replicas, args.idle)
        for count in (1, 2):
            # one keep-alive connection per load slot for the whole run (nginx closes a
            # client connection after 1000 requests by default, which the client counts)
            balancers[count] = Balancer([r.port for r in replicas[:count]],
                                        extra="keepalive_requests 10000000;")
            balancers[count].start()
        load_before = os.getloadavg()[0]
        for _ in range(args.rounds):
            for count in (1, 2):
                assert balancers[count].proc is not None
                runs[count].append(asyncio.run(measure(
                    balancers[count].port, args.seconds, args.concurrency,
                    [r.proc.pid for r in replicas[:count] if r.proc is not None],
                    balancers[count].proc.pid)))
        load_after = os.getloadavg()[0]
    finally:
        for balancer in balancers.values():
            balancer.stop()
        for replica in replicas:
            replica.stop()
            replica.log.unlink(missing_ok=True)
        redis.kill()
        redis.wait()
        shutil.rmtree(folder, ignore_errors=True)
    figures = {count: {key: statistics.median(run[key] for run in rounds)
                       for key in rounds[0]} for count, rounds in runs.items()}
    ratio = figures[2]["rps"] / figures[1]["rps"]
    print(f"tools/call echo through nginx, c={args.concurrency}, {args.rounds} rounds of "
          f"{args.seconds:g} s, {os.cpu_count()} CPUs, store {args.store}, load average "
          f"{load_before:.2f} -> {load_after:.2f}")
    print()
    print("| replicas | requests/s | p50 ms | p99 ms | replicas' CPU µs/req | nginx CPU µs/req "
          "| replicas' context switches/req | load generator CPU s/s |")
    print("|---|---|---|---|---|---|---|---|")
    for count, row in figures.items():
        print(f"| {count} | {row['rps']:,.0f} | {row['p50_ms']:.2f} | {row['p99_ms']:.2f} | "
              f"{row['replica_cpu_us']:.1f} | {row['nginx_cpu_us']:.1f} | "
              f"{row['switches_per_request']:.2f} | {row['client_cpu_s'] / row['seconds']:.2f} |")
    print()
    print(f"ratio 2/1: {ratio:.2f}; replica CPU per request 2/1: "
          f"{figures[2]['replica_cpu_us'] / figures[1]['replica_cpu_us']:.2f}")
    print(f"idle replicas' CPU over {args.idle:g} s: "
          + ", ".join(f"{ms:.2f} ms/s" for ms in idle))
    if args.json is not None:
        args.json.write_text(json.dumps({"figures": figures, "ratio": ratio, "runs": runs,
                                         "idle_ms_per_s": idle,
                                         "load": [load_before, load_after]}, indent=2))


if __name__ == "__main__":
    main()
