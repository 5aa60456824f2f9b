"""The Redis mode of the privacy tests claims a test db like the tests under tests/redis."""

from tests.redis.conftest import redis_db

__all__ = ["redis_db"]
