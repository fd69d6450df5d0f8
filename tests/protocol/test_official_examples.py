"""The official example messages of 2026-07-28: each validates against its schema type, each
JSON-RPC message decodes through our codec and re-serialises unchanged, each request passes
the envelope checks, and our server answers each client request with a schema-valid reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from wire import MODERN, SPEC_DIR, SPEC_MISSING, check, spec_available

from mcpkit.protocol.codec import (
    Notification,
    Request,
    Response,
    decode,
    error_message,
    notification_message,
    request_message,
    result_message,
)
from mcpkit.protocol.envelope import read_meta

EXAMPLES = SPEC_DIR / f"examples-{MODERN}"


def examples() -> list[tuple[str, Path]]:
    if not EXAMPLES.is_dir():
        return []
    return [(p.parent.name, p) for p in sorted(EXAMPLES.glob("*/*.json"))]


CASES = examples()
pytestmark = pytest.mark.skipif(not spec_available() or not CASES, reason=SPEC_MISSING)


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def rebuild(message: Request | Notification | Response) -> dict[str, Any]:
    if isinstance(message, Request):
        return request_message(message.id, message.method, message.params)
    if isinstance(message, Notification):
        return notification_message(message.method, message.params)
    if message.error is not None:
        return error_message(message.id, message.error)
    assert message.id is not None and message.result is not None
    return result_message(message.id, message.result)


def test_the_official_examples_are_present() -> None:
    assert len(CASES) >= 80


@pytest.mark.parametrize(("type_name", "path"), CASES, ids=lambda v: getattr(v, "name", v))
def test_example_validates_against_its_schema_type(type_name: str, path: Path) -> None:
    check(MODERN, type_name, load(path))


MESSAGES = [(t, p) for t, p in CASES if "jsonrpc" in load(p)]


@pytest.mark.parametrize(("type_name", "path"), MESSAGES, ids=lambda v: getattr(v, "name", v))
def test_message_example_round_trips_unchanged_through_the_codec(type_name: str, path: Path) -> None:
    original = load(path)
    raw = path.read_bytes()
    assert rebuild(decode(raw)) == original
    assert orjson.loads(orjson.dumps(rebuild(decode(raw)))) == original


REQUESTS = [(t, p) for t, p in MESSAGES if "method" in load(p) and "id" in load(p)]


@pytest.mark.parametrize(("type_name", "path"), REQUESTS, ids=lambda v: getattr(v, "name", v))
def test_request_example_passes_the_envelope(type_name: str, path: Path) -> None:
    message = decode(path.read_bytes())
    assert isinstance(message, Request)
    if message.method in ("elicitation/create", "sampling/createMessage", "roots/list"):
        pytest.skip("an input request travels inside InputRequiredResult, without _meta")
    meta = read_meta(message.method, message.params)
    assert meta.protocol_version == MODERN


CLIENT_REQUESTS = [
    (t, p) for t, p in REQUESTS
    if load(p)["method"] not in ("elicitation/create", "sampling/createMessage", "roots/list")
]


@pytest.mark.parametrize(("type_name", "path"), CLIENT_REQUESTS, ids=lambda v: getattr(v, "name", v))
async def test_our_server_answers_every_example_request_validly(
    type_name: str, path: Path, wire_factory: Any
) -> None:
    from sample_server import make_server

    wire = wire_factory(make_server())
    message = load(path)
    if message["method"] == "subscriptions/listen":
        wire.send(message)
        ack = await wire.next()  # schema-checked on the way in
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        return
    wire.send(message)
    reply = await wire.next()
    assert reply["id"] == message["id"]
    assert ("result" in reply) != ("error" in reply)
