"""The HTTP client transport's tap sees every JSON-RPC message in both directions, as the stdio
client's does: what each POST carries, each response, what a response stream carries before
its response (progress, a legacy server's own requests), the answers to those requests, and
what a legacy session's GET stream brings. Real `mcpkit run --http` servers; every message the
tap sees is also held to the official schema."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers.client.schema_tap import ROOT, SchemaTap
from helpers.transports.http_peer import ServerProcess

from mcpkit.client import Client, ClientOptions, InputRequest
from mcpkit.transports.http_client.transport import HTTPConnector

CALENDAR = str(ROOT / "examples" / "calendar" / "server.py")
LONG_JOB = str(ROOT / "examples" / "long_job" / "server.py")


class Recorded(SchemaTap):
    def said(self, direction: str) -> list[str]:
        return [m.get("method") or f"answer {m.get('id')}" for d, m in self.messages
                if d == direction]


@pytest.fixture
def calendar(tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess.start(CALENDAR, env={"CALENDAR_DB": str(tmp_path / "c.sqlite3")})
    yield server
    server.stop()


async def test_progress_on_a_response_stream_reaches_the_tap_before_the_response() -> None:
    server = ServerProcess.start(LONG_JOB)
    tap = Recorded()
    answered: list[InputRequest] = []

    def publish(request: InputRequest) -> dict[str, Any]:
        answered.append(request)
        return {"action": "accept", "content": {"publish": False}}

    try:
        async with Client(HTTPConnector(server.url, tap=tap), elicit=publish) as client:
            result = await client.call_tool(
                "build_report", {"topic": "tides", "sections": 2, "seconds_per_section": 0.01},
                progress=lambda done, total, message: None)
    finally:
        server.stop()
    assert result.text.startswith("Report on tides (kept as a draft)")
    sent, got = tap.said("send"), tap.said("receive")
    assert sent[:2] == ["server/discover", "tools/call"]
    assert sent.count("tools/call") == 2  # the call, and its retry with the answer
    assert got.count("notifications/progress") >= 2
    call = next(i for i, (d, m) in enumerate(tap.messages) if m.get("method") == "tools/call")
    progress = next(i for i, (d, m) in enumerate(tap.messages)
                    if m.get("method") == "notifications/progress")
    response = next(i for i, (d, m) in enumerate(tap.messages)
                    if d == "receive" and m.get("id") == tap.messages[call][1]["id"])
    assert call < progress < response
    tap.assert_clean()


async def test_a_legacy_sessions_requests_answers_and_get_stream_reach_the_tap(
        calendar: ServerProcess) -> None:
    tap = Recorded()
    when = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)

    def elicit(request: InputRequest) -> dict[str, Any]:
        return {"action": "accept", "content": {"startsAt": when.isoformat()}}

    options = ClientOptions(era="legacy")
    async with Client(HTTPConnector(calendar.url, tap=tap), elicit=elicit,
                      options=options) as client, client.listen(uris=["calendar://week"]) as sub:
        await client.call_tool("create_event", {"title": "Dentist"})
        updated = await asyncio.wait_for(sub.__anext__(), 30)
    assert updated["method"] == "notifications/resources/updated"
    asked = [m for d, m in tap.messages if d == "receive" and m.get("method") == "elicitation/create"]
    assert len(asked) == 1
    answers = [m for d, m in tap.messages if d == "send" and m.get("id") == asked[0]["id"]
               and "result" in m]
    assert answers == [{"jsonrpc": "2.0", "id": asked[0]["id"],
                        "result": {"action": "accept", "content": {"startsAt": when.isoformat()}}}]
    sent = tap.said("send")
    assert sent[:2] == ["initialize", "notifications/initialized"]
    assert "resources/subscribe" in sent
    assert "notifications/resources/updated" in tap.said("receive")  # from the GET stream
    tap.assert_clean()
