"""`doctor` on the Redis backend: ping, version, latency, eviction policy; the URL never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatgate.cli.doctor_cmd import diagnose, render
from chatgate.config.findings import Level
from tests.harness import write_config

pytestmark = pytest.mark.redis
PASSWORD = "doctor-REDIS-pw-5521"


def config(tmp_path: Path, gateway: str) -> Path:
    return write_config(tmp_path, gateway + "agents:\n  default: {backend: echo}\n")


def levels(findings: list) -> dict[str, Level]:  # type: ignore[type-arg]
    return {f.check: f.level for f in findings if f.check.startswith("redis")}


async def test_a_healthy_redis_passes_every_check(tmp_path: Path, redis_db: str) -> None:
    path = config(tmp_path, f"  store: {{backend: redis, url: '{redis_db}'}}\n")
    found = levels(await diagnose(path))
    assert found == {
        "redis.ping": Level.OK,
        "redis.version": Level.OK,
        "redis.latency": found["redis.latency"],  # WARN on a loaded machine is fine
        "redis.maxmemory_policy": Level.OK,  # the test server runs noeviction (the default)
    }


async def test_unreachable_redis_fails_and_hides_the_password(tmp_path: Path) -> None:
    url = f"redis://:{PASSWORD}@127.0.0.1:1/0"
    path = config(tmp_path, f"  turn_lock: {{backend: redis}}\n  redis: {{url: '{url}'}}\n")
    findings = await diagnose(path)
    assert levels(findings) == {"redis.ping": Level.FAIL}
    assert PASSWORD not in render(findings)


async def test_sqlite_skips_redis(tmp_path: Path) -> None:
    assert levels(await diagnose(config(tmp_path, ""), offline=True)) == {"redis": Level.SKIP}
