"""`doctor` on the Redis backend: ping, version, latency, eviction policy; the URL never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatgate.cli.doctor_cmd import diagnose, render
from chatgate.cli.doctor_redis import persistence_finding
from chatgate.config.findings import Level
from tests.harness import write_config
from tests.redis.conftest import PrivateRedis

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
        "redis.persistence": found["redis.persistence"],  # as the machine's server is set up
    }


async def test_persistence_is_reported_from_the_server(
    tmp_path: Path, private_redis: PrivateRedis
) -> None:
    path = config(tmp_path, f"  store: {{backend: redis, url: '{private_redis.url}'}}\n")
    assert levels(await diagnose(path))["redis.persistence"] is Level.OK  # appendonly yes


@pytest.mark.parametrize(
    ("aof", "saves", "level", "says"),
    [
        ("1", "", Level.OK, "append-only file on"),
        ("0", "3600 1 300 100", Level.WARN, "snapshots only (save 3600 1 300 100)"),
        ("0", "", Level.WARN, "no persistence"),
        ("0", "?", Level.WARN, "cannot read the snapshot schedule"),
    ],
)
def test_persistence_finding(aof: str, saves: str, level: Level, says: str) -> None:
    finding = persistence_finding(aof, saves)
    assert finding.level is level and says in finding.detail
    assert level is Level.OK or "appendonly yes" in (finding.fix or "")


async def test_unreachable_redis_fails_and_hides_the_password(tmp_path: Path) -> None:
    url = f"redis://:{PASSWORD}@127.0.0.1:1/0"
    path = config(tmp_path, f"  turn_lock: {{backend: redis}}\n  redis: {{url: '{url}'}}\n")
    findings = await diagnose(path)
    assert levels(findings) == {"redis.ping": Level.FAIL}
    assert PASSWORD not in render(findings)


async def test_sqlite_skips_redis(tmp_path: Path) -> None:
    assert levels(await diagnose(config(tmp_path, ""), offline=True)) == {"redis": Level.SKIP}
