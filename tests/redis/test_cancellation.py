"""Cancelling a task inside a Redis command always ends it (heartbeats, leases, turn locks).

redis-py's blocking pool sometimes absorbs a cancellation; a loop that only ends when cancelled
then ran on after the gateway stopped and hung its shutdown.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import BlockingConnectionPool, Redis

from chatgate.state.redis.client import HEARTBEAT_CONNECTIONS, Keys, cancel_safe
from chatgate.state.redis.leases import RedisLeases
from chatgate.state.redis.lock import RedisTurnLock

pytestmark = pytest.mark.redis
TRIALS = 250


async def test_a_cancel_the_awaited_command_swallows_still_reaches_the_caller() -> None:
    async def swallowing() -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            return "swallowed"
        return "slept"

    async def caller() -> str:
        return await cancel_safe(swallowing())

    task = asyncio.ensure_future(caller())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)


@pytest.fixture
async def heartbeat_client(redis_db: str) -> AsyncIterator[Redis]:
    """A client like the heartbeat one: a small blocking pool (where cancels got absorbed)."""
    pool = BlockingConnectionPool.from_url(
        redis_db, max_connections=HEARTBEAT_CONNECTIONS, timeout=5, decode_responses=True
    )
    redis = Redis.from_pool(pool)
    yield redis
    await redis.aclose()


async def test_every_cancel_stops_a_lease_and_lock_renewal_loop(heartbeat_client: Redis) -> None:
    leases = RedisLeases(heartbeat_client, Keys("c:"), "a")
    lock = RedisTurnLock(heartbeat_client, "c:")
    token = await lock.acquire("s", owner="a", ttl=30)
    rng = random.Random(7)

    async def renewing() -> None:
        while True:  # ends only by cancellation, like a heartbeat
            await leases.acquire("conn", 30)
            await lock.renew(token, 30)

    ran_on = 0
    for _ in range(TRIALS):
        task = asyncio.ensure_future(renewing())
        await asyncio.sleep(rng.uniform(0.0005, 0.005))
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=2)
        if not done:
            ran_on += 1
            task.cancel()
            await asyncio.wait({task}, timeout=2)
        elif not task.cancelled():
            task.result()  # an error instead of the cancellation: show it
    assert ran_on == 0, f"{ran_on} of {TRIALS} cancelled loops kept running"
    await leases.release("conn")
    await lock.release(token)
