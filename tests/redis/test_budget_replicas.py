"""Two in-process replicas on one Redis, 40 concurrent turns of one user against a 10-turn
budget: exactly 10 reach the model (turn reservations are atomic across replicas), the other
30 are refused with the budget text; the Redis store admits a cost limit exactly."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from chatgate.budgets.feature import Budgets
from chatgate.budgets.store import Spent, refusal_flag
from chatgate.budgets.store_redis import RedisBudgetStore
from chatgate.config.models import GatewaySection, RedisConfig, StoreConfig
from chatgate.gateway.app import Gateway
from chatgate.policies.budgets import Charge, usd_to_nano
from tests.fakes.llm import FakeLLM
from tests.harness import memory, running, write_config

pytestmark = pytest.mark.redis
TURNS = 40
LIMIT = 10


def replica_config(directory: Path, fake: FakeLLM, url: str, replica: str) -> Path:
    return write_config(
        directory,
        f"""
  store: {{backend: redis, url: '{url}', key_prefix: 'br:'}}
  turn_lock: {{backend: redis}}
  redis: {{replica_id: {replica}}}
  rate_limits: {{per_sender: null, per_chat: null}}
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {fake.base_url}
    api_key: sk-test
    timeout_s: 10
    price: {{input_per_mtok: 1, output_per_mtok: 1}}
budgets:
  - name: per-user-daily
    scope: user
    limit_turns: {LIMIT}
    warn_at: null
channels:
  memory: {{dm_policy: open}}
""",
    )


async def test_two_replicas_forty_concurrent_turns_of_one_user_admit_ten(
    tmp_path: Path, redis_db: str
) -> None:
    async with FakeLLM(latency_s=0.05) as fake, contextlib.AsyncExitStack() as stack:
        gateways = [
            await stack.enter_async_context(
                running(replica_config(tmp_path / name, fake, redis_db, name))
            )
            for name in ("r1", "r2")
        ]
        submissions = [
            await memory(gateways[i % 2]).inject(
                f"q{i}", chat_id=f"c{i}", sender_id="ann", message_id=f"q{i}"
            )
            for i in range(TURNS)
        ]
        results = await asyncio.gather(*(s.result for s in submissions))
    reasons = [r.reason for r in results]
    assert reasons.count("text") == LIMIT, reasons
    assert reasons.count("budget_exhausted") == TURNS - LIMIT
    assert len(fake.requests) == LIMIT  # the overspend bound for turns: none


async def _spent(gw: Gateway, user: str) -> int:
    """Nano-USD spent by ``user`` under the rule, read from the shared store."""
    budgets = next(f for f in gw.features if isinstance(f, Budgets))
    counters = await budgets.store.counters()
    return sum(u.nano for key, u in counters.items() if key.startswith(f"money|{user}|"))


COST_RULE = """budgets:
  - name: money
    scope: user
    limit_usd: {limit}
    warn_at: null
"""


async def test_two_replicas_overspend_a_cost_limit_by_at_most_one_estimate_each(
    tmp_path: Path, redis_db: str
) -> None:
    """Turns of equal cost c under a limit of 10 c: concurrent turns on two replicas spend at
    most 10 c + 2 c (the bound the docs state: one estimate per replica), and at least 9 c."""
    async with FakeLLM(latency_s=0.05) as fake, contextlib.AsyncExitStack() as stack:
        paths = []
        for name in ("r1", "r2"):
            path = replica_config(tmp_path / name, fake, redis_db, name)
            text = path.read_text().replace("limit_turns: 10", "limit_usd: 1000")
            path.write_text(text.replace("per-user-daily", "money"))
            paths.append(path)
        gateways = [await stack.enter_async_context(running(p)) for p in paths]
        warm = await memory(gateways[0]).inject("q00", chat_id="w", sender_id="warm")
        assert (await warm.result).reason == "text"
        cost = await _spent(gateways[0], "memory:warm")
        assert cost > 0
        for path, gw in zip(paths, gateways, strict=True):
            path.write_text(
                path.read_text().replace("limit_usd: 1000", f"limit_usd: {10 * cost / 1e9!r}")
            )
            await gw.reload()
        submissions = [
            await memory(gateways[i % 2]).inject(
                f"q{i:02d}", chat_id=f"c{i}", sender_id="ann", message_id=f"q{i}"
            )
            for i in range(TURNS)
        ]
        results = await asyncio.gather(*(s.result for s in submissions))
        spent = await _spent(gateways[0], "memory:ann")
    answered = [r.reason for r in results].count("text")
    print(f"overspend bound: {answered} turns answered, spent {spent / cost:.2f} c of 10 c")
    assert 9 <= answered <= 12, [r.reason for r in results]
    assert spent <= 12 * cost, (spent, cost)


def _section(url: str) -> GatewaySection:
    return GatewaySection(
        store=StoreConfig(backend="redis"), redis=RedisConfig(url=url, key_prefix="bs:")
    )


async def test_redis_store_admits_exactly_five_turns_of_0002_under_001(redis_db: str) -> None:
    store = RedisBudgetStore(_section(redis_db))
    await store.open()
    try:
        cost = usd_to_nano(0.002)
        admitted = 0
        for i in range(8):
            charge = Charge("money|u|2026-12-06", usd_to_nano(0.01), None, None, cost, 0, 1)
            if await store.reserve(f"t{i}", [charge], 100.0, 200.0) is not None:
                break
            await store.settle(f"t{i}", [charge.key], Spent(cost, 10, 1), "default")
            admitted += 1
        assert admitted == 5
        assert (await store.forget("u")) == 1
        assert (await store.counters()) == {}
    finally:
        await store.close()


async def test_redis_forgets_a_person_s_refusal_flags_and_no_one_else_s(redis_db: str) -> None:
    store = RedisBudgetStore(_section(redis_db))
    await store.open()
    try:
        theirs = refusal_flag("memory:a*[x]", "memory:g")  # glob characters in an id
        other = refusal_flag("memory:ab", "memory:g")
        assert await store.once(theirs, 0.0, 3600.0) and await store.once(other, 0.0, 3600.0)
        assert await store.forget_flags("memory:a*[x]") == 1
        assert await store.once(theirs, 1.0, 3600.0) and not await store.once(other, 1.0, 3600.0)
    finally:
        await store.close()


async def test_redis_settles_ride_the_next_script_and_close_writes_them(redis_db: str) -> None:
    key, cost = "money|u2|2026-12-06", usd_to_nano(0.008)
    store = RedisBudgetStore(_section(redis_db))
    await store.open()
    try:
        charge = Charge(key, usd_to_nano(0.01), None, None, usd_to_nano(0.002), 0, 1)
        assert await store.reserve("t1", [charge], 100.0, 200.0) is None
        await store.settle("t1", [key], Spent(cost, 10, 1), "default")
        refused, usage = await store.reserve_reading("t2", [charge], 100.0, 200.0)
        assert refused is None and usage[key].nano == cost and usage[key].reserved_nano == 0
        await store.settle("t2", [key], Spent(usd_to_nano(0.001), 5, 0), "default")
    finally:
        await store.close()
    reopened = RedisBudgetStore(_section(redis_db))
    await reopened.open()
    try:
        assert (await reopened.counters())[key].nano == cost + usd_to_nano(0.001)
        assert (await reopened.read([key], 100.0))[key].reserved_nano == 0
    finally:
        await reopened.close()
