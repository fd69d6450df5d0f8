"""What a server says besides its results reaches the user: its log messages with
`--log-level`, the stderr behind an unexpected failure, its stderr lines as lines, and a note
about a stray stdout line once."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from cli_run import SERVER, checked, mcpkit


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_log_level_shows_the_server_s_log_messages_on_stderr(tmp_path: Path, era: str) -> None:
    done = mcpkit(tmp_path, "call", checked(SERVER), "chatty", "text=hi", "--log-level", "info",
                  "--era", era)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi\n"
    assert "[info chatty] heard hi" in done.stderr
    assert "debug detail" not in done.stderr
    deeper = mcpkit(tmp_path, "call", checked(SERVER), "chatty", "text=hi", "--log-level",
                    "debug", "--era", era)
    assert "[debug chatty] debug detail of hi" in deeper.stderr


def test_without_log_level_no_log_message_is_shown(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "call", checked(SERVER), "chatty", "text=hi")
    assert done.returncode == 0 and "heard hi" not in done.stderr


def test_an_unexpected_failure_shows_the_server_s_stderr_from_its_error_id(
    tmp_path: Path
) -> None:
    done = mcpkit(tmp_path, "call", SERVER, "crash")
    assert done.returncode == 1
    error_id = done.stdout.split("(error id ", 1)[1].split(")", 1)[0]
    assert "the server's stderr ended with:" in done.stderr
    assert f"  | tool 'crash' failed (error id {error_id})" in done.stderr
    assert "  | RuntimeError: the secret reason is boom" in done.stderr
    assert "the secret reason" not in done.stdout  # the answer itself keeps it out
    # The traceback is the tool's own: mcpkit's calling frames are left out, and counted.
    tail = done.stderr.split("the server's stderr ended with:", 1)[1]
    assert "frames of mcpkit calling it left out" in tail
    frames = [line for line in tail.splitlines() if line.startswith('  |   File "')]
    assert frames and all("first_hour_server.py" in line for line in frames), frames


def test_an_unexpected_failure_over_http_says_where_the_details_are(
    tmp_path: Path, http_server: str
) -> None:
    done = mcpkit(tmp_path, "call", http_server, "crash")
    assert done.returncode == 1
    assert "the details are in the server's log (its stderr) under error id" in done.stderr
    assert "mcpkit run --dev" in done.stderr


def test_a_server_run_with_dev_is_not_told_to_run_with_dev(tmp_path: Path) -> None:
    from helpers.transports.http_peer import ServerProcess

    server = ServerProcess.start(SERVER, "--dev")
    try:
        done = mcpkit(tmp_path, "call", server.url, "crash")
    finally:
        server.stop()
    assert done.returncode == 1
    assert "RuntimeError: the secret reason is boom" in done.stdout  # --dev: in the answer
    assert "the details are in the server's log (its stderr) under error id" in done.stderr
    assert "--dev" not in done.stderr


def test_a_server_s_stderr_is_relayed_with_its_line_breaks(tmp_path: Path) -> None:
    script = "import sys; sys.stderr.write('line one\\nline two\\n'); sys.exit(3)"
    done = mcpkit(tmp_path, "tools", shlex.join([sys.executable, "-c", script]))
    assert done.returncode == 1
    assert "exited with status 3; its stderr ended with:\n  | line one\n  | line two" \
        in done.stderr


def test_a_stray_stdout_line_is_noted_once(tmp_path: Path) -> None:
    noisy = tmp_path / "noisy_launcher.py"
    noisy.write_text(
        "import os, sys\n"
        "for _ in range(3):\n"
        "    os.write(1, b'{\"not\": \"json-rpc\"}\\n')\n"
        f"os.execv(sys.executable, [sys.executable, '-m', 'mcpkit', 'run', {SERVER!r}])\n"
    )
    done = mcpkit(tmp_path, "tools", shlex.join([sys.executable, str(noisy)]))
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("ignored a line on stdout that is not a JSON-RPC message") == 1
