"""How much of the 2025-11-25 era is outside its rooms: lines of code, per module.

    python scripts/era_lines.py           one line per module with any, then the total
    python scripts/era_lines.py -v PATH   and each counted line of PATH (`all`: of every module)

The era's rooms are `ERA_ROOMS` of tests/test_layering.py (`legacy/`, `client/legacy/`,
`transports/legacy/`, `store/legacy/`), with `probe/`, which judges a server of either era.
Outside them a line counts when it is code (not a docstring, comment or blank line) and

- it is an era branch the layering test's detector finds, with the arm that branch guards
  (an `if`'s test and body, a whole ternary or assert), or
- it names the era: an identifier with "legacy" in it (any case), a name imported from a room
  of the era, a method of the initialize era (`Method.INITIALIZE`, ...), or the text
  "2025-11-25".

`schema/` is left out of the second rule: there "legacy" names JSON Schema's older drafts. A
line of a seam that serves both eras (the probe, the era a POST takes) counts: it would change
if the era went. What no name or branch marks (an option whose name says nothing of the era)
is not counted, so the figure is a floor.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "src")]

from test_layering import ERA_ROOMS, LEGACY_ROOMS, PACKAGE, era_branches  # noqa: E402

from mcpkit.types.methods import METHODS, Method  # noqa: E402

_ERA_WORDS = re.compile(r"legacy|2025-11-25", re.IGNORECASE)
_ROOM_MODULES = tuple(f"mcpkit.{room.replace('/', '.')}" for room in ERA_ROOMS)
_OLD_METHODS = {name for name, value in vars(Method).items()
                if isinstance(value, str) and value in METHODS and not METHODS[value].modern}


def _code_lines(text: str, tree: ast.AST) -> set[int]:
    docs = {line for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)}
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER}
    return {line for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type not in skip for line in range(tok.start[0], tok.end[0] + 1)} - docs


def _span(node: ast.AST) -> range:
    return range(node.lineno, (node.end_lineno or node.lineno) + 1)  # type: ignore[attr-defined]


def era_lines(rel: str, text: str) -> set[int]:
    """The lines of one module (path under src/mcpkit) that are of the 2025-11-25 era."""
    tree = ast.parse(text)
    branches = {line for line, _ in era_branches(tree)}
    found = set(branches)
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.While) and set(_span(node.test)) & branches:
            found.update(range(node.lineno, (node.body[-1].end_lineno or node.lineno) + 1))
        elif isinstance(node, ast.IfExp | ast.Assert) and node.lineno in branches:
            found.update(_span(node))
        elif (isinstance(node, ast.ImportFrom) and node.module
              and node.module.startswith(_ROOM_MODULES)):
            found.update(_span(node))
            imported |= {alias.asname or alias.name for alias in node.names}
    words = not rel.startswith("schema/")
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Attribute | ast.FunctionDef | ast.AsyncFunctionDef
                        | ast.ClassDef):
            name = getattr(node, "attr", None) or getattr(node, "name", None)
        elif isinstance(node, ast.arg | ast.keyword):
            name = node.arg
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value if "2025-11-25" in node.value else None
        if name and ((words and _ERA_WORDS.search(name)) or name in imported
                     or name in _OLD_METHODS):
            found.add(node.lineno)  # type: ignore[attr-defined]
    return found & _code_lines(text, tree)


def main(argv: list[str]) -> None:
    show = set(argv[argv.index("-v") + 1:]) if "-v" in argv else set()
    counts: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(tuple(f"{room}/" for room in LEGACY_ROOMS)):
            continue
        text = path.read_text(encoding="utf-8")
        lines = era_lines(rel, text)
        if lines:
            counts[rel] = len(lines)
        if rel in show or "all" in show:
            source = text.splitlines()
            for line in sorted(lines):
                print(f"{rel}:{line}: {source[line - 1].strip()}")
    for rel, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        print(f"{count:5d} {rel}")
    print(f"{sum(counts.values()):5d} lines of the 2025-11-25 era outside its rooms")


if __name__ == "__main__":
    main(sys.argv[1:])
