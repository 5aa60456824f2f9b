"""What an adapter sees of its channel lease: the time left to use the connection, so a long poll
never outlives the lease (two pollers on one token would get Telegram's 409)."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from chatgate.channels.telegram.polling import poll_timeout
from chatgate.gateway.supervision.lease import LeaseHold, LeaseKeeper
from chatgate.state.redis.client import Keys
from chatgate.state.redis.leases import RedisLeases
from tests.fakes.clock import ManualClock
from tests.support.waiting import eventually


@pytest.mark.parametrize(
    ("configured", "left", "timeout"),
    [
        (30, None, 30),  # one process per state: the configured long poll
        (30, 6.0, 5),  # ends a second before the lease would have to be renewed
        (30, 1.5, 0),  # a short poll still fits
        (30, 0.9, 0),  # the margin shrinks to half of what is left
        (30, 0.0, None),  # nothing left: do not poll until renewed
        (0, 6.0, 0),
        (2, 6.0, 2),
    ],
)
def test_poll_timeout_fits_inside_the_lease(
    configured: int, left: float | None, timeout: int | None
) -> None:
    assert poll_timeout(configured, left) == timeout


async def test_the_hold_follows_grants_and_renewals_and_ends_with_the_run(redis_db: str) -> None:
    clock = ManualClock()
    client = Redis.from_url(redis_db, decode_responses=True)
    keeper = LeaseKeeper(RedisLeases(client, Keys("h:"), "a"), 9.0, clock)
    hold = LeaseHold(clock)
    try:
        assert hold.remaining_s() is None  # not under a lease yet: unlimited
        await keeper.wait("telegram:bot", "telegram", lambda: None, hold)
        assert hold.remaining_s() == pytest.approx(6.0)  # two thirds of the TTL
        keeping = asyncio.ensure_future(keeper.keep("telegram:bot", "telegram", hold))
        await eventually(lambda: clock.pending() == [2.0], what="the keeper waiting to renew")
        clock.advance(2.0)  # a third of the validity
        assert hold.remaining_s() == pytest.approx(4.0)
        await eventually(lambda: hold.remaining_s() == pytest.approx(6.0), what="a renewal")
        keeping.cancel()
        hold.ended()
        assert hold.remaining_s() == 0.0
    finally:
        await client.aclose()
