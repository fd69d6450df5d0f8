"""The state machines' figures: examples, steps and time of each machine that ran."""

from __future__ import annotations

from typing import Any

import pytest
from stateful_runs import RUNS


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    ran = [tally for tally in RUNS if tally.examples]
    if ran:
        terminalreporter.write_sep("-", "state machines")
        for tally in ran:
            terminalreporter.write_line(tally.line())
