"""`pip install mcpkit` with no extras does the main job: this package installed (not editable)
into a fresh virtual environment without system site packages, then used as a new user would.

The environment is built once per content of pyproject.toml and src/ and kept under
.cache/bare-install/, so the suite pays for it once; pip reads its configured package index.
Its `mcpkit run --http` serves the quickstart, `mcpkit discover|tools|call` talk to it, a tool
that asks the user (the calendar's `create_event`) completes through sealed requestState, and a
server needing an extra is refused with one line naming it. The server's answers are also read
by a schema-checking peer (tests/helpers/transports/http_peer.py), so what the bare install sends is
held to the official schema.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.services import free_port
from helpers.transports.http_peer import Peer, ServerProcess

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "bare-install"
WHEN = "2031-03-04T09:30:00+00:00"
OPTIONAL = ("jsonschema", "pydantic", "uvloop", "httptools", "opentelemetry")

# Building the environment is the first test's setup; its pip install may take a while on a
# loaded machine.
pytestmark = pytest.mark.timeout(600)


def _source_key() -> str:
    """A digest of what `pip install .` builds from (and of this interpreter's version)."""
    digest = hashlib.sha256(sys.version.encode())
    files = [ROOT / "pyproject.toml", ROOT / "README.md",
             *sorted(p for p in (ROOT / "src").rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts)]
    for path in files:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:20]


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would let the bare install see anything else
    (the test run's PYTHONPATH, the outer virtual environment)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP")}
    return {**env, **extra}


def _build(target: Path) -> None:
    """Build the environment in place (a virtual environment's scripts name its own path, so
    it cannot be built elsewhere and moved); `complete` is written once it is whole."""
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True, timeout=180,
                   capture_output=True, env=_clean_env())
    done = subprocess.run(
        [str(target / "bin" / "python"), "-m", "pip", "install", "--no-input", "-q", str(ROOT)],
        capture_output=True, text=True, timeout=540, env=_clean_env())
    assert done.returncode == 0, f"pip install of the package failed:\n{done.stderr[-3000:]}"
    (target / "complete").write_text("")


@pytest.fixture(scope="module")
def bare() -> Path:
    """The `bin` folder of an environment holding this package and its base dependencies."""
    CACHE.mkdir(parents=True, exist_ok=True)
    key = _source_key()
    target = CACHE / key
    with open(CACHE / "lock", "w") as lock:  # one build at a time, whichever run asks
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / "complete").exists():
            for old in CACHE.iterdir():  # builds of older sources are never used again
                if old.is_dir() and old.name != key:
                    shutil.rmtree(old, ignore_errors=True)
            _build(target)
    return target / "bin"


def run(bare: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None,
        timeout: float = 90) -> subprocess.CompletedProcess[str]:
    if stdin:  # answers on a pipe are read only when the command is told to
        args = (args[0], "--answers-from-stdin", *args[1:])
    return subprocess.run([str(bare / "mcpkit"), *args], input=stdin, capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout, env=env or _clean_env())


@contextlib.contextmanager
def serving(bare: Path, target: str, env: dict[str, str]) -> Iterator[ServerProcess]:
    """`mcpkit run TARGET --http 127.0.0.1:PORT` of the bare install, until the block ends."""
    port = free_port()
    handle, name = tempfile.mkstemp(prefix="mcpkit-bare-", suffix=".log")
    os.close(handle)
    log = Path(name)
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(bare / "mcpkit"), "run", target, "--http",
                                 f"127.0.0.1:{port}"], cwd=ROOT, stdout=out, stderr=out,
                                stdin=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 60
    found = None
    while found is None and proc.poll() is None and time.monotonic() < deadline:
        found = re.search(r"serving \S+ at (http://\S+)", log.read_text(errors="replace"))
        if found is None:
            time.sleep(0.05)
    if found is None:
        proc.kill()
        proc.wait()
        text = log.read_text(errors="replace")
        log.unlink()
        raise AssertionError(f"the bare install's server did not start:\n{text}")
    server = ServerProcess(proc, log, found.group(1))
    try:
        assert server.port == port
        yield server
    finally:
        server.stop()


@pytest.fixture
def user_env(tmp_path: Path) -> dict[str, str]:
    return _clean_env(CALENDAR_DB=str(tmp_path / "calendar.sqlite3"),
                      XDG_DATA_HOME=str(tmp_path / "data"), XDG_CACHE_HOME=str(tmp_path / "cache"))


def test_the_bare_install_has_no_extra_and_its_own_copy(bare: Path) -> None:
    probe = "import importlib.util as u, mcpkit; print(mcpkit.__file__); print(*[m for m in " \
        f"{OPTIONAL!r} if u.find_spec(m)])"
    done = subprocess.run([str(bare / "python"), "-c", probe], capture_output=True, text=True,
                          timeout=60, env=_clean_env(), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    where, extras = done.stdout.splitlines()
    assert Path(where).is_relative_to(bare.parent), where  # installed, not this checkout
    assert extras == ""


TYPED_USER_FILE = textwrap.dedent("""
    from mcpkit import Context, Server

    server = Server("typed", "1.0.0")


    @server.tool()
    def add(a: int, b: int, ctx: Context) -> int:
        \"\"\"Add two integers.\"\"\"
        ctx.info("adding")
        return a + b


    reveal_type(add)
""")


def test_the_installed_package_is_typed_for_a_users_mypy_strict(bare: Path,
                                                                tmp_path: Path) -> None:
    # The installed copy (from the wheel pip built) carries py.typed: the user's mypy,
    # pointed at that environment, reads mcpkit's types instead of refusing an untyped module.
    (tmp_path / "user.py").write_text(TYPED_USER_FILE)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-pretty", "--python-executable",
         str(bare / "python"), "--cache-dir", str(tmp_path / ".mypy_cache"), "user.py"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=_clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'Revealed type is "def (a: int, b: int, ctx: mcpkit.server.context.Context) -> int"' \
        in done.stdout


def test_the_wheel_holds_the_typed_marker(tmp_path: Path) -> None:
    import zipfile

    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-input", "-q", "-w",
         str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=540, env=_clean_env())
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = tmp_path.glob("mcpkit-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "mcpkit/py.typed" in names
    assert "mcpkit/schema/limits.py" in names  # the package whole, not just the marker
    page = ROOT / "src" / "mcpkit" / "dev" / "static"
    shipped = {f"mcpkit/dev/static/{p.relative_to(page).as_posix()}"
               for p in page.rglob("*") if p.is_file()}
    assert shipped and shipped <= set(names)  # mcpkit dev's page, every file of it


async def test_mcpkit_dev_serves_its_page_from_the_installed_package_without_extras(
        bare: Path, user_env: dict[str, str]) -> None:
    import asyncio
    import json

    process = await asyncio.create_subprocess_exec(
        str(bare / "mcpkit"), "dev", "examples/quickstart/server.py", "--no-browser",
        cwd=ROOT, env=user_env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert process.stdout is not None
    try:
        line = (await asyncio.wait_for(process.stdout.readline(), 90)).decode()
        found = re.search(r"at (http://127\.0\.0\.1:(\d+)/\S+/) ", line)
        assert found, line
        url, origin = found.group(1), f"http://127.0.0.1:{found.group(2)}"
        async with httpx.AsyncClient(trust_env=False) as client:
            for path in ("", "app.css", "js/main.js", "js/form.js"):
                assert (await client.get(url + path)).status_code == 200, path

            async def catalogue() -> dict[str, Any]:
                async with client.stream("GET", url + "events", headers={"Origin": origin},
                                         timeout=None) as stream:
                    async for text in stream.aiter_lines():
                        if text.startswith("data: "):
                            event = json.loads(text[6:])
                            if event["type"] == "catalogue" and not event["data"]["budget"].get(
                                    "counting"):
                                return dict(event["data"])
                raise AssertionError("the event stream ended")

            listed = await asyncio.wait_for(catalogue(), 90)
        assert [t["name"] for t in listed["tools"]] == ["echo", "add"]
        assert listed["budget"] == {  # the token counter is an extra: said, not failed
            "missing": "counting tokens needs the 'dev' extra: pip install 'mcpkit[dev]'"}
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 30)


async def test_run_http_serves_and_the_client_commands_work(bare: Path,
                                                            user_env: dict[str, str]) -> None:
    with serving(bare, "examples/quickstart/server.py", user_env) as server:
        about = run(bare, "discover", server.url, env=user_env)
        assert about.returncode == 0, about.stderr
        assert about.stdout.splitlines()[0] == "quickstart 1.0.0 · modern 2026-07-28"
        tools = run(bare, "tools", server.url, env=user_env)
        assert tools.returncode == 0, tools.stderr
        assert "  add(a: integer, b: integer)" in tools.stdout.splitlines()
        added = run(bare, "call", server.url, "add", "a=2", "b=3", "--json", env=user_env)
        assert added.returncode == 0, added.stderr
        assert '"structuredContent": {\n    "sum": 5\n  }' in added.stdout
        legacy = run(bare, "call", server.url, "echo", "text=hi", "--era", "legacy", env=user_env)
        assert (legacy.returncode, legacy.stdout) == (0, "hi\n"), legacy.stderr
        # The same server, read by a peer that checks every message against the schema.
        async with httpx.AsyncClient(timeout=30) as http:
            peer = Peer(server.url, http)
            listed = await peer.post(peer.request_message("tools/list"))
            assert [t["name"] for t in listed.message["result"]["tools"]] == ["echo", "add"]
            call = await peer.post(peer.request_message(
                "tools/call", {"name": "add", "arguments": {"a": 40, "b": 2}}))
            assert call.message["result"]["structuredContent"] == {"sum": 42}


async def test_a_tool_that_asks_the_user_completes(bare: Path, user_env: dict[str, str],
                                                   tmp_path: Path) -> None:
    with serving(bare, "examples/calendar/server.py", user_env) as server:
        done = run(bare, "call", server.url, "create_event", "title=Asked", "--json",
                   stdin=f"{WHEN}\n", env=user_env)  # one line per field
        assert done.returncode == 0, done.stderr + server.output()
        assert 'calendar asks: When should "Asked" start?' in done.stderr
        assert '"startsAt": "2031-03-04T09:30:00+00:00"' in done.stdout
        assert "cryptography" not in server.output()
        # The same question over the wire: the retry carries the sealed requestState.
        async with httpx.AsyncClient(timeout=30) as http:
            peer = Peer(server.url, http)
            params = {"name": "create_event", "arguments": {"title": "Wired"}}
            caps = {"elicitation": {"form": {}}}
            first = await peer.post(peer.request_message(
                "tools/call", params, **{"io.modelcontextprotocol/clientCapabilities": caps}))
            asked = first.message["result"]
            assert asked["resultType"] == "input_required", asked
            (key,) = asked["inputRequests"]
            retry = await peer.post(peer.request_message(
                "tools/call", {**params, "requestState": asked["requestState"], "inputResponses": {
                    key: {"action": "accept", "content": {"startsAt": WHEN}}}},
                **{"io.modelcontextprotocol/clientCapabilities": caps}))
            assert retry.message["result"]["structuredContent"]["title"] == "Wired"
    with sqlite3.connect(tmp_path / "calendar.sqlite3") as db:
        rows = sorted(db.execute("SELECT title, starts_at FROM events").fetchall())
    assert rows == [("Asked", WHEN), ("Wired", WHEN)]


@pytest.mark.parametrize(("source", "line"), [
    ("""
     from mcpkit import Server
     server = Server("raw", "1.0.0")

     @server.tool(input_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
     def count(n: int) -> str:
         return str(n)
     """, "function 'count': input schema: a raw JSON Schema needs the 'schema' extra: "
          "pip install 'mcpkit[schema]'"),
    ("""
     from pydantic import BaseModel
     from mcpkit import Server
     server = Server("models", "1.0.0")

     class Point(BaseModel):
         x: int

     @server.tool()
     def where(p: Point) -> int:
         return p.x
     """, "importing pydantic needs the 'pydantic' extra: pip install 'mcpkit[pydantic]'"),
], ids=["raw-schema", "pydantic"])
@pytest.mark.parametrize("mode", ["--stdio", "--http"])
def test_a_server_needing_an_extra_is_refused_in_one_line(
        bare: Path, tmp_path: Path, source: str, line: str, mode: str) -> None:
    path = tmp_path / "server.py"
    path.write_text(textwrap.dedent(source))
    args = [mode] if mode == "--stdio" else [mode, f"127.0.0.1:{free_port()}"]
    done = run(bare, "run", str(path), *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"mcpkit run: {path}: {line}\n"
