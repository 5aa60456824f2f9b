"""A budgeted turn's store calls: once the agent's running average is known, the turn's first
model call is reserved as the turn begins, in the same round trip that reads the ladder's
counters (before: a read, a reserve and a settle). The settle itself is queued and rides the
store's next round trip (tests/budgets/test_store.py), so a steady turn makes one."""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from chatgate.budgets.feature import Budgets
from chatgate.model.messages import InboundMessage
from tests.fakes.llm import FakeLLM
from tests.harness import fake_agent, memory, running, write_config

ROUND_TRIPS = ("read", "reserve", "reserve_reading", "settle", "release", "once")


def _counted(calls: list[str], name: str, method: Callable[..., Awaitable[Any]]) -> Any:
    @functools.wraps(method)
    async def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        depth = len(calls)
        try:
            return await method(*args, **kwargs)
        finally:
            del calls[depth:]  # one round trip: a method that calls another counts once

    return counting


async def test_a_one_call_turn_makes_two_store_round_trips(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    config = write_config(
        tmp_path,
        f"""  rate_limits: {{per_sender: null, per_chat: null}}
{fake_agent(fake_llm, "sk-test", 60)}
    price: {{input_per_mtok: 1, output_per_mtok: 1}}
budgets:
  - {{name: daily, scope: user, limit_usd: 1, limit_turns: 100, warn_at: null}}
channels:
  memory: {{dm_policy: open}}
""",
    )
    calls: list[str] = []
    async with running(config) as gw:
        store = next(f for f in gw.features if isinstance(f, Budgets)).store
        for name in ROUND_TRIPS:  # the real store, its calls counted
            setattr(store, name, _counted(calls, name, getattr(store, name)))
        chat = memory(gw)
        assert (await (await chat.inject("first", sender_id="ann")).result).reason == "text"
        first, calls[:] = list(calls), []
        assert (await (await chat.inject("second", sender_id="ann")).result).reason == "text"
        second = list(calls)
        usage = await store.read([k for k in (await store.counters()) if "|memory:ann|" in k], 0)
        # a turn that begins (its first call reserved ahead) and makes no model call after all
        meters = next(f for f in gw.features if isinstance(f, Budgets)).meters
        msg = InboundMessage("memory", "memory", "ann", "direct", "ann", "m9", "hi")
        metered = await meters.begin(msg, "default", "default:memory:ann", None)
        [held] = (await store.read(list(usage), time.time())).values()
        assert metered.release is not None
        await metered.release()
        [released] = (await store.read(list(usage), time.time())).values()
    assert first == ["read", "reserve", "settle"]  # no average yet: the prompt is counted
    assert second == ["reserve_reading", "settle"]
    [counter] = usage.values()
    assert counter.turns == 2 and counter.reserved_turns == 0  # nothing left reserved
    assert held.reserved_turns == 1 and released.reserved_turns == 0  # given back unused
