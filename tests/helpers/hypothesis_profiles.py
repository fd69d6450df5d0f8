"""The Hypothesis profiles of the whole suite (tests/conftest.py loads this plugin before any test
module is imported, so every property and every rule-based state machine inherits the profile;
a test's own `@settings` still changes what it names and inherits the rest).

- `local` (the default outside CI): derandomized, 60 examples per property, no example
  database. The same examples every run, so a failure on a laptop repeats.
- `ci` (the default under CI, where every real part is required: tests/helpers/real_parts.py): a fresh
  seed each run, printed in the run's header and summary, `MCPKIT_HYPOTHESIS_EXAMPLES` examples
  per property (default 200), within a time budget for the run (`MCPKIT_HYPOTHESIS_BUDGET_S`,
  default 600 s over all Hypothesis tests): once the budget is spent, the properties still to
  run draw the local count (60) from the same seed, so the run stays well within its hour.
- `long` (`scripts/fuzz`): `MCPKIT_FUZZ_EXAMPLES` per property (default 5,000), a fresh seed, no
  budget.

`ci` and `long` keep the failing examples they find in the example database committed with the
suite, tests/.hypothesis-examples, and try the ones there first on every run. A failure is
replayed with `HYPOTHESIS_SEED=<the printed seed> scripts/test <the test>` (a seed alone picks
`ci`), or exactly with the `@reproduce_failure` blob Hypothesis prints (`print_blob`).
`HYPOTHESIS_PROFILE` picks a profile by name. No profile has a deadline: a slow example on a
busy machine is not a bug, and no property asserts anything about time.
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from helpers.real_parts import required

EXAMPLES_DB = Path(os.environ.get("MCPKIT_HYPOTHESIS_DB")
                   or Path(__file__).resolve().parents[1] / ".hypothesis-examples")
"""The failing examples found so far: committed, replayed first by `ci` and `long`
(MCPKIT_HYPOTHESIS_DB puts them elsewhere, as the tests of these profiles do)."""
LOCAL_EXAMPLES = 60
CI_EXAMPLES = int(os.environ.get("MCPKIT_HYPOTHESIS_EXAMPLES", "200"))
BUDGET_S = float(os.environ.get("MCPKIT_HYPOTHESIS_BUDGET_S", "600"))
SEED_VARIABLE = "HYPOTHESIS_SEED"

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]
# Each from Hypothesis's own defaults, not from whatever profile it loaded (under CI it loads a
# derandomized profile of its own, also named "ci", which this one replaces).
_COMMON: dict[str, Any] = {"parent": settings.get_profile("default"), "deadline": None,
                           "print_blob": True, "suppress_health_check": _QUIET}

settings.register_profile("local", derandomize=True, max_examples=LOCAL_EXAMPLES,
                          database=None, **_COMMON)
settings.register_profile("ci", derandomize=False, max_examples=CI_EXAMPLES,
                          database=DirectoryBasedExampleDatabase(EXAMPLES_DB), **_COMMON)
settings.register_profile("long", derandomize=False,
                          max_examples=int(os.environ.get("MCPKIT_FUZZ_EXAMPLES", "5000")),
                          database=DirectoryBasedExampleDatabase(EXAMPLES_DB), **_COMMON)


def chosen_profile() -> str:
    """HYPOTHESIS_PROFILE if set; else `ci` under CI or when a seed is given; else `local`."""
    named = os.environ.get("HYPOTHESIS_PROFILE", "").strip()
    if named:
        return named
    return "ci" if required() or os.environ.get(SEED_VARIABLE, "").strip() else "local"


PROFILE = chosen_profile()
settings.load_profile(PROFILE)


class _Run:
    """The run's seed and how its time budget went."""

    seed: str | None = None
    spent_s = 0.0
    full = 0
    reduced = 0


def pytest_configure(config: pytest.Config) -> None:
    """The run's seed: the one given, else a fresh one, exported so that processes the run
    starts draw the same."""
    if settings.default.derandomize:
        return
    _Run.seed = os.environ.get(SEED_VARIABLE, "").strip() or str(secrets.randbelow(2**32))
    os.environ[SEED_VARIABLE] = _Run.seed


def _seed_for(item: pytest.Item) -> random.Random:
    """Hand Hypothesis the random it draws each test's own seed from, made from the run's seed
    and the test's id: the same test draws the same examples from the same run seed, whatever
    else runs and in whatever order. That covers a state machine run by a plain test function
    (`run_state_machine_as_test`) as much as a `@given` property.

    Not `--hypothesis-seed` (nor `@seed`): a forced seed turns the example database off, and the
    failing examples kept there must still be tried first. Hypothesis keeps that random in
    `hypothesis.core.threadlocal`; tests/test_hypothesis_profiles.py fails should it move."""
    from hypothesis import core

    drawn = random.Random(f"{_Run.seed}/{item.nodeid}")
    core.threadlocal._hypothesis_global_random = drawn
    return drawn


def describe() -> str:
    """The profile line of the header and the summary (with the replay command)."""
    if _Run.seed is None:
        return (f"hypothesis: profile {PROFILE!r}, derandomized "
                f"({settings.default.max_examples} examples per property, the same every run)")
    return (f"hypothesis: profile {PROFILE!r}, seed {_Run.seed} "
            f"({settings.default.max_examples} examples per property); "
            f"replay: {SEED_VARIABLE}={_Run.seed} "
            f"{'scripts/fuzz' if PROFILE == 'long' else 'scripts/test tests/fuzz'}")


def pytest_report_header(config: pytest.Config) -> str:
    return describe()


def _is_hypothesis(item: pytest.Item) -> bool:
    return bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False))


settings.register_profile("ci-spent", settings.get_profile("ci"), max_examples=LOCAL_EXAMPLES)
"""`ci` once the budget is spent, for the settings a test makes while it runs."""


@contextlib.contextmanager
def _reduced(item: pytest.Item) -> Iterator[None]:
    """Run `item` with at most LOCAL_EXAMPLES examples, for this one call: the profile settings
    made during the call inherit (a state machine run from a plain test function), and a
    property's own settings or a state machine's `TestCase.settings`, made at import, are
    lowered."""
    lowered: list[tuple[Any, str, settings]] = []
    function = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
    cls = getattr(item, "cls", None)
    for owner, name in ((cls, "settings"), (function, "_hypothesis_internal_use_settings")):
        old = getattr(owner, name, None) if owner is not None else None
        if isinstance(old, settings) and old.max_examples > LOCAL_EXAMPLES:
            setattr(owner, name, settings(old, max_examples=LOCAL_EXAMPLES))
            lowered.append((owner, name, old))
    settings.load_profile("ci-spent")
    try:
        yield
    finally:
        settings.load_profile(PROFILE)
        for owner, name, old in lowered:
            setattr(owner, name, old)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Seed every test's Hypothesis runs from the run's seed; keep the `ci` profile within its
    budget: time each test that ran Hypothesis (it drew a seed from the random handed over, or
    is a `@given` test), and once the budget is spent run the rest at the local count."""
    if _Run.seed is None:
        yield
        return
    drawn = _seed_for(item)
    untouched = drawn.getstate()
    if PROFILE != "ci":
        yield
        return
    spent = _Run.spent_s >= BUDGET_S
    started = time.monotonic()
    if spent:
        with _reduced(item):
            yield
    else:
        yield
    if drawn.getstate() != untouched or _is_hypothesis(item):
        _Run.spent_s += time.monotonic() - started
        if spent:
            _Run.reduced += 1
        else:
            _Run.full += 1


def _uses_hypothesis(item: pytest.Item) -> bool:
    """The item's module takes something from Hypothesis (`given`, a strategy, a machine)."""
    module = getattr(item, "module", None)
    return module is not None and any(
        (getattr(value, "__name__", "") if isinstance(value, ModuleType)
         else getattr(value, "__module__", "") or "").startswith("hypothesis")
        for value in vars(module).values())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `ci`, a test of a module that uses Hypothesis may take three times the suite's
    per-test timeout (unless it sets its own): it draws more than the local count, and the run's
    budget, not the per-test bound, keeps the total in hand."""
    if PROFILE != "ci":
        return
    try:
        bound = float(config.getini("timeout") or 0)
    except (TypeError, ValueError):
        return
    if bound <= 0:
        return
    for item in items:
        if item.get_closest_marker("timeout") is None and _uses_hypothesis(item):
            item.add_marker(pytest.mark.timeout(3 * bound))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The profile and seed again at the end of the run, with how the budget went."""
    line = describe()
    if PROFILE == "ci" and _Run.full + _Run.reduced:
        line += (f"; {_Run.full} Hypothesis tests at up to {CI_EXAMPLES} examples"
                 + (f", {_Run.reduced} at {LOCAL_EXAMPLES} once the budget of {BUDGET_S:.0f} s"
                    " was spent" if _Run.reduced else "")
                 + f" ({_Run.spent_s:.0f} s)")
    terminalreporter.write_line(line)
