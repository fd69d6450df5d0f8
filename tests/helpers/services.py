"""Real PostgreSQL and Redis servers for the tests, started on loopback in temporary folders.

API (stable; the store suite and the scale-out tests build on it):

- `postgres_url` (session fixture): `postgresql://mcpkit@127.0.0.1:PORT/mcpkit`, a fresh cluster
  made with initdb and run with pg_ctl (as the unprivileged `mcpkit-test` user when the tests
  run as root, since PostgreSQL refuses root).
- `redis_url` (session fixture): `redis://127.0.0.1:PORT/0`, a `redis-server` with no
  persistence.
- `postgres_service` / `redis_service` (session fixtures): the `Service` behind each URL.
- `restartable` (function fixture): a `Restartable` with `.postgres` and `.redis`
  (`Service`s, started on first use) for the fault tests: `service.stop()` stops the server
  (fast, no waiting for clients), `service.start()` starts it again on the same port with the
  same data, and the fixture makes sure both run again when the test ends.
  `service.pause()` stops its processes with SIGSTOP, a server that hangs: connections are
  still accepted by the kernel and nothing is answered; `service.resume()` sends SIGCONT
  (the fixture resumes a paused one too).
- `Service.url` is the URL; `Service.running` says whether it is up.

When a server's binaries are missing, the tests that need it skip with one line naming the
package to install; where every real part is required (CI, tests/helpers/real_parts.py) they fail
instead, so a CI run never passes by skipping.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.real_parts import missing, postgres_bin, redis_binary

__all__ = ["Restartable", "Service", "free_port", "postgres_bin"]

_PG_USER = "mcpkit-test"
"""The system user PostgreSQL runs as when the tests run as root."""
_START_TIMEOUT = 60.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes] | None, what: str) -> None:
    """Until `port` accepts connections (bounded), or `proc` has died."""
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} before listening")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {_START_TIMEOUT}s")


class Service:
    """One server process the tests own: started, stopped and restarted on a fixed port."""

    def __init__(self, name: str, port: int, url: str) -> None:
        self.name = name
        self.port = port
        self.url = url
        self.running = False
        self.paused = False

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def restart(self) -> None:
        self.stop()
        self.start()

    def pids(self) -> list[int]:
        """The server's processes, to pause."""
        raise NotImplementedError

    def pause(self) -> None:
        """Hang the server: every process stopped (SIGSTOP), its sockets left open."""
        for pid in self.pids():
            os.kill(pid, signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):  # a backend that was exiting
                os.kill(pid, signal.SIGCONT)
        self.paused = False


class _Postgres(Service):
    def __init__(self, folder: Path) -> None:
        port = free_port()
        super().__init__("postgresql", port, f"postgresql://mcpkit@127.0.0.1:{port}/mcpkit")
        self.folder = folder
        self.data = folder / "data"
        self.log = folder / "postgres.log"
        self._as: list[str] = []
        if os.geteuid() == 0:
            self._ensure_user()
            shutil.chown(folder, _PG_USER)
            self._as = ["runuser", "-u", _PG_USER, "--"]
        initdb, self._pg_ctl = postgres_bin("initdb"), postgres_bin("pg_ctl")
        assert initdb and self._pg_ctl
        self._run([initdb, "-D", str(self.data), "-U", "mcpkit", "--auth=trust",
                   "--encoding=UTF8", "--no-sync"])
        conf = self.data / "postgresql.conf"
        with open(conf, "a") as f:
            f.write(f"\nlisten_addresses = '127.0.0.1'\nport = {port}\n"
                    f"unix_socket_directories = '{folder}'\nmax_connections = 200\n"
                    "fsync = off\nfull_page_writes = off\n")

    @staticmethod
    def _ensure_user() -> None:
        probe = subprocess.run(["id", "-u", _PG_USER], capture_output=True)
        if probe.returncode != 0:
            subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                            "/usr/sbin/nologin", _PG_USER], check=True, capture_output=True)

    def _run(self, argv: list[str]) -> None:
        done = subprocess.run([*self._as, *argv], capture_output=True, timeout=_START_TIMEOUT)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:2])} failed ({done.returncode}): "
                               f"{done.stderr.decode(errors='replace')[-2000:]}")

    def start(self) -> None:
        self._run([self._pg_ctl, "-D", str(self.data), "-l", str(self.log), "-w",
                   "-t", str(int(_START_TIMEOUT)), "start"])
        _wait_port(self.port, None, "postgres")
        if not getattr(self, "_created", False):
            psql = postgres_bin("psql")
            assert psql
            self._run([psql, "-h", "127.0.0.1", "-p", str(self.port), "-U", "mcpkit",
                       "-d", "postgres", "-q", "-c", "CREATE DATABASE mcpkit"])
            self._created = True
        self.running = True

    def stop(self) -> None:
        if self.running:
            self._run([self._pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop"])
            self.running = False

    def pids(self) -> list[int]:
        """The postmaster (the first line of postmaster.pid) and every process it forked."""
        main = int((self.data / "postmaster.pid").read_text().split()[0])
        children = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    stat = (entry / "stat").read_text()
                    if int(stat.rsplit(")", 1)[1].split()[1]) == main:
                        children.append(int(entry.name))
        return [main, *children]


class _Redis(Service):
    def __init__(self, folder: Path) -> None:
        port = free_port()
        super().__init__("redis", port, f"redis://127.0.0.1:{port}/0")
        self.folder = folder
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        exe = redis_binary()
        assert exe
        self._proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.folder), "--protected-mode", "yes"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        _wait_port(self.port, self._proc, "redis-server")
        self.running = True

    def pids(self) -> list[int]:
        return [self._proc.pid] if self._proc is not None else []

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        self.running = False


@pytest.fixture(scope="session")
def postgres_service() -> Iterator[Service]:
    if postgres_bin("initdb") is None or postgres_bin("pg_ctl") is None:
        missing("postgresql")
    with tempfile.TemporaryDirectory(prefix="mcpkit-pg-") as folder:
        os.chmod(folder, 0o755)
        service = _Postgres(Path(folder))
        service.start()
        try:
            yield service
        finally:
            service.stop()


@pytest.fixture(scope="session")
def redis_service() -> Iterator[Service]:
    if redis_binary() is None:
        missing("redis")
    with tempfile.TemporaryDirectory(prefix="mcpkit-redis-") as folder:
        service = _Redis(Path(folder))
        service.start()
        try:
            yield service
        finally:
            service.stop()


@pytest.fixture(scope="session")
def postgres_url(postgres_service: Service) -> str:
    return postgres_service.url


@pytest.fixture(scope="session")
def redis_url(redis_service: Service) -> str:
    return redis_service.url


class Restartable:
    """The running services of this session, to stop and start in a fault test."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._request = request
        self._used: list[Service] = []

    def _get(self, name: str) -> Service:
        service: Service = self._request.getfixturevalue(name)
        if service not in self._used:
            self._used.append(service)
        return service

    @property
    def postgres(self) -> Service:
        return self._get("postgres_service")

    @property
    def redis(self) -> Service:
        return self._get("redis_service")

    def service(self, kind: str) -> Service:
        """`kind` is "postgres"/"postgresql" or "redis"."""
        return self.redis if kind == "redis" else self.postgres

    def ensure_running(self) -> None:
        for service in self._used:
            if service.paused:
                service.resume()
            if not service.running:
                service.start()


@pytest.fixture
def restartable(request: pytest.FixtureRequest) -> Iterator[Restartable]:
    handle = Restartable(request)
    try:
        yield handle
    finally:
        handle.ensure_running()
