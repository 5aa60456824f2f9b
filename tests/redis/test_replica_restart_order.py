"""The fast part of the hand-off soak (`soak_replica_handoffs.py`, `make soak`): two rounds of
Redis restarting under two real replicas, keeping its data and losing it, while every user's
turn is at the model; every DM answered and each user's answers in the order of their DMs.
Kill -9 and SIGSTOP of the lease holder are `test_replica_order.py`'s."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.redis.conftest import PrivateRedis
from tests.redis.soak_replica_handoffs import faults_in_order

pytestmark = [pytest.mark.slow, pytest.mark.redis]


@pytest.mark.parametrize("kind", ["redis-kept", "redis-wiped"])
async def test_answers_stay_in_order_while_redis_restarts_under_the_replicas(
    kind: str,
    tmp_path: Path,
    fake_tg: FakeTelegram,
    fake_llm: FakeLLM,
    private_redis: PrivateRedis,
) -> None:
    summary = await faults_in_order(kind, 2, tmp_path, fake_tg, fake_llm, private_redis)
    assert "in order" in summary
