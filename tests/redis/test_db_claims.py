"""The test db claim: a db is released only once nothing the test started can write to it."""

from __future__ import annotations

import asyncio
import sys

import pytest
from redis.asyncio import Redis

from tests.daemon import LIVE
from tests.redis.conftest import claimed_db
from tests.support.waiting import eventually

pytestmark = pytest.mark.redis
STRAY = "chatgate-tests:stray"
# A stand-in for a daemon a failed test left running: it keeps writing its key (a lease renewal).
WRITER = f"""
import sys, time, redis
client = redis.Redis.from_url(sys.argv[1])
while True:
    client.set({STRAY!r}, 1, px=60_000)
    time.sleep(0.01)
"""


async def test_a_daemon_left_running_is_reaped_before_its_db_is_released() -> None:
    async with claimed_db() as url:
        writer = await asyncio.create_subprocess_exec(sys.executable, "-c", WRITER, url)
        LIVE.append(writer)
        admin = Redis.from_url(url)
        try:
            await eventually(lambda: admin.exists(STRAY), 30, "the leftover writing")
        finally:
            await admin.aclose()
    assert writer.returncode is not None, "the db was released with its writer still running"
    admin = Redis.from_url(url)
    try:
        assert not await admin.exists(STRAY)  # flushed after the writer was gone
    finally:
        await admin.aclose()


async def test_a_test_that_wipes_its_db_keeps_its_claim() -> None:
    """A wipe test flushes its db (Redis lost its data); another run claiming a db meanwhile must
    not get that one: it would flush the wipe test's data again, mid-test, and take its leases."""
    async with claimed_db() as url:
        admin = Redis.from_url(url)
        try:
            await admin.flushdb()
        finally:
            await admin.aclose()
        async with claimed_db() as other:
            assert other != url
