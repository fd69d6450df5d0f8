"""`mcpkit keys path | new | export | rotate` as a person runs them: real processes, a home of
the test's own."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.client.schema_tap import ROOT

from mcpkit.protocol.request_state import decode_key


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("MCPKIT_STATE_KEYS", "MCPKIT_DATA_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def keys(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mcpkit", "keys", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=60, env=dict(os.environ))


def test_keys_path_names_the_ring_in_the_user_data_folder_without_making_it(
    home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    done = keys("path")
    assert done.returncode == 0, done.stderr
    ring = home / ".local" / "share" / "mcpkit" / "state-keys"
    assert done.stdout == f"{ring}\n" and not ring.exists()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert keys("path").stdout == f"{tmp_path / 'xdg' / 'mcpkit' / 'state-keys'}\n"


def test_keys_rotate_puts_a_new_key_first_and_keeps_the_old_one(home: Path) -> None:
    before = keys("export")
    assert before.returncode == 0, before.stderr
    (old,) = before.stdout.strip().split(",")
    rotated = keys("rotate", "--keep", "600")
    assert rotated.returncode == 0, rotated.stderr
    assert "rotated" in rotated.stderr and "1 older key(s) still open" in rotated.stderr
    assert rotated.stdout == "" and old not in rotated.stderr  # no key is shown unasked
    new, kept = keys("export").stdout.strip().split(",")
    assert kept == old and new != old and len(decode_key(new)) == 32
    ring = home / ".local" / "share" / "mcpkit" / "state-keys"
    assert stat.S_IMODE(ring.stat().st_mode) == 0o600


def test_keys_new_prints_a_key_and_stores_nothing(home: Path) -> None:
    done = keys("new")
    assert done.returncode == 0 and len(decode_key(done.stdout.strip())) == 32
    assert not (home / ".local").exists()


@pytest.mark.parametrize("action", ["export", "rotate"])
def test_a_corrupt_ring_is_one_line_and_status_1_and_is_left_alone(
    home: Path, action: str
) -> None:
    ring = home / ".local" / "share" / "mcpkit" / "state-keys"
    ring.parent.mkdir(parents=True)
    ring.write_text("half a key\n")
    ring.chmod(0o600)
    done = keys(action)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"mcpkit keys {action}: ")
    assert f"{ring}, line 1" in done.stderr
    assert ring.read_text() == "half a key\n"


def test_keys_says_when_the_environment_overrides_the_ring(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPKIT_STATE_KEYS", keys("new").stdout.strip())
    done = keys("path")
    assert done.returncode == 0
    assert "MCPKIT_STATE_KEYS is set" in done.stderr


def test_a_negative_keep_is_a_usage_error(home: Path) -> None:
    done = keys("rotate", "--keep", "-5")
    assert done.returncode == 2 and "--keep must be seconds >= 0" in done.stderr
    assert not (home / ".local").exists()


def _unsafe_ring(home: Path) -> Path:
    assert keys("rotate").returncode == 0  # makes the ring, as a first server would
    ring = Path(keys("path").stdout.strip())
    ring.chmod(0o644)
    return ring


@pytest.mark.parametrize("how", ["stdio", "http", "script"])
def test_a_server_refuses_at_start_a_key_ring_others_may_read(home: Path, how: str) -> None:
    ring = _unsafe_ring(home)
    calendar = str(ROOT / "examples" / "calendar" / "server.py")
    command = {
        "stdio": ["-m", "mcpkit", "run", calendar],
        "http": ["-m", "mcpkit", "run", calendar, "--http", "127.0.0.1:0"],
        "script": [str(ROOT / "examples" / "quickstart" / "server.py")],
    }[how]
    env = {**os.environ, "CALENDAR_DB": str(home / "calendar.sqlite3")}
    done = subprocess.run([sys.executable, *command], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    assert f"chmod 600 {ring}" in done.stderr
    assert done.stdout == ""  # nothing reached the protocol's stdout
    if how != "script":  # `mcpkit run` says it in one line; a script's run() raises
        assert "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert stat.S_IMODE(ring.stat().st_mode) == 0o644  # reported, never rewritten
