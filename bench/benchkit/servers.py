"""The servers under test: how to start each one over stdio and over HTTP, and how to generate a
variant of it with N echo-like tools."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = BENCH_DIR.parent
SERVERS_DIR = BENCH_DIR / "servers"

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
    family: str  # "floor" | "mcpkit" | "sdk" | "fastmcp"
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

    def stdio_argv(self, python: str, path: Path | None = None, n_tools: int = 1) -> list[str]:
        path = path or self.path
        if self.family == "mcpkit":
            return [python, "-m", "mcpkit", "run", str(path)]
        if self.family == "floor":
            return [python, str(path), "--tools", str(n_tools)]
        return [python, str(path)]

    def http_argv(self, python: str, port: int, loop: str) -> list[str]:
        if self.family == "mcpkit":
            return [python, "-m", "mcpkit", "run", str(self.path), "--http", f"127.0.0.1:{port}"]
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
        if self.family == "floor":
            return self.path  # the floor takes --tools N
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
