"""Fixtures of the resumable-stream tests: the gates their tools wait on, and a plain HTTP
client for the requests a test writes by hand."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from resume_peer import GATE_TIMEOUT, Gates


@pytest.fixture
def gates() -> Gates:
    return Gates()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=GATE_TIMEOUT) as client:
        yield client
