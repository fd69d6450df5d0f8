"""`mcpkit.store.outage.deadline`, the bound on one store operation, without a store: a block
that never ends is a TimeoutError; one that answers its cancellation by waiting again (as
psycopg does, cancelling the statement on a server that may never answer) is interrupted a
second time; a cancellation from outside stays a cancellation; a block that ends in time leaves
the task as it found it."""

from __future__ import annotations

import asyncio

import pytest

from mcpkit.store.outage import deadline

BOUND = 10.0
"""A deadline no test reaches."""


async def test_a_block_that_never_ends_is_a_timeout_error() -> None:
    with pytest.raises(TimeoutError, match=r"no answer within 0\.05 s"):
        async with deadline(0.05):
            await asyncio.Event().wait()
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_a_block_that_waits_again_after_its_cancellation_is_interrupted_again() -> None:
    cleaned = asyncio.Event()

    async def driver() -> None:  # psycopg's way: on cancellation, cancel on the server first
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            try:
                await asyncio.Event().wait()  # the server never answers the cancel
            finally:
                cleaned.set()
            raise

    with pytest.raises(TimeoutError):
        async with deadline(0.05):
            await driver()  # in the caller's task, as the driver's statement runs
    assert cleaned.is_set()


async def test_a_cancellation_from_outside_is_not_taken_for_the_deadline() -> None:
    started = asyncio.Event()

    async def operation() -> None:
        async with deadline(BOUND):
            started.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(operation())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_block_that_ends_in_time_is_left_alone() -> None:
    async with deadline(BOUND):
        await asyncio.sleep(0)
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]
    await asyncio.sleep(0)  # no cancellation is left pending
