"""Three real mcpkit replicas behind a real nginx, for the scale-out tests.

`Balancer` writes an nginx configuration in a temporary folder (round-robin over the
replicas' ports, no affinity, `proxy_buffering off` and HTTP/1.1 to the replicas so SSE
streams flow event by event, read timeouts long enough for an idle listen stream) and runs
`nginx -p DIR -c nginx.conf -g 'daemon off;'` on a free 127.0.0.1 port, its pid, logs and
temporary files in that folder. Its access log records which replica served each request.

`Replica` is one `mcpkit run FILE --http 127.0.0.1:PORT/mcp --store URL` process on a port of
its own (kept across restarts, since nginx names it), which `kill()` ends with SIGKILL and
`start()` runs again. `Cluster` is three of them behind one `Balancer`, sharing one store URL
(PostgreSQL or Redis, from tests/helpers/services.py), one home folder and one calendar database,
and any settings and `mcpkit run` options of the replicas' own (`extra_env`, `extra_args`).
`Replica.stop()` is SIGTERM (a drain, as a deploy stops a replica).

When nginx is missing the tests skip with one line naming the package; where every real part
is required (CI, tests/helpers/real_parts.py) they fail instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from helpers import real_parts
from helpers.services import free_port

__all__ = ["ROOT", "Balancer", "Cluster", "Replica", "nginx_binary"]

ROOT = Path(__file__).resolve().parents[2]
REPLICA_SERVER = str(Path(__file__).resolve().parent / "replica_server.py")
_START_S = 30.0

CONFIG = """\
{user}worker_processes 1;
error_log {dir}/error.log warn;
pid {dir}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
    log_format replica '$upstream_addr $status $request_method $request_uri';
    access_log {dir}/access.log replica;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
{extra}    upstream mcp {{
{servers}
        keepalive 32;
        keepalive_timeout 4s;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_buffering off;
            proxy_cache off;
            proxy_request_buffering off;
            proxy_read_timeout 3600s;
            proxy_send_timeout 3600s;
            proxy_connect_timeout 2s;
            proxy_next_upstream error timeout;
            proxy_next_upstream_tries 3;
        }}
    }}
}}
"""


def nginx_binary() -> str:
    """nginx's path; missing, a skip or a failure naming it (tests/helpers/real_parts.py)."""
    found = real_parts.nginx_binary()
    if found is None:
        real_parts.missing("nginx")
    return found


class Balancer:
    """A real nginx round-robin over `ports`; see the module docstring."""

    def __init__(self, ports: list[int], extra: str = "") -> None:
        self.binary = nginx_binary()
        self.folder = Path(tempfile.mkdtemp(prefix="mcpkit-nginx-"))
        self.port = free_port()
        self.ports = ports
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.proc: subprocess.Popen[bytes] | None = None
        servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=1s;"
                            for p in ports)
        user = "user root;\n" if os.geteuid() == 0 else ""
        (self.folder / "nginx.conf").write_text(CONFIG.format(
            user=user, dir=self.folder, servers=servers, port=self.port,
            extra=f"    {extra}\n" if extra else ""))

    def start(self) -> None:
        log = open(self.folder / "stderr.log", "wb")  # noqa: SIM115 -- closed in stop()
        self.proc = subprocess.Popen(
            [self.binary, "-p", str(self.folder), "-c", "nginx.conf", "-g", "daemon off;"],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        self._log = log
        deadline = time.monotonic() + _START_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"nginx did not start: {self.errors()}")
            with contextlib.suppress(OSError), socket_to(self.port):
                return
            time.sleep(0.02)
        raise AssertionError(f"nginx did not listen on {self.port}: {self.errors()}")

    def errors(self) -> str:
        parts = [self.folder / "stderr.log", self.folder / "error.log"]
        return "\n".join(p.read_text(errors="replace") for p in parts if p.exists())

    def served_by(self) -> list[str]:
        """The replica address of each request nginx logged, in order."""
        log = self.folder / "access.log"
        return [line.split()[0] for line in log.read_text().splitlines()] if log.exists() else []

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "_log", None) is not None:
            self._log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def socket_to(port: int):  # type: ignore[no-untyped-def]
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
        yield sock


class Replica:
    """One `mcpkit run ... --store URL` process on a fixed port; see the module docstring."""

    def __init__(self, name: str, target: str, store: str, env: dict[str, str],
                 args: tuple[str, ...] = ()) -> None:
        self.name = name
        self.target = target
        self.store = store
        self.args = args
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.env = {**env, "REPLICA": name}
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = Path(tempfile.mkstemp(prefix=f"mcpkit-{name}-", suffix=".log")[1])

    def start(self) -> None:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "mcpkit", "run", self.target, "--http",
                 f"127.0.0.1:{self.port}/mcp", "--store", self.store, *self.args],
                cwd=ROOT, stdout=out, stderr=out, stdin=subprocess.DEVNULL, env=self.env)
        self.wait_ready()

    def wait_ready(self, timeout: float = _START_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"replica {self.name} exited: {self.output()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{self.port}/readyz", timeout=2).status_code == 200:
                    return
            time.sleep(0.05)
        raise AssertionError(f"replica {self.name} not ready: {self.output()}")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no goodbye, as a crash or an OOM kill."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def output(self) -> str:
        return self.log.read_text(errors="replace")


class Cluster:
    """Three replicas of `target` sharing `store`, behind one nginx."""

    def __init__(self, engine: str, store: str, target: str = REPLICA_SERVER,
                 count: int = 3, extra_env: dict[str, str] | None = None,
                 extra_args: tuple[str, ...] = ()) -> None:
        self.engine = engine
        self.store = store
        self.home = Path(tempfile.mkdtemp(prefix="mcpkit-cluster-"))
        env = {k: v for k, v in os.environ.items()
               if k not in ("MCPKIT_STATE_KEYS", "MCPKIT_STORE", "MCPKIT_DATA_DIR")}
        env.update(HOME=str(self.home / "home"), XDG_DATA_HOME=str(self.home / "data"),
                   CALENDAR_DB=str(self.home / "calendar.sqlite3"), **(extra_env or {}))
        self.replicas = [Replica("ABC"[i] if i < 3 else f"R{i}", target, store, env,
                                 extra_args) for i in range(count)]
        self.balancer = Balancer([r.port for r in self.replicas])
        self.url = self.balancer.url

    def start(self) -> None:
        for replica in self.replicas:
            replica.start()
        self.balancer.start()

    def ensure_running(self) -> None:
        for replica in self.replicas:
            if not replica.running:
                replica.start()

    def stop(self) -> None:
        self.balancer.stop()
        for replica in self.replicas:
            replica.stop()
            with contextlib.suppress(OSError):
                replica.log.unlink()
        shutil.rmtree(self.home, ignore_errors=True)

    def output(self) -> str:
        return "\n".join(f"--- {r.name}\n{r.output()}" for r in self.replicas)


async def wait_until(predicate, timeout: float = 20.0, every: float = 0.05) -> None:  # type: ignore[no-untyped-def]
    """Poll `predicate()` (sync) until true, at most `timeout` seconds."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(every)
