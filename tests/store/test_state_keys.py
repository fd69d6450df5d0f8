"""The persisted key ring: where it lives, how it is created (private, atomically, once when
processes race), refused when unsafe or corrupt, rotated; and a server that follows it."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Context, Server, ServerOptions
from mcpkit.server.sealing import new_state_key
from mcpkit.store.state_keys import (
    KeyFileError,
    PersistedRing,
    data_dir,
    key_file,
    load_or_create,
    read_key_file,
    rotate,
)

NOW = 1_800_000_000.0
HOUR = 3600.0
CAPS = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


@pytest.fixture
def ring_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder of the test's own, and no configured keys."""
    monkeypatch.delenv("MCPKIT_STATE_KEYS", raising=False)
    monkeypatch.setenv("MCPKIT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data" / "state-keys"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- where -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("platform", "environ", "expected"), [
    ("linux", {}, "/home/ann/.local/share/mcpkit"),
    ("linux", {"XDG_DATA_HOME": "/data/ann"}, "/data/ann/mcpkit"),
    ("linux", {"XDG_DATA_HOME": "relative/is/ignored"}, "/home/ann/.local/share/mcpkit"),
    ("freebsd14", {}, "/home/ann/.local/share/mcpkit"),
    ("darwin", {"XDG_DATA_HOME": "/not/on/macos"}, "/home/ann/Library/Application Support/mcpkit"),
    ("win32", {"LOCALAPPDATA": "/c/Users/ann/AppData/Local"}, "/c/Users/ann/AppData/Local/mcpkit"),
    ("win32", {}, "/home/ann/AppData/Local/mcpkit"),
    ("linux", {"MCPKIT_DATA_DIR": "/srv/mcpkit", "XDG_DATA_HOME": "/data"}, "/srv/mcpkit"),
    ("darwin", {"MCPKIT_DATA_DIR": "/srv/mcpkit"}, "/srv/mcpkit"),
])
def test_the_data_folder_follows_the_platform(
    platform: str, environ: dict[str, str], expected: str
) -> None:
    assert data_dir(environ, platform, Path("/home/ann")) == Path(expected)


def test_the_key_file_is_state_keys_in_the_data_folder() -> None:
    assert key_file({"MCPKIT_DATA_DIR": "/srv/mcpkit"}) == Path("/srv/mcpkit/state-keys")


# -- created once, privately ---------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_the_ring_is_created_private_with_one_key(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "mcpkit" / "state-keys"
    old = os.umask(0o022)
    try:
        ring = load_or_create(path)
    finally:
        os.umask(old)
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    assert len(ring.keys) == 1 and ring.keys[0].until is None
    assert load_or_create(path).keys == ring.keys  # read back, never made again
    assert [p.name for p in path.parent.iterdir()] == ["state-keys"]  # no temporary file left


def test_a_process_that_loses_the_race_takes_the_winner_s_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state-keys"
    winner = new_state_key()
    real_link = os.link

    def link_after_the_winner(source: Any, target: Any) -> None:
        Path(target).write_text(f"{winner}\n")  # another process linked its file first
        Path(target).chmod(0o600)
        real_link(source, target)

    monkeypatch.setattr(os, "link", link_after_the_winner)
    ring = load_or_create(path)
    assert [k.key for k in ring.keys] == [winner]
    assert [p.name for p in tmp_path.iterdir()] == ["state-keys"]


RACER = """
import sys
from pathlib import Path
from mcpkit.store.state_keys import load_or_create
sys.stdin.readline()  # every racer is started and waiting before any goes
print(load_or_create(Path(sys.argv[1])).keys[0].key, flush=True)
"""


def test_processes_starting_at_the_same_moment_end_with_one_key(tmp_path: Path) -> None:
    path = tmp_path / "mcpkit" / "state-keys"
    racers = [subprocess.Popen([sys.executable, "-c", RACER, str(path)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for _ in range(8)]
    try:
        for racer in racers:  # release them all at once
            assert racer.stdin is not None
            racer.stdin.write(b"go\n")
        for racer in racers:
            assert racer.stdin is not None
            racer.stdin.flush()
        outputs = [racer.communicate(timeout=60) for racer in racers]
    finally:
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
                racer.wait()
    assert all(r.returncode == 0 for r in racers), [err for _, err in outputs]
    keys = {out.decode().strip() for out, _ in outputs}
    assert keys == {k.key for k in read_key_file(path).keys} and len(keys) == 1
    assert [p.name for p in path.parent.iterdir()] == ["state-keys"]


# -- refused, never repaired ---------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
@pytest.mark.parametrize("unsafe", [0o644, 0o640, 0o604, 0o660])
def test_a_key_file_others_may_read_is_refused_and_left_alone(tmp_path: Path, unsafe: int) -> None:
    path = tmp_path / "state-keys"
    load_or_create(path)
    before = path.read_bytes()
    path.chmod(unsafe)
    for attempt in (lambda: load_or_create(path), lambda: rotate(path, NOW)):
        with pytest.raises(KeyFileError) as refused:
            attempt()
        assert str(path) in str(refused.value) and f"chmod 600 {path}" in str(refused.value)
        assert f"{unsafe:04o}" in str(refused.value)
    assert path.read_bytes() == before and mode(path) == unsafe


KEY = new_state_key()


@pytest.mark.parametrize(("content", "says"), [
    (b"", "holds no key"),
    (b"# only a comment\n\n", "holds no key"),
    (b"\xff\xfe\x00garbage", "is not text"),
    (b"not base64 at all!\n", "line 1"),
    (b"c2hvcnQ\n", "line 1: state key #1 is 5 bytes"),
    (f"{KEY}\n{KEY}\n".encode(), "line 2: the same key appears twice"),
    (f"{KEY} until 2030-01-01T00:00:00+00:00\n".encode(), "must have no 'until'"),
    (f"{KEY}\n{new_state_key()} until someday\n".encode(), "line 2: 'someday' is not an ISO"),
    (f"{KEY} extra words here\n".encode(), "optionally followed by 'until"),
])
def test_a_corrupt_key_file_is_refused_and_left_alone(
    tmp_path: Path, content: bytes, says: str
) -> None:
    path = tmp_path / "state-keys"
    path.write_bytes(content)
    path.chmod(0o600)
    for attempt in (lambda: load_or_create(path), lambda: rotate(path, NOW)):
        with pytest.raises(KeyFileError, match=r"restore .* from a backup, or delete it") as bad:
            attempt()
        assert says in str(bad.value) and str(path) in str(bad.value)
    assert path.read_bytes() == content


# -- rotation ------------------------------------------------------------------------------------


def test_rotation_puts_a_new_key_first_and_keeps_the_old_one_for_a_while(tmp_path: Path) -> None:
    path = tmp_path / "state-keys"
    first = load_or_create(path).keys[0].key
    rotated = rotate(path, NOW, keep=HOUR)
    second = rotated.keys[0].key
    assert [k.key for k in rotated.keys] == [second, first] and second != first
    assert rotated.keys[1].until == NOW + HOUR and rotated.keys[0].until is None
    assert rotated.live(NOW + HOUR - 1) == (second, first)
    assert rotated.live(NOW + HOUR) == (second,)
    assert rotated.next_expiry(NOW) == NOW + HOUR
    # A second rotation shortens nothing it need not, and a key past its date is dropped.
    again = rotate(path, NOW + 60, keep=2 * HOUR)
    assert [k.until for k in again.keys] == [None, NOW + 60 + 2 * HOUR, NOW + HOUR]
    late = rotate(path, NOW + 2 * HOUR, keep=HOUR)
    assert [k.key for k in late.keys][1:] == [again.keys[0].key, second]
    assert first not in {k.key for k in late.keys}
    if os.name == "posix":
        assert mode(path) == 0o600
    assert read_key_file(path).keys == late.keys


def test_rotation_refuses_a_negative_keep(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="keep must be a number of seconds >= 0"):
        rotate(tmp_path / "state-keys", NOW, keep=-1)
    assert not (tmp_path / "state-keys").exists()


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


def asking_server(clock: Clock, keys: tuple[str, ...] = ()) -> Server:
    server = Server("ring", options=ServerOptions(clock=clock, state_keys=keys))

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Asks for a name."""
        answer = await ctx.elicit("name", "Your name?", {"name": str})
        return f"Hello, {answer['name']}!"

    return server


async def state_of(wire: Any) -> str:
    reply = await wire.request("tools/call", {"name": "greet", "arguments": {}}, **CAPS)
    return str(reply["result"]["requestState"])


async def answer(wire: Any, state: str) -> dict[str, Any]:
    reply: dict[str, Any] = await wire.request("tools/call", {
        "name": "greet", "arguments": {}, "requestState": state,
        "inputResponses": {"name": {"action": "accept", "content": {"name": "Ann"}}}}, **CAPS)
    return reply


def greeted(reply: dict[str, Any]) -> bool:
    return bool(reply.get("result", {}).get("content", [{}])[0].get("text") == "Hello, Ann!")


async def test_states_sealed_before_a_rotation_open_after_it_until_the_old_key_retires(
    ring_path: Path, wire_factory: Any
) -> None:
    clock = Clock()
    running = wire_factory(asking_server(clock))  # loaded the ring before the rotation
    before = await state_of(running)
    rotate(ring_path, clock.now, keep=HOUR)
    started_after = wire_factory(asking_server(clock))
    assert greeted(await answer(started_after, before))
    after = await state_of(running)  # the running server noticed: it seals with the new key
    newest = read_key_file(ring_path).keys[0].key
    assert greeted(await answer(wire_factory(asking_server(clock, (newest,))), after))
    clock.now = NOW + HOUR + 1  # the old key retired: what it sealed no longer opens
    for wire in (running, started_after):
        refused = await answer(wire, before)
        assert "key this server does not have" in refused["error"]["message"], refused


# -- the order of the sources, and a ring that cannot be used ------------------------------------


async def test_configured_keys_come_before_the_ring(
    ring_path: Path, wire_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    env_key, option_key = new_state_key(), new_state_key()
    monkeypatch.setenv("MCPKIT_STATE_KEYS", env_key)
    from_env = await state_of(wire_factory(asking_server(clock)))
    from_options = await state_of(wire_factory(asking_server(clock, (option_key,))))
    assert not ring_path.parent.exists()  # neither touched the data folder
    monkeypatch.delenv("MCPKIT_STATE_KEYS")
    assert greeted(await answer(wire_factory(asking_server(clock, (env_key,))), from_env))
    assert greeted(await answer(wire_factory(asking_server(clock, (option_key,))), from_options))
    assert not greeted(await answer(wire_factory(asking_server(clock)), from_env))  # the ring


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
async def test_a_server_whose_key_file_is_unsafe_refuses_to_seal_until_it_is_fixed(
    ring_path: Path, wire_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    load_or_create(ring_path)
    ring_path.chmod(0o644)
    wire = wire_factory(asking_server(Clock()))
    with caplog.at_level(logging.ERROR):
        reply = await wire.request("tools/call", {"name": "greet", "arguments": {}}, **CAPS)
    assert reply["error"]["code"] == -32603  # the server's fault: the operator has the why
    assert "chmod" not in reply["error"]["message"]  # and no path reaches the client
    assert f"chmod 600 {ring_path}" in caplog.text
    assert mode(ring_path) == 0o644
    ring_path.chmod(0o600)  # fixed: no restart needed
    assert greeted(await answer(wire, await state_of(wire)))


def test_a_running_server_keeps_its_ring_when_the_file_turns_bad(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state-keys"
    persisted = PersistedRing(path)
    ring = persisted.ring(NOW)
    path.write_text("garbled\n")
    with caplog.at_level(logging.ERROR, logger="mcpkit.store"):
        assert persisted.ring(NOW) is ring
        assert persisted.ring(NOW) is ring
    assert caplog.text.count("keeping the ring loaded from") == 1  # once per change of the file
    rotate(tmp_path / "elsewhere", NOW)
    os.replace(tmp_path / "elsewhere", path)  # a good ring again: taken up
    assert persisted.ring(NOW) is not ring
