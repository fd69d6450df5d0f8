"""The measurements. Each phase starts its servers, measures, and kills them in `finally`.

A server that fails to start or answers wrongly is recorded as "not available" with the reason
(and the tail of its stderr); the run goes on with the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from benchkit import httpclient, protocol, servers, wrkload
from benchkit.procs import (
    Child,
    ServerFailed,
    cpu_seconds,
    free_port,
    peak_rss_kb,
    rss_kb,
    system_cpu,
)
from benchkit.servers import REPO_DIR, Impl
from benchkit.stats import median, percentile
from benchkit.stdio import LoopResult, StdioPeer, other_cpu, pipelined, sequential

LOG = print


@dataclass
class Config:
    quick: bool
    python: str
    loop: str
    wrk: str | None
    runs: int
    seq_requests: int
    seq_seconds: float
    pipe_requests: int
    pipe_seconds: float
    window: int
    warmup_requests: int
    http_seconds: float
    http_requests: int
    http_concurrency: tuple[int, ...]
    cold_samples: int
    import_samples: int
    growth_ns: tuple[int, ...]
    growth_list_requests: int
    growth_call_requests: int
    growth_seconds: float
    growth_rounds: int
    sessions: int
    sections: tuple[str, ...]
    log_dir: Path
    force_legacy: bool = False

    @classmethod
    def make(
        cls,
        quick: bool,
        python: str,
        loop: str,
        wrk: str | None,
        sections: tuple[str, ...],
        log_dir: Path,
    ) -> Config:
        if quick:
            return cls(
                quick=True, python=python, loop=loop, wrk=wrk, runs=1,
                seq_requests=300, seq_seconds=2.0, pipe_requests=600, pipe_seconds=2.0, window=32,
                warmup_requests=50, http_seconds=1.0, http_requests=5_000, http_concurrency=(1, 32),
                cold_samples=3, import_samples=3, growth_ns=(1, 100),
                growth_list_requests=20, growth_call_requests=100, growth_seconds=1.0, growth_rounds=2,
                sessions=50, sections=sections, log_dir=log_dir,
            )  # fmt: skip
        return cls(
            quick=False, python=python, loop=loop, wrk=wrk, runs=3,
            seq_requests=30_000, seq_seconds=3.0, pipe_requests=60_000, pipe_seconds=3.0, window=32,
            warmup_requests=500, http_seconds=4.0, http_requests=400_000, http_concurrency=(1, 32),
            cold_samples=10, import_samples=7, growth_ns=(1, 100, 1000),
            growth_list_requests=300, growth_call_requests=2_500, growth_seconds=2.0, growth_rounds=5,
            sessions=1000, sections=sections, log_dir=log_dir,
        )  # fmt: skip


# --------------------------------------------------------------------------------------------
# environment and bookkeeping


def child_env(impl: Impl, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # Every server starts with Python's defaults: bytecode caches written and read (so a warm-up
    # spawn leaves .pyc files for the measured ones, as pip did for the installed packages) and
    # buffered standard streams (any non-empty PYTHONUNBUFFERED would turn buffering off).
    for key in (
        "PYTHONSTARTUP",
        "PYTHONINSPECT",
        "PYTHONPROFILEIMPORTTIME",
        "PYTHONTRACEMALLOC",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
        "PYTHONDEVMODE",
        "PYTHONASYNCIODEBUG",
        "PYTHONMALLOC",
        "PYTHONWARNINGS",
    ):
        env.pop(key, None)
    if impl.family == "mcpkit":
        # Measure the working tree's mcpkit even where the editable install is missing.
        src = str(REPO_DIR / "src")
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if impl.family == "ts":
        env.pop("NODE_OPTIONS", None)  # Node's defaults, as Python's above
    if impl.family == "fastmcp":
        env["FASTMCP_SHOW_SERVER_BANNER"] = "false"
        env["FASTMCP_CHECK_FOR_UPDATES"] = "off"
        env["FASTMCP_LOG_LEVEL"] = "WARNING"
    if extra:
        env.update(extra)
    return env


def rel(path: str) -> str:
    """Paths in printed commands relative to the repository, so they can be re-run from it."""
    with contextlib.suppress(ValueError):
        return str(Path(path).resolve().relative_to(REPO_DIR))
    return path


def show_argv(argv: list[str], cfg: Config) -> str:
    shown = [("python" if a == cfg.python else rel(a) if a.startswith("/") else a) for a in argv]
    return shlex.join(shown)


class Recorder:
    def __init__(self, results: dict[str, Any]) -> None:
        self.results = results

    def unavailable(self, impl: Impl, transport: str, reason: str) -> None:
        entry = self.results["servers"].setdefault(impl.name, {})
        state = entry.setdefault(transport, {})
        if state.get("available") is not False:
            LOG(f"  ! {impl.name} ({transport}) not available: {reason.splitlines()[0][:300]}")
        state["available"] = False
        state.setdefault("error", reason[:2000])

    def available(self, impl: Impl, transport: str, era: str) -> None:
        state = self.results["servers"].setdefault(impl.name, {}).setdefault(transport, {})
        if state.get("available") is not False:
            state["available"] = True
            state["era"] = era

    def is_dead(self, impl: Impl, transport: str) -> bool:
        return (
            self.results["servers"].get(impl.name, {}).get(transport, {}).get("available") is False
        )


def aggregate(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median of every numeric field across runs (nested dicts too); errors are summed."""
    if not runs:
        return {}
    out: dict[str, Any] = {}
    keys = [k for k in runs[0] if k != "runs"]
    for key in keys:
        values = [r.get(key) for r in runs]
        first = values[0]
        if isinstance(first, dict):
            out[key] = aggregate([v for v in values if isinstance(v, dict)])
        elif key in ("errors", "requests"):
            out[key] = sum(v for v in values if isinstance(v, int | float))
        elif isinstance(first, bool) or not isinstance(first, int | float):
            out[key] = next((v for v in values if v is not None), first)
        else:
            out[key] = median([v for v in values if isinstance(v, int | float)])
    return out


def loop_summary(res: LoopResult) -> dict[str, Any]:
    return res.summary()


# --------------------------------------------------------------------------------------------
# stdio


@contextlib.contextmanager
def stdio_server(
    impl: Impl, cfg: Config, tag: str, path: Path | None = None, n_tools: int = 1
) -> Iterator[StdioPeer]:
    argv = impl.stdio_argv(cfg.python, path, n_tools)
    peer = StdioPeer(argv, child_env(impl), REPO_DIR, cfg.log_dir / f"{impl.name}-{tag}.log")
    try:
        yield peer
    finally:
        peer.close()


def open_peer(peer: StdioPeer, timeout: float = 60.0, force_legacy: bool = False) -> str:
    """Probe the era; open a legacy session if the server is not modern (or if told to)."""
    era = "legacy" if force_legacy else peer.probe(timeout)
    if era == "legacy":
        peer.open_legacy()
    peer.child.pin()  # threads started during startup, too
    return era


def stdio_phase(impls: list[Impl], cfg: Config, rec: Recorder) -> None:
    res = rec.results["stdio"]
    targets = [i for i in impls if i.stdio]
    for run in range(cfg.runs):
        for impl in targets:
            if rec.is_dead(impl, "stdio"):
                continue
            LOG(f"stdio run {run + 1}/{cfg.runs}: {impl.name}")
            try:
                with stdio_server(impl, cfg, f"stdio-{run}") as peer:
                    era = open_peer(peer, force_legacy=cfg.force_legacy)
                    rec.available(impl, "stdio", era)
                    sequential(peer, "tools/call", cfg.warmup_requests, 2.0)
                    seq = sequential(peer, "tools/call", cfg.seq_requests, cfg.seq_seconds)
                    pipe = pipelined(peer, cfg.window, cfg.pipe_requests, cfg.pipe_seconds)
                    entry: dict[str, Any] = {
                        "seq": seq.summary(),
                        "pipelined": pipe.summary(),
                        "peak_rss_kb": peak_rss_kb(peer.child.pid),
                    }
                    if not peer.child.alive():
                        raise ServerFailed(f"server died during the run: {peer.child.log_tail()}")
            except (ServerFailed, protocol.BadAnswer, OSError, orjson.JSONDecodeError) as exc:
                rec.unavailable(impl, "stdio", str(exc))
                continue
            res.setdefault(impl.name, {"runs": []})["runs"].append(entry)
            LOG(
                f"    seq {entry['seq']['rps']:.0f} req/s p50 {entry['seq']['p50_us']:.0f} us;"
                f" pipelined {entry['pipelined']['rps']:.0f} req/s;"
                f" server CPU {entry['seq']['server_cpu_us_per_req']:.1f} us/req;"
                f" errors {entry['seq']['errors'] + entry['pipelined']['errors']}"
            )
    for entry in res.values():
        entry.update(aggregate(entry["runs"]))


# --------------------------------------------------------------------------------------------
# HTTP


@contextlib.contextmanager
def http_server(impl: Impl, cfg: Config, tag: str) -> Iterator[tuple[Child, int]]:
    port = free_port()
    argv = impl.http_argv(cfg.python, port, cfg.loop)
    child = Child(
        argv, env=child_env(impl), cwd=REPO_DIR, log_path=cfg.log_dir / f"{impl.name}-{tag}.log"
    )
    try:
        yield child, port
    finally:
        child.kill()


async def http_open(
    child: Child, port: int, timeout: float = 60.0, force_legacy: bool = False
) -> tuple[str, str | None]:
    """Wait for the server; find its era. Returns (era, legacy session id or None)."""
    body = protocol.encode("server/discover", "modern", 1)
    resp = await httpclient.wait_ready(
        port, body, protocol.modern_headers("server/discover"), timeout, child.alive
    )
    child.pin()  # threads started during startup, too
    if resp.status == 200 and not force_legacy:
        with contextlib.suppress(protocol.BadAnswer, orjson.JSONDecodeError):
            if protocol.era_of_discover_answer(
                protocol.answer_in_http_body(resp.content_type, resp.body)
            ):
                return "modern", None
    session = await legacy_session(port)
    return "legacy", session


async def legacy_session(port: int, conn: httpclient.Connection | None = None) -> str:
    """initialize + notifications/initialized over HTTP; returns the Mcp-Session-Id."""
    own = conn is None
    conn = conn or await httpclient.Connection.open(port)
    try:
        init = protocol.encode("initialize", "legacy", 1)
        resp = await asyncio.wait_for(
            conn.send(httpclient.build_request(port, init, protocol.legacy_headers(None))), 10
        )
        if resp.status != 200:
            raise ServerFailed(f"initialize: HTTP {resp.status} {resp.body[:300]!r}")
        protocol.result_of(protocol.answer_in_http_body(resp.content_type, resp.body))
        session = resp.headers.get("mcp-session-id")
        if not session:
            raise ServerFailed("initialize answer carried no Mcp-Session-Id")
        note = protocol.notification("notifications/initialized")
        resp = await asyncio.wait_for(
            conn.send(httpclient.build_request(port, note, protocol.legacy_headers(session))), 10
        )
        if resp.status not in (200, 202, 204):
            raise ServerFailed(f"notifications/initialized: HTTP {resp.status} {resp.body[:300]!r}")
        return session
    finally:
        if own:
            conn.close()


def call_parts(
    era: str, session: str | None, method: str = "tools/call"
) -> tuple[bytes, bytes, dict[str, str]]:
    template = protocol.Template.of(method, era)
    if era == "modern":
        headers = protocol.modern_headers(method, "echo" if method == "tools/call" else None)
    else:
        headers = protocol.legacy_headers(session)
    return template.prefix, template.suffix, headers


async def http_check_call(port: int, era: str, session: str | None) -> None:
    prefix, suffix, headers = call_parts(era, session)
    resp = await httpclient.post(port, prefix + b"424242" + suffix, headers)
    if resp.status != 200:
        raise ServerFailed(f"tools/call: HTTP {resp.status} {resp.body[:300]!r}")
    protocol.check_call(protocol.answer_in_http_body(resp.content_type, resp.body), 424242)


def http_validate(
    port: int, era: str, session: str | None, concurrency: int, count: int
) -> dict[str, Any]:
    """A burst through the harness's own client at `concurrency`: every answer's id and text checked."""
    prefix, suffix, headers = call_parts(era, session)

    def make(i: int) -> bytes:
        return httpclient.build_request(port, prefix + str(i).encode() + suffix, headers)

    def check(resp: httpclient.Response, i: int) -> None:
        protocol.check_call(protocol.answer_in_http_body(resp.content_type, resp.body), i)

    out = asyncio.run(httpclient.load(port, make, concurrency, count, 30.0, check))
    return {"requests": out.requests, "errors": out.errors, "first_error": out.first_error}


def http_load(
    cfg: Config,
    port: int,
    era: str,
    session: str | None,
    concurrency: int,
    seconds: float,
    max_requests: int,
) -> dict[str, Any]:
    prefix, suffix, headers = call_parts(era, session)
    if cfg.wrk:
        return wrkload.run_wrk(
            cfg.wrk, port, prefix, suffix, headers, concurrency, seconds, max_requests
        )

    def make(i: int) -> bytes:
        return httpclient.build_request(port, prefix + str(i).encode() + suffix, headers)

    def check(resp: httpclient.Response, i: int) -> None:
        protocol.check_call(protocol.answer_in_http_body(resp.content_type, resp.body), i)

    out = asyncio.run(httpclient.load(port, make, concurrency, max_requests, seconds, check))
    lat = sorted(out.latencies_ns)
    return {
        "requests": out.requests,
        "seconds": out.seconds,
        "rps": out.requests / out.seconds if out.seconds > 0 else 0.0,
        "p50_us": percentile(lat, 50) / 1000 if lat else None,
        "p99_us": percentile(lat, 99) / 1000 if lat else None,
        "errors": out.errors,
        "first_error": out.first_error,
        "client_cpu_s": out.client_cpu_s,
        "client_cpu_util": out.client_cpu_s / out.seconds if out.seconds > 0 else 0.0,
        "client": "python-asyncio",
    }


def http_run(impl: Impl, cfg: Config, run: int, rec: Recorder) -> dict[str, Any]:
    with http_server(impl, cfg, f"http-{run}") as (child, port):
        try:
            era, session = asyncio.run(http_open(child, port, force_legacy=cfg.force_legacy))
            asyncio.run(http_check_call(port, era, session))
            rec.available(impl, "http", era)
            # warm-up: lazy imports, caches, connection setup
            http_load(cfg, port, era, session, 8, 1.0, cfg.warmup_requests * 4)
            entry: dict[str, Any] = {}
            for conc in cfg.http_concurrency:
                cpu0 = cpu_seconds(child.pid)
                sys0 = system_cpu()
                out = http_load(cfg, port, era, session, conc, cfg.http_seconds, cfg.http_requests)
                server_cpu = cpu_seconds(child.pid) - cpu0
                sys1 = system_cpu()
                out["server_cpu_us_per_req"] = server_cpu / max(out["requests"], 1) * 1e6
                out["other_cpu_cores"] = other_cpu(
                    sys1[0] - sys0[0], server_cpu, out["client_cpu_s"], out["seconds"]
                )
                out["steal_cores"] = (
                    (sys1[1] - sys0[1]) / out["seconds"] if out["seconds"] > 0 else 0.0
                )
                entry[f"c{conc}"] = out
            asyncio.run(http_check_call(port, era, session))
            entry["validation"] = http_validate(
                port, era, session, max(cfg.http_concurrency), 10 * max(cfg.http_concurrency)
            )
            if entry["validation"]["errors"]:
                entry["validation"]["errors_note"] = (
                    "answers checked by id and text under concurrency"
                )
            entry["peak_rss_kb"] = peak_rss_kb(child.pid)
            if not child.alive():
                raise ServerFailed("server died during the run")
            return entry
        except Exception as exc:
            tail = child.log_tail()
            if tail:
                raise ServerFailed(f"{exc!r}; stderr: {tail}") from exc
            raise


def http_phase(impls: list[Impl], cfg: Config, rec: Recorder) -> None:
    res = rec.results["http"]
    targets = [i for i in impls if i.http]
    for run in range(cfg.runs):
        for impl in targets:
            if rec.is_dead(impl, "http"):
                continue
            LOG(f"http run {run + 1}/{cfg.runs}: {impl.name}")
            try:
                entry = http_run(impl, cfg, run, rec)
            except (ServerFailed, protocol.BadAnswer, OSError, TimeoutError, ConnectionError, asyncio.IncompleteReadError, orjson.JSONDecodeError, RuntimeError) as exc:  # fmt: skip
                rec.unavailable(impl, "http", str(exc) or repr(exc))
                continue
            res.setdefault(impl.name, {"runs": []})["runs"].append(entry)
            LOG("    " + "; ".join(
                f"c={c} {entry[f'c{c}']['rps']:.0f} req/s p99 {entry[f'c{c}']['p99_us'] / 1000:.1f} ms"
                f" errors {entry[f'c{c}']['errors']}" for c in cfg.http_concurrency
            ))  # fmt: skip
    for entry in res.values():
        entry.update(aggregate(entry["runs"]))


# --------------------------------------------------------------------------------------------
# cold start


def cold_once(impl: Impl, cfg: Config, method: str, era: str) -> float:
    """Seconds from spawn to the first answer to `method` (legacy: to initialize / after it)."""
    argv = impl.stdio_argv(cfg.python)
    env = child_env(impl)
    t0 = time.perf_counter()
    peer = StdioPeer(argv, env, REPO_DIR, cfg.log_dir / f"{impl.name}-cold.log")
    try:
        if era == "legacy":
            peer.era = "legacy"
            if method == "server/discover":
                protocol.result_of(peer.request("initialize"))
                return time.perf_counter() - t0
            peer.open_legacy()
        msg = peer.request(method, timeout=60)
        elapsed = time.perf_counter() - t0
        if method == "tools/call":
            protocol.check_call(msg)
        else:
            protocol.result_of(msg)
        return elapsed
    finally:
        peer.close()


def cold_phase(impls: list[Impl], cfg: Config, rec: Recorder) -> None:
    res = rec.results["cold_start"]
    targets = [i for i in impls if i.stdio and not i.extra and not rec.is_dead(i, "stdio")]
    default = "legacy" if cfg.force_legacy else "modern"
    eras = {
        i.name: rec.results["servers"].get(i.name, {}).get("stdio", {}).get("era", default)
        for i in targets
    }
    samples: dict[str, dict[str, list[float]]] = {
        i.name: {"discover": [], "tools_call": []} for i in targets
    }
    LOG("cold start: one discarded spawn each, then " + str(cfg.cold_samples) + " samples")
    for impl in targets:
        try:
            cold_once(impl, cfg, "server/discover", eras[impl.name])  # warm the OS and .pyc caches
        except (ServerFailed, protocol.BadAnswer, OSError) as exc:
            rec.unavailable(impl, "stdio", str(exc))
    for _ in range(cfg.cold_samples):
        for impl in targets:
            if rec.is_dead(impl, "stdio"):
                continue
            try:
                samples[impl.name]["discover"].append(
                    cold_once(impl, cfg, "server/discover", eras[impl.name])
                )
                samples[impl.name]["tools_call"].append(
                    cold_once(impl, cfg, "tools/call", eras[impl.name])
                )
            except (ServerFailed, protocol.BadAnswer, OSError) as exc:
                rec.unavailable(impl, "stdio", str(exc))
    for name, s in samples.items():
        if not s["discover"]:
            continue
        res[name] = {
            "first_answer_method": "server/discover" if eras[name] == "modern" else "initialize",
            "discover_ms": median(s["discover"]) * 1000,  # type: ignore[operator]
            "tools_call_ms": median(s["tools_call"]) * 1000,  # type: ignore[operator]
            "samples_ms": {k: [round(v * 1000, 2) for v in vals] for k, vals in s.items()},
        }
        LOG(
            f"    {name}: first answer {res[name]['discover_ms']:.0f} ms, first tools/call {res[name]['tools_call_ms']:.0f} ms"
        )


# --------------------------------------------------------------------------------------------
# import time

IMPORT_TARGETS = {
    "floor": "orjson",
    "mcpkit": "mcpkit",
    "sdk": "mcp.server",
    "fastmcp": "fastmcp",
    "ts": servers.TS_PACKAGE,
}


def _importtime_us(python: str, module: str, env: dict[str, str], baseline: set[str]) -> float:
    out = subprocess.run(
        [python, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise ServerFailed(f"import {module} failed: {out.stderr.strip().splitlines()[-1:]}")
    total = 0.0
    for line in out.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
        if m and m.group(3) == "" and m.group(4) not in baseline:
            total += int(m.group(2))
    return total


def _wall_s(python: str, code: str, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    out = subprocess.run(
        [python, "-c", code], capture_output=True, env=env, timeout=120, check=False
    )
    elapsed = time.perf_counter() - t0
    if out.returncode != 0:
        raise ServerFailed(
            f"python -c {code!r} failed: {out.stderr.decode(errors='replace')[-300:]}"
        )
    return elapsed


def import_phase(impls: list[Impl], cfg: Config, rec: Recorder) -> None:
    res = rec.results["import"]
    seen: set[str] = set()
    base_env = child_env(impls[0])
    base = subprocess.run([cfg.python, "-X", "importtime", "-c", "pass"], capture_output=True, text=True, env=base_env,
                          timeout=60, check=False)  # fmt: skip
    baseline = {m.group(1) for m in re.finditer(r"\|\s+\d+ \| (\S+)", base.stderr)}
    baseline_wall = [_wall_s(cfg.python, "pass", base_env) for _ in range(cfg.import_samples)]
    res["_interpreter"] = {"wall_ms": median(baseline_wall) * 1000}  # type: ignore[operator]
    for impl in impls:
        module = IMPORT_TARGETS[impl.family]
        if impl.family in seen:
            continue
        seen.add(impl.family)
        env = child_env(impl)
        if impl.family == "ts":
            res[impl.family] = _node_import(module, cfg, env)
            continue
        try:
            _wall_s(cfg.python, f"import {module}", env)  # warm .pyc
            cum = [
                _importtime_us(cfg.python, module, env, baseline) for _ in range(cfg.import_samples)
            ]
            wall = [_wall_s(cfg.python, f"import {module}", env) for _ in range(cfg.import_samples)]
        except (ServerFailed, OSError, subprocess.TimeoutExpired) as exc:
            res[impl.family] = {"module": module, "available": False, "error": str(exc)}
            LOG(f"  ! import {module}: {exc}")
            continue
        res[impl.family] = {
            "module": module,
            "importtime_ms": median(cum) / 1000,  # type: ignore[operator]
            "wall_ms": median(wall) * 1000,  # type: ignore[operator]
            "wall_minus_interpreter_ms": (median(wall) - median(baseline_wall)) * 1000,  # type: ignore[operator]
        }
        LOG(f"    import {module}: -X importtime {res[impl.family]['importtime_ms']:.1f} ms,"
            f" wall {res[impl.family]['wall_ms']:.1f} ms")  # fmt: skip


def _node_wall_s(node: str, code: str, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    out = subprocess.run(
        [node, "--input-type=module", "-e", code],
        capture_output=True, env=env, cwd=servers.BENCH_DIR, timeout=120, check=False,
    )  # fmt: skip
    elapsed = time.perf_counter() - t0
    if out.returncode != 0:
        raise ServerFailed(f"node -e {code!r} failed: {out.stderr.decode(errors='replace')[-300:]}")
    return elapsed


def _node_import(module: str, cfg: Config, env: dict[str, str]) -> dict[str, Any]:
    """Node has no `-X importtime`: only the wall time of `node -e "import 'PKG'"` (ES module,
    resolved from bench/node_modules), next to that of an empty module."""
    node = servers.node_binary()
    problem = servers.ts_problem()
    if node is None or problem:
        LOG(f"  ! import {module}: {problem}")
        return {"module": module, "available": False, "error": problem or "no node"}
    code = f"import {orjson.dumps(module).decode()};"
    try:
        _node_wall_s(node, code, env)  # warm the OS caches
        base = [_node_wall_s(node, "", env) for _ in range(cfg.import_samples)]
        wall = [_node_wall_s(node, code, env) for _ in range(cfg.import_samples)]
    except (ServerFailed, OSError, subprocess.TimeoutExpired) as exc:
        LOG(f"  ! import {module}: {exc}")
        return {"module": module, "available": False, "error": str(exc)}
    entry = {
        "module": f"{module} (node)",
        "wall_ms": median(wall) * 1000,  # type: ignore[operator]
        "interpreter_wall_ms": median(base) * 1000,  # type: ignore[operator]
        "wall_minus_interpreter_ms": (median(wall) - median(base)) * 1000,  # type: ignore[operator]
    }
    LOG(f"    import {module} (node): wall {entry['wall_ms']:.1f} ms,"
        f" empty node {entry['interpreter_wall_ms']:.1f} ms")  # fmt: skip
    return entry


# --------------------------------------------------------------------------------------------
# cost growth with the number of tools


def _growth_run(
    impl: Impl, cfg: Config, files: dict[tuple[str, int], Path], run: int
) -> dict[int, dict[str, Any]]:
    """One run for one implementation: its servers with every tool count are up at once, and
    short rounds alternate between them, so the figures compared were taken seconds apart (the
    machine's latency level drifts over seconds)."""
    ns = cfg.growth_ns
    rounds = cfg.growth_rounds
    with contextlib.ExitStack() as stack:
        peers: dict[int, StdioPeer] = {}
        ready_ms: dict[int, float] = {}
        for n in ns:
            peer = stack.enter_context(
                stdio_server(impl, cfg, f"tools{n}", files[(impl.name, n)], n)
            )
            peers[n] = peer
            t0 = time.perf_counter()
            open_peer(peer, timeout=120, force_legacy=cfg.force_legacy)
            ready_ms[n] = (time.perf_counter() - t0) * 1000
            sequential(peer, "tools/call", cfg.warmup_requests // 5, 1.0)
        samples: dict[int, list[dict[str, Any]]] = {n: [] for n in ns}
        for _ in range(rounds):
            for n in ns:
                peer = peers[n]
                lst = sequential(peer, "tools/list", max(1, cfg.growth_list_requests // rounds),
                                 cfg.growth_seconds / rounds, n_tools=n).summary()  # fmt: skip
                call = sequential(peer, "tools/call", max(1, cfg.growth_call_requests // rounds),
                                  cfg.growth_seconds / rounds).summary()  # fmt: skip
                samples[n].append({
                    "list_p50_us": lst["p50_us"], "list_p99_us": lst["p99_us"],
                    "call_p50_us": call["p50_us"], "call_p99_us": call["p99_us"],
                    "call_server_cpu_us_per_req": call["server_cpu_us_per_req"],
                    "errors": lst["errors"] + call["errors"],
                    "first_error": lst["first_error"] or call["first_error"],
                })  # fmt: skip
        out: dict[int, dict[str, Any]] = {}
        for n in ns:
            entry = aggregate(samples[n])
            entry["startup_to_first_answer_ms"] = ready_ms[n]
            entry["peak_rss_kb"] = peak_rss_kb(peers[n].child.pid)
            entry["rounds"] = rounds
            out[n] = entry
            LOG(f"tools run {run + 1}: {impl.name} N={n}: list p50 {entry['list_p50_us']:.0f} us,"
                f" call p50 {entry['call_p50_us']:.0f} us")  # fmt: skip
        return out


def growth_phase(impls: list[Impl], cfg: Config, rec: Recorder) -> None:
    res = rec.results["growth"]
    targets = [i for i in impls if i.stdio and not i.extra and not rec.is_dead(i, "stdio")]
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-tools-") as tmp:
        files = {(i.name, n): i.generate(n, Path(tmp)) for i in targets for n in cfg.growth_ns}
        per_run: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for run in range(cfg.runs):
            for impl in targets:
                if rec.is_dead(impl, "stdio"):
                    continue
                try:
                    figures = _growth_run(impl, cfg, files, run)
                except (ServerFailed, protocol.BadAnswer, OSError) as exc:
                    rec.unavailable(impl, "stdio", f"with many tools: {exc}")
                    continue
                for n, entry in figures.items():
                    per_run.setdefault((impl.name, n), []).append(entry)
        for (name, n), runs in per_run.items():
            res.setdefault(name, {})[str(n)] = aggregate(runs)


# --------------------------------------------------------------------------------------------
# idle legacy HTTP sessions


async def _sessions(port: int, count: int) -> tuple[float, list[str]]:
    conn = await httpclient.Connection.open(port)
    ids: list[str] = []
    t0 = time.perf_counter()
    deadline = t0 + 300
    try:
        for _ in range(count):
            ids.append(await legacy_session(port, conn))
            if time.perf_counter() > deadline:
                break
        elapsed = time.perf_counter() - t0
    finally:
        conn.close()
    return elapsed, ids


async def _session_alive(port: int, session: str) -> None:
    body = protocol.encode("tools/list", "legacy", 7)
    resp = await httpclient.post(port, body, protocol.legacy_headers(session))
    if resp.status != 200:
        raise ServerFailed(f"tools/list on session: HTTP {resp.status} {resp.body[:200]!r}")
    protocol.check_list(protocol.answer_in_http_body(resp.content_type, resp.body), 1)


def sessions_phase(impls: list[Impl], cfg: Config, rec: Recorder) -> None:
    res = rec.results["sessions"]
    targets = [
        i for i in impls if i.sessions and i.http and not i.extra and not rec.is_dead(i, "http")
    ]
    per_run: dict[str, list[dict[str, Any]]] = {}
    for run in range(cfg.runs):
        for impl in targets:
            LOG(f"sessions run {run + 1}/{cfg.runs}: {impl.name} x{cfg.sessions}")
            try:
                with http_server(impl, cfg, f"sessions-{run}") as (child, port):
                    asyncio.run(http_open(child, port))
                    asyncio.run(_sessions(port, 10))  # warm-up: lazy imports of the legacy path
                    time.sleep(0.3)
                    before = rss_kb(child.pid)
                    elapsed, ids = asyncio.run(_sessions(port, cfg.sessions))
                    time.sleep(0.5)
                    after = rss_kb(child.pid)
                    asyncio.run(_session_alive(port, ids[0]))
                    asyncio.run(_session_alive(port, ids[-1]))
            except (ServerFailed, protocol.BadAnswer, OSError, TimeoutError, ConnectionError, asyncio.IncompleteReadError, orjson.JSONDecodeError) as exc:  # fmt: skip
                res.setdefault(impl.name, {})["error"] = repr(exc)[:1000]
                LOG(f"  ! {impl.name} sessions: {exc!r}"[:400])
                continue
            n = len(ids)
            per_run.setdefault(impl.name, []).append({
                "sessions": n,
                "seconds": elapsed,
                "per_session_ms": elapsed / n * 1000,
                "rss_before_kb": before,
                "rss_after_kb": after,
                "rss_growth_kb": after - before,
                "per_session_kb": (after - before) / n,
                "errors": cfg.sessions - n,
            })  # fmt: skip
            LOG(f"    {n} sessions in {elapsed:.2f} s, RSS +{(after - before) / 1024:.1f} MiB")
    for name, runs in per_run.items():
        res[name] = aggregate(runs)
        res[name]["runs"] = runs


# --------------------------------------------------------------------------------------------


def machine_info(python: str) -> dict[str, Any]:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    pyver = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                           text=True, timeout=30, check=False).stdout.strip()  # fmt: skip
    return {
        "nproc": os.cpu_count(),
        "cpu_model": cpu,
        "python": pyver or platform.python_version(),
        "kernel": platform.release(),
        "platform": platform.platform(),
    }


def package_versions(python: str, node: bool = False) -> dict[str, str]:
    """The measured packages' versions (with node=True also Node's and the TypeScript SDK's)."""
    code = (
        "import importlib.metadata as m, json\n"
        "out = {}\n"
        "for n in ('mcpkit', 'mcp', 'fastmcp', 'uvicorn', 'uvloop', 'httptools', 'orjson', 'starlette', 'pydantic'):\n"
        "    try: out[n] = m.version(n)\n"
        "    except Exception: pass\n"
        "print(json.dumps(out))"
    )
    out = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    try:
        versions = dict(orjson.loads(out.stdout))
    except orjson.JSONDecodeError:
        versions = {}
    binary = servers.node_binary() if node else None
    if binary:
        versions["node"] = ".".join(map(str, servers.node_version(binary)))
        for package in servers.pinned_node_versions():
            found = servers.installed_node_version(package)
            if found:
                versions[package] = found
    return versions


PHASES: dict[str, Callable[[list[Impl], Config, Recorder], None]] = {
    "stdio": stdio_phase,
    "http": http_phase,
    "cold": cold_phase,
    "import": import_phase,
    "tools": growth_phase,
    "sessions": sessions_phase,
}


def commands(impls: list[Impl], cfg: Config) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for impl in impls:
        entry: dict[str, str] = {}
        if impl.stdio:
            entry["stdio"] = show_argv(impl.stdio_argv(cfg.python), cfg)
        if impl.http:
            entry["http"] = show_argv(impl.http_argv(cfg.python, 0, cfg.loop), cfg).replace(
                "--port 0", "--port PORT"
            )
            entry["http"] = entry["http"].replace("127.0.0.1:0", "127.0.0.1:PORT")
        out[impl.name] = entry
    return out


def wrk_command(cfg: Config) -> str:
    if not cfg.wrk:
        return "asyncio HTTP/1.1 keep-alive client in the harness (wrk not installed)"
    return (
        f"wrk -t1 -c{{1,32}} -d{max(1, round(cfg.http_seconds))}s --timeout 10s -s post.lua"
        " http://127.0.0.1:PORT/mcp  (post.lua: generated, POST with a unique id per request)"
    )


def run_all(impls: list[Impl], cfg: Config) -> dict[str, Any]:
    results: dict[str, Any] = {
        "servers": {},
        "stdio": {},
        "http": {},
        "cold_start": {},
        "import": {},
        "growth": {},
        "sessions": {},
        "errors": [],
    }
    for impl in impls:
        results["servers"][impl.name] = {
            "label": impl.label,
            "family": impl.family,
            "notes": impl.notes,
        }
    rec = Recorder(results)
    for impl in impls:
        problem = impl.problem()
        if problem:
            for transport in ("stdio", "http"):
                rec.unavailable(impl, transport, problem)
    for name, phase in PHASES.items():
        if name not in cfg.sections:
            continue
        t0 = time.perf_counter()
        try:
            phase(impls, cfg, rec)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # a bug in the harness must not lose the other phases
            import traceback

            results["errors"].append(f"{name}: {exc!r}")
            traceback.print_exc(file=sys.stderr)
        results.setdefault("phase_seconds", {})[name] = round(time.perf_counter() - t0, 1)
    return results
