"""HTTP load with `wrk` (C, epoll): a generated Lua script posts JSON-RPC bodies with unique ids.

The script's `done()` prints one JSON line with the counts and latency percentiles; the wrk
process's own CPU time comes from `os.wait4`, so the report can show the load generator was
not the bottleneck.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

_LUA = r"""
local prefix = [==[{prefix}]==]
local suffix = [==[{suffix}]==]
local limit = {limit}
local nthreads = 0
wrk.method = "POST"
wrk.path = "{path}"
{headers}
function setup(thread)
  thread:set("tid", nthreads)
  nthreads = nthreads + 1
end
function init(args)
  counter = (tid or 0) * 100000000
  sent = 0
end
function request()
  counter = counter + 1
  sent = sent + 1
  if sent > limit then
    wrk.thread:stop()
  end
  return wrk.format(nil, nil, nil, prefix .. counter .. suffix)
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCHJSON {{"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d,"mean_us":%.1f}}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean))
end
"""


def find_wrk() -> str | None:
    return shutil.which("wrk")


def install_wrk() -> str | None:
    """apt-get install wrk (Debian package), when running as root. Returns the path or None."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return None
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "wrk"]
    # Try without refreshing the package lists first; refresh and retry only if that fails.
    for cmd in (install, ["apt-get", "update", "-q"], install):
        subprocess.run(
            cmd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=300,
            check=False,
        )
        if cmd is install and shutil.which("wrk"):
            break
    return shutil.which("wrk")


def wrk_version(wrk: str) -> str:
    out = subprocess.run(
        [wrk, "--version"], capture_output=True, text=True, timeout=10, check=False
    )
    first = (out.stdout or out.stderr).splitlines()
    return first[0].split(" Copyright")[0] if first else "wrk"


def _lua_headers(headers: dict[str, str]) -> str:
    return "\n".join(f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items())


def run_wrk(
    wrk: str,
    port: int,
    prefix: bytes,
    suffix: bytes,
    headers: dict[str, str],
    connections: int,
    seconds: float,
    max_requests: int,
    threads: int = 1,
) -> dict[str, Any]:
    """Run wrk against 127.0.0.1:port/mcp. Body i is prefix + str(id) + suffix."""
    for part in (prefix, suffix):
        if b"]==]" in part:
            raise ValueError("body cannot be embedded in the Lua script")
    script = _LUA.format(
        prefix=prefix.decode(),
        suffix=suffix.decode(),
        limit=max(1, max_requests // threads),
        path="/mcp",
        headers=_lua_headers(headers),
    )
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-wrk-") as tmp:
        lua = Path(tmp) / "post.lua"
        lua.write_text(script)
        out_path = Path(tmp) / "out.txt"
        argv = [
            wrk,
            f"-t{threads}",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            "--timeout",
            "10s",
            "-s",
            str(lua),
            f"http://127.0.0.1:{port}/mcp",
        ]
        with open(out_path, "wb") as out:
            proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
            started = time.monotonic()
            try:
                while True:
                    pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
                    if pid:
                        break
                    if time.monotonic() - started > seconds + 30:
                        proc.kill()
                        raise TimeoutError("wrk did not finish in time")
                    time.sleep(0.05)
            except BaseException:
                proc.kill()
                proc.wait(timeout=5)
                raise
        proc.returncode = os.waitstatus_to_exitcode(status)
        text = out_path.read_text(errors="replace")
    line = next((ln for ln in text.splitlines() if ln.startswith("BENCHJSON ")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no result (exit {proc.returncode}): {text[-500:]}")
    data = json.loads(line[len("BENCHJSON ") :])
    duration = data["duration_us"] / 1e6
    errors = data["connect"] + data["read"] + data["write"] + data["status"] + data["timeout"]
    cpu = rusage.ru_utime + rusage.ru_stime
    rps = data["requests"] / duration if duration > 0 else 0.0
    estimated = data["requests"] >= max_requests
    if estimated and data["mean_us"] > 0:
        # The count bound stopped the threads before the time bound; wrk still reports the full
        # duration, so take the closed-loop rate instead: connections / mean latency.
        rps = connections / (data["mean_us"] / 1e6)
    return {
        "requests": data["requests"],
        "seconds": duration,
        "rps": rps,
        "rps_estimated_from_latency": estimated,
        "p50_us": float(data["p50_us"]),
        "p99_us": float(data["p99_us"]),
        "errors": errors,
        "error_detail": {k: data[k] for k in ("connect", "read", "write", "status", "timeout")},
        "client_cpu_s": cpu,
        "client_cpu_util": cpu / duration if duration > 0 else 0.0,
        "client": "wrk",
    }
