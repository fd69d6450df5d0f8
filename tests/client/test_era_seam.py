"""The client's era seam, checked by walking the source: the legacy room (`mcpkit.client.legacy`)
is imported by the few modules that pick or carry it, and it reaches back only into the client's
era-neutral modules. Where the client may branch on the era (the probe, the opener) is checked
with the rest of the package in tests/test_layering.py (`SEAMS`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[2] / "src" / "mcpkit" / "client"
NEUTRAL = sorted(p for p in CLIENT.glob("*.py"))
LEGACY_ROOM = sorted((CLIENT / "legacy").glob("*.py"))

IMPORTS_OF_THE_ROOM = {
    "__init__.py": {"mcpkit.client.legacy.completions"},
    "client.py": {"mcpkit.client.legacy.completions", "mcpkit.client.legacy.opening"},
    "inputs.py": {"mcpkit.client.legacy.completions"},
}
"""Who imports the legacy room, and what: `Client` the initialize handshake its opener falls back
to; the public `InputHandlers` and `Client(on_elicitation_complete=...)` the tracker of a legacy
server's completion reports. The opener names no era of the room: it is given the fallback."""

ABOVE_THE_ROOM = {"mcpkit.client.client", "mcpkit.client.modern", "mcpkit.client.listen",
                  "mcpkit.client"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


@pytest.mark.parametrize("path", NEUTRAL, ids=lambda p: p.name)
def test_only_the_opener_and_the_carriers_import_the_legacy_room(path: Path) -> None:
    used = {m for m in _imports(path) if m.startswith("mcpkit.client.legacy")}
    assert used <= IMPORTS_OF_THE_ROOM.get(path.name, set()), (
        f"client/{path.name} imports {sorted(used)}; the room plugs in where Client is made"
    )


@pytest.mark.parametrize("path", LEGACY_ROOM, ids=lambda p: p.name)
def test_the_legacy_room_imports_only_the_era_neutral_client(path: Path) -> None:
    imports = _imports(path)
    above = imports & ABOVE_THE_ROOM
    assert not above, f"client/legacy/{path.name} imports {sorted(above)}, which import it"
    server_side = [m for m in imports if m == "mcpkit.legacy" or m.startswith("mcpkit.legacy.")]
    assert not server_side, f"client/legacy/{path.name} imports the server's adapter"


def test_subscriptions_do_not_import_the_client() -> None:
    assert "mcpkit.client.client" not in _imports(CLIENT / "listen.py")
