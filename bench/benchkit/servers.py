"""The servers under test: how to start each one over stdio and over HTTP, and how to generate a
variant of it with N echo-like tools.

The TypeScript SDK's server runs on Node: the pinned packages are in bench/package.json (installed
into bench/node_modules by bench/run.py), Node itself is the system's `node` when it is new enough,
else the `node-linux-<arch>` npm package installed next to them."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = BENCH_DIR.parent
SERVERS_DIR = BENCH_DIR / "servers"
NODE_PACKAGE_JSON = BENCH_DIR / "package.json"
NODE_MODULES = BENCH_DIR / "node_modules"
NODE_RUNTIME_DIR = NODE_MODULES / ".node-runtime"  # Node from npm, when the system's is too old
TS_PACKAGE = "@modelcontextprotocol/server"

_TOOL_DEF = '''

@server.tool()
def echo_{i}(text: str) -> str:
    """Echo the text back."""
    return text
'''


@dataclass(frozen=True)
class Impl:
    """One server implementation (or one configuration of it)."""

    name: str
    label: str
    family: str  # "floor" | "mcpkit" | "sdk" | "fastmcp" | "ts"
    source: str  # file name in bench/servers
    stdio: bool = True
    http_factory: str | None = None  # "module:function" for `uvicorn --factory`; None = own CLI
    http: bool = True
    sessions: bool = False  # measured in the idle legacy session test
    notes: str = ""
    needs: tuple[str, ...] = field(default_factory=tuple)  # modules the server's interpreter needs
    extra: bool = False  # an informative variant: measured in the stdio and HTTP sections only

    @property
    def path(self) -> Path:
        return SERVERS_DIR / self.source

    def problem(self) -> str | None:
        """Why this server cannot run here (its runtime or packages are missing), or None."""
        return ts_problem() if self.family == "ts" else None

    def stdio_argv(self, python: str, path: Path | None = None, n_tools: int = 1) -> list[str]:
        path = path or self.path
        if self.family == "mcpkit":
            return [python, "-m", "mcpkit", "run", str(path)]
        if self.family == "floor":
            return [python, str(path), "--tools", str(n_tools)]
        if self.family == "ts":
            return [node_binary() or "node", str(path), "--tools", str(n_tools)]
        return [python, str(path)]

    def http_argv(self, python: str, port: int, loop: str) -> list[str]:
        if self.family == "mcpkit":
            return [python, "-m", "mcpkit", "run", str(self.path), "--http", f"127.0.0.1:{port}"]
        if self.family == "ts":
            # Its own Node process serving node:http on 127.0.0.1:PORT (no uvicorn).
            return [node_binary() or "node", str(self.path), "--port", str(port)]
        assert self.http_factory is not None
        return [
            python, "-m", "uvicorn",
            "--app-dir", str(SERVERS_DIR),
            "--factory", self.http_factory,
            "--host", "127.0.0.1",
            "--port", str(port),
            "--loop", loop,
            "--no-access-log",
            "--log-level", "warning",
            "--lifespan", "on",
        ]  # fmt: skip

    def generate(self, n_tools: int, out_dir: Path) -> Path:
        """Write a copy of this server with n_tools tools (`echo`, `echo_1`, ...) into out_dir."""
        text = self.path.read_text()
        if self.family in ("floor", "ts"):
            return self.path  # these take --tools N
        if self.family == "sdk" and "N_TOOLS = 1" in text:
            text = re.sub(r"^N_TOOLS = 1$", f"N_TOOLS = {n_tools}", text, count=1, flags=re.M)
        else:
            extra = "".join(_TOOL_DEF.format(i=i) for i in range(1, n_tools))
            if "# @@TOOLS@@" not in text:
                raise ValueError(f"{self.source} has no # @@TOOLS@@ marker")
            text = text.replace("# @@TOOLS@@", extra.strip("\n") or "# (one tool)", 1)
        out = out_dir / f"{self.name.replace('-', '_')}_{n_tools}.py"
        out.write_text(text)
        return out


# --------------------------------------------------------------------------------------------
# Node, for the TypeScript SDK


def node_package() -> str:
    """The npm package that provides Node for this machine's architecture."""
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        os.uname().machine.lower(), os.uname().machine.lower()
    )
    return f"node-linux-{arch}"


@cache
def node_version(node: str) -> tuple[int, ...]:
    """(major, minor, patch) of a Node binary; (0,) when it does not run."""
    try:
        out = subprocess.run(
            [node, "-p", "process.versions.node"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        return tuple(int(part) for part in out.stdout.strip().split("."))
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return (0,)


def node_required_major() -> int:
    """The lowest Node major version the pinned packages accept (`engines.node` in package.json)."""
    try:
        engines = json.loads(NODE_PACKAGE_JSON.read_text()).get("engines", {}).get("node", "")
    except (OSError, ValueError):
        return 0
    m = re.search(r"\d+", str(engines))
    return int(m.group(0)) if m else 0


@cache
def node_binary() -> str | None:
    """The Node that runs the TypeScript servers: the system's if it is recent enough, else the
    one installed from npm into bench/node_modules (None when neither is there)."""
    system = shutil.which("node")
    if system and node_version(system)[0] >= node_required_major():
        return system
    local = NODE_RUNTIME_DIR / "node_modules" / node_package() / "bin" / "node"
    if local.exists() and node_version(str(local))[0] >= node_required_major():
        return str(local)
    return None


def pinned_node_versions() -> dict[str, str]:
    """Package name -> the exact version bench/package.json pins."""
    try:
        deps = json.loads(NODE_PACKAGE_JSON.read_text()).get("dependencies", {})
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in deps.items()}


def installed_node_version(package: str) -> str | None:
    try:
        data = json.loads((NODE_MODULES / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    return str(data.get("version")) if data.get("version") else None


def ts_problem() -> str | None:
    """Why the TypeScript servers cannot run here, or None when they can."""
    if node_binary() is None:
        return (
            f"no Node >= {node_required_major()} (system node missing or too old, and"
            f" {node_package()} not installed in bench/node_modules; bench/run.py installs it with npm)"
        )
    pinned = pinned_node_versions()
    for package in sorted(pinned, key=lambda name: name != TS_PACKAGE):  # the SDK's first
        version = pinned[package]
        have = installed_node_version(package)
        if have != version:
            return (
                f"{package}@{version} not installed in bench/node_modules (found {have or 'nothing'});"
                " run python3 bench/run.py without --no-install, with npm on the PATH"
            )
    return None


IMPLS: list[Impl] = [
    Impl(
        "floor",
        "floor (hand-written loop / bare ASGI)",
        "floor",
        "floor_stdio.py",
        http_factory="floor_asgi:create_app",
        notes="stdio: readline + orjson + canned result; HTTP: raw ASGI app on uvicorn",
        needs=("orjson",),
    ),
    Impl(
        "mcpkit",
        "mcpkit",
        "mcpkit",
        "mcpkit_echo.py",
        sessions=True,
        notes="python -m mcpkit run (stdio) / --http (its own uvicorn setup)",
        needs=("mcpkit",),
    ),
    Impl(
        "mcpkit-async",
        "mcpkit, tool written as `async def`",
        "mcpkit",
        "mcpkit_echo_async.py",
        notes="same as mcpkit with `async def echo`: runs on the event loop, no worker-thread hop",
        needs=("mcpkit",),
        extra=True,
    ),
    Impl(
        "mcpkit-inline",
        "mcpkit, plain `def` tool declared `blocking=False`",
        "mcpkit",
        "mcpkit_echo_inline.py",
        notes="same as mcpkit with `@server.tool(blocking=False)`: a plain function on the event"
        " loop, no worker-thread hop",
        needs=("mcpkit",),
        extra=True,
    ),
    Impl(
        "sdk-lowlevel",
        "official SDK, low-level Server",
        "sdk",
        "sdk_lowlevel_echo.py",
        http_factory="sdk_lowlevel_echo:create_http_app",
        sessions=True,
        notes="mcp 2.3.0 mcp.server.lowlevel.Server; HTTP json_response=True",
        needs=("mcp",),
    ),
    Impl(
        "sdk-lowlevel-stateless",
        "official SDK, low-level Server, stateless HTTP",
        "sdk",
        "sdk_lowlevel_echo.py",
        stdio=False,
        http_factory="sdk_lowlevel_echo:create_http_app_stateless",
        notes="same server, streamable_http_app(json_response=True, stateless_http=True)",
        needs=("mcp",),
        extra=True,
    ),
    Impl(
        "sdk-lowlevel-sse",
        "official SDK, low-level Server, HTTP defaults",
        "sdk",
        "sdk_lowlevel_echo.py",
        stdio=False,
        http_factory="sdk_lowlevel_echo:create_http_app_sse",
        notes="same server, streamable_http_app() with default options (SSE allowed)",
        needs=("mcp",),
    ),
    Impl(
        "sdk-mcpserver",
        "official SDK, high-level MCPServer",
        "sdk",
        "sdk_mcpserver_echo.py",
        http_factory="sdk_mcpserver_echo:create_http_app",
        sessions=True,
        notes="mcp 2.3.0 mcp.server.MCPServer; HTTP json_response=True",
        needs=("mcp",),
    ),
    Impl(
        "fastmcp",
        "FastMCP",
        "fastmcp",
        "fastmcp_echo.py",
        http_factory="fastmcp_echo:create_http_app",
        sessions=True,
        notes="fastmcp 4.2.3 FastMCP; HTTP json_response=True",
        needs=("fastmcp",),
    ),
    Impl(
        "ts-sdk",
        "official TypeScript SDK",
        "ts",
        "ts_echo.mjs",
        # createMcpHandler serves 2025-era requests statelessly: no Mcp-Session-Id, no sessions.
        sessions=False,
        notes=f"@modelcontextprotocol/server {pinned_node_versions().get(TS_PACKAGE, '?')} McpServer on Node;"
        " stdio serveStdio; HTTP createMcpHandler(responseMode 'json') on node:http",
    ),
]

QUICK_NAMES = ("floor", "mcpkit")


def select(only: list[str] | None, quick: bool) -> list[Impl]:
    chosen = [i for i in IMPLS if not quick or i.name in QUICK_NAMES]
    if only:
        chosen = [i for i in chosen if any(i.name == o or i.name.startswith(o + "-") for o in only)]
        # Always keep the floor: every ratio is taken against it.
        if not any(i.family == "floor" for i in chosen):
            chosen.insert(0, IMPLS[0])
    return chosen


def module_available(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
