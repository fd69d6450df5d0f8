"""Fixtures of the proxy's tests (`proxied.py`): a proxy in front of a fresh upstream for each
era of the proxy's client, and the era of each caller."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from helpers.proxy.proxied import ERAS, Proxied


@pytest.fixture(params=ERAS)
def upstream_era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=ERAS)
def client_era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def proxied(upstream_era: str) -> AsyncIterator[Proxied]:
    made = Proxied(upstream_era)
    async with made.proxy:
        yield made
    made.assert_clean()
