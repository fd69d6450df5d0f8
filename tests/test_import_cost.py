"""`import mcpkit` stays cheap: the heavy dependencies load when a feature needs them, not at
import. Each check runs in a fresh interpreter, since this test process has loaded them all."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("uvicorn", "httpx", "cryptography", "jsonschema", "pydantic", "opentelemetry",
         "uvloop", "httptools", "starlette")

_PROBE = """
import json, sys
{statement}
print(json.dumps(sorted(name for name in {heavy!r} if name in sys.modules)))
"""


def loaded_after(statement: str) -> list[str]:
    """The heavy modules a fresh interpreter holds after running `statement`."""
    done = subprocess.run([sys.executable, "-c", _PROBE.format(statement=statement, heavy=HEAVY)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found: list[str] = json.loads(done.stdout)
    return found


@pytest.mark.parametrize("statement", [
    "import mcpkit",
    "from mcpkit import Server, Client",
    "from mcpkit import Server, Context, Elicit, ToolError, MissingExtraError",
    "from mcpkit.protocol.extras import require, available",
])
def test_importing_mcpkit_loads_no_heavy_dependency(statement: str) -> None:
    assert loaded_after(statement) == []


def test_the_probe_sees_a_heavy_import() -> None:
    # The check above could pass by never seeing anything: here it must see what it is shown.
    assert loaded_after("import httpx, mcpkit") == ["httpx"]
