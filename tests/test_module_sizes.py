"""Small modules and small functions: no module of the package over 450 lines, no function over
80, so each module holds one responsibility a reader can take in and a function one step.

A module that grows past the bound is split by responsibility (modules named for what they
hold), not squeezed under it.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "mcpkit"
SOURCES = sorted(PACKAGE.rglob("*.py"))

MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 80

def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def long_modules() -> dict[str, int]:
    """Module -> its length in lines, for every module over the bound."""
    return {_rel(p): n for p in SOURCES if (n := _lines(p)) > MAX_MODULE_LINES}


def long_functions(tree: ast.AST) -> list[tuple[str, int]]:
    """(qualified name, lines) of every function or method in `tree` over the bound, its
    decorators left out, nested ones too."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = f"{scope}.{child.name}" if scope else child.name
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found.append((inner, length))
            visit(child, inner)

    visit(tree, "")
    return found


def test_no_module_is_over_the_line_bound() -> None:
    over = long_modules()
    offenders = sorted(f"{rel} ({n} lines)" for rel, n in over.items())
    assert not offenders, (
        f"modules over {MAX_MODULE_LINES} lines: {offenders}; split each by responsibility")


def test_no_function_is_over_the_line_bound() -> None:
    offenders = [f"{_rel(p)}:{name} ({n} lines)" for p in SOURCES
                 for name, n in long_functions(ast.parse(p.read_text(encoding="utf-8")))]
    assert not offenders, (
        f"functions over {MAX_FUNCTION_LINES} lines: {offenders}; give each step a function")


def test_what_counts_as_a_long_function() -> None:
    def function(indent: str, name: str, body_lines: int) -> str:
        body = "".join(f"{indent}    x{i} = {i}\n" for i in range(body_lines))
        return f"{indent}@decorated\n{indent}def {name}(self):\n{body}"

    fits = function("", "fits", MAX_FUNCTION_LINES - 1)  # the def line and 79: 80 in all
    over = "class C:\n" + function("    ", "method", MAX_FUNCTION_LINES)
    assert long_functions(ast.parse(fits)) == []
    assert long_functions(ast.parse(over)) == [("C.method", MAX_FUNCTION_LINES + 1)]
