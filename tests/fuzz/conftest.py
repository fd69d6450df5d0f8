"""Hypothesis profiles for the property tests of every entry that takes a peer's bytes.

`ci` (the default) is derandomized: the same examples are drawn on every run, so a failure in
CI is a failure on the next run too, and few enough of them that the whole folder stays well
under a minute on a loaded machine. `long` draws many more, from a fresh seed each run, for
`scripts/fuzz`. Neither has a deadline: a slow example on a busy machine is not a bug, and no
test here asserts anything about time. HYPOTHESIS_PROFILE picks one.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "ci", derandomize=True, max_examples=60, deadline=None, print_blob=True,
    suppress_health_check=_QUIET, database=None,
)
settings.register_profile(
    "long", max_examples=5_000, deadline=None, print_blob=True, suppress_health_check=_QUIET,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
