"""Turn the results dict into the targets verdicts, markdown tables and a chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SDK_NAMES = ("sdk-lowlevel", "sdk-mcpserver", "sdk-lowlevel-sse", "sdk-lowlevel-stateless")
TS_NAME = "ts-sdk"  # the official TypeScript SDK's server, on Node
FLAT_LIMIT = 1.25  # tools/call p50 at the largest tool count vs one tool
CLIENT_BOUND = 0.85  # client CPU (cores) above which a throughput figure is marked


def _get(d: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def _best(
    results: dict[str, Any], names: tuple[str, ...], path: tuple[str, ...], lowest: bool
) -> tuple[str | None, float | None]:
    found = [(n, _get(results, path[0], n, *path[1:])) for n in names]
    found = [(n, v) for n, v in found if isinstance(v, int | float) and v > 0]
    if not found:
        return None, None
    name, value = (min if lowest else max)(found, key=lambda nv: nv[1])
    return name, float(value)


def _ratio(a: Any, b: Any) -> float | None:
    if isinstance(a, int | float) and isinstance(b, int | float) and b:
        return float(a) / float(b)
    return None


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The project's performance targets, each with the measured ratio and met / not met.

    `floor` is the same ratio for the floor server where it means something: the best any
    server could reach under the same measurement (for the stdio sequential figure the round trip
    is bounded by the pipes' wake-up latency, whatever the server does).
    """
    out: list[dict[str, Any]] = []

    def add(
        name: str,
        required: str,
        value: float | None,
        ok: Any,
        detail: str,
        floor: float | None = None,
    ) -> None:
        out.append(
            {"target": name, "required": required, "measured": value, "met": None if value is None else ok(value),
             "detail": detail, "floor": floor}
        )  # fmt: skip

    def fig(name: str, *path: str) -> Any:
        return _get(results, path[0], name, *path[1:])

    mk, sdk_name, sdk = (
        fig("mcpkit", "stdio", "seq", "rps"),
        *_best(results, SDK_NAMES, ("stdio", "seq", "rps"), False),
    )
    add(
        "stdio sequential tools/call req/s vs official SDK",
        ">= 10x",
        _ratio(mk, sdk),
        lambda r: r >= 10,
        f"mcpkit {mk or 0:.0f} vs {sdk_name} {sdk or 0:.0f} req/s",
        _ratio(fig("floor", "stdio", "seq", "rps"), sdk),
    )

    mk, fl = (
        fig("mcpkit", "stdio", "seq", "server_cpu_us_per_req"),
        fig("floor", "stdio", "seq", "server_cpu_us_per_req"),
    )
    add(
        "stdio server CPU per request vs floor loop",
        "<= 3x",
        _ratio(mk, fl),
        lambda r: r <= 3,
        f"mcpkit {mk or 0:.1f} vs floor {fl or 0:.1f} us/req",
        1.0 if fl else None,
    )
    ts = fig(TS_NAME, "stdio", "seq", "server_cpu_us_per_req")
    add(
        "stdio server CPU per request vs TypeScript SDK",
        "< 1.00x",
        _ratio(mk, ts),
        lambda r: r < 1,
        f"mcpkit {mk or 0:.1f} vs {TS_NAME} {ts or 0:.1f} us/req"
        if ts
        else f"{TS_NAME} not measured",
        _ratio(fl, ts),
    )

    mk, sdk_name, sdk = (
        fig("mcpkit", "http", "c32", "rps"),
        *_best(results, SDK_NAMES, ("http", "c32", "rps"), False),
    )
    fl = fig("floor", "http", "c32", "rps")
    add(
        "HTTP c=32 req/s vs official SDK",
        ">= 3x",
        _ratio(mk, sdk),
        lambda r: r >= 3,
        f"mcpkit {mk or 0:.0f} vs {sdk_name} {sdk or 0:.0f} req/s",
        _ratio(fl, sdk),
    )
    add(
        "HTTP c=32 req/s vs bare ASGI floor",
        ">= 0.70x",
        _ratio(mk, fl),
        lambda r: r >= 0.7,
        f"mcpkit {mk or 0:.0f} vs floor {fl or 0:.0f} req/s",
        1.0 if fl else None,
    )

    # Each way of writing the tool against its transport's floor, and the SDK on both transports.
    for name, what in (("mcpkit", "def"), ("mcpkit-inline", "def, blocking=False"),
                       ("mcpkit-async", "async def")):
        goals = {"stdio": 0.9 if name == "mcpkit-async" else 0.8,
                 "http": 0.8 if name == "mcpkit-async" else 0.7}
        for transport, figure in (("stdio", "seq"), ("http", "c32")):
            mine = fig(name, transport, figure, "rps")
            if mine is None:
                continue
            floor = fig("floor", transport, figure, "rps")
            goal = goals[transport]
            add(f"{transport} {'sequential' if transport == 'stdio' else 'c=32'} req/s vs floor"
                f" ({what})", f">= {goal:.2f}x", _ratio(mine, floor),
                lambda r, goal=goal: r >= goal,
                f"{name} {mine:.0f} vs floor {floor or 0:.0f} req/s", 1.0 if floor else None)
    for transport, figure in (("stdio", "seq"), ("stdio", "pipelined"), ("http", "c32")):
        mine = fig("mcpkit", transport, figure, "rps")
        sdk_name, sdk = _best(results, SDK_NAMES, (transport, figure, "rps"), False)
        add(f"{transport} {figure} req/s vs official SDK (def)", ">= 5x", _ratio(mine, sdk),
            lambda r: r >= 5, f"mcpkit {mine or 0:.0f} vs {sdk_name} {sdk or 0:.0f} req/s",
            _ratio(fig("floor", transport, figure, "rps"), sdk))

    mk, sdk_name, sdk = (
        fig("mcpkit", "cold_start", "discover_ms"),
        *_best(results, SDK_NAMES, ("cold_start", "discover_ms"), True),
    )
    add(
        "cold start to first answer vs official SDK",
        "<= 0.33x",
        _ratio(mk, sdk),
        lambda r: r <= 1 / 3,
        f"mcpkit {mk or 0:.0f} vs {sdk_name} {sdk or 0:.0f} ms",
        _ratio(fig("floor", "cold_start", "discover_ms"), sdk),
    )

    imp, wall = (
        _get(results, "import", "mcpkit", "importtime_ms"),
        _get(results, "import", "mcpkit", "wall_ms"),
    )
    add(
        "import mcpkit (-X importtime, cumulative)",
        "< 100 ms",
        imp,
        lambda v: v < 100,
        f"{imp or 0:.1f} ms; whole `python -c 'import mcpkit'` {wall or 0:.0f} ms wall",
    )

    mk, sdk_name, sdk = (
        fig("mcpkit", "stdio", "peak_rss_kb"),
        *_best(results, SDK_NAMES, ("stdio", "peak_rss_kb"), True),
    )
    add(
        "peak RSS of the stdio server vs official SDK",
        "<= 0.60x",
        _ratio(mk, sdk),
        lambda r: r <= 0.6,
        f"mcpkit {(mk or 0) / 1024:.1f} vs {sdk_name} {(sdk or 0) / 1024:.1f} MiB",
        _ratio(fig("floor", "stdio", "peak_rss_kb"), sdk),
    )

    growth = _get(results, "growth", "mcpkit")
    if isinstance(growth, dict) and growth:
        ns = sorted(int(n) for n in growth)
        lo, hi = _get(growth, str(ns[0]), "call_p50_us"), _get(growth, str(ns[-1]), "call_p50_us")
        add(
            f"tools/call p50 latency flat with tool count ({ns[-1]} vs {ns[0]} tools)",
            f"<= {FLAT_LIMIT}x",
            _ratio(hi, lo),
            lambda r: r <= FLAT_LIMIT,
            f"{lo or 0:.0f} us -> {hi or 0:.0f} us",
        )
    else:
        add(
            "tools/call p50 latency flat with tool count",
            f"<= {FLAT_LIMIT}x",
            None,
            None,
            "not measured",
        )
    return out


# --------------------------------------------------------------------------------------------
# markdown


def _f(v: Any, fmt: str = "{:.0f}", scale: float = 1.0) -> str:
    if isinstance(v, int | float):
        return fmt.format(v * scale)
    return "-"


def _rate(entry: Any) -> str:
    """req/s, marked when the load generator used most of a core (then it may be the limit)."""
    cell = _f(_get(entry, "rps"))
    util = _get(entry, "client_cpu_util")
    if isinstance(util, int | float) and util > CLIENT_BOUND:
        cell += " (client-bound)"
    return cell


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _names(results: dict[str, Any], section: str) -> list[str]:
    order = list(results["servers"])
    return [n for n in order if n in results.get(section, {})]


def _unavailable_rows(results: dict[str, Any], transport: str, ncols: int) -> list[str]:
    rows = []
    for name, s in results["servers"].items():
        st = s.get(transport, {})
        if st.get("available") is False:
            reason = str(st.get("error", "")).splitlines()[0][:120].replace("|", "/")
            rows.append(f"| {name} | not available: {reason} |" + " |" * (ncols - 2))
    return rows


def markdown(results: dict[str, Any]) -> str:
    out: list[str] = []
    meta = results.get("meta", {})
    m = meta.get("machine", {})
    out.append(
        f"Machine: {m.get('nproc')} cores, {m.get('cpu_model')}, Python {m.get('python')},"
        f" Linux {m.get('kernel')}. Mode: {meta.get('mode')}, {meta.get('runs')} run(s) per figure (median)."
    )
    src = meta.get("source", {})
    if src:
        dirty = src.get("uncommitted_files_in_src", 0)
        out.append(
            f"mcpkit: repository at {src.get('commit')}"
            + (
                f" with {dirty} uncommitted file(s) under src/ (the working tree was measured)."
                if dirty
                else "."
            )
            + " Packages: "
            + ", ".join(f"{k} {v}" for k, v in meta.get("packages", {}).items())
            + "."
        )
    out.append(
        f"HTTP load generator: {meta.get('http_client')}; uvicorn loop: {meta.get('loop')};"
        f" CPUs: {meta.get('pinning', 'not pinned')}."
    )
    out.append("")

    tg = results.get("targets", [])
    if tg:
        out.append("### Targets (mcpkit)")
        out.append("")
        out.append(
            "The last column is the same ratio for the floor: the best any server could reach in the same"
            " measurement."
        )
        out.append("")
        out.append("| target | required | measured | met? | detail | floor's ratio |")
        out.append("|---|---|---|---|---|---|")
        for t in tg:
            met = "not measured" if t["met"] is None else ("**met**" if t["met"] else "**not met**")
            meas = (
                "-"
                if t["measured"] is None
                else (
                    f"{t['measured']:.1f} ms" if "ms" in t["required"] else f"{t['measured']:.2f}x"
                )
            )
            floor = "-" if t.get("floor") is None else f"{t['floor']:.2f}x"
            out.append(
                f"| {t['target']} | {t['required']} | {meas} | {met} | {t['detail']} | {floor} |"
            )
        out.append("")

    sdk_ref = {}
    for section, path in (("stdio", ("seq", "rps")), ("http", ("c32", "rps"))):
        sdk_ref[section] = _best(results, SDK_NAMES, (section, *path), lowest=False)

    if results.get("stdio") or any(s.get("stdio") for s in results["servers"].values()):
        ref_name, ref = sdk_ref["stdio"]
        floor = _get(results, "stdio", "floor", "seq", "rps")
        fl_cpu = _get(results, "stdio", "floor", "seq", "server_cpu_us_per_req")
        out.append("### stdio: `tools/call echo`")
        out.append("")
        out.append(
            f"Ratios: req/s against the official SDK's faster server ({ref_name or '-'}) and against the floor loop;"
            " CPU against the floor loop."
        )
        out.append("")
        out.append(
            "| server | era | seq req/s | seq p50 µs | seq p99 µs | pipelined (32) req/s | pipelined p99 µs"
            " | server CPU µs/req | seq x SDK | seq x floor | CPU x floor | errors |"
        )
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for name in _names(results, "stdio"):
            r = results["stdio"][name]
            era = _get(results, "servers", name, "stdio", "era") or "-"
            errs = (_get(r, "seq", "errors") or 0) + (_get(r, "pipelined", "errors") or 0)
            out.append(
                f"| {name} | {era} | {_rate(_get(r, 'seq'))} | {_f(_get(r, 'seq', 'p50_us'))} | {_f(_get(r, 'seq', 'p99_us'))}"
                f" | {_rate(_get(r, 'pipelined'))} | {_f(_get(r, 'pipelined', 'p99_us'))}"
                f" | {_f(_get(r, 'seq', 'server_cpu_us_per_req'), '{:.1f}')}"
                f" | {_x(_ratio(_get(r, 'seq', 'rps'), ref))} | {_x(_ratio(_get(r, 'seq', 'rps'), floor))}"
                f" | {_x(_ratio(_get(r, 'seq', 'server_cpu_us_per_req'), fl_cpu))} | {errs} |"
            )
        out.extend(_unavailable_rows(results, "stdio", 12))
        out.append("")

    if results.get("http") or any(s.get("http") for s in results["servers"].values()):
        ref_name, ref = sdk_ref["http"]
        floor = _get(results, "http", "floor", "c32", "rps")
        node = " (ts-sdk: one Node process)" if TS_NAME in results.get("http", {}) else ""
        out.append(f"### Streamable HTTP: `tools/call echo`, one uvicorn worker{node}")
        out.append("")
        out.append(
            f"Ratios: c=32 req/s against the official SDK's fastest configuration ({ref_name or '-'}) and against"
            " the bare ASGI floor."
        )
        out.append("")
        out.append(
            "| server | era | c=1 req/s | c=1 p50 ms | c=1 p99 ms | c=32 req/s | c=32 p50 ms | c=32 p99 ms"
            " | server CPU µs/req (c=32) | c=32 x SDK | c=32 x floor | errors |"
        )
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for name in _names(results, "http"):
            r = results["http"][name]
            era = _get(results, "servers", name, "http", "era") or "-"
            errs = sum(_get(r, k, "errors") or 0 for k in ("c1", "c32", "validation"))
            out.append(
                f"| {name} | {era} | {_rate(_get(r, 'c1'))} | {_f(_get(r, 'c1', 'p50_us'), '{:.2f}', 1e-3)}"
                f" | {_f(_get(r, 'c1', 'p99_us'), '{:.2f}', 1e-3)} | {_rate(_get(r, 'c32'))}"
                f" | {_f(_get(r, 'c32', 'p50_us'), '{:.2f}', 1e-3)} | {_f(_get(r, 'c32', 'p99_us'), '{:.2f}', 1e-3)}"
                f" | {_f(_get(r, 'c32', 'server_cpu_us_per_req'), '{:.0f}')}"
                f" | {_x(_ratio(_get(r, 'c32', 'rps'), ref))} | {_x(_ratio(_get(r, 'c32', 'rps'), floor))} | {errs} |"
            )
        out.extend(_unavailable_rows(results, "http", 12))
        out.append("")

    names = [
        n
        for n in results["servers"]
        if n in results.get("cold_start", {})
        or n in results.get("stdio", {})
        or n in results.get("http", {})
    ]
    if names:
        _, sdk_cold = _best(results, SDK_NAMES, ("cold_start", "discover_ms"), lowest=True)
        _, sdk_rss = _best(results, SDK_NAMES, ("stdio", "peak_rss_kb"), lowest=True)
        out.append("### Startup and memory")
        out.append("")
        out.append(
            "Cold start: spawn of the stdio server to its first answer (median of the samples; first answer is to"
            " `server/discover` for modern servers, `initialize` for legacy ones). Import: `python -X importtime`"
            " cumulative for the package and wall time of `python -c 'import PKG'`"
            f" (bare interpreter: {_f(_get(results, 'import', '_interpreter', 'wall_ms'))} ms)."
            + (
                " Node has no `-X importtime`: for the TypeScript SDK only the wall time of"
                " `node --input-type=module -e \"import '@modelcontextprotocol/server'\"`"
                f" (empty module: {_f(_get(results, 'import', 'ts', 'interpreter_wall_ms'))} ms)."
                if _get(results, "import", "ts", "wall_ms") is not None
                else ""
            )
            + " Peak RSS: VmHWM at the end of the load runs."
        )
        out.append("")
        out.append(
            "| server | first answer ms | first tools/call ms | cold x SDK | import (module) | importtime ms"
            " | import wall ms | peak RSS stdio MiB | peak RSS HTTP MiB | RSS x SDK |"
        )
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for name in names:
            fam = results["servers"][name]["family"]
            imp = _get(results, "import", fam) or {}
            c = _get(results, "cold_start", name) or {}
            rss_s = _get(results, "stdio", name, "peak_rss_kb")
            out.append(
                f"| {name} | {_f(c.get('discover_ms'), '{:.0f}')} | {_f(c.get('tools_call_ms'), '{:.0f}')}"
                f" | {_x(_ratio(c.get('discover_ms'), sdk_cold))} | {imp.get('module', '-')}"
                f" | {_f(imp.get('importtime_ms'), '{:.1f}')} | {_f(imp.get('wall_ms'), '{:.0f}')}"
                f" | {_f(rss_s, '{:.1f}', 1 / 1024)} | {_f(_get(results, 'http', name, 'peak_rss_kb'), '{:.1f}', 1 / 1024)}"
                f" | {_x(_ratio(rss_s, sdk_rss))} |"
            )
        out.append("")

    growth = results.get("growth", {})
    if growth:
        ns = sorted({int(n) for g in growth.values() for n in g})
        out.append("### Cost growth with the number of registered tools (stdio, sequential)")
        out.append("")
        head = " | ".join(
            [f"tools/list p50 µs N={n}" for n in ns] + [f"tools/call p50 µs N={n}" for n in ns]
        )
        out.append(f"| server | {head} | call N={ns[-1]} / N={ns[0]} | ready with N={ns[-1]} ms |")
        out.append("|---|" + "---|" * (2 * len(ns) + 2))
        for name in _names(results, "growth"):
            g = growth[name]
            cells = [_f(_get(g, str(n), "list_p50_us")) for n in ns] + [
                _f(_get(g, str(n), "call_p50_us")) for n in ns
            ]
            flat = _ratio(_get(g, str(ns[-1]), "call_p50_us"), _get(g, str(ns[0]), "call_p50_us"))
            out.append(
                f"| {name} | "
                + " | ".join(cells)
                + f" | {_x(flat)} | {_f(_get(g, str(ns[-1]), 'startup_to_first_answer_ms'))} |"
            )
        out.append("")

    sessions = results.get("sessions", {})
    if sessions:
        out.append("### Idle legacy (2025-11-25) HTTP sessions")
        out.append("")
        out.append(
            "`initialize` + `notifications/initialized` per session, one keep-alive connection, sessions left"
            " open; RSS growth measured after all are open."
        )
        out.append("")
        out.append(
            "| server | sessions | total s | ms / session | RSS growth MiB | KiB / session | note |"
        )
        out.append("|---|---|---|---|---|---|---|")
        for name in [n for n in results["servers"] if n in sessions]:
            s = sessions[name]
            if "sessions" not in s:
                out.append(
                    f"| {name} | - | - | - | - | - | failed: {str(s.get('error', ''))[:120]} |"
                )
                continue
            out.append(
                f"| {name} | {s['sessions']} | {_f(s.get('seconds'), '{:.2f}')} | {_f(s.get('per_session_ms'), '{:.2f}')}"
                f" | {_f(s.get('rss_growth_kb'), '{:.1f}', 1 / 1024)} | {_f(s.get('per_session_kb'), '{:.1f}')} | |"
            )
        out.append("")

    prof = results.get("profile")
    if isinstance(prof, dict):
        out.append("### Where mcpkit spends its time")
        out.append("")
        if "error" in prof:
            out.append(f"Profiling failed: {prof['error']}")
        for key in ("stdio", "http"):
            p = prof.get(key)
            if not isinstance(p, dict):
                continue
            if "error" in p:
                out.append(f"{key}: profiling failed: {p['error']}")
                out.append("")
                continue
            out.append(
                f"**{key}** — py-spy, {p['samples']} samples over {p['seconds']:.0f} s, load: {p['load']}."
                " Sampled only while holding the GIL (--gil), so idle waits are left out. Own = samples where"
                " the frame is the innermost; total = samples where it is anywhere on the stack."
            )
            out.append("")
            out.append("| own % | frame (own time) | total % | frame (total time) |")
            out.append("|---|---|---|---|")
            for a, b in zip(p["top_own"][:15], p["top_total"][:15], strict=False):
                out.append(
                    f"| {a['share'] * 100:.1f} | `{a['frame']}` | {b['share'] * 100:.1f} | `{b['frame']}` |"
                )
            out.append("")

    out.append("### Load generator check and machine noise")
    out.append("")
    out.append(
        "CPU the client itself used while driving each measurement (1.00 = one full core; the machine"
        f" has {m.get('nproc')} cores, the server under test uses at most one), and the CPU that other"
        " processes on the machine used meanwhile (noise) and the hypervisor's steal time: the worst"
        " measurement of each kind over all servers and runs."
    )
    out.append("")
    out.append(
        "| measurement | client | max client CPU (cores) | max client CPU µs/req | max other processes (cores) | max steal (cores) |"
    )
    out.append("|---|---|---|---|---|---|")
    for section, keys, client in (
        ("stdio", ("seq", "pipelined"), "Python stdio driver"),
        ("http", ("c1", "c32"), meta.get("http_client", "?")),
    ):
        for key in keys:
            runs = [run for r in results.get(section, {}).values() for run in r.get("runs", [])]
            utils = [_get(r, key, "client_cpu_util") for r in runs]
            if section == "http":
                per = [
                    (_get(r, key, "client_cpu_s") or 0)
                    / max(_get(r, key, "requests") or 1, 1)
                    * 1e6
                    for r in runs
                ]
            else:
                per = [_get(r, key, "client_cpu_us_per_req") for r in runs]
            other = [_get(r, key, "other_cpu_cores") for r in runs]
            steal = [_get(r, key, "steal_cores") for r in runs]
            utils = [u for u in utils if isinstance(u, int | float)]
            per = [p for p in per if isinstance(p, int | float)]
            other = [o for o in other if isinstance(o, int | float)]
            steal = [o for o in steal if isinstance(o, int | float)]
            if utils:
                out.append(
                    f"| {section} {key} | {client} | {max(utils):.2f} | {max(per):.1f}"
                    f" | {max(other) if other else 0:.2f} | {max(steal) if steal else 0:.2f} |"
                )
    cmds = meta.get("commands", {})
    if cmds:
        out.append("### Commands")
        out.append("")
        out.append(
            f"Benchmark: `{meta.get('command')}` (from the repository root). The servers, as started (the"
        )
        out.append(
            "interpreter is `bench/.venv/bin/python` in full mode, the current one in quick mode):"
        )
        out.append("")
        out.append("```")
        for name, entry in cmds.items():
            for transport, cmd in entry.items():
                out.append(f"{name:<24} {transport:<5} {cmd}")
        out.append("```")
        out.append("")
        out.append(f"HTTP load: `{meta.get('wrk_command', '')}`")
        out.append("")
    la = meta.get("loadavg", {})
    if la:
        out.append("")
        out.append(
            f"1-minute load average at the start: {la.get('start', 0):.2f}; at the end: {la.get('end', 0):.2f}."
        )
    out.append("")
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# chart


def chart(results: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False

    colors = {
        "floor": "#9e9e9e",
        "mcpkit": "#1f77b4",
        "sdk": "#ff7f0e",
        "fastmcp": "#2ca02c",
        "ts": "#9467bd",
    }

    def bars(
        ax: Any,
        section: str,
        getter: Any,
        title: str,
        unit: str,
        client_bound: Any = lambda n: False,
    ) -> None:
        names = [n for n in results["servers"] if isinstance(getter(n), int | float)]
        values = [getter(n) for n in names]
        cs = [colors.get(results["servers"][n]["family"], "#555") for n in names]
        ax.barh(names[::-1], values[::-1], color=cs[::-1])
        for i, (n, v) in enumerate(zip(names[::-1], values[::-1], strict=True)):
            label = f" {v:,.0f}" if v >= 10 else f" {v:.1f}"
            if client_bound(n):
                label += " (client-bound)"
            ax.text(v, i, label, va="center", fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(unit, fontsize=8)
        ax.tick_params(labelsize=7)
        if values:
            ax.set_xlim(0, max(values) * 1.35)

    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    bars(
        axes[0][0],
        "stdio",
        lambda n: _get(results, "stdio", n, "seq", "rps"),
        "stdio sequential tools/call",
        "req/s (higher is better)",
    )
    bars(
        axes[0][1],
        "stdio",
        lambda n: _get(results, "stdio", n, "pipelined", "rps"),
        "stdio pipelined (32 in flight)",
        "req/s (higher is better)",
        lambda n: (_get(results, "stdio", n, "pipelined", "client_cpu_util") or 0) > CLIENT_BOUND,
    )
    bars(
        axes[0][2],
        "http",
        lambda n: _get(results, "http", n, "c32", "rps"),
        "Streamable HTTP, c=32, 1 worker",
        "req/s (higher is better)",
        lambda n: (_get(results, "http", n, "c32", "client_cpu_util") or 0) > CLIENT_BOUND,
    )
    bars(
        axes[1][0],
        "cold",
        lambda n: _get(results, "cold_start", n, "discover_ms"),
        "cold start: spawn to first answer (stdio)",
        "ms (lower is better)",
    )
    bars(
        axes[1][1],
        "rss",
        lambda n: (_get(results, "stdio", n, "peak_rss_kb") or 0) / 1024 or None,
        "peak RSS, stdio server",
        "MiB (lower is better)",
    )
    ax = axes[1][2]
    for name, g in results.get("growth", {}).items():
        ns = sorted(int(n) for n in g)
        ys = [_get(g, str(n), "call_p50_us") for n in ns]
        if all(isinstance(y, int | float) for y in ys):
            ax.plot(
                ns,
                ys,
                marker="o",
                label=name,
                color=colors.get(results["servers"][name]["family"], "#555"),
                linestyle="--" if name.endswith("mcpserver") else "-",
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda v, _pos: f"{v:,.0f}")
    ax.xaxis.set_major_formatter(plain)
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.tick_params(axis="y", which="minor", labelsize=6)
    ax.set_title("tools/call p50 latency vs registered tools (stdio)", fontsize=9)
    ax.set_xlabel("tools", fontsize=8)
    ax.set_ylabel("µs", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7)
    m = results.get("meta", {}).get("machine", {})
    fig.suptitle(
        f"mcpkit benchmark — echo tool — {m.get('nproc')} cores, {m.get('cpu_model')}, Python {m.get('python')}",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
