"""A failure whose report cannot be written still reaches the run's summary as a failure.

CPython 3.11 up to 3.11.8 can raise `SystemError: AST constructor recursion depth mismatch`
while pytest parses a source file to show the failing statement (python/cpython#106905: an
error inside the AST constructor leaves its depth count off). The state machines' failures,
raised from deep Hypothesis frames, met it under CI, and pytest stopped the whole run with an
INTERNALERROR. Here such a report is written again in the interpreter's own traceback format,
which reads no source through `ast`, so the run goes on and the failure keeps its traceback.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

MISMATCH = "AST constructor recursion depth mismatch"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[Any]) -> Generator[None, Any, Any]:
    try:
        return (yield)
    except SystemError as exc:
        if MISMATCH not in str(exc):
            raise
        option = item.config.option
        style, option.tbstyle = option.tbstyle, "native"
        try:
            report = pytest.TestReport.from_item_and_call(item, call)
        finally:
            option.tbstyle = style
        report.sections.append(("failure report", f"written natively after: {exc}"))
        return report
