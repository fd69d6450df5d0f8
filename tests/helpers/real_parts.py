"""The real parts the suite runs (PostgreSQL, Redis, nginx, Chromium): where each is found, and
what a test does when one is missing.

One function, `required()`, decides whether every real part is required. It is true under CI,
whatever the CI service calls truth (`CI` = 1, true or yes, any case), and wherever
`MCPKIT_REQUIRE_REAL_PARTS` says so (`.ci/run` and `scripts/test` under CI set it, so every
process they start agrees). Where they are required, a test that needs a missing part fails
naming the part and the package to install; elsewhere it skips with the same line, and the
run's last lines count, per missing part, the tests it cost. A CI run therefore never passes
by skipping, and a local run cannot hide what it did not test.

This module is also the pytest plugin that does that tally (tests/conftest.py loads it), and a
small command for `scripts/test`:

    python tests/helpers/real_parts.py required   exit status 0 when every real part is required
    python tests/helpers/real_parts.py missing    the Debian packages of the missing parts, one a line
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

__all__ = ["PARTS", "REQUIRE_VARIABLE", "chromium_binary", "missing", "nginx_binary",
           "postgres_bin", "redis_binary", "required"]

REQUIRE_VARIABLE = "MCPKIT_REQUIRE_REAL_PARTS"
"""Set to 1 (true, yes) to require every real part outside CI too."""
POSTGRES_LIB_VARIABLE = "MCPKIT_POSTGRES_LIB"
"""Where Debian's versioned PostgreSQL folders are looked for (default /usr/lib/postgresql);
pointing it at an empty folder, with no initdb on PATH, hides PostgreSQL from the suite."""
_TRUE = ("1", "true", "yes")


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def required() -> bool:
    """Every real part is required: under CI (CI = 1/true/yes, any case) or when
    MCPKIT_REQUIRE_REAL_PARTS says so. The one place the suite decides it."""
    return _truthy("CI") or _truthy(REQUIRE_VARIABLE)


def _why_required() -> str:
    if _truthy(REQUIRE_VARIABLE):
        return f"{REQUIRE_VARIABLE}={os.environ[REQUIRE_VARIABLE]}"
    return f"CI={os.environ.get('CI', '')}"


# -- where each part is found ----------------------------------------------------------------


def postgres_bin(name: str) -> str | None:
    """A PostgreSQL program (initdb, pg_ctl, psql): on PATH, else in Debian's versioned folder."""
    found = shutil.which(name)
    if found:
        return found
    root = Path(os.environ.get(POSTGRES_LIB_VARIABLE) or "/usr/lib/postgresql")
    if root.is_dir():
        for version in sorted(root.iterdir(), key=lambda p: p.name, reverse=True):
            candidate = version / "bin" / name
            if candidate.is_file():
                return str(candidate)
    return None


def redis_binary() -> str | None:
    return shutil.which("redis-server")


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.path.exists(p)), None)


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass(frozen=True)
class Part:
    name: str
    """As the messages and the tally name it."""
    programs: str
    """What is looked for."""
    package: str
    """The Debian package that installs it."""

    def present(self) -> bool:
        if self.package == "postgresql":
            return postgres_bin("initdb") is not None and postgres_bin("pg_ctl") is not None
        finder = {"redis-server": redis_binary, "nginx": nginx_binary,
                  "chromium": chromium_binary}[self.package]
        return finder() is not None


PARTS = {
    "postgresql": Part("PostgreSQL", "initdb, pg_ctl", "postgresql"),
    "redis": Part("Redis", "redis-server", "redis-server"),
    "nginx": Part("nginx", "nginx", "nginx"),
    "chromium": Part("Chromium", "chromium", "chromium"),
}

_TAG = "real part missing: "
_TAGGED = re.compile(re.escape(_TAG) + r"([^;]+);")


def missing(key: str) -> NoReturn:
    """The test cannot run without PARTS[key]: fail naming it where every real part is
    required, else skip with the same line (and the run's summary counts it)."""
    part = PARTS[key]
    line = (f"{_TAG}{part.name}; {part.programs} not found: install {part.package} "
            f"(apt-get install {part.package})")
    if required():
        pytest.fail(f"{line}. Every real part is required here ({_why_required()}).",
                    pytrace=False)
    pytest.skip(line)


# -- the pytest plugin: the tally of missing parts --------------------------------------------

_counts: Counter[tuple[str, str]] = Counter()
"""(outcome, part name) -> tests, over the run."""


def _part_named(report: Any) -> str | None:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr or "")
    found = _TAGGED.search(text)
    return found.group(1) if found else None


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count each test a missing part skipped or failed (on the controller under xdist)."""
    if report.skipped or report.failed:
        name = _part_named(report)
        if name is not None:
            _counts["skipped" if report.skipped else "failed", name] += 1


def tally_lines() -> list[str]:
    """One line per missing part and what it cost, in the order PARTS lists them."""
    lines = []
    for part in PARTS.values():
        for outcome in ("failed", "skipped"):
            n = _counts[outcome, part.name]
            if n:
                tests = "1 test" if n == 1 else f"{n} tests"
                how = ("failed: it is required" if outcome == "failed"
                       else f"skipped (install {part.package} to run them)")
                lines.append(f"real part missing: {part.name}: {tests} {how}")
    return lines


def pytest_unconfigure(config: pytest.Config) -> None:
    """The tally, after pytest's own last line: the run's final lines name what it missed."""
    lines = tally_lines()
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if not lines or reporter is None:
        return
    for line in lines:
        reporter.write_line(line, red="failed:" in line, yellow="skipped" in line)


def _main(argv: list[str]) -> int:
    if argv == ["required"]:
        return 0 if required() else 1
    if argv == ["missing"]:
        for part in PARTS.values():
            if not part.present():
                print(part.package)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
