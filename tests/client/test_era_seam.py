"""The client's era seam, checked by walking the source: era branches live in the opener and the
probe only, the legacy room (`mcpkit.client.legacy`) is imported by the few modules that pick or
carry it, and it reaches back only into the client's era-neutral modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[2] / "src" / "mcpkit" / "client"
NEUTRAL = sorted(p for p in CLIENT.glob("*.py"))
LEGACY_ROOM = sorted((CLIENT / "legacy").glob("*.py"))

BRANCHING = {"era.py", "opening.py", "options.py"}
"""Where the era may be compared: the probe's decision table (era.py), the opener that settles
the era and picks the adapter (opening.py), and the validation of `ClientOptions.era`."""

IMPORTS_OF_THE_ROOM = {
    "__init__.py": {"mcpkit.client.legacy.completions"},
    "client.py": {"mcpkit.client.legacy.completions"},
    "inputs.py": {"mcpkit.client.legacy.completions"},
    "opening.py": {"mcpkit.client.legacy.adapter"},
}
"""Who imports the legacy room, and what: the opener its adapter; the public `InputHandlers` and
`Client(on_elicitation_complete=...)` the tracker of a legacy server's completion reports."""

ABOVE_THE_ROOM = {"mcpkit.client.client", "mcpkit.client.opening", "mcpkit.client.modern",
                  "mcpkit.client.listen", "mcpkit.client"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def _era_compares(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for side in [node.left, *node.comparators]:
            if (
                (isinstance(side, ast.Attribute) and side.attr == "era")
                or (isinstance(side, ast.Name) and side.id in ("era", "MODERN", "LEGACY"))
                or (isinstance(side, ast.Constant) and side.value in ("modern", "legacy"))
            ):
                lines.append(node.lineno)
                break
    return lines


@pytest.mark.parametrize("path", NEUTRAL, ids=lambda p: p.name)
def test_the_client_does_not_branch_on_the_era_outside_the_opener(path: Path) -> None:
    if path.name in BRANCHING:
        return
    assert _era_compares(path) == [], (
        f"client/{path.name} compares an era; ask the connection's EraAdapter instead"
    )


@pytest.mark.parametrize("path", NEUTRAL, ids=lambda p: p.name)
def test_only_the_opener_and_the_carriers_import_the_legacy_room(path: Path) -> None:
    used = {m for m in _imports(path) if m.startswith("mcpkit.client.legacy")}
    assert used <= IMPORTS_OF_THE_ROOM.get(path.name, set()), (
        f"client/{path.name} imports {sorted(used)}; the opener picks the legacy adapter"
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
