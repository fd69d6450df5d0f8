#!/usr/bin/env python3
"""Streamable HTTP, quickly: `tools/call echo` on one uvicorn worker, mcpkit beside the official
SDK and a bare ASGI app, at concurrency 1 and 32, measured by wrk in one run.

    python bench/http_quick.py --sdk-python /tmp/sdkvenv/bin/python [--seconds 10 --rounds 3]

The SDK's interpreter is a separate virtualenv with `mcp==2.3.0` (and uvicorn, uvloop,
httptools); mcpkit runs on this interpreter with `mcpkit run FILE --http`. Every server serves
the same `async def echo(text: str) -> str` (mcpkit also a plain `def echo`, which runs in a
worker thread), answers JSON (the SDK with `json_response=True`), and gets the same modern
request with the mirrored headers. With two or more CPUs the server is pinned to CPU 0 and wrk
to CPU 1; the server's CPU time per request is read from /proc. Prints a markdown table;
`--json PATH` also writes the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "http-quick", "version": "1.0.0"},
}
BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hello world"}, "_meta": META},
    },
    separators=(",", ":"),
)
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "echo",
}

FLOOR = """
import orjson
RESULT = (b',"result":{"resultType":"complete","content":[{"type":"text","text":"hello world"}]}}')
HEADERS = [(b"content-type", b"application/json")]
def create_app():
    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                m = await receive()
                if m["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        more = True
        while more:
            m = await receive()
            body += m.get("body", b"")
            more = m.get("more_body", False)
        rid = orjson.loads(body)["id"]
        payload = b'{"jsonrpc":"2.0","id":' + orjson.dumps(rid) + RESULT
        await send({"type": "http.response.start", "status": 200,
                    "headers": HEADERS + [(b"content-length", b"%d" % len(payload))]})
        await send({"type": "http.response.body", "body": payload})
    return app
"""

MCPKIT = '''
from mcpkit import Server
server = Server("bench-echo", "1.0.0")
@server.tool()
async def echo(text: str) -> str:
    """Echo the text back."""
    return text
'''

MCPKIT_SYNC = '''
from mcpkit import Server
server = Server("bench-echo", "1.0.0")
@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text
'''

SDK = '''
from mcp.server import MCPServer
server = MCPServer("bench-echo", version="1.0.0", log_level="WARNING")
@server.tool()
async def echo(text: str) -> str:
    """Echo the text back."""
    return text
def create_app():
    return server.streamable_http_app(json_response=True)
'''

LUA = """
wrk.method = "POST"
wrk.body = {body}
{headers}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pin(cpu: int) -> list[str]:
    if shutil.which("taskset") and (os.cpu_count() or 1) >= 2:
        return ["taskset", "-c", str(cpu)]
    return []


def call_once(port: int) -> dict[str, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp", data=BODY.encode(), headers=HEADERS, method="POST"
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        data: dict[str, Any] = json.loads(response.read())
    return data


def start(name: str, argv: list[str], port: int, workdir: Path) -> subprocess.Popen[bytes]:
    log = open(workdir / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(pin(0) + argv, cwd=workdir, stdout=log, stderr=log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited: {(workdir / f'{name}.log').read_text()[-2000:]}")
        try:
            answer = call_once(port)
        except OSError:
            time.sleep(0.05)
            continue
        text = answer["result"]["content"][0]["text"]
        if text != "hello world":
            raise RuntimeError(f"{name} answered {answer!r}")
        return proc
    proc.kill()
    raise RuntimeError(f"{name} did not start within 30 s")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux), or 0 where unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk(
    port: int, connections: int, seconds: int, script: Path, pid: int = 0
) -> dict[str, float]:
    argv = [
        *pin(1),
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{int(seconds)}s",
        "--latency",
        "-s",
        str(script),
        f"http://127.0.0.1:{port}/mcp",
    ]
    cpu_before = cpu_seconds(pid)
    out = subprocess.run(
        argv, capture_output=True, text=True, timeout=seconds + 60, check=True
    ).stdout
    cpu = cpu_seconds(pid) - cpu_before
    if "Non-2xx" in out:
        raise RuntimeError(f"wrk saw error responses:\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]

    def percentile(p: str) -> float:
        value, unit = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)\b", out).groups()  # type: ignore[union-attr]
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    return {
        "rps": rps,
        "p50_ms": percentile("50"),
        "p99_ms": percentile("99"),
        "cpu_us": cpu / total * 1e6 if total and cpu else 0.0,
    }


def median_run(figures: list[dict[str, float]]) -> dict[str, float]:
    """The run with the median throughput (its latencies come with it)."""
    ordered = sorted(figures, key=lambda f: f["rps"])
    return ordered[len(ordered) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sdk-python",
        default="/tmp/sdkvenv/bin/python",
        help="interpreter of a virtualenv with mcp==2.3.0 and uvicorn",
    )
    parser.add_argument("--seconds", type=int, default=10, help="measured seconds per figure")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured seconds first")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the median is reported")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        print("wrk is needed (apt-get install wrk)", file=sys.stderr)
        return 2
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="http-quick-") as tmp:
        work = Path(tmp)
        (work / "floor_app.py").write_text(FLOOR)
        (work / "mcpkit_echo.py").write_text(MCPKIT)
        (work / "sdk_echo.py").write_text(SDK)
        (work / "mcpkit_sync_echo.py").write_text(MCPKIT_SYNC)
        headers = "\n".join(
            f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in HEADERS.items()
        )
        script = work / "post.lua"
        script.write_text(LUA.format(body=json.dumps(BODY), headers=headers))
        uvicorn = [
            "-m",
            "uvicorn",
            "--factory",
            "--host",
            "127.0.0.1",
            "--loop",
            "auto",
            "--http",
            "auto",
            "--no-access-log",
            "--log-level",
            "warning",
        ]
        servers = {
            "bare ASGI app (floor)": lambda port: [
                sys.executable,
                *uvicorn,
                "--port",
                str(port),
                "floor_app:create_app",
            ],
            "mcpkit": lambda port: [
                sys.executable,
                "-m",
                "mcpkit",
                "run",
                "mcpkit_echo.py",
                "--http",
                f"127.0.0.1:{port}",
            ],
            "mcpkit, plain `def echo`": lambda port: [
                sys.executable,
                "-m",
                "mcpkit",
                "run",
                "mcpkit_sync_echo.py",
                "--http",
                f"127.0.0.1:{port}",
            ],
            "official SDK (mcp 2.3.0)": lambda port: [
                args.sdk_python,
                *uvicorn,
                "--port",
                str(port),
                "sdk_echo:create_app",
            ],
        }
        procs: list[subprocess.Popen[bytes]] = []
        ports: dict[str, int] = {}
        pids: dict[str, int] = {}
        runs: dict[str, dict[str, list[dict[str, float]]]] = {}
        try:
            for name, argv_for in servers.items():
                port = ports[name] = free_port()
                procs.append(start(name, argv_for(port), port, work))
                pids[name] = procs[-1].pid
                runs[name] = {"1": [], "32": []}
            # Rounds interleave the servers, so a burst of other load on the machine hits
            # one round of each rather than every figure of one server.
            for _ in range(args.rounds):
                for name, port in ports.items():
                    for connections in (1, 32):
                        wrk(port, connections, args.warmup, script)
                        runs[name][str(connections)].append(
                            wrk(port, connections, args.seconds, script, pids[name])
                        )
        finally:
            for proc in procs:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for name, by_connections in runs.items():
            results[name] = {c: median_run(figures) for c, figures in by_connections.items()}
    floor = results["bare ASGI app (floor)"]
    print(
        f"`tools/call echo`, one uvicorn worker, wrk, {args.seconds:g} s per figure, median "
        f"of {args.rounds} interleaved rounds "
        f"({os.cpu_count()} CPUs{', server and wrk pinned apart' if pin(0) else ''})\n"
    )
    print(
        "| server | c=1 req/s | c=1 p50 | c=1 p99 | c=32 req/s | c=32 p50 | c=32 p99 "
        "| c=32 server CPU/req | c=32 vs floor |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, figures in results.items():
        one, many = figures["1"], figures["32"]
        print(
            f"| {name} | {one['rps']:,.0f} | {one['p50_ms']:.2f} ms | {one['p99_ms']:.2f} ms "
            f"| {many['rps']:,.0f} | {many['p50_ms']:.2f} ms | {many['p99_ms']:.2f} ms "
            f"| {many['cpu_us']:.0f} µs | {many['rps'] / floor['32']['rps']:.0%} |"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
