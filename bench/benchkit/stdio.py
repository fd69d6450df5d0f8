"""stdio driver: writes pre-encoded lines to a server's stdin and reads its answers.

The hot loops do one `os.write` per request (or per refill when pipelining) and `os.read` of
whatever is available, parse every answer with orjson and check it. The driver's own CPU time
is measured with `time.process_time()` and reported next to the server's.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from benchkit import protocol
from benchkit.procs import Child, ServerFailed, Watchdog, cpu_seconds, system_cpu


class StdioPeer:
    """A server process spoken to over its stdin/stdout."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, log_path: Path) -> None:
        self.child = Child(argv, env=env, cwd=cwd, stdio=True, log_path=log_path)
        assert self.child.proc.stdin is not None and self.child.proc.stdout is not None
        self._wfd = self.child.proc.stdin.fileno()
        self._rfd = self.child.proc.stdout.fileno()
        self._buf = b""
        self._next_id = 1
        self.era = "modern"

    # -- raw I/O -------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self._wfd, view)
            view = view[n:]

    def read_line(self) -> bytes:
        buf = self._buf
        while True:
            nl = buf.find(b"\n")
            if nl >= 0:
                self._buf = buf[nl + 1 :]
                return buf[:nl]
            chunk = os.read(self._rfd, 1 << 16)
            if not chunk:
                self._buf = buf
                raise ServerFailed(f"server closed stdout; stderr: {self.child.log_tail()}")
            buf += chunk

    def read_lines(self) -> list[bytes]:
        """At least one complete line: everything complete that is available."""
        buf = self._buf
        while True:
            end = buf.rfind(b"\n")
            if end >= 0:
                self._buf = buf[end + 1 :]
                return buf[:end].split(b"\n")
            chunk = os.read(self._rfd, 1 << 16)
            if not chunk:
                raise ServerFailed(f"server closed stdout; stderr: {self.child.log_tail()}")
            buf += chunk

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def reserve_ids(self, count: int) -> int:
        """The first of `count` consecutive fresh ids."""
        first = self._next_id + 1
        self._next_id += count
        return first

    # -- one request at a time (setup, probes, checks) ----------------------------------------

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0
    ) -> Any:
        rid = self.new_id()
        with Watchdog(self.child, timeout) as dog:
            self.write(protocol.encode(method, self.era, rid, params) + b"\n")
            try:
                while True:
                    msg = orjson.loads(self.read_line())
                    if isinstance(msg, dict) and msg.get("id") == rid:
                        return msg
                    # notifications (logs, progress) are skipped
            except ServerFailed:
                if dog.fired:
                    raise ServerFailed(f"no answer to {method} within {timeout:.0f}s") from None
                raise

    def open_legacy(self) -> None:
        """The 2025-11-25 handshake: initialize, then notifications/initialized."""
        self.era = "legacy"
        protocol.result_of(self.request("initialize"))
        self.write(protocol.notification("notifications/initialized") + b"\n")

    def probe(self, timeout: float = 30.0) -> str:
        """Find the era the server speaks best: modern if it answers server/discover with 2026-07-28."""
        answer = self.request("server/discover", timeout=timeout)
        if protocol.era_of_discover_answer(answer) == "modern":
            self.era = "modern"
            return "modern"
        return "legacy"

    def close(self) -> None:
        self.child.kill()


def other_cpu(system_busy: float, server: float, client: float, seconds: float) -> float:
    """CPU (in cores) that processes other than the server and the client used meanwhile."""
    if seconds <= 0:
        return 0.0
    return max(0.0, (system_busy - server - client) / seconds)


@dataclass
class LoopResult:
    requests: int = 0
    seconds: float = 0.0
    latencies_ns: list[int] = field(default_factory=list)
    server_cpu_s: float = 0.0
    client_cpu_s: float = 0.0
    system_busy_s: float = 0.0
    steal_s: float = 0.0
    errors: int = 0
    first_error: str | None = None

    def summary(self) -> dict[str, Any]:
        from benchkit.stats import percentile

        lat = sorted(self.latencies_ns)
        n = max(self.requests, 1)
        return {
            "requests": self.requests,
            "seconds": round(self.seconds, 4),
            "rps": self.requests / self.seconds if self.seconds > 0 else 0.0,
            "p50_us": percentile(lat, 50) / 1000 if lat else None,
            "p99_us": percentile(lat, 99) / 1000 if lat else None,
            "server_cpu_us_per_req": self.server_cpu_s / n * 1e6,
            "client_cpu_us_per_req": self.client_cpu_s / n * 1e6,
            "client_cpu_util": self.client_cpu_s / self.seconds if self.seconds > 0 else 0.0,
            "other_cpu_cores": other_cpu(
                self.system_busy_s, self.server_cpu_s, self.client_cpu_s, self.seconds
            ),
            "steal_cores": self.steal_s / self.seconds if self.seconds > 0 else 0.0,
            "errors": self.errors,
            "first_error": self.first_error,
        }


def sequential(
    peer: StdioPeer,
    method: str,
    max_requests: int,
    max_seconds: float,
    params: dict[str, Any] | None = None,
    n_tools: int = 1,
) -> LoopResult:
    """One request in flight: write, wait for its answer, check it, repeat."""
    fmt = protocol.Template.of(method, peer.era, params).line_format()
    check_call = protocol.check_call
    check_list = protocol.check_list
    loads = orjson.loads
    write = peer.write
    read_line = peer.read_line
    pc = time.perf_counter_ns
    res = LoopResult()
    lat = res.latencies_ns
    base = peer.reserve_ids(max_requests)
    deadline_ns = pc() + int(max_seconds * 1e9)
    with Watchdog(peer.child, max_seconds + 30):
        srv0 = cpu_seconds(peer.child.pid)
        sys0 = system_cpu()
        cli0 = time.process_time()
        start = pc()
        i = 0
        for i in range(max_requests):
            rid = base + i
            line = fmt % rid
            t0 = pc()
            write(line)
            raw = read_line()
            t1 = pc()
            lat.append(t1 - t0)
            try:
                msg = loads(raw)
                if method == "tools/call":
                    check_call(msg, rid)
                elif method == "tools/list":
                    check_list(msg, n_tools, rid)
                else:
                    protocol.result_of(msg, rid)
            except (protocol.BadAnswer, orjson.JSONDecodeError) as exc:
                res.errors += 1
                res.first_error = res.first_error or str(exc)
            if t1 > deadline_ns:
                break
        end = pc()
        res.client_cpu_s = time.process_time() - cli0
        res.server_cpu_s = cpu_seconds(peer.child.pid) - srv0
        sys1 = system_cpu()
        res.system_busy_s, res.steal_s = sys1[0] - sys0[0], sys1[1] - sys0[1]
    res.requests = len(lat)
    res.seconds = (end - start) / 1e9
    return res


def pipelined(peer: StdioPeer, window: int, max_requests: int, max_seconds: float) -> LoopResult:
    """`window` tools/call requests in flight; each answer lets one more go out."""
    fmt = protocol.Template.of("tools/call", peer.era).line_format()
    check_call = protocol.check_call
    loads = orjson.loads
    pc = time.perf_counter_ns
    res = LoopResult()
    lat = res.latencies_ns
    base = peer.reserve_ids(max_requests)
    sent_at: dict[int, int] = {}
    deadline_ns = pc() + int(max_seconds * 1e9)
    with Watchdog(peer.child, max_seconds + 30):
        srv0 = cpu_seconds(peer.child.pid)
        sys0 = system_cpu()
        cli0 = time.process_time()
        start = pc()
        next_i = 0
        first = min(window, max_requests)
        now = pc()
        for j in range(first):
            sent_at[base + j] = now
        peer.write(b"".join(fmt % (base + j) for j in range(first)))
        next_i = first
        stop_sending = False
        while sent_at:
            lines = peer.read_lines()
            now = pc()
            for raw in lines:
                try:
                    msg = loads(raw)
                except orjson.JSONDecodeError as exc:
                    res.errors += 1
                    res.first_error = res.first_error or f"bad JSON: {exc}"
                    continue
                rid = msg.get("id") if isinstance(msg, dict) else None
                t0 = sent_at.pop(rid, None) if isinstance(rid, int) else None
                if t0 is None:
                    continue  # a notification, or an answer we did not ask for
                lat.append(now - t0)
                try:
                    check_call(msg)
                except protocol.BadAnswer as exc:
                    res.errors += 1
                    res.first_error = res.first_error or str(exc)
            if not stop_sending and now > deadline_ns:
                stop_sending = True
            if not stop_sending:
                room = min(window - len(sent_at), max_requests - next_i)
                if room > 0:
                    batch = []
                    for j in range(next_i, next_i + room):
                        sent_at[base + j] = now
                        batch.append(fmt % (base + j))
                    next_i += room
                    peer.write(b"".join(batch))
        end = pc()
        res.client_cpu_s = time.process_time() - cli0
        res.server_cpu_s = cpu_seconds(peer.child.pid) - srv0
        sys1 = system_cpu()
        res.system_busy_s, res.steal_s = sys1[0] - sys0[0], sys1[1] - sys0[1]
    res.requests = len(lat)
    res.seconds = (end - start) / 1e9
    return res
