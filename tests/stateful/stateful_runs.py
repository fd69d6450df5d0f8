"""What the state machines of this folder share: their settings, and a tally of each run.

The settings leave the number of examples, the seed and the example database to the suite's
Hypothesis profile (the one loaded when the tests are collected): a machine sets only what is
its own, how many steps one example takes, and that it has no deadline (a step that waits on
a real server may be slow on a loaded machine, which is no bug). The tally counts examples and
steps and times the run, and the folder's conftest prints every run's figures at the end.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import HealthCheck, settings

__all__ = ["RUNS", "Tally", "machine_settings"]


def machine_settings(steps: int) -> settings:
    """The loaded profile, with `steps` steps per example at most and no deadline."""
    return settings(stateful_step_count=steps, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


@dataclass
class Tally:
    """Examples and steps of one machine's runs, and how long they took."""

    name: str
    examples: int = 0
    steps: int = 0
    seconds: float = 0.0
    outcomes: Counter[str] = field(default_factory=Counter)
    """How often each outcome a machine names was seen (that the runs reach every branch)."""
    _started: float | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        RUNS.append(self)

    def example(self) -> None:
        if self._started is None:
            self._started = time.monotonic()
        self.examples += 1

    def step(self) -> None:
        self.steps += 1

    def saw(self, outcome: str) -> None:
        self.outcomes[outcome] += 1

    def report(self) -> None:
        if self._started is not None:
            self.seconds += time.monotonic() - self._started
            self._started = None

    def line(self) -> str:
        seen = "".join(f"\n    {n:6d}  {outcome}" for outcome, n in sorted(self.outcomes.items()))
        return (f"{self.name}: {self.examples} examples, {self.steps} steps, "
                f"{self.seconds:.1f} s{seen}")


RUNS: list[Tally] = []
