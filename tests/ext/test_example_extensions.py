"""Each example's `server/discover` offers exactly the extensions it uses: no fewer (a client
could not find the feature) and no more (a client would look for one that is not there).

`EXPECTED` is the one table of what each example uses: an example that starts using an
extension, or a new example, adds its line there. The examples are loaded as `mcpkit run`
loads them and asked over a schema-checked stream connection, modern and legacy: a legacy
`initialize` has no `extensions` member, so it must report none whatever the server offers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpkit.cli.target import load_server
from mcpkit.protocol.extensions import APPS, TASKS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

EXPECTED: dict[str, frozenset[str]] = {
    "calendar/server.py": frozenset({APPS}),  # the week view
    "long_job/server.py": frozenset({TASKS}),  # the report task
    "quickstart/server.py": frozenset(),
    "testing/notes.py": frozenset(),
}
"""Example (under examples/) -> the extension identifiers its server/discover offers."""


def test_every_example_server_is_in_the_table() -> None:
    servers = {str(p.relative_to(EXAMPLES)) for p in EXAMPLES.glob("*/server.py")}
    assert servers <= set(EXPECTED), f"add these examples to EXPECTED: {servers - set(EXPECTED)}"
    assert all((EXAMPLES / name).is_file() for name in EXPECTED)


@pytest.fixture(autouse=True)
def calendar_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALENDAR_DB", str(tmp_path / "calendar.sqlite3"))


@pytest.mark.parametrize("example", sorted(EXPECTED))
async def test_discover_offers_exactly_the_extensions_the_example_uses(
        wire_factory: Any, example: str) -> None:
    wire = wire_factory(load_server(str(EXAMPLES / example)))
    capabilities = (await wire.request("server/discover"))["result"]["capabilities"]
    assert set(capabilities.get("extensions", {})) == EXPECTED[example]


@pytest.mark.parametrize("example", sorted(EXPECTED))
async def test_a_legacy_initialize_reports_no_extensions(wire_factory: Any, example: str) -> None:
    wire = wire_factory(load_server(str(EXAMPLES / example)))
    reply = await wire.request("initialize", {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1.0"}}, with_meta=False)
    assert "extensions" not in reply["result"]["capabilities"]
