"""mcpkit's Client in a process of its own, for the hostile-server tests that measure the memory
the client holds: the test process's own resident set moves with everything else the run does
(fixtures, other tests' leftovers, the collector), the client's process holds only the client.

    python measured_client.py SPEC_JSON

SPEC: {"connect": "stdio", "catalogue": ...} (tests/helpers/client/hostile_stdio.py as the server) or
{"connect": "http", "url": ...} (a hostile peer the test serves), "options" (ClientOptions),
and "calls": [{"tool": ..., "arguments": {...}}, ...], made in order on one connection. Every
message the client sends is checked against the official schema (SchemaTap, what the server
sends is off the schema on purpose). Prints one JSON object: per call its error (the
exception's type and message) or its text, and this process's resident set before the call and
at its peak during the call (VmHWM, reset before each call), in KiB; the tap's problems; the
warnings mcpkit's client logged.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

from helpers.client.hostile_probes import Checked
from helpers.client.schema_tap import SchemaTap
from mcpkit.client import Client, ClientOptions
from mcpkit.transports.stdio.client import StdioServer

HOSTILE = str(Path(__file__).resolve().parent / "hostile_stdio.py")


def status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def reset_peak() -> None:
    """Start VmHWM again from the current resident set (Linux: `5` to clear_refs)."""
    Path("/proc/self/clear_refs").write_text("5")


class SendsOnly(SchemaTap):
    """Checks what the client sends and keeps nothing the server sends (a flood kept by the tap
    would be the tap's memory, not the client's)."""

    def __call__(self, direction: str, message: dict[str, Any]) -> None:
        if direction == "send":
            super().__call__(direction, message)


class Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def run(spec: dict[str, Any]) -> dict[str, Any]:
    tap = SendsOnly()
    if spec["connect"] == "stdio":
        connector: Any = StdioServer([sys.executable, HOSTILE, spec["catalogue"]],
                                     stderr="discard", tap=tap, shutdown_timeout=0.5)
    else:
        connector = Checked(spec["url"])
    warned = Warnings()
    logging.getLogger("mcpkit.client").addHandler(warned)
    logging.getLogger("mcpkit.client").setLevel(logging.WARNING)
    calls = []
    options = ClientOptions(era="modern", **spec.get("options", {}))
    async with Client(connector, options=options) as client:
        for call in spec["calls"]:
            outcome: dict[str, Any] = {"rss_before_kib": status_kib("VmRSS")}
            reset_peak()
            try:
                result = await client.call_tool(call["tool"], call.get("arguments") or {})
                outcome["text"] = result["content"][0]["text"]
            except Exception as exc:
                outcome["error"] = f"{type(exc).__name__}: {exc}"
            outcome["peak_kib"] = status_kib("VmHWM")
            calls.append(outcome)
    problems = list(tap.problems)
    if spec["connect"] == "stdio" and not tap.sent:
        problems.append("nothing was sent")
    return {"calls": calls, "problems": problems, "warnings": warned.lines}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run(json.loads(sys.argv[1])))))
