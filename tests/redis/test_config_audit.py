"""The config-change audit trail on Redis: two instances (two replicas) share one history,
newest first, trimmed to the kept count."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from chatgate.state.config_audit import KEEP, ConfigChange
from chatgate.state.redis.client import Keys
from chatgate.state.redis.config_audit import RedisConfigAudit

pytestmark = pytest.mark.redis
KEYS = Keys("cg:")


def change(at: float, action: str = "apply") -> ConfigChange:
    return ConfigChange(at, action, "10.0.0.7", "dashboard", ("gateway.rate_limits",), 1, 1,
                        "gateway.yaml.1", {"ok": True, "restarted_channels": []})  # fmt: skip


async def test_replicas_share_one_history_newest_first(client: Redis) -> None:
    a, b = RedisConfigAudit(client, KEYS), RedisConfigAudit(client, KEYS)
    first = await a.record(change(1.0))
    second = await b.record(change(2.0, "rollback to gateway.yaml.1"))
    assert second > first
    got = await a.recent(10)
    assert [(c.id, c.action) for c in got] == [
        (second, "rollback to gateway.yaml.1"),
        (first, "apply"),
    ]
    assert got[1] == ConfigChange.from_json(change(1.0).to_json() | {"id": first})
    assert [c.id for c in await b.recent(1)] == [second]


async def test_only_the_newest_are_kept(client: Redis) -> None:
    audit = RedisConfigAudit(client, KEYS)
    for at in range(KEEP + 3):
        await audit.record(change(float(at)))
    kept = await audit.recent(KEEP + 10)
    assert len(kept) == KEEP and kept[0].at == KEEP + 2 and kept[-1].at == 3
