"""The core `Server` is every view its parts take of it (`mcpkit.server.view`,
`mcpkit.server.composition.Composed`): they name the view rather than the class, which imports
them, so a `Server` that stopped being one would break them without a word from the imports.
Checked at run time (each member is there) and by mypy (each member has its type)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcpkit import Server as PublicServer
from mcpkit.server.composition import Composed
from mcpkit.server.server import Server
from mcpkit.server.view import Held, Listed, Routed, Served

VIEWS = (Routed, Served, Listed, Held, Composed)


@pytest.mark.parametrize("server_class", [Server, PublicServer])
@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.__name__)
def test_a_server_has_every_member_of_each_view(server_class: type[Server], view: type) -> None:
    assert isinstance(server_class("viewed"), view)


def test_what_is_no_server_is_none_of_the_views() -> None:
    assert not any(isinstance(object(), view) for view in VIEWS)


CHECKED = textwrap.dedent("""
    from mcpkit.server.composition import Composed
    from mcpkit.server.server import Server
    from mcpkit.server.view import Held, Listed, Routed, Served

    server = Server("viewed")
    views: tuple[Routed, Served, Listed, Held, Composed] = (server, server, server, server, server)
""")


def test_mypy_finds_a_server_to_be_every_view(tmp_path: Path) -> None:
    (tmp_path / "views.py").write_text(CHECKED, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-pretty", "--cache-dir",
         str(tmp_path / ".mypy_cache"), "views.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
