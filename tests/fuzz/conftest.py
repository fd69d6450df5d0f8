"""Hypothesis profiles for the property tests of every entry that takes a peer's bytes.

`ci` (the default) is derandomized: the same examples are drawn on every run, so a failure in
CI is a failure on the next run too, and few enough of them that the whole folder stays well
under a minute on a loaded machine. `long` draws many more (MCPKIT_FUZZ_EXAMPLES, default 5,000
per property), from a fresh seed each run, for `scripts/fuzz`, and keeps the failing examples
it finds in .cache/hypothesis (git-ignored) to try them first next time; `ci` keeps nothing, so
a run in CI depends on nothing but the code. Neither has a deadline: a slow example on a busy
machine is not a bug, and no test here asserts anything about time. HYPOTHESIS_PROFILE picks
one.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "ci", derandomize=True, max_examples=60, deadline=None, print_blob=True,
    suppress_health_check=_QUIET, database=None,
)
settings.register_profile(
    "long", max_examples=int(os.environ.get("MCPKIT_FUZZ_EXAMPLES", "5000")), deadline=None,
    print_blob=True, suppress_health_check=_QUIET,
    database=DirectoryBasedExampleDatabase(
        Path(__file__).resolve().parents[2] / ".cache" / "hypothesis"),
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
