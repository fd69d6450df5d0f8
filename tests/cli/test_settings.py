"""Settings of `mcpkit run` from the environment and an env file: one table gives every option
its variable and docs/settings.md, a value comes from the flag, else the environment, else the
file, else the server file or the default, and `--show-config` names where each came from."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from cli_run import ROOT, environ, mcpkit
from helpers import HELPERS
from helpers.transports.http_peer import ServerProcess, checked_transport

from mcpkit.cli.main import _parser
from mcpkit.cli.settings import CODE_ONLY, SETTINGS
from mcpkit.cli.settings_doc import settings_markdown
from mcpkit.clients import Client
from mcpkit.ext.tasks import TaskOptions
from mcpkit.server.options import ServerOptions

CONFIGURED = str(HELPERS / "client" / "config_server.py")
QUICKSTART = str(ROOT / "examples" / "quickstart" / "server.py")
LONG_JOB = str(ROOT / "examples" / "long_job" / "server.py")


def test_docs_settings_md_is_the_table_generated_from_the_settings() -> None:
    written = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert written == settings_markdown(), "docs/settings.md is stale: run scripts/settings-doc"


def test_every_server_option_is_a_setting_or_said_to_be_code_only() -> None:
    covered = {s.name for s in SETTINGS if s.server_option}
    covered |= {s.also_sets for s in SETTINGS if s.also_sets}
    fields = {f.name for f in dataclasses.fields(ServerOptions)} - {"extensions"}
    fields |= {f"tasks.{f.name}" for f in dataclasses.fields(TaskOptions)}
    missing = fields - covered - set(CODE_ONLY)
    assert not missing, f"ServerOptions fields with no setting: {sorted(missing)}"
    assert not covered & set(CODE_ONLY)


def test_every_option_of_mcpkit_run_has_its_variable() -> None:
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    run = sub.choices["run"]
    flags = {opt for action in run._actions for opt in action.option_strings}
    tabled = {s.flag for s in SETTINGS if s.flag}
    assert flags - {"-h", "--help", "--env-file", "--show-config"} == tabled
    assert len({s.env for s in SETTINGS}) == len(SETTINGS)
    assert all(s.env.startswith("MCPKIT_") and s.env.isupper() for s in SETTINGS)


def config_of(output: str) -> dict[str, tuple[str, str]]:
    """`--show-config` output: each setting's (value, source)."""
    rows = {}
    for line in output.splitlines()[1:]:
        name, value, source = re.split(r"\s{2,}", line.strip())
        rows[name] = (value, source)
    return rows


def show(tmp_path: Path, *args: str, **env: str) -> dict[str, tuple[str, str]]:
    done = mcpkit(tmp_path, "run", *args, "--show-config", env=environ(tmp_path, **env))
    assert done.returncode == 0, done.stderr
    return config_of(done.stdout)


def test_a_value_comes_from_the_flag_then_the_environment_then_the_file_then_the_default(
    tmp_path: Path,
) -> None:
    env_file = tmp_path / "settings.env"
    env_file.write_text("# the team's settings\nMCPKIT_SESSION_IDLE=30\nMCPKIT_PAGE_SIZE=7\n"
                        "MCPKIT_STATE_TTL=99\nMCPKIT_LIST_CACHE='5000,private'\n")
    seen = show(tmp_path, QUICKSTART, "--env-file", str(env_file), "--session-idle", "10",
                MCPKIT_SESSION_IDLE="20", MCPKIT_PAGE_SIZE="8")
    assert seen["--session-idle"] == ("10", "--session-idle")
    assert seen["MCPKIT_PAGE_SIZE"] == ("8", "MCPKIT_PAGE_SIZE (environment)")
    assert seen["MCPKIT_STATE_TTL"] == ("99", f"MCPKIT_STATE_TTL ({env_file})")
    assert seen["MCPKIT_LIST_CACHE"] == ("5000,private", f"MCPKIT_LIST_CACHE ({env_file})")
    assert seen["MCPKIT_TASKS_LEASE_S"] == ("15", "default")
    assert seen["--workers"] == ("—", "default")


def test_show_config_tells_the_server_files_options_from_the_defaults_and_hides_secrets(
    tmp_path: Path,
) -> None:
    server = tmp_path / "paged.py"
    server.write_text("from mcpkit import Server, ServerOptions\n"
                      "server = Server('paged', options=ServerOptions(page_size=3))\n")
    seen = show(tmp_path, str(server), "--dev", "--store", "postgresql://me:pw@db/x",
                MCPKIT_STATE_KEYS="a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s=,ampqampqampqampqampqampqampqampqampqampqamo=")
    assert seen["MCPKIT_PAGE_SIZE"] == ("3", "server file")
    assert seen["MCPKIT_EXPOSE_ERRORS"] == ("true", "--dev")
    assert seen["--store"] == ("postgresql://me:***@db/x", "--store")
    assert seen["MCPKIT_STATE_KEYS"] == ("2 keys, hidden", "MCPKIT_STATE_KEYS (environment)")


def test_a_flag_of_one_mode_wins_over_the_other_from_the_environment(tmp_path: Path) -> None:
    seen = show(tmp_path, QUICKSTART, "--stdio", MCPKIT_HTTP="9000")
    assert seen["--stdio"] == ("true", "--stdio")
    assert seen["--http"] == ("—", "default")
    assert show(tmp_path, QUICKSTART, MCPKIT_HTTP="1")["--http"] == (
        "127.0.0.1:8000/mcp", "MCPKIT_HTTP (environment)")
    done = mcpkit(tmp_path, "run", QUICKSTART, "--show-config",
                  env=environ(tmp_path, MCPKIT_HTTP="9000", MCPKIT_STDIO="1"))
    assert done.returncode == 2
    assert "exclude each other" in done.stderr


@pytest.mark.parametrize(("env", "file", "message"), [
    ({"MCPKIT_PAGE_SIZE": "lots"}, None,
     "MCPKIT_PAGE_SIZE='lots' (environment): expected a whole number above zero"),
    ({}, "MCPKIT_TASKS_LEASE_S=-1\n", "MCPKIT_TASKS_LEASE_S='-1' in {file}: expected seconds"),
    ({}, "MCPKIT_PAGESIZE=5\n", "{file}: MCPKIT_PAGESIZE is no setting of mcpkit run (did you "
                                "mean MCPKIT_PAGE_SIZE?)"),
    ({"MCPKIT_LOGGING": "maybe"}, None, "MCPKIT_LOGGING='maybe' (environment): expected 1, true"),
    ({"MCPKIT_STORE": "mysql://db"}, None, "MCPKIT_STORE='mysql://db' (environment): "),
    ({"MCPKIT_TASKS_STORE": "mysql://db"}, None, "MCPKIT_TASKS_STORE='mysql://db' (environment): "
     "expected memory, sqlite:///PATH (or sqlite:PATH), postgresql://USER@HOST/DB or "
     "redis://HOST:PORT/DB, or the path of an SQLite file"),
])
def test_a_bad_setting_is_one_line_naming_where_it_was_set(
    tmp_path: Path, env: dict[str, str], file: str | None, message: str,
) -> None:
    args = [QUICKSTART, "--show-config"]
    path = tmp_path / "bad.env"
    if file is not None:
        path.write_text(file)
        args += ["--env-file", str(path)]
    done = mcpkit(tmp_path, "run", *args, env=environ(tmp_path, **env))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert message.format(file=path) in done.stderr


def test_a_mistyped_variable_in_the_environment_is_warned_about(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "run", QUICKSTART, "--show-config",
                  env=environ(tmp_path, MCPKIT_PAGESIZE="5"))
    assert done.returncode == 0
    assert "warning: MCPKIT_PAGESIZE is no setting of mcpkit run (did you mean " \
           "MCPKIT_PAGE_SIZE?)" in done.stderr
    done = mcpkit(tmp_path, "run", QUICKSTART, "--env-file", str(tmp_path / "none.env"))
    assert done.returncode == 2
    assert "--env-file" in done.stderr and "no such file" in done.stderr


async def test_a_served_server_takes_its_options_and_environment_from_the_env_file(
    tmp_path: Path,
) -> None:
    env_file = tmp_path / "server.env"
    env_file.write_text("MCPKIT_PAGE_SIZE=1\nGREETING=from the file\nKEPT=file\n")
    server = ServerProcess.start(CONFIGURED, "--env-file", str(env_file),
                                 env={"KEPT": "environment"})
    try:
        async with Client(checked_transport(server.url, check_server=True)) as client:
            page = await client.request("tools/list")
            assert len(page["tools"]) == 1 and "nextCursor" in page, "page_size 1"
            assert (await client.call_tool("setting", {"name": "GREETING"})).text == \
                "from the file"
            assert (await client.call_tool("setting", {"name": "KEPT"})).text == "environment"
    finally:
        server.stop()


async def test_a_reloading_server_set_from_the_environment_serves_once(tmp_path: Path) -> None:
    server = ServerProcess.start(CONFIGURED, env={"MCPKIT_RELOAD": "1", "MCPKIT_PAGE_SIZE": "1"})
    try:
        async with Client(checked_transport(server.url, check_server=True)) as client:
            page = await client.request("tools/list")
            assert len(page["tools"]) == 1
        output = server.output()
    finally:
        server.stop()
    assert output.count("reloading on changes") == 1, "the child did not reload too"


async def test_the_task_settings_of_a_run_reach_its_tasks(tmp_path: Path) -> None:
    # The Tasks runtime is installed when the file registers its first task tool, before the
    # run's settings replace the server's options: it must serve with the settings' values.
    server = ServerProcess.start(LONG_JOB, env={
        "MCPKIT_TASKS_POLL_INTERVAL_MS": "1234", "MCPKIT_TASKS_SYNC_BUDGET_S": "0.001",
        "MCPKIT_TASKS_STORE": str(tmp_path / "run-tasks.sqlite3")})
    try:
        async def publish(*_: Any) -> dict[str, Any]:
            return {"action": "accept", "content": {"publish": True}}

        async with Client(checked_transport(server.url, check_server=True),
                          elicit=publish) as client:
            handle = await client.start_tool("build_report", {
                "topic": "tides", "sections": 1, "seconds_per_section": 0.2})
            assert handle.task_id is not None, "past a sync budget of 1 ms the call is a task"
            assert handle.latest["pollIntervalMs"] == 1234
            assert (await handle.wait()).text.startswith("Report on tides (published)")
    finally:
        server.stop()
    assert (tmp_path / "run-tasks.sqlite3").stat().st_size > 0, "kept in the store the run named"


def test_a_worker_builds_its_server_with_the_options_of_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcpkit.cli.workers import SPEC_ENV, app

    monkeypatch.setenv(SPEC_ENV, json.dumps({"target": CONFIGURED, "address": "127.0.0.1:0"}))
    monkeypatch.setenv("MCPKIT_PAGE_SIZE", "2")
    monkeypatch.setenv("MCPKIT_TASKS_LEASE_S", "40")
    built = app()
    assert built.server.options.page_size == 2
    assert built.server.options.extension("tasks", TaskOptions).lease_s == 40.0
    assert os.environ["MCPKIT_PAGE_SIZE"] == "2"


def test_the_protection_options_are_settings_and_a_secret_may_come_from_the_file(
    tmp_path: Path,
) -> None:
    from mcpkit.cli.run_auth import ENV, SECRET_ENV
    from mcpkit.cli.settings import by_name

    settings = by_name()
    assert {settings[f"auth_{name}"].env for name in ENV} == set(ENV.values())
    assert settings["auth_client_secret"].env == SECRET_ENV
    assert settings["auth_client_secret"].flag is None, "a secret is never a flag"
    env_file = tmp_path / "auth.env"
    env_file.write_text("MCPKIT_AUTH_ISSUER=https://auth.example.com\n"
                        "MCPKIT_AUTH_CLIENT_SECRET=s3cret\n")
    seen = show(tmp_path, QUICKSTART, "--http", "9000", "--env-file", str(env_file),
                "--auth-scopes", "a:read")
    assert seen["--auth-issuer"] == ("https://auth.example.com", f"MCPKIT_AUTH_ISSUER ({env_file})")
    assert seen["--auth-scopes"] == ("a:read", "--auth-scopes")
    assert seen["MCPKIT_AUTH_CLIENT_SECRET"] == ("set, hidden",
                                                 f"MCPKIT_AUTH_CLIENT_SECRET ({env_file})")
    assert "s3cret" not in str(seen)
