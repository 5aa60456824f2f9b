"""Config changes on Redis: an apply on one replica is audited in the shared store, so every
replica's Config page and `chatgate config history` show it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.config_edit.test_config_api import call, edited
from tests.harness import running, write_config

pytestmark = pytest.mark.redis


def config(directory: Path, url: str, replica: str) -> Path:
    return write_config(
        directory,
        f"""  store: {{backend: redis, url: '{url}', key_prefix: 'cg:'}}
  redis: {{replica_id: {replica}}}
  rate_limits:
    per_sender: {{rate_per_s: 5, burst: 50}}
agents:
  default: {{backend: echo}}
""",
    )


async def test_an_apply_on_one_replica_is_in_every_replicas_history(
    tmp_path: Path, redis_db: str
) -> None:
    first = config(tmp_path / "a", redis_db, "a")
    second = config(tmp_path / "b", redis_db, "b")
    async with running(first) as a, running(second) as b:
        _, view = await call(a, "GET", "/api/config")
        text = edited(view["text"], "burst: 50", "burst: 7")
        status, done = await call(
            a, "POST", "/api/config/apply", {"text": text, "etag": view["etag"]}
        )
        assert status == 200 and done["audited"] is True, done
        _, seen_by_b = await call(b, "GET", "/api/config/history")
        _, page_of_b = await call(b, "GET", "/api/config")
    [change] = seen_by_b["changes"]
    assert change["changed"] == ["gateway.rate_limits.per_sender.burst"]
    assert change["id"] == done["change"]["id"]
    assert page_of_b["history"] == seen_by_b["changes"]
    assert "burst: 50" in page_of_b["text"]  # b's own file is its own
