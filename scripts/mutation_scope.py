"""What scripts/mutation mutates and which tests judge it, for one run (docs/testing.md).

mutmut reads both from pyproject.toml's [tool.mutmut] (`only_mutate`, and
`pytest_add_cli_args_test_selection`: the in-process test folders from which it learns which
tests reach each function). A run may narrow them: the modules an issue touched, and the tests
that reach those modules. This module turns the paths given to scripts/mutation into both, and
runs mutmut's own commands with them in place of the configured ones (mutmut forks its workers
from this process, so they all see the same scope).

    python scripts/mutation_scope.py scope PATH...   print the scope (JSON) for PATHs
    python scripts/mutation_scope.py mutmut ARGS...  `mutmut ARGS...` within the scope of
                                                      MCPKIT_MUTATION_SCOPE (a file `scope` wrote)

The tests for a scope: MCPKIT_MUTATION_TESTS (test folders or files, separated by spaces) when
set; else, for each path, the test folder that mirrors it (src/mcpkit/ext/tasks -> tests/ext/tasks,
src/mcpkit/ext/tasks/engines/sqlite.py -> tests/store) and the folder of every test module that imports
it, leaving out the folders that reach the package mostly through subprocesses
(MCPKIT_MUTATION_SKIP_TESTS, default tests/e2e tests/scaleout tests/bench tests/docs), which
mutmut cannot learn from.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "mcpkit"
TESTS = ROOT / "tests"
DEFAULT_SKIPPED = "tests/e2e tests/scaleout tests/bench tests/docs"


class ScopeError(ValueError):
    """A path that names no module of the package, or a scope with no tests."""


def _module_names(path: Path) -> set[str]:
    """The dotted names a test would import `path` by (a package: itself and its modules)."""
    rel = path.relative_to(ROOT / "src")
    if path.is_dir():
        base = ".".join(rel.parts)
        return {base} | {f"{base}.{'.'.join(p.relative_to(path).with_suffix('').parts)}"
                         .removesuffix(".__init__") for p in path.rglob("*.py")}
    return {".".join(rel.with_suffix("").parts).removesuffix(".__init__")}


def _imports(test: Path) -> set[str]:
    """Every module name `test` imports, `from a.b import c` counting as a.b and a.b.c."""
    names: set[str] = set()
    try:
        tree = ast.parse(test.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError):
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _mirror(path: Path) -> Path | None:
    """The test folder named like the path's package, or its nearest parent that exists."""
    rel = path.relative_to(PACKAGE)
    parts = list(rel.parts if path.is_dir() else rel.parent.parts)
    while parts:
        candidate = TESTS.joinpath(*parts)
        if candidate.is_dir():
            return candidate
        parts.pop()
    return None


def resolve(paths: list[str]) -> list[Path]:
    found = []
    for raw in paths:
        path = (ROOT / raw).resolve()
        if not path.exists():
            raise ScopeError(f"{raw}: no such file or folder")
        if path != PACKAGE and PACKAGE not in path.parents:
            raise ScopeError(f"{raw}: not inside src/mcpkit (only the package is mutated)")
        if path.is_file() and path.suffix != ".py":
            raise ScopeError(f"{raw}: not a Python module")
        found.append(path)
    return found


def scope(paths: list[str]) -> dict[str, list[str]]:
    """`only_mutate` globs and the test selection for `paths` (see the module docstring)."""
    resolved = resolve(paths)
    only = [f"{p.relative_to(ROOT).as_posix()}/*" if p.is_dir() else p.relative_to(ROOT).as_posix()
            for p in resolved]
    given = os.environ.get("MCPKIT_MUTATION_TESTS", "").split()
    if given:
        for raw in given:
            if not (ROOT / raw).exists():
                raise ScopeError(f"MCPKIT_MUTATION_TESTS: {raw}: no such test file or folder")
        return {"only_mutate": only, "tests": given}
    skipped = [TESTS.parent / s for s in
               os.environ.get("MCPKIT_MUTATION_SKIP_TESTS", DEFAULT_SKIPPED).split()]
    wanted = set().union(*(_module_names(p) for p in resolved))
    folders: set[Path] = set()
    for path in resolved:
        mirror = _mirror(path)
        if mirror is not None and mirror != TESTS:
            folders.add(mirror)
    for test in TESTS.rglob("test_*.py"):
        if _imports(test) & wanted:
            folders.add(test.parent)
    kept = sorted(f for f in folders
                  if f != TESTS and not any(s == f or s in f.parents for s in skipped))
    # A folder inside another chosen one is already run with it.
    kept = [f for f in kept if not any(o in f.parents for o in kept)]
    if not kept:
        raise ScopeError(f"no in-process test folder reaches {' '.join(paths)}; name the tests "
                         "with MCPKIT_MUTATION_TESTS")
    return {"only_mutate": only, "tests": [f.relative_to(ROOT).as_posix() for f in kept]}


def apply(path: Path) -> None:
    """Put the scope written to `path` in place of [tool.mutmut]'s, for this process."""
    from mutmut import configuration

    chosen = json.loads(path.read_text())
    configuration._config = dataclasses.replace(
        configuration.config(), only_mutate=chosen["only_mutate"],
        pytest_add_cli_args_test_selection=chosen["tests"])


def main(argv: list[str]) -> int:
    if argv[:1] == ["scope"] and len(argv) > 1:
        try:
            print(json.dumps(scope(argv[1:])))
        except ScopeError as exc:
            print(f"scripts/mutation: {exc}", file=sys.stderr)
            return 2
        return 0
    if argv[:1] == ["mutmut"]:
        given = os.environ.get("MCPKIT_MUTATION_SCOPE")
        if given:
            apply(Path(given))
        from mutmut.__main__ import cli

        cli(argv[1:])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
