"""A test peer that drives a real `mcpkit run` subprocess over its stdin and stdout."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import orjson

from helpers.wire import LEGACY, MODERN, check_server_message

ROOT = Path(__file__).resolve().parents[3]


def meta(**extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        **extra,
    }


class StdioPeer:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.methods: dict[Any, str] = {}
        self.revision = MODERN
        self.ids = 0

    @classmethod
    async def start(cls, *target: str, env: dict[str, str] | None = None) -> StdioPeer:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mcpkit", "run", *target,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=ROOT, env={**os.environ, **(env or {})},
            limit=16 * 1024 * 1024,
        )
        return cls(proc)

    def send(self, message: dict[str, Any]) -> None:
        if "id" in message and "method" in message:
            self.methods[message["id"]] = message["method"]
            if message["method"] == "initialize":
                self.revision = LEGACY
        self.send_raw(orjson.dumps(message) + b"\n")

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    async def read(self, timeout: float = 10) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        assert line, "the server closed stdout"
        message = orjson.loads(line)  # anything that is not JSON fails here
        method = self.methods.get(message.get("id")) if "method" not in message else None
        check_server_message(self.revision, message, method)
        return message

    async def read_by_id(self, count: int) -> dict[Any, dict[str, Any]]:
        """The next `count` messages, by id; any that is not a response fails the test
        (a notification, or a second reply for the same id, is never expected here)."""
        replies: dict[Any, dict[str, Any]] = {}
        for _ in range(count):
            reply = await self.read()
            assert "method" not in reply and "id" in reply, reply
            assert reply["id"] not in replies, f"two replies for id {reply['id']!r}"
            replies[reply["id"]] = reply
        return replies

    async def rest(self, timeout: float = 10) -> list[dict[str, Any]]:
        """Every message left on stdout until the server closes it (after stdin closed)."""
        assert self.proc.stdout is not None
        out = []
        while line := await asyncio.wait_for(self.proc.stdout.readline(), timeout):
            message = orjson.loads(line)
            method = self.methods.get(message.get("id")) if "method" not in message else None
            check_server_message(self.revision, message, method)
            out.append(message)
        return out

    async def request(self, method: str, params: dict[str, Any] | None = None,
                      *, with_meta: bool = True) -> dict[str, Any]:
        self.ids += 1
        if with_meta:
            params = {**(params or {}), "_meta": meta()}
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        while True:
            reply = await self.read()
            if reply.get("id") == self.ids and "method" not in reply:
                return reply

    async def close(self) -> tuple[int, bytes]:
        """Close stdin and wait for a clean exit; returns (exit status, stderr)."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        try:
            code = await asyncio.wait_for(self.proc.wait(), 10)
        except TimeoutError:
            self.proc.kill()
            raise
        return code, await self.proc.stderr.read()

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()
        for pipe in (self.proc.stdin,):
            if pipe is not None:
                pipe.close()
