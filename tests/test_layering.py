"""The package's dependency direction, and the I/O-free core, checked by walking the source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "mcpkit"

# What each layer may import from mcpkit (besides itself). Anything not listed is refused, and
# every import counts: at module level, inside a function, or by name through `import_module`
# (no upward import, not even a lazy one). `app` holds the public `Server`, which adds HTTP
# serving to the core class and so sits above the transports, like `testing` and `cli`.
ALLOWED: dict[str, set[str]] = {
    "_version": set(),
    "types": set(),
    "errors": {"types"},
    "protocol": {"types", "errors"},
    "schema": {"types", "errors", "protocol"},
    "store": {"types", "errors", "protocol"},
    "server": {"types", "errors", "protocol", "schema", "store", "_version"},
    "client": {"types", "errors", "protocol", "schema", "store", "_version"},
    "legacy": {"types", "errors", "protocol", "schema", "server", "client", "store"},
    "auth": {"types", "errors", "protocol", "store"},
    "ext": {"types", "errors", "protocol", "server", "client", "store"},
    "transports": {"types", "errors", "protocol", "schema", "server", "client", "legacy", "store",
                   "auth", "ext", "_version"},
    "app": {"*"},
    "testing": {"*"},
    "cli": {"*"},
    "__init__": {"*"},
    "__main__": {"cli"},
}

# The layers that do no I/O: the protocol core, and the JSON Schema floor above it.
CORE = ("protocol", "schema", "types", "errors")

FORBIDDEN_IN_CORE = {"asyncio", "socket", "subprocess", "threading", "logging", "time", "select",
                     "selectors", "random", "secrets", "os"}


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py")


def mcpkit_imports(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).startswith("mcpkit")
        ):
            found.append((node.lineno, str(node.args[0].value)))
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("mcpkit")]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.startswith("mcpkit")
        ):
            found.append((node.lineno, node.module))
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down_the_layers(path: Path) -> None:
    layer = layer_of(path)
    allowed = ALLOWED.get(layer)
    assert allowed is not None, f"{layer!r} is not a known layer; add it to ALLOWED"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for lineno, module in mcpkit_imports(tree):
        parts = module.split(".")
        target = "__init__" if len(parts) == 1 else parts[1]
        if target == layer or "*" in allowed:
            continue
        assert target in allowed, (
            f"{path.relative_to(PACKAGE)}:{lineno} imports {module}: "
            f"layer {layer!r} may import only {sorted(allowed)}"
        )


@pytest.mark.parametrize(
    "path", [p for p in SOURCES if layer_of(p) in CORE],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_the_core_does_no_io(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        assert not isinstance(node, ast.AsyncFunctionDef | ast.Await), (
            f"{path.name}:{node.lineno}: the I/O-free core is synchronous"
        )
        if isinstance(node, ast.Import):
            names = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module.split(".")[0]]
        else:
            continue
        bad = set(names) & FORBIDDEN_IN_CORE
        assert not bad, f"{path.name}:{node.lineno} imports {bad}: the core does no I/O"


ERRORS = PACKAGE / "errors.py"


def _base_names(node: ast.ClassDef) -> set[str]:
    return {b.id if isinstance(b, ast.Name) else b.attr
            for b in node.bases if isinstance(b, ast.Name | ast.Attribute)}


def test_every_mcp_error_is_defined_in_errors_py() -> None:
    # The tree drawn in errors.py is the whole tree: a class deriving from MCPError (directly,
    # or through any class that does) is defined there and imported where it is raised.
    classes = [(path, node) for path in SOURCES
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.ClassDef)]
    errors = {"MCPError"}
    grown = True
    while grown:
        found = {node.name for _, node in classes if _base_names(node) & errors}
        grown = not found <= errors
        errors |= found
    outside = sorted(
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
        for path, node in classes
        if node.name in errors and path != ERRORS
    )
    assert not outside, f"define these in mcpkit/errors.py (and draw them in its tree): {outside}"


def test_importing_mcpkit_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, mcpkit; heavy = [m for m in ('httpx', 'uvicorn', 'cryptography', 'pydantic', "
        "'jsonschema', 'asyncio') if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"import mcpkit pulled in {out.stdout.strip()}"


def test_a_server_with_plain_types_does_not_import_heavy_dependencies() -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom mcpkit import Server\ns = Server('x')\n"
        "@s.tool()\ndef echo(text: str) -> str:\n    return text\n"
        "heavy = [m for m in ('httpx', 'uvicorn', 'cryptography', 'pydantic', 'jsonschema') "
        "if m in sys.modules]\nprint(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"a plain server pulled in {out.stdout.strip()}"
