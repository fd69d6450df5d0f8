"""The declared public surface: every public module says what it exports, and what it says is
there.

A module whose name starts with an underscore is private to its package; every other module,
and every package's `__init__.py`, defines `__all__`, so what a user may import is written down
rather than implied by what a module happens to import.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import mcpkit

PACKAGE = Path(mcpkit.__file__).resolve().parent
SOURCES = sorted(PACKAGE.rglob("*.py"))
PUBLIC = [p for p in SOURCES if p.stem == "__init__" or not p.stem.startswith("_")]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _defines_all(tree: ast.Module) -> bool:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return True
    return False


@pytest.mark.parametrize("path", PUBLIC, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_public_module_defines_all(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert _defines_all(tree), (
        f"mcpkit/{path.relative_to(PACKAGE)} has no __all__: list what it exports, or name the "
        "module with a leading underscore if it is private to its package"
    )


@pytest.mark.parametrize("path", PUBLIC, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_name_a_module_exports_is_there(path: Path) -> None:
    module = importlib.import_module(_module_name(path))
    names = list(getattr(module, "__all__", []))
    assert len(names) == len(set(names)), f"{module.__name__}.__all__ repeats a name"
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, f"{module.__name__}.__all__ names {missing}, which it does not define"


@pytest.mark.parametrize("name", mcpkit.__all__)
def test_every_public_name_of_mcpkit_imports(name: str) -> None:
    # `from mcpkit import X` goes through the package's lazy __getattr__ for most names.
    value = getattr(mcpkit, name)
    assert value is not None and name in dir(mcpkit)


def test_the_public_server_serves_over_http_and_is_the_core_server() -> None:
    from mcpkit.server.server import Server as CoreServer
    from mcpkit.transports.http_server.app import HTTPApp

    server = mcpkit.Server("surface")
    assert isinstance(server, CoreServer)
    app = server.asgi()
    assert isinstance(app, HTTPApp) and app.server is server


def test_the_transports_public_names_load_only_the_transport_asked_for() -> None:
    # `from mcpkit.transports import X` is the documented import; the package itself loads no
    # transport, and a name loads its own room only (a stdio client never loads HTTP).
    import json
    import subprocess
    import sys

    code = (
        "import json, sys, mcpkit.transports as t\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith('mcpkit.transports.'))\n"
        "before = loaded()\n"
        "t.StdioServer\n"
        "print(json.dumps([before, loaded(), 'httpx' in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    before, after, httpx = json.loads(out.stdout)
    assert before == [], f"import mcpkit.transports loaded {before}"
    assert after == ["mcpkit.transports.stdio", "mcpkit.transports.stdio.client"], after
    assert not httpx, "StdioServer pulled in httpx"


def test_every_public_name_of_mcpkit_transports_is_what_its_module_defines() -> None:
    import mcpkit.transports as transports

    for name in transports.__all__:
        value = getattr(transports, name)
        assert getattr(value, "__name__", name) == name, f"mcpkit.transports.{name} is {value!r}"
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        transports.Nothing  # noqa: B018


OUTSIDE_MCP_ERROR = {
    "mcpkit.server.mrtr.InputRequired":
        "no error: the signal that unwinds a handler which asked for input, a BaseException so "
        "that the handler's own `except Exception` cannot swallow it",
    "mcpkit.client.wire_object.ResultAsDictWarning":
        "no error: a warning category, a DeprecationWarning, so that the filters a user set for "
        "deprecations apply to it",
}
"""The public exception classes that are not an `MCPError`, each with why."""


def _public_exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for path in SOURCES:
        if path.stem == "__main__":
            continue
        module = importlib.import_module(_module_name(path))
        for name, value in vars(module).items():
            if (isinstance(value, type) and issubclass(value, BaseException)
                    and not name.startswith("_") and value.__module__.startswith("mcpkit")
                    and not value.__name__.startswith("_")):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def test_every_public_exception_of_mcpkit_is_an_mcp_error() -> None:
    # `except MCPError` catches whatever mcpkit raises on purpose, configuration errors too:
    # every public exception class of every module derives from it (a builtin base beside it,
    # as `StoreURLError` is also a ValueError, is documented on the class).
    from mcpkit.errors import MCPError

    found = _public_exception_classes()
    assert {"StoreURLError", "KeyFileError", "TokenFileError", "SkillSourceError",
            "UsageError"} <= {kind.__name__ for kind in found.values()}
    outside = sorted(where for where, kind in found.items()
                     if not issubclass(kind, MCPError) and where not in OUTSIDE_MCP_ERROR)
    assert not outside, (
        f"{outside} are public exceptions outside MCPError: derive them from it (in "
        "mcpkit/errors/), or name them in OUTSIDE_MCP_ERROR with why")
    stale = sorted(set(OUTSIDE_MCP_ERROR) - set(found))
    assert not stale, f"OUTSIDE_MCP_ERROR names classes that are gone: {stale}"


def _packed_all(tree: ast.Module) -> int | None:
    """The line of an `__all__` of two or more names with two of them on one line."""
    for node in tree.body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                  for t in node.targets)
                and isinstance(node.value, (ast.List, ast.Tuple)) and len(node.value.elts) > 1):
            lines = [e.lineno for e in node.value.elts]
            if len(set(lines)) < len(lines) or node.value.elts[0].lineno == node.lineno:
                return node.lineno
    return None


def test_every_all_of_two_names_or_more_lists_one_name_per_line() -> None:
    """A list packed onto a line or two hides how long a module really is."""
    packed = [f"mcpkit/{p.relative_to(PACKAGE)}:{line}" for p in SOURCES
              if (line := _packed_all(ast.parse(p.read_text(encoding="utf-8")))) is not None]
    assert not packed, f"write one name per line in the __all__ of {packed}"
