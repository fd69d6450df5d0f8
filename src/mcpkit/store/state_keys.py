"""The persisted key ring: the keys that seal `requestState`, kept in the user's data folder.

A multi round-trip request may be retried in another process (a fresh stdio server, another
HTTP replica, a restart), and that process can open the sealed state only with the key that
sealed it. When nothing is configured (`ServerOptions.state_keys`, MCPKIT_STATE_KEYS), every
server of the user shares the ring in one file, so the exchange works across processes with
no setup:

- where: `MCPKIT_DATA_DIR`, else the platform's user data folder (`$XDG_DATA_HOME` or
  `~/.local/share` on Linux and other Unixes, `~/Library/Application Support` on macOS,
  `%LOCALAPPDATA%` on Windows) plus `mcpkit`; the file is `state-keys` there;
- created once, atomically: a private temporary file (mode 0600) is written in full and then
  linked to its name, which fails if another process got there first, so two processes that
  start at the same moment both end up with the winner's key and nobody reads half a file;
- never repaired: a file that other users may read, or that does not parse, is refused with
  `KeyFileError` naming the fix. Overwriting it would drop the key that open retries need;
- rotated by `rotate` (`mcpkit keys rotate`): a new key goes first and seals from then on, the
  previous one keeps opening until its `until` date, and keys past theirs are dropped. A server
  that loaded the ring notices the file changed (`PersistedRing`) and takes the new one.

The file is plain text, one key per line (url-safe base64), the first one sealing:

```
<key>
<key> until 2026-07-29T10:00:00+00:00
```

Imports: the standard library and `mcpkit.protocol.request_state`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from mcpkit.errors import KeyFileError
from mcpkit.protocol.request_state import KeyRing, decode_key

__all__ = [
    "DATA_DIR_ENV",
    "DEFAULT_KEEP",
    "KEY_FILE_NAME",
    "KeyFile",
    "KeyFileError",
    "PersistedRing",
    "StoredKey",
    "data_dir",
    "key_file",
    "load_or_create",
    "read_key_file",
    "rotate",
]

log = logging.getLogger("mcpkit.store")

DATA_DIR_ENV: Final = "MCPKIT_DATA_DIR"
"""Environment variable naming the folder that holds mcpkit's files (the key ring) instead of
the platform's user data folder."""
KEY_FILE_NAME: Final = "state-keys"
DEFAULT_KEEP: Final = 86_400.0
"""Seconds a retired key keeps opening after a rotation: a day covers the default life of a
`requestState` (five minutes) and of a handle (an hour) with room to spare."""

_HEADER: Final = (
    "# mcpkit state keys (docs/state.md): the first key seals, every key opens until its date.\n"
    "# Keep this file private (mode 0600); change it with `mcpkit keys rotate`.\n"
)
_POSIX: Final = os.name == "posix"


def data_dir(
    environ: Mapping[str, str] | None = None, platform: str | None = None,
    home: Path | None = None,
) -> Path:
    """The folder of mcpkit's own files for this user (not created here)."""
    env = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    configured = env.get(DATA_DIR_ENV)
    if configured:
        return Path(configured)
    base: str | None
    if platform == "win32":
        base = env.get("LOCALAPPDATA")
        if base:
            return Path(base) / "mcpkit"
        return (home or Path.home()) / "AppData" / "Local" / "mcpkit"
    if platform == "darwin":
        return (home or Path.home()) / "Library" / "Application Support" / "mcpkit"
    base = env.get("XDG_DATA_HOME")
    if base and os.path.isabs(base):  # the XDG rule: a relative value is ignored
        return Path(base) / "mcpkit"
    return (home or Path.home()) / ".local" / "share" / "mcpkit"


def key_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where the persisted key ring lives (`mcpkit keys path` prints it)."""
    return data_dir(environ) / KEY_FILE_NAME


@dataclass(frozen=True, slots=True)
class StoredKey:
    key: str
    """The key as url-safe base64 text."""
    until: float | None = None
    """Unix time after which a retired key no longer opens; None for the sealing key."""


@dataclass(frozen=True, slots=True)
class KeyFile:
    """The ring as read from its file, and the stamp that tells a later change apart."""

    path: Path
    keys: tuple[StoredKey, ...]
    stamp: tuple[int, int, int]
    """(inode, modification time in ns, size): a rotation replaces the file, so this changes."""

    def live(self, now: float) -> tuple[str, ...]:
        """The keys that still open at `now`, the sealing one first."""
        return tuple(k.key for k in self.keys if k.until is None or k.until > now)

    def next_expiry(self, now: float) -> float | None:
        """When the next retired key stops opening, if one still does."""
        return min((k.until for k in self.keys if k.until is not None and k.until > now),
                   default=None)


def _stamp(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def read_key_file(path: Path) -> KeyFile:
    """The ring in `path`; FileNotFoundError if there is none, KeyFileError if it is unusable."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if _POSIX and st.st_mode & 0o077:
            raise KeyFileError(
                f"the state key file {path} may be read by other users (mode "
                f"{st.st_mode & 0o777:04o}): run `chmod 600 {path}`, then `mcpkit keys rotate` "
                "if someone else may have read it"
            )
        data = f.read()
    return KeyFile(path, _parse(path, data), _stamp(st))


def _parse(path: Path, data: bytes) -> tuple[StoredKey, ...]:
    fix = (f"restore {path} from a backup, or delete it to start a new ring (retries in "
           "flight then fail)")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise KeyFileError(f"the state key file {path} is not text; {fix}") from None
    keys: list[StoredKey] = []
    seen: set[bytes] = set()
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        where = f"{path}, line {number}"
        until: float | None = None
        if len(fields) == 3 and fields[1] == "until":
            try:
                when = datetime.fromisoformat(fields[2])
            except ValueError:
                raise KeyFileError(f"{where}: {fields[2]!r} is not an ISO 8601 date; {fix}") from None
            until = (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
        elif len(fields) != 1:
            raise KeyFileError(f"{where}: expected a key, optionally followed by "
                               f"'until <ISO 8601 date>'; {fix}")
        try:
            raw = decode_key(fields[0], len(keys))
        except ValueError as exc:
            raise KeyFileError(f"{where}: {exc}; {fix}") from None
        if raw in seen:
            raise KeyFileError(f"{where}: the same key appears twice; {fix}")
        if not keys and until is not None:
            raise KeyFileError(f"{where}: the first key seals and must have no 'until'; {fix}")
        seen.add(raw)
        keys.append(StoredKey(KeyRing.key_text(raw), until))
    if not keys:
        raise KeyFileError(f"the state key file {path} holds no key; {fix}")
    return tuple(keys)


def _render(keys: tuple[StoredKey, ...]) -> bytes:
    lines = [_HEADER]
    for k in keys:
        date = "" if k.until is None else (
            " until " + datetime.fromtimestamp(k.until, UTC).isoformat(timespec="seconds"))
        lines.append(f"{k.key}{date}\n")
    return "".join(lines).encode("ascii")


def _write_private(folder: Path, data: bytes, random_bytes: Callable[[int], bytes]) -> Path:
    """A fully written, synced file of mode 0600 beside its final name, under a unique name."""
    temp = folder / f".{KEY_FILE_NAME}.{os.getpid()}.{random_bytes(6).hex()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        if _POSIX:
            os.fchmod(fd, 0o600)  # whatever the umask left
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return temp


def _sync_folder(folder: Path) -> None:
    if _POSIX:  # the new name itself must survive a crash, not only the bytes
        with contextlib.suppress(OSError):
            fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _make_folder(path: Path) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)


def load_or_create(
    path: Path, random_bytes: Callable[[int], bytes] = os.urandom
) -> KeyFile:
    """The ring in `path`, first creating it with one fresh key if there is none.

    Creation links a complete private file to the name, which fails when the name exists:
    of processes racing to create the ring, one wins and the others read its file.
    OSError when the folder cannot be written (a read-only home), KeyFileError as for
    `read_key_file`.
    """
    try:
        return read_key_file(path)
    except FileNotFoundError:
        pass
    _make_folder(path)
    temp = _write_private(path.parent, _render((StoredKey(KeyRing.key_text(random_bytes(32))),)),
                          random_bytes)
    try:
        os.link(temp, path)
    except FileExistsError:
        pass  # another process created it first: its key is the ring
    finally:
        temp.unlink(missing_ok=True)
    _sync_folder(path.parent)
    return read_key_file(path)


@contextlib.contextmanager
def _rotation_lock(path: Path) -> Iterator[None]:
    """One rotation at a time, so two cannot each drop the other's new key (POSIX only)."""
    fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if sys.platform != "win32":
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def rotate(
    path: Path, now: float, keep: float = DEFAULT_KEEP,
    random_bytes: Callable[[int], bytes] = os.urandom,
) -> KeyFile:
    """Put a new sealing key first; the previous one opens for `keep` more seconds.

    Keys already past their date are dropped; a retired key keeps the earlier of its own date
    and the new one, so a rotation never lengthens a retired key's life. The file is replaced
    whole, so a reader sees the old ring or the new one, never a mix.
    """
    if not keep >= 0:
        raise ValueError(f"keep must be a number of seconds >= 0, not {keep!r}")
    _make_folder(path)
    with _rotation_lock(path):
        current = load_or_create(path, random_bytes)
        until = now + keep
        kept = [StoredKey(k.key, until if k.until is None else min(k.until, until))
                for k in current.keys if k.until is None or k.until > now]
        ring = (StoredKey(KeyRing.key_text(random_bytes(32))), *kept)
        temp = _write_private(path.parent, _render(ring), random_bytes)
        try:
            os.replace(temp, path)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        _sync_folder(path.parent)
        return read_key_file(path)


class PersistedRing:
    """A `KeyRing` that follows its file: rebuilt when the file is replaced (a rotation) and
    when a retired key's date passes.

    A file that turns unusable while a server runs (deleted, made world-readable, garbled)
    is logged once per change and the ring already loaded is kept: refusing every retry would
    not bring the keys back.
    """

    __slots__ = ("_expiry", "_failed", "_file", "_ring", "path")

    def __init__(self, path: Path, random_bytes: Callable[[int], bytes] = os.urandom) -> None:
        self.path = path
        self._file = load_or_create(path, random_bytes)
        self._ring: KeyRing | None = None
        self._expiry: float | None = None
        self._failed: object = None

    def ring(self, now: float) -> KeyRing:
        try:
            stamp: object = _stamp(os.stat(self.path))
        except OSError as exc:
            stamp = exc.errno
        if stamp != self._file.stamp and stamp != self._failed:
            try:
                self._file = read_key_file(self.path)
                self._ring = None
                self._failed = None
            except (OSError, KeyFileError) as exc:
                self._failed = stamp
                log.error("state keys: keeping the ring loaded from %s: %s", self.path, exc)
        if self._ring is None or (self._expiry is not None and now >= self._expiry):
            self._ring = KeyRing(self._file.live(now), os.urandom)
            self._expiry = self._file.next_expiry(now)
        return self._ring
