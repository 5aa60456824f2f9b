"""A real redis-server on 127.0.0.1:6379, one db number per xdist worker (11–14), flushed after.

Unreachable Redis: the test fails with a clear message under CI=true, else it is skipped with the
reason shown (pytest -rs).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis
from redis.exceptions import RedisError

HOST, PORT = "127.0.0.1", 6379
FIRST_DB, DBS = 11, 4


def db_number() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    return FIRST_DB + index % DBS


def redis_url(db: int | None = None) -> str:
    return f"redis://{HOST}:{PORT}/{db_number() if db is None else db}"


@pytest.fixture
async def redis_db() -> AsyncIterator[str]:
    """The URL of an empty test database; flushed again afterwards."""
    client = Redis.from_url(redis_url(), socket_connect_timeout=1)
    try:
        await client.ping()
    except (RedisError, OSError) as exc:
        await client.aclose()
        why = f"redis-server not reachable on {HOST}:{PORT} ({type(exc).__name__})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why}; CI must run one (.ci/run starts it)")
        pytest.skip(why)
    await client.flushdb()
    try:
        yield redis_url()
    finally:
        await client.flushdb()
        await client.aclose()
