"""A small HTTP/1.1 keep-alive client over `asyncio.open_connection`.

Used for readiness checks, answer validation, legacy sessions and, when `wrk` is not
installed, as the load generator (one connection per concurrent slot, pre-built request bytes).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

HOST = "127.0.0.1"


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


def build_request(port: int, body: bytes, headers: dict[str, str], path: str = "/mcp") -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: {HOST}:{port}", f"Content-Length: {len(body)}"]
    lines.extend(f"{name}: {value}" for name, value in headers.items())
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int, timeout: float = 5.0) -> Connection:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, port), timeout)
        return cls(reader, writer)

    async def send(self, raw: bytes) -> Response:
        self.writer.write(raw)
        return await self.read_response()

    async def read_response(self) -> Response:
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size_line = await self.reader.readuntil(b"\r\n")
                size = int(size_line.split(b";")[0].strip(), 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    break
                parts.append(await self.reader.readexactly(size))
                await self.reader.readexactly(2)
            body = b"".join(parts)
        elif status in (204, 304) or 100 <= status < 200:
            body = b""
        else:
            body = await self.reader.read()
        return Response(status, headers, body)

    def close(self) -> None:
        self.writer.close()


async def post(port: int, body: bytes, headers: dict[str, str], timeout: float = 10.0) -> Response:
    conn = await Connection.open(port)
    try:
        return await asyncio.wait_for(conn.send(build_request(port, body, headers)), timeout)
    finally:
        conn.close()


async def wait_ready(
    port: int, body: bytes, headers: dict[str, str], timeout: float, alive: Any
) -> Response:
    """Poll until the server answers a POST (any status) or `timeout` passes."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if not alive():
            raise ConnectionError("server exited before it answered")
        try:
            return await post(port, body, headers, timeout=5.0)
        except (TimeoutError, OSError, asyncio.IncompleteReadError) as exc:
            last = exc
            await asyncio.sleep(0.05)
    raise TimeoutError(f"no HTTP answer within {timeout:.0f}s ({last!r})")


@dataclass
class LoadResult:
    requests: int
    seconds: float
    latencies_ns: list[int]
    errors: int
    client_cpu_s: float
    first_error: str | None


async def load(
    port: int,
    make_request: Any,
    concurrency: int,
    max_requests: int,
    max_seconds: float,
    check: Any = None,
) -> LoadResult:
    """`concurrency` keep-alive connections, each sending its next request when the last is answered.

    `make_request(i)` returns the raw bytes of request i; `check(response, i)` raises on a bad answer.
    """
    latencies: list[int] = []
    errors = 0
    first_error: list[str] = []
    counter = 0
    pc = time.perf_counter_ns
    deadline = pc() + int(max_seconds * 1e9)

    async def worker() -> None:
        nonlocal counter, errors
        conn = await Connection.open(port)
        try:
            while counter < max_requests and pc() < deadline:
                counter += 1
                i = counter
                raw = make_request(i)
                t0 = pc()
                try:
                    resp = await asyncio.wait_for(conn.send(raw), 10.0)
                except (TimeoutError, OSError, asyncio.IncompleteReadError) as exc:
                    errors += 1
                    first_error.append(repr(exc))
                    conn.close()
                    conn = await Connection.open(port)
                    continue
                latencies.append(pc() - t0)
                if resp.status >= 300:
                    errors += 1
                    first_error.append(f"HTTP {resp.status}: {resp.body[:200]!r}")
                elif check is not None:
                    try:
                        check(resp, i)
                    except Exception as exc:
                        errors += 1
                        first_error.append(str(exc))
        finally:
            conn.close()

    cpu0 = time.process_time()
    start = pc()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    seconds = (pc() - start) / 1e9
    return LoadResult(
        requests=len(latencies),
        seconds=seconds,
        latencies_ns=latencies,
        errors=errors,
        client_cpu_s=time.process_time() - cpu0,
        first_error=first_error[0] if first_error else None,
    )
