"""Every `mcpkit` command that prints what a server says, against a server whose every word is
hostile (tests/helpers/client/hostile_text.py, a real stdio process): window titles, screen clears, C1
controls, BEL, a carriage return and backspaces that would overwrite a line with a fake "ok",
bidi overrides. None of it may reach the terminal raw: each command's stdout and stderr hold
the escaped text instead, `--json` output decodes to exactly what the server sent, and every
message the command sent the server passes the official schema (the probe's deliberately
wrong requests aside).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from cli_run import environ, mcpkit
from helpers import HELPERS
from helpers.client.hostile_text import FILES, HOSTILE, LONG_NAME, TASK_ID
from helpers.transports.listening import listening
from helpers.wire import MODERN, check_client_message

SERVER = shlex.join([sys.executable, str(HELPERS / "client" / "hostile_text.py")])
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\b", "\r")
"""What must never reach a terminal from a server."""
ESCAPED = "\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\u202etxt.exe\\u2066\\x08\\x08\\rok"


def run(tmp_path: Path, *args: str, checked: bool = True, **env: str) -> Any:
    """`mcpkit ARGS` against the hostile server; asserts nothing raw was printed."""
    log = tmp_path / "received.log"
    log.unlink(missing_ok=True)
    done = mcpkit(tmp_path, *args, env={"HOSTILE_LOG": str(log), **env})
    leaked = sorted({c for c in RAW if c in done.stdout + done.stderr})
    assert not leaked, f"mcpkit {args[0]}: {leaked!r} reached the terminal:\n{done.stdout}" \
                       f"\n{done.stderr}"
    if checked and log.exists():
        for line in log.read_text().splitlines():
            check_client_message(MODERN, json.loads(line))
    return done


def hostile_authorization(words: str) -> Any:
    """An ASGI app that is a protected MCP endpoint (401, its resource metadata) and its own
    authorization server, whose token endpoint refuses every client with `words`."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        base = f"http://{dict(scope['headers'])[b'host'].decode()}"
        path = scope["path"]
        status, body, headers = 404, {}, []
        if path == "/mcp":
            metadata = f"{base}/.well-known/oauth-protected-resource/mcp"
            status, headers = 401, [(b"www-authenticate",
                                     f'Bearer resource_metadata="{metadata}"'.encode())]
        elif path == "/.well-known/oauth-protected-resource/mcp":
            status, body = 200, {"resource": f"{base}/mcp", "authorization_servers": [base]}
        elif path == "/.well-known/oauth-authorization-server":
            status, body = 200, {"issuer": base, "token_endpoint": f"{base}/token",
                                 "authorization_endpoint": f"{base}/authorize",
                                 "grant_types_supported": ["client_credentials"],
                                 "token_endpoint_auth_methods_supported": [
                                     "client_secret_basic", "client_secret_post"]}
        elif path == "/token":
            status, body = 400, {"error": "invalid_client",
                                 "error_description": f"refused{words}"}
        while (await receive()).get("more_body"):
            pass
        data = json.dumps(body).encode()
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", b"%d" % len(data)),
            *headers]})
        await send({"type": "http.response.body", "body": data})

    return app


async def mcpkit_async(tmp_path: Path, *args: str, **env: str) -> Any:
    """`mcpkit ARGS` as a process, awaited, so a server in this test's loop can answer it."""
    import asyncio
    import subprocess

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpkit", *args, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**environ(tmp_path), "MCPKIT_DATA_DIR": str(tmp_path / "data"), **env})
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return subprocess.CompletedProcess(args, proc.returncode, out.decode(), err.decode())


def test_discover_tools_and_call_show_the_server_escaped(tmp_path: Path) -> None:
    discover = run(tmp_path, "discover", SERVER)
    assert discover.returncode == 0, discover.stderr
    assert discover.stdout.startswith(f"Title{ESCAPED} 1{ESCAPED} · modern")
    assert f"instructions: Be nice{ESCAPED}\n  | fake: line" in discover.stdout
    tools = run(tmp_path, "tools", SERVER)
    assert f"  say{ESCAPED}(x{ESCAPED}?: string)\n      Says{ESCAPED}\n" in tools.stdout
    # A warning the client's own modules log quotes the server: escaped as well.
    assert f"tools/list: ignored the tool 'remote{ESCAPED}'" in tools.stderr
    call = run(tmp_path, "call", SERVER, "say")
    assert call.returncode == 0, call.stderr
    assert f"line one{ESCAPED}\nline two\n" in call.stdout
    exact = run(tmp_path, "call", SERVER, "say", "--json")
    assert json.loads(exact.stdout)["content"][0]["text"] == f"line one{HOSTILE}\nline two"


def test_prompt_read_and_listen_show_the_server_escaped(tmp_path: Path) -> None:
    prompt = run(tmp_path, "prompt", SERVER, "greet")
    assert prompt.returncode == 0, prompt.stderr
    assert prompt.stdout == f"# A greeting{ESCAPED}\\nfake: line\nuser:\nHello{ESCAPED}\n"
    read = run(tmp_path, "read", SERVER, "file:///r")
    assert read.stdout == f"read{ESCAPED}\n"
    listen = run(tmp_path, "listen", SERVER, "--count", "2", "--uri", "file:///watched")
    assert listen.returncode == 0, listen.stderr
    assert listen.stdout == "tools/list_changed\nresources/updated file:///watched\n"
    assert f"# Title{ESCAPED} 1{ESCAPED} · modern" in listen.stderr


def test_a_task_and_its_id_status_questions_and_errors_are_shown_escaped(tmp_path: Path) -> None:
    followed = run(tmp_path, "call", SERVER, "job")
    assert followed.returncode == 0, followed.stderr
    assert f"task task{ESCAPED} completed: busy{ESCAPED}" in followed.stderr
    assert f"line one{ESCAPED}\nline two" in followed.stdout
    detached = run(tmp_path, "call", SERVER, "job", "--detach")
    assert detached.stdout == f"task{ESCAPED}\n"  # the server's id, never raw on stdout
    exact = run(tmp_path, "call", SERVER, "job", "--detach", "--json")
    assert json.loads(exact.stdout) == {"taskId": TASK_ID}
    asks = run(tmp_path, "task", "get", SERVER, "t1", HOSTILE_TASK="asks")
    assert asks.returncode == 0, asks.stderr
    assert (f"  asks q{ESCAPED} (elicitation/create): Sure{ESCAPED}?\n  | fake: line"
            in asks.stdout)
    failed = run(tmp_path, "task", "get", SERVER, "t1", HOSTILE_TASK="fails")
    assert f"  error -32603: broke{ESCAPED}" in failed.stdout
    waited = run(tmp_path, "task", "wait", SERVER, "t1")
    assert waited.returncode == 0 and f"line one{ESCAPED}" in waited.stdout


def test_skills_are_listed_escaped_and_a_300_byte_file_name_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    listed = run(tmp_path, "skills", SERVER)
    assert listed.returncode == 0, listed.stderr
    size = sum(map(len, FILES.values()))
    assert listed.stdout == (f"notes  skill://notes/SKILL.md  (2 files, {size} bytes)\n"
                             f"  Notes{ESCAPED}\n")
    assert f"mcpkit skills: set aside skill://x{ESCAPED}/SKILL.md: " in listed.stderr
    out = tmp_path / "out"
    got = run(tmp_path, "skills", SERVER, "get", "notes", "--out", str(out))
    assert got.returncode == 1
    assert got.stderr.count("\n") == 1 and "Traceback" not in got.stderr
    assert got.stderr.startswith(
        f"mcpkit skills: refused: skill skill://notes/SKILL.md: skill://notes/{LONG_NAME} "
        "cannot be written as a file: a name of 300 bytes")
    assert not out.exists() or list(out.iterdir()) == []


def test_probe_snapshot_and_diff_show_the_server_escaped(tmp_path: Path) -> None:
    probe = run(tmp_path, "probe", SERVER, checked=False)  # its odd requests are on purpose
    assert probe.returncode in (0, 1), probe.stderr
    assert probe.stdout.startswith(f"Title{ESCAPED} 1{ESCAPED} · modern 2026-07-28 · stdio\n")
    assert f"  extensions    com.example/x{ESCAPED}, " in probe.stdout
    assert f"  instructions  Be nice{ESCAPED} …\n" in probe.stdout
    assert f"-32601 Method not found{ESCAPED}" in probe.stdout
    assert f"\n  say{ESCAPED}  " in probe.stdout  # the chart of tokens per tool
    exact = run(tmp_path, "probe", SERVER, "--json", checked=False)
    assert json.loads(exact.stdout)["identity"]["instructions"] == f"Be nice{HOSTILE}\nfake: line"
    snapshot = run(tmp_path, "snapshot", SERVER, checked=False)
    assert snapshot.returncode == 0, snapshot.stderr
    surface = json.loads(snapshot.stdout)
    names = [entry["name"] for entry in surface["tools"]]
    assert f"say{HOSTILE}" in names
    for entry in surface["tools"]:  # make every tool's description differ from the live one
        entry["definition"]["description"] = "old words"
    saved = tmp_path / "surface.json"
    saved.write_text(json.dumps(surface))
    diff = run(tmp_path, "diff", str(saved), SERVER, checked=False)
    assert diff.returncode == 1, diff.stderr
    assert f"~ tool say{ESCAPED} (" in diff.stdout
    assert f"    description: 'old words' → 'Says{ESCAPED}\\nfake: line'" in diff.stdout


async def test_login_shows_a_hostile_authorization_servers_refusal_escaped(
    tmp_path: Path,
) -> None:
    """`mcpkit login --client-credentials` against a server whose authorization server
    refuses the client with a hostile `error_description`: one line, escaped."""
    async with listening(hostile_authorization(HOSTILE)) as srv:
        done = await mcpkit_async(tmp_path, "login", srv.url, "--client-credentials",
                                  "--client-id", "cli", MCPKIT_CLIENT_SECRET="s3cret")
    leaked = sorted({c for c in RAW if c in done.stdout + done.stderr})
    assert not leaked, f"{leaked!r} reached the terminal: {done.stderr}"
    assert done.returncode == 1, done.stderr
    assert f"refused{ESCAPED}" in done.stderr and "Traceback" not in done.stderr
