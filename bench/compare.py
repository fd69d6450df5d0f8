#!/usr/bin/env python3
"""Before/after: mcpkit from two trees, measured alternately in one run, as ratios with spread.

    python3 bench/compare.py ea15473 HEAD                # two commits of this repository
    python3 bench/compare.py main .                      # main against the working tree
    python3 bench/compare.py HEAD~1 HEAD --transports http --tools def --rounds 7
    python3 bench/compare.py ea15473 HEAD --profile 8    # and py-spy of each server under load

Each tree is either a commit (exported with `git archive` into .cache/compare/trees/) or a
folder holding a checkout (`.` is this one, uncommitted changes included). Each gets its own
virtualenv under .cache/compare/venvs/ (git-ignored), with the tree installed editable with its
`http` and `fast` extras (uvicorn, httptools, uvloop), so each is measured with the
dependencies it declares. Every tree serves the same files, `bench/servers/mcpkit_echo.py` (a
plain `def echo`) and `mcpkit_echo_async.py` (`async def echo`), with `mcpkit run`; the floors
(`bench/servers/floor_asgi.py` on uvicorn, `floor_stdio.py`) run beside them with `--floor`.

The servers stay up while rounds go over them in turn, the order rotating every round, so
that a noisy moment on a shared machine hits one round of each tree rather than every figure
of one. Per round and tree: HTTP, wrk at `--connections` (default 32) for `--seconds`, after a
one-second warm-up; stdio, one request in flight (sequential) and then 32. The figure to
decide by is the server's CPU time per request (utime+stime from /proc around the load,
divided by the requests): it moves much less than throughput when other processes take the
CPUs. The ratios after/before are taken per round (each round's two figures were measured
seconds apart) and shown as the median with the lowest and highest round. Every round also
records the CPU other processes used meanwhile and the load average.

`--profile SECONDS` then samples each tree's HTTP server (and the stdio one with `--transports
stdio`) with py-spy while wrk keeps it busy: every thread, the whole process (uvicorn's
protocol, the event loop, the worker threads, not only `Server.handle`), and prints the top
frames by own and by total time, side by side, with the frames whose share grew the most. The
collapsed stacks are kept in .cache/compare/profiles/ (for a flame graph).

`--calls` counts, for each tree's server on each transport and tool asked for, the Python
function calls the event loop's thread makes per request (cProfile's call counts over two runs,
2,000 and 6,000 requests at 32 connections over HTTP, 1,000 and 3,000 one at a time over stdio,
subtracted, so the start and the end of the process fall out), and prints the functions whose
count per request differs between the trees. A count does not move with the machine's load:
it shows work added or removed where the timings of a busy machine cannot.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
CACHE = REPO_DIR / ".cache" / "compare"
SERVERS = BENCH_DIR / "servers"
TOOL_FILES = {"def": "mcpkit_echo.py", "async": "mcpkit_echo_async.py",
              "inline": "mcpkit_echo_inline.py"}
IN_VENV = "MCPKIT_COMPARE_DRIVER"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("before", help="a commit of this repository, or a folder with a checkout")
    p.add_argument("after", help="the same; '.' is this checkout as it is")
    p.add_argument("--rounds", type=int, default=5, help="rounds over the trees (default 5)")
    p.add_argument("--seconds", type=float, default=4.0, help="measured seconds per figure")
    p.add_argument("--transports", default="http", help="http,stdio (default http)")
    p.add_argument("--tools", default="def,async",
                   help="def,async,inline (default def,async; inline: def with blocking=False)")
    p.add_argument("--connections", type=int, default=32, help="wrk connections (default 32)")
    p.add_argument("--floor", action="store_true", help="measure the floors in the same rounds")
    p.add_argument("--profile", type=float, default=0.0, metavar="SECONDS",
                   help="then py-spy each tree's server for SECONDS under load (0: no profile)")
    p.add_argument("--calls", action="store_true",
                   help="then count the Python calls per HTTP request of each tree (cProfile)")
    p.add_argument("--no-pin", action="store_true",
                   help="do not pin the load generator to CPU 0 and the servers to the others")
    p.add_argument("--json", type=Path, default=None, help="also write every figure here")
    return p.parse_args(argv)


# --------------------------------------------------------------------------------------------
# the trees and their virtualenvs (made with the interpreter that started this script)


def _git(*args: str) -> str:
    out = subprocess.run(["git", "-C", str(REPO_DIR), *args], capture_output=True, text=True,
                         check=False, timeout=120)
    if out.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout.strip()


def resolve_tree(spec: str) -> tuple[str, Path]:
    """(a short label, the folder of the tree) for a commit or a folder."""
    folder = Path(spec)
    if folder.is_dir() and (folder / "src" / "mcpkit").is_dir():
        folder = folder.resolve()
        label = "." if folder == REPO_DIR else folder.name
        return label, folder
    sha = _git("rev-parse", "--verify", f"{spec}^{{commit}}")
    tree = CACHE / "trees" / sha[:12]
    if not (tree / "pyproject.toml").exists():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO_DIR), "archive", sha],
                                 capture_output=True, check=True, timeout=300)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True,
                       timeout=300)
    return f"{spec} ({sha[:7]})" if spec != sha[:len(spec)] else sha[:7], tree


def ensure_venv(tree: Path, extra: tuple[str, ...] = ()) -> Path:
    """The tree's own virtualenv, made once (again when its pyproject.toml changes); `extra`
    packages are added to it when they are missing."""
    key = hashlib.sha256(str(tree).encode()).hexdigest()[:12]
    venv = CACHE / "venvs" / key
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    stamp = hashlib.sha256((tree / "pyproject.toml").read_bytes()).hexdigest()
    stamp_file = venv / ".compare-stamp"
    if not (python.exists() and stamp_file.exists() and stamp_file.read_text() == stamp):
        print(f"making the virtualenv of {tree} in {venv.relative_to(REPO_DIR)}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([*pip, "-e", f"{tree}[http,fast]", "orjson"], check=True)
        stamp_file.write_text(stamp)
    missing = [name for name in extra if not (venv / "bin" / name).exists()]
    if missing:
        subprocess.run([*pip, *missing], check=True)
    return python


# --------------------------------------------------------------------------------------------
# the measurements (run inside the after-tree's virtualenv, which has orjson and uvicorn)


class Server:
    """One server under test: a tree's mcpkit (or a floor) with one tool file, on one transport."""

    def __init__(self, name: str, python: str, transport: str, tool: str) -> None:
        self.name, self.python, self.transport, self.tool = name, python, transport, tool
        self.floor = name == "floor"
        self.child: Any = None
        self.peer: Any = None
        self.port = 0

    def argv(self) -> list[str]:
        if self.floor and self.transport == "http":
            return [self.python, "-m", "uvicorn", "--app-dir", str(SERVERS), "--factory",
                    "floor_asgi:create_app", "--host", "127.0.0.1", "--port", str(self.port),
                    "--no-access-log", "--log-level", "warning", "--lifespan", "on"]
        if self.floor:
            return [self.python, str(SERVERS / "floor_stdio.py"), "--tools", "1"]
        argv = [self.python, "-m", "mcpkit", "run", str(SERVERS / TOOL_FILES[self.tool])]
        return argv + (["--http", f"127.0.0.1:{self.port}"] if self.transport == "http" else [])

    def start(self, logs: Path) -> None:
        import asyncio

        from benchkit import httpclient, procs, protocol
        from benchkit.stdio import StdioPeer

        # Each server with its defaults: no store, no settings of the caller's environment.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("MCPKIT_", "PYTHON")) and k != IN_VENV}
        log = logs / f"{self.name}-{self.transport}-{self.tool}.log".replace(" ", "_")
        if self.transport == "stdio":
            self.peer = StdioPeer(self.argv(), env, REPO_DIR, log)
            self.child = self.peer.child
            self.peer.probe(60)
            self.child.pin()
            return
        self.port = procs.free_port()
        self.child = procs.Child(self.argv(), env=env, cwd=REPO_DIR, log_path=log)
        body = protocol.encode("server/discover", "modern", 1)
        asyncio.run(httpclient.wait_ready(self.port, body,
                                          protocol.modern_headers("server/discover"), 60,
                                          self.child.alive))
        self.child.pin()

    def stop(self) -> None:
        if self.child is not None:
            self.child.kill()


def measure(server: Server, args: argparse.Namespace) -> dict[str, float]:
    """One round's figures for one server."""
    from benchkit import procs, protocol, wrkload
    from benchkit.stdio import other_cpu, pipelined, sequential

    if server.transport == "stdio":
        peer = server.peer
        sequential(peer, "tools/call", 300, 1.0)
        seq = sequential(peer, "tools/call", 10_000_000, args.seconds).summary()
        pipe = pipelined(peer, 32, 10_000_000, args.seconds).summary()
        if seq["errors"] or pipe["errors"]:
            raise RuntimeError(f"{server.name}: {seq['first_error'] or pipe['first_error']}")
        return {"rps": seq["rps"], "cpu_us": seq["server_cpu_us_per_req"],
                "p50_us": seq["p50_us"] or 0.0, "pipelined_rps": pipe["rps"],
                "pipelined_cpu_us": pipe["server_cpu_us_per_req"],
                "other_cores": max(seq["other_cpu_cores"], pipe["other_cpu_cores"]),
                "load": procs.load_average()}
    template = protocol.Template.of("tools/call", "modern")
    headers = protocol.modern_headers("tools/call", "echo")
    wrk = args.wrk

    def load(seconds: float) -> dict[str, Any]:
        return wrkload.run_wrk(wrk, server.port, template.prefix, template.suffix, headers,
                               args.connections, seconds, 100_000_000)

    load(1.0)
    cpu0, sys0 = procs.cpu_seconds(server.child.pid), procs.system_cpu()
    out = load(args.seconds)
    cpu = procs.cpu_seconds(server.child.pid) - cpu0
    busy = procs.system_cpu()[0] - sys0[0]
    if out["errors"]:
        raise RuntimeError(f"{server.name}: wrk counted {out['error_detail']}")
    return {"rps": out["rps"], "cpu_us": cpu / max(out["requests"], 1) * 1e6,
            "p50_us": out["p50_us"], "other_cores": other_cpu(busy, cpu, out["client_cpu_s"],
                                                              out["seconds"]),
            "load": procs.load_average()}


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    fmt = (lambda v: f"{v:.3f}") if max(values) < 10 else (lambda v: f"{v:,.1f}")
    return f"{fmt(statistics.median(values))} [{fmt(min(values))} to {fmt(max(values))}]"


def run_rounds(args: argparse.Namespace, trees: list[dict[str, str]], logs: Path) -> dict[str, Any]:
    from benchkit import procs

    results: dict[str, Any] = {}
    for transport in args.transports.split(","):
        for tool in args.tools.split(","):
            key = f"{transport} {tool}"
            servers = [Server(t["label"], t["python"], transport, tool) for t in trees]
            if args.floor:
                servers.append(Server("floor", trees[-1]["python"], transport, tool))
            runs: dict[str, list[dict[str, float]]] = {s.name: [] for s in servers}
            try:
                for server in servers:
                    server.start(logs)
                for r in range(args.rounds):
                    shift = r % len(servers)
                    order = servers[shift:] + servers[:shift]
                    for server in order:
                        runs[server.name].append(measure(server, args))
                    print(f"{key} round {r + 1}/{args.rounds}: " + "; ".join(
                        f"{s.name} {runs[s.name][-1]['rps']:,.0f} req/s "
                        f"{runs[s.name][-1]['cpu_us']:.1f} us/req" for s in servers), flush=True)
            finally:
                for server in servers:
                    server.stop()
                procs.kill_all()
            results[key] = runs
    return results


def report(args: argparse.Namespace, trees: list[dict[str, str]], results: dict[str, Any]) -> str:
    before, after = trees[0]["label"], trees[1]["label"]
    lines = [f"before = {before}, after = {after}; {args.rounds} rounds of {args.seconds:g} s "
             f"per figure; median [lowest to highest round]", ""]
    for key, runs in results.items():
        transport = key.split()[0]
        figure = "seq req/s" if transport == "stdio" else f"c={args.connections} req/s"
        lines += [f"### {key}", "",
                  f"| server | {figure} | server CPU µs/req | p50 µs |"
                  + (" pipelined (32) req/s |" if transport == "stdio" else "")
                  + " other processes (cores) | load average |",
                  "|---|---|---|---|" + ("---|" if transport == "stdio" else "") + "---|---|"]
        for name, figures in runs.items():
            row = [spread([f["rps"] for f in figures]), spread([f["cpu_us"] for f in figures]),
                   spread([f["p50_us"] for f in figures])]
            if transport == "stdio":
                row.append(spread([f["pipelined_rps"] for f in figures]))
            row += [spread([f["other_cores"] for f in figures]),
                    spread([f["load"] for f in figures])]
            lines.append(f"| {name} | " + " | ".join(row) + " |")
        pairs = list(zip(runs[before], runs[after], strict=True))
        lines += ["", f"- after / before, {figure}: "
                  + spread([b["rps"] / a["rps"] for a, b in pairs]),
                  "- after / before, server CPU per request: "
                  + spread([b["cpu_us"] / a["cpu_us"] for a, b in pairs])]
        if "floor" in runs:
            for name in (before, after):
                ratio = [f["rps"] / g["rps"] for f, g in zip(runs[name], runs["floor"],
                                                             strict=True)]
                lines.append(f"- {name} / floor, {figure}: {spread(ratio)}")
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# the whole-process profile


def profile(args: argparse.Namespace, trees: list[dict[str, str]], logs: Path) -> str:
    from benchkit import procs, protocol, wrkload
    from benchkit.profile import record, summarize
    from benchkit.stdio import pipelined

    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    out_dir = CACHE / "profiles"
    out_dir.mkdir(parents=True, exist_ok=True)
    tool = args.tools.split(",")[0]
    transport = args.transports.split(",")[0]
    summaries: dict[str, dict[str, Any]] = {}
    template = protocol.Template.of("tools/call", "modern")
    headers = protocol.modern_headers("tools/call", "echo")
    for tree in trees:
        server = Server(tree["label"], tree["python"], transport, tool)
        stacks = out_dir / (hashlib.sha256(tree["label"].encode()).hexdigest()[:8]
                            + f"-{transport}-{tool}.txt")
        try:
            server.start(logs)
            if transport == "http":
                def drive(port: int = server.port) -> None:
                    wrkload.run_wrk(args.wrk, port, template.prefix, template.suffix, headers,
                                    args.connections, args.profile + 1.5, 100_000_000)
            else:
                def drive(peer: Any = server.peer) -> None:
                    pipelined(peer, 32, 100_000_000, args.profile + 1.5)
            measure(server, argparse.Namespace(**{**vars(args), "seconds": 1.0}))  # warm-up
            err = record(spy, server.child.pid, args.profile, stacks, drive, gil=False)
        finally:
            server.stop()
            procs.kill_all()
        if err:
            return f"profile: {err}"
        summaries[tree["label"]] = summarize(stacks.read_text(), top=25)
        print(f"collapsed stacks of {tree['label']}: {stacks.relative_to(REPO_DIR)}")
    before, after = (summaries[t["label"]] for t in trees)
    lines = [f"### Where the time goes ({transport}, `{tool}` tool; py-spy, every thread, "
             f"{args.profile:g} s under load)", ""]
    for title, key in (("own", "top_own"), ("total", "top_total")):
        lines += [f"| before {title} % | frame | after {title} % | frame |", "|---|---|---|---|"]
        for b, a in zip(before[key][:15], after[key][:15], strict=False):
            lines.append(f"| {b['share'] * 100:.1f} | `{b['frame']}` "
                         f"| {a['share'] * 100:.1f} | `{a['frame']}` |")
        lines.append("")
    shares = {row["frame"]: row["share"] for row in before["top_total"]}
    grown = sorted(((row["share"] - shares.get(row["frame"], 0.0), row["frame"])
                    for row in after["top_total"]), reverse=True)[:10]
    lines += ["Frames whose share of the samples grew most (total time, after minus before): "
              + ", ".join(f"`{frame}` {delta * 100:+.1f}" for delta, frame in grown if delta > 0),
              ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# the calls per request

_COUNTING = """
import cProfile, sys
out = sys.argv.pop(1)
from mcpkit.cli.main import main
prof = cProfile.Profile()
prof.enable()
try:
    main(sys.argv[1:])
except (SystemExit, KeyboardInterrupt):
    pass
finally:
    prof.disable()
    prof.dump_stats(out)
"""
"""`mcpkit run` under cProfile, its counts written to the file named first when it stops."""


def _counts(out: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for (path, _line, name), row in pstats.Stats(str(out)).stats.items():  # type: ignore[attr-defined]
        where = path.split("site-packages/")[-1].split("/src/")[-1]
        key = f"{name} ({where})"
        counts[key] = counts.get(key, 0) + row[1]
    return counts


def _counted(server: Server, requests: int, logs: Path, out: Path) -> tuple[dict[str, int], int]:
    """Each function's calls in one run of `requests` tools/call through `server`, and the
    requests answered: over HTTP at 32 connections, over stdio one request at a time."""
    import asyncio
    import signal

    from benchkit import httpclient, procs, protocol

    if server.transport == "http":
        server.port = procs.free_port()
    argv = server.argv()
    argv[1:3] = ["-c", _COUNTING, str(out)]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MCPKIT_", "PYTHON")) and k != IN_VENV}
    if server.transport == "stdio":
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                cwd=REPO_DIR, stderr=(logs / f"calls-{out.stem}.log").open("wb"))
        assert proc.stdin is not None and proc.stdout is not None
        for i in range(requests):
            proc.stdin.write(protocol.encode("tools/call", "modern", i + 1) + b"\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
            if b'"result"' not in line:
                raise RuntimeError(f"{server.name}: stdio answer {line[:200]!r}")
        proc.stdin.close()
        proc.wait(60)
        return _counts(out), requests
    child = procs.Child(argv, env=env, cwd=REPO_DIR, log_path=logs / f"calls-{out.stem}.log")
    body = protocol.encode("server/discover", "modern", 1)
    asyncio.run(httpclient.wait_ready(server.port, body,
                                      protocol.modern_headers("server/discover"), 60,
                                      child.alive))
    call = protocol.encode("tools/call", "modern", 1)
    raw = httpclient.build_request(server.port, call, protocol.modern_headers("tools/call",
                                                                              "echo"))
    done = asyncio.run(httpclient.load(server.port, lambda i: raw, 32, requests, 300.0))
    child.proc.send_signal(signal.SIGINT)
    child.proc.wait(60)
    return _counts(out), done.requests


def calls(args: argparse.Namespace, trees: list[dict[str, str]], logs: Path) -> str:
    """The calls per request of each tree, for every transport and tool asked for."""
    text = []
    for transport in args.transports.split(","):
        sizes = (2000, 6000) if transport == "http" else (1000, 3000)
        for tool in args.tools.split(","):
            per: dict[str, dict[str, float]] = {}
            for tree in trees:
                server = Server(tree["label"], tree["python"], transport, tool)
                runs = [_counted(server, n, logs, logs / f"{transport}-{tool}-{len(per)}-{n}.pstats")
                        for n in sizes]
                (few, n_few), (many, n_many) = runs
                per[tree["label"]] = {k: (many.get(k, 0) - few.get(k, 0)) / (n_many - n_few)
                                      for k in set(few) | set(many)}
            text.append(_calls_table(transport, tool, trees, per))
    return "\n".join(text)


def _calls_table(transport: str, tool: str, trees: list[dict[str, str]],
                 per: dict[str, dict[str, float]]) -> str:
    before, after = (per[t["label"]] for t in trees)
    lines = [f"### Python calls per request ({transport}, `{tool}` tool, the event loop's thread)",
             "", f"- {trees[0]['label']}: {sum(before.values()):.1f}; "
             f"{trees[1]['label']}: {sum(after.values()):.1f}", "",
             "| before | after | after - before | function |", "|---|---|---|---|"]
    moved = sorted(((after.get(k, 0.0) - before.get(k, 0.0), k) for k in set(before) | set(after)),
                   key=lambda row: -abs(row[0]))
    for delta, key in moved:
        if abs(delta) < 0.5:
            break
        lines.append(f"| {before.get(key, 0.0):.1f} | {after.get(key, 0.0):.1f} | {delta:+.1f} "
                     f"| `{key}` |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if os.environ.get(IN_VENV):
        trees = json.loads(os.environ[IN_VENV])
    else:
        specs = [resolve_tree(args.before), resolve_tree(args.after)]
        if specs[0][0] == specs[1][0]:
            specs[1] = (specs[1][0] + " (again)", specs[1][1])
        extra = ("py-spy",) if args.profile > 0 else ()
        trees = [{"label": label, "tree": str(tree), "python": str(ensure_venv(tree, extra))}
                 for label, tree in specs]
        # The driver runs in the after-tree's virtualenv: it has orjson and uvicorn.
        driver = trees[1]["python"]
        os.execve(driver, [driver, str(Path(__file__).resolve()), *argv],
                  {**os.environ, IN_VENV: json.dumps(trees)})
    sys.path.insert(0, str(BENCH_DIR))
    from benchkit import procs, wrkload

    args.wrk = wrkload.find_wrk()
    if "http" in args.transports and args.wrk is None:
        sys.exit("wrk is needed for HTTP (apt-get install wrk)")
    procs.install_signal_handlers()
    pinning = procs.pin_cpus(not args.no_pin)
    print(f"{os.cpu_count()} CPUs, {pinning}; load average {procs.load_average():.2f}",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="mcpkit-compare-") as tmp:
        logs = Path(tmp)
        try:
            results = run_rounds(args, trees, logs)
            text = report(args, trees, results)
            if args.profile > 0:
                text += "\n" + profile(args, trees, logs)
            if args.calls:
                text += "\n" + calls(args, trees, logs)
        except Exception:
            for log in sorted(logs.glob("*.log")):
                tail = log.read_text(errors="replace")[-800:]
                if tail.strip():
                    print(f"--- {log.name}\n{tail}", file=sys.stderr)
            raise
        finally:
            procs.kill_all()
    print()
    print(text)
    if args.json:
        with contextlib.suppress(OSError):
            args.json.write_text(json.dumps({"trees": trees, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
