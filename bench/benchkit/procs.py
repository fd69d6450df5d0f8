"""Child processes: start them in their own process group, read their CPU and memory from /proc,
and make sure every one of them is gone when the benchmark ends, whatever happens."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

_CLK_TCK = os.sysconf("SC_CLK_TCK")
_SERVER_CPUS: set[int] | None = None


def pin_cpus(enabled: bool) -> str:
    """With 2+ CPUs: the harness (and the load generators it starts) on CPU 0, servers on the rest.

    Returns a description for the report."""
    global _SERVER_CPUS
    cpus = sorted(os.sched_getaffinity(0))
    if not enabled or len(cpus) < 2:
        _SERVER_CPUS = None
        return "not pinned"
    os.sched_setaffinity(0, {cpus[0]})
    _SERVER_CPUS = set(cpus[1:])
    return f"load generator on CPU {cpus[0]}, server on CPU {','.join(map(str, cpus[1:]))}"


_LIVE: dict[int, subprocess.Popen[bytes]] = {}
_LIVE_LOCK = threading.Lock()


class ServerFailed(RuntimeError):
    """A server under test did not start, died, or answered wrongly."""


class Child:
    """One server process in its own session (so its whole group can be killed)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stdio: bool = False,
        log_path: Path | None = None,
    ) -> None:
        self.argv = list(argv)
        self.log_path = log_path
        self._log = open(log_path, "wb") if log_path else subprocess.DEVNULL  # noqa: SIM115
        self.started = time.perf_counter()
        self.proc: subprocess.Popen[bytes] = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdio else subprocess.DEVNULL,
            stderr=self._log,
            env=env,
            cwd=cwd,
            bufsize=0,
            start_new_session=True,
        )
        self.pid = self.proc.pid
        self.pin()
        with _LIVE_LOCK:
            _LIVE[self.pid] = self.proc

    def pin(self) -> None:
        """Put every thread of the process tree on the server CPUs.

        Affinity is per thread and a new thread inherits its creator's. Pinning the main thread
        right after the spawn covers the threads it creates later; threads a runtime may already
        have started by then (Node starts its V8 and libuv threads early) are pinned here one by
        one. Called again once the server answers, so nothing started in between escapes."""
        if not _SERVER_CPUS:
            return
        for pid in descendants(self.pid):
            with contextlib.suppress(OSError):
                os.sched_setaffinity(pid, _SERVER_CPUS)
            try:
                tids = [int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()]
            except (OSError, ValueError):
                continue
            for tid in tids:
                if tid != pid:
                    with contextlib.suppress(OSError):
                        os.sched_setaffinity(tid, _SERVER_CPUS)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self, limit: int = 1500) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        data = self.log_path.read_bytes()[-limit:]
        return data.decode("utf-8", "replace").strip()

    def kill(self) -> None:
        _kill_group(self.proc)
        with _LIVE_LOCK:
            _LIVE.pop(self.pid, None)
        if self._log is not subprocess.DEVNULL:
            with contextlib.suppress(Exception):
                self._log.close()  # type: ignore[union-attr]
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
    # Whatever is left in the group (workers, grandchildren) goes too.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(timeout=2)


def kill_all() -> None:
    with _LIVE_LOCK:
        procs = list(_LIVE.values())
        _LIVE.clear()
    for proc in procs:
        _kill_group(proc)


atexit.register(kill_all)


def install_signal_handlers() -> None:
    """Turn SIGTERM/SIGHUP into KeyboardInterrupt so `finally` blocks run and children die."""

    def _raise(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            signal.signal(sig, _raise)


class Watchdog:
    """Kills a child if a measurement overruns its time budget, so a blocked read returns EOF."""

    def __init__(self, child: Child, seconds: float) -> None:
        self.fired = False
        self._child = child
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        self.fired = True
        _kill_group(self._child.proc)

    def __enter__(self) -> Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


# --------------------------------------------------------------------------------------------
# /proc readings (Linux only). Every reading covers the process and all its descendants, so a
# launcher that forks a worker is still measured whole.


def descendants(pid: int) -> list[int]:
    out: list[int] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        task_dir = Path(f"/proc/{current}/task")
        try:
            tasks = list(task_dir.iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            todo.extend(int(c) for c in children)
    return out


def _stat_cpu(pid: int) -> float:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = raw[raw.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state); utime is field 14, stime field 15.
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def cpu_seconds(pid: int) -> float:
    """User+system CPU time of the process tree rooted at pid."""
    return sum(_stat_cpu(p) for p in descendants(pid))


def _status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def peak_rss_kb(pid: int) -> int:
    """VmHWM (peak resident set) summed over the process tree."""
    return sum(_status_kb(p, "VmHWM") for p in descendants(pid))


def rss_kb(pid: int) -> int:
    """VmRSS (current resident set) summed over the process tree."""
    return sum(_status_kb(p, "VmRSS") for p in descendants(pid))


def system_cpu() -> tuple[float, float]:
    """(busy, steal) CPU seconds of the whole machine since boot, from /proc/stat."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0, 0.0
    ticks = [int(f) for f in fields]
    # user nice system idle iowait irq softirq steal guest guest_nice
    busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6]
    steal = ticks[7] if len(ticks) > 7 else 0
    return busy / _CLK_TCK, steal / _CLK_TCK


def load_average() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError):
        return 0.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def all_children_killed() -> Iterator[None]:
    try:
        yield
    finally:
        kill_all()
