"""The Matrix sync token in Redis: whichever replica holds the channel next resumes from it, and
a Redis that is away is StateUnavailable (the batch is fetched again), never a crash."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from chatgate.channels.matrix.sync import RedisTokens
from chatgate.model.errors import StateUnavailable

pytestmark = pytest.mark.redis


async def test_a_token_saved_by_one_replica_is_read_by_the_next(client: Redis) -> None:
    first, second = RedisTokens(client, "cg:matrix:m:@bot"), RedisTokens(client, "cg:matrix:m:@bot")
    assert await first.load() is None
    await first.save("s72_1234")
    assert await second.load() == "s72_1234"


async def test_a_redis_that_is_away_is_state_unavailable() -> None:
    gone = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    tokens = RedisTokens(gone, "cg:matrix:m:@bot")
    with pytest.raises(StateUnavailable):
        await tokens.load()
    with pytest.raises(StateUnavailable):
        await tokens.save("s1")
    await gone.aclose()
