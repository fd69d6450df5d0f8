"""What a test module imports does not depend on which other folders the run collects, nor in
which order. pytest puts each test folder on sys.path and keeps one module per name: every
folder's conftest.py is `conftest`, the last one loaded, so `from conftest import X` reads
another folder's conftest as soon as one is loaded after it; and two helper modules of one name
in two folders resolve to whichever folder came first. So no module imports from `conftest`,
no two importable modules share a name, and a run that collects the probe tests after another
folder's conftest collects the same tests as the probe folder alone."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from helpers.real_parts import REQUIRE_VARIABLE

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SEARCHED = [TESTS, ROOT / "bench"]


def python_files() -> list[Path]:
    return sorted(p for folder in SEARCHED for p in folder.rglob("*.py")
                  if ".venv" not in p.parts and "node_modules" not in p.parts)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
    return names


def test_no_module_imports_from_a_conftest() -> None:
    found = [str(p.relative_to(ROOT)) for p in python_files() if "conftest" in imported_modules(p)]
    assert found == [], f"import these values from a named helper module instead: {found}"


def test_no_two_importable_modules_share_a_name() -> None:
    """Every folder that holds test modules is on sys.path during a run (pytest's prepend
    import mode, and pyproject's `pythonpath`): a name must mean one file."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in python_files():
        if path.name in ("conftest.py", "__init__.py"):
            continue
        by_name[path.stem].append(str(path.relative_to(ROOT)))
    shared = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert shared == {}, f"rename one of each: {shared}"


def test_no_test_folder_is_imported_as_a_package() -> None:
    """`from store.backends import X` makes tests/store a namespace package named `store`, and
    then the calendar example's own `store` module cannot be imported in the same run."""
    # A folder named like a standard module (tests/typing) never shadows it: a namespace
    # package is found only where no module of that name is.
    # tests/helpers is a package on purpose (it has an __init__.py): what tests share.
    folders = ({p.name for p in TESTS.iterdir() if p.is_dir() and not (p / "__init__.py").exists()}
               - set(sys.stdlib_module_names))
    found = sorted(str(p.relative_to(ROOT)) for p in python_files()
                   if imported_modules(p) & folders)
    assert found == [], f"import these helpers by module name instead: {found}"


def collected(*args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", REQUIRE_VARIABLE)}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--co", "-q", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == pytest.ExitCode.OK, out.stdout[-3000:] + out.stderr[-3000:]
    return [line for line in out.stdout.splitlines() if "::" in line]


def test_the_probe_tests_collect_the_same_after_another_folders_conftest() -> None:
    alone = collected("tests/probe")
    probe = [i for i in collected("tests/probe/test_probe_page.py", "tests/probe", "tests/cli")
             if i.startswith("tests/probe/")]
    assert sorted(set(probe)) == sorted(alone)
    reversed_order = [i for i in collected("tests/cli", "tests/probe") if i.startswith("tests/probe/")]
    assert sorted(reversed_order) == sorted(alone)
