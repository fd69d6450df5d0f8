#!/usr/bin/env python3
"""mcpkit benchmark: one command builds its own environment and measures everything.

    python3 bench/run.py                 # full run (~15 min): all servers, 3 runs per figure
    python3 bench/run.py --quick         # < 60 s: mcpkit and the floors only, current interpreter
    python3 bench/run.py --only mcpkit,sdk --sections stdio,http

See bench/README.md for what is measured and how.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
VENV_DIR = BENCH_DIR / ".venv"
RESULTS_DIR = BENCH_DIR / "results"
DOCS_MD = REPO_DIR / "docs" / "benchmarks.md"
DOCS_PNG = REPO_DIR / "docs" / "benchmarks.png"
REQUIREMENTS = BENCH_DIR / "requirements.txt"
ALL_SECTIONS = ("stdio", "http", "cold", "import", "tools", "sessions")
BEGIN, END = "<!-- bench:results:begin -->", "<!-- bench:results:end -->"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Benchmark mcpkit against the official MCP SDK, FastMCP and a floor."
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a few hundred requests, 1 run, mcpkit and the floors only, current interpreter",
    )
    p.add_argument(
        "--only",
        default="",
        help="comma-separated server names (prefixes match: 'sdk' = all sdk-*)",
    )
    p.add_argument(
        "--sections",
        default=",".join(ALL_SECTIONS),
        help=f"comma-separated subset of {','.join(ALL_SECTIONS)}",
    )
    p.add_argument("--runs", type=int, default=0, help="runs per figure (default: 3 full, 1 quick)")
    p.add_argument(
        "--no-venv", action="store_true", help="use the current interpreter instead of bench/.venv"
    )
    p.add_argument(
        "--no-install", action="store_true", help="never install anything (venv packages, wrk)"
    )
    p.add_argument(
        "--python-client",
        action="store_true",
        help="use the asyncio HTTP client even if wrk is present",
    )
    p.add_argument(
        "--era",
        choices=("auto", "legacy"),
        default="auto",
        help="auto: each server in the era it speaks best (probed); legacy: force the 2025-11-25 handshake",
    )
    p.add_argument(
        "--wait-quiet",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait up to SECONDS for the 1-minute load average to drop below 1.0 before starting",
    )
    p.add_argument(
        "--no-pin",
        action="store_true",
        help="do not pin the load generator to CPU 0 and the servers to the other CPUs",
    )
    p.add_argument("--json", type=Path, default=None, help="where to write the JSON results")
    p.add_argument(
        "--docs",
        choices=("auto", "yes", "no"),
        default="auto",
        help="update docs/benchmarks.md and docs/benchmarks.png (auto: only for a complete full run)",
    )
    p.add_argument(
        "--profile",
        type=float,
        default=None,
        metavar="SECONDS",
        help="profile mcpkit under load with py-spy for SECONDS per transport"
        " (default: 8 in full mode when mcpkit is measured, 0 = off; never in quick mode)",
    )
    args = p.parse_args(argv)
    if args.profile is None:
        args.profile = 0.0 if args.quick else 8.0
    return args


# --------------------------------------------------------------------------------------------
# the bench virtualenv


def _stamp() -> str:
    h = hashlib.sha256()
    for path in (REQUIREMENTS, REPO_DIR / "pyproject.toml"):
        with contextlib.suppress(OSError):
            h.update(path.read_bytes())
    return h.hexdigest()


def ensure_venv(no_install: bool) -> Path:
    python = VENV_DIR / "bin" / "python"
    stamp_file = VENV_DIR / ".bench-stamp"
    stamp = _stamp()
    if python.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
        return python
    if no_install:
        if python.exists():
            return python
        sys.exit("bench/.venv does not exist and --no-install was given")
    if not python.exists():
        print(f"creating {VENV_DIR.relative_to(REPO_DIR)}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV_DIR)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    print("installing the pinned benchmark requirements (bench/requirements.txt)", flush=True)
    subprocess.run([*pip, "-r", str(REQUIREMENTS)], check=True)
    print("installing mcpkit from the repository (pip install -e .[http])", flush=True)
    done = subprocess.run([*pip, "-e", f"{REPO_DIR}[http]"], check=False)
    if done.returncode != 0:
        print(
            "warning: mcpkit could not be installed; its rows will read 'not available'", flush=True
        )
    stamp_file.write_text(stamp)
    return python


# --------------------------------------------------------------------------------------------
# the TypeScript SDK: bench/package.json (+ its lockfile) installed into bench/node_modules


def ensure_node_packages() -> None:
    """Install the pinned Node packages (and Node itself where the system's is too old) with npm.

    Without npm, or when npm fails, nothing is installed and the TypeScript rows read "not
    available" with the reason (benchkit.servers.ts_problem)."""
    from benchkit import servers

    lock = BENCH_DIR / "package-lock.json"
    stamp_file = servers.NODE_MODULES / ".bench-stamp"
    stamp = hashlib.sha256(lock.read_bytes() if lock.exists() else b"").hexdigest()
    current = stamp_file.exists() and stamp_file.read_text() == stamp
    if current and servers.ts_problem() is None:
        return
    npm = shutil.which("npm")
    if npm is None:
        print("npm not found: the TypeScript SDK rows will read 'not available'", flush=True)
        return
    quiet = ["--no-audit", "--no-fund", "--loglevel=error"]
    versions = servers.pinned_node_versions()
    if not current or any(servers.installed_node_version(p) != v for p, v in versions.items()):
        print(
            "installing the pinned TypeScript SDK (bench/package.json) into bench/node_modules",
            flush=True,
        )
        done = subprocess.run([npm, "ci", "--prefix", str(BENCH_DIR), *quiet], check=False)
        if done.returncode != 0:
            print("warning: npm ci failed; the TypeScript SDK rows will read 'not available'")
            return
        stamp_file.write_text(stamp)
    servers.node_binary.cache_clear()
    if servers.node_binary() is None:
        package = f"{servers.node_package()}@22"
        print(f"the system's node is missing or too old: installing {package} from npm", flush=True)
        servers.NODE_RUNTIME_DIR.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-save",
                "--prefix",
                str(servers.NODE_RUNTIME_DIR),
                *quiet,
                package,
            ],
            check=False,
        )
        if done.returncode != 0:
            print(
                f"warning: installing {package} failed; the TypeScript SDK rows will read 'not available'"
            )
        servers.node_binary.cache_clear()


# --------------------------------------------------------------------------------------------


def pick_loop(python: str) -> str:
    ok = subprocess.run(
        [python, "-c", "import uvloop"], capture_output=True, check=False, timeout=60
    )
    return "uvloop" if ok.returncode == 0 else "asyncio"


def update_docs(markdown: str, results: dict[str, object]) -> None:
    block = f"{BEGIN}\n{markdown}\n{END}"
    if DOCS_MD.exists():
        text = DOCS_MD.read_text()
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            _, tail = rest.split(END, 1)
            DOCS_MD.write_text(head + block + tail)
            return
        DOCS_MD.write_text(text.rstrip() + "\n\n## Results\n\n" + block + "\n")
        return
    DOCS_MD.parent.mkdir(parents=True, exist_ok=True)
    DOCS_MD.write_text(
        "# Benchmarks\n\n![benchmark chart](benchmarks.png)\n\n## Results\n\n" + block + "\n"
    )


def source_state() -> dict[str, object]:
    """The repository commit measured, and how many files under src/ differ from it."""

    def git(*a: str) -> str:
        out = subprocess.run(
            ["git", "-C", str(REPO_DIR), *a],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        return out.stdout.strip()

    dirty = [
        line for line in git("status", "--porcelain", "--", "src").splitlines() if line.strip()
    ]
    return {
        "commit": git("rev-parse", "--short", "HEAD") or "unknown",
        "uncommitted_files_in_src": len(dirty),
    }


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    use_venv = not args.quick and not args.no_venv
    if use_venv and os.environ.get("MCPKIT_BENCH_IN_VENV") != "1":
        venv_python = ensure_venv(args.no_install)
        env = {**os.environ, "MCPKIT_BENCH_IN_VENV": "1"}
        os.execve(str(venv_python), [str(venv_python), str(Path(__file__).resolve()), *argv], env)

    sys.path.insert(0, str(BENCH_DIR))
    try:
        import orjson  # noqa: F401
    except ImportError:
        sys.exit(
            "the benchmark needs orjson in this interpreter (pip install orjson), or run without --quick"
        )
    from benchkit import procs, report, servers, suite, wrkload

    procs.install_signal_handlers()
    pinning = procs.pin_cpus(not args.no_pin)
    python = sys.executable
    sections = tuple(s for s in args.sections.split(",") if s)
    unknown = set(sections) - set(ALL_SECTIONS)
    if unknown:
        sys.exit(f"unknown sections: {', '.join(sorted(unknown))}")
    only = [o for o in args.only.split(",") if o] or None
    impls = servers.select(only, args.quick)
    missing = [
        i
        for i in impls
        if i.family not in ("mcpkit", "floor")
        and not all(servers.module_available(m) for m in i.needs)
    ]
    if missing:
        print(f"skipping (not installed in this interpreter): {', '.join(i.name for i in missing)}")
        impls = [i for i in impls if i not in missing]
    node_impls = any(i.family == "ts" for i in impls)
    if node_impls and not args.quick and not args.no_install:
        ensure_node_packages()

    wrk = None
    if ("http" in sections or args.profile > 0) and not args.python_client:
        wrk = wrkload.find_wrk()
        if wrk is None and not args.quick and not args.no_install:
            print("wrk not found; installing the Debian package", flush=True)
            wrk = wrkload.install_wrk()
        if wrk is None:
            print("wrk not available: using the asyncio HTTP client (it may limit c=32 throughput)")
    loop = pick_loop(python)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    log_dir = RESULTS_DIR / "logs"
    log_dir.mkdir(exist_ok=True)
    cfg = suite.Config.make(args.quick, python, loop, wrk, sections, log_dir)
    if args.runs:
        cfg.runs = args.runs
    cfg.force_legacy = args.era == "legacy"

    if args.wait_quiet > 0:
        give_up = time.monotonic() + args.wait_quiet
        while procs.load_average() >= 1.0 and time.monotonic() < give_up:
            print(
                f"waiting for a quieter machine (load average {procs.load_average():.2f})",
                flush=True,
            )
            time.sleep(15)
    load_start = procs.load_average()
    if load_start >= 1.5:
        print(
            f"warning: the machine is busy (load average {load_start:.2f}); figures will be noisy",
            flush=True,
        )
    started = time.time()
    print(
        f"servers: {', '.join(i.name for i in impls)}; sections: {', '.join(sections)}; runs: {cfg.runs}",
        flush=True,
    )
    try:
        results = suite.run_all(impls, cfg)
        if args.profile > 0 and any(i.name == "mcpkit" for i in impls):
            from benchkit import profile

            results["profile"] = profile.profile_mcpkit(cfg, args.profile)
    finally:
        procs.kill_all()
    results["meta"] = {
        "mode": "quick" if args.quick else "full",
        "runs": cfg.runs,
        "started": _dt.datetime.fromtimestamp(started, _dt.UTC).isoformat(timespec="seconds"),
        "duration_s": round(time.time() - started, 1),
        "command": shlex.join(["python3", "bench/run.py", *argv]),
        "machine": suite.machine_info(python),
        "source": source_state(),
        "packages": suite.package_versions(python, node=node_impls),
        "loop": loop,
        "pinning": pinning,
        "loadavg": {"start": load_start, "end": procs.load_average()},
        "era": args.era,
        "http_client": wrkload.wrk_version(wrk) if wrk else "python asyncio client",
        "commands": suite.commands(impls, cfg),
        "wrk_command": suite.wrk_command(cfg),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(cfg).items()},
    }
    results["targets"] = report.targets(results)
    md = report.markdown(results)
    out_json = args.json or RESULTS_DIR / ("quick.json" if args.quick else "latest.json")
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps(results, indent=1, default=str))
    out_json.with_suffix(".md").write_text(md + "\n")
    print()
    print(md)
    complete = not args.quick and only is None and set(sections) == set(ALL_SECTIONS)
    if args.docs == "yes" or (args.docs == "auto" and complete):
        if report.chart(results, DOCS_PNG):
            print(f"chart: {DOCS_PNG.relative_to(REPO_DIR)}")
        update_docs(md, results)
        print(f"docs: {DOCS_MD.relative_to(REPO_DIR)}")
    print(f"results: {out_json} ({results['meta']['duration_s']} s)")
    return 1 if results["errors"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
