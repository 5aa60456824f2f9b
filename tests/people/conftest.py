"""The privacy tests run on both state backends: ``mode`` is None for SQLite, else the URL of a
Redis test db claimed like the tests under tests/redis claim theirs."""

import pytest

from tests.redis.conftest import redis_db

__all__ = ["mode", "redis_db"]


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def mode(request: pytest.FixtureRequest) -> str | None:
    if request.param == "redis":
        return str(request.getfixturevalue("redis_db"))
    return None
