"""Three in-process replicas on one Redis tick the same jobs at the same instants (a shared
manual clock): every instant reaches the fake model exactly once, whichever replica wins."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from pathlib import Path

import pytest

from chatgate.agents.tools.schedule import JobRefused, JobRequest
from chatgate.agents.tools.types import ToolContext
from chatgate.gateway.app import Gateway
from chatgate.schedules.agent_jobs import AgentJobs
from chatgate.schedules.feature import Schedules
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.harness import memory, running, write_config

pytestmark = pytest.mark.redis
INSTANTS = 8
EVERY_S = 600.0


def replica_config(directory: Path, fake: FakeLLM, url: str, replica: str) -> Path:
    return write_config(
        directory,
        f"""
  store: {{backend: redis, url: '{url}', key_prefix: 'sr:'}}
  turn_lock: {{backend: redis}}
  redis: {{replica_id: {replica}}}
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {fake.base_url}
    api_key: sk-test
    timeout_s: 5
channels:
  memory: {{dm_policy: open}}
schedules:
  every:
    every_s: {EVERY_S}
    prompt: "tick"
    deliver: {{to: "memory:ops"}}
    misfire: run_all
  cron:
    cron: "*/10 * * * *"
    prompt: "cron"
    session: none
    deliver: {{to: ["memory:ops", "memory:audit"]}}
""",
    )


async def test_three_replicas_run_each_instant_exactly_once(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    fake_llm.default_reply = lambda r: f"re: {r.last_user_text}"
    clock = ManualClock(wall_start=1_780_000_000.0)  # on a 10-minute boundary
    async with contextlib.AsyncExitStack() as stack:
        replicas: list[Gateway] = [
            await stack.enter_async_context(
                running(replica_config(tmp_path / name, fake_llm, redis_db, name), clock=clock)
            )
            for name in ("r1", "r2", "r3")
        ]
        for step in range(INSTANTS):
            clock.advance(EVERY_S)
            live = replicas if step != INSTANTS // 2 else replicas[:1]  # two miss a tick
            await asyncio.gather(*(gw.feature(Schedules).scheduler.tick() for gw in live))
            await asyncio.gather(*(gw.pipeline.scheduler.wait_idle(10) for gw in replicas))
        sent = [s for gw in replicas for s in memory(gw).sent]
        histories = [
            await replicas[0].feature(Schedules).scheduler.store.runs(job, 100)
            for job in ("every", "cron")
        ]
    # each instant: "tick" once, "cron" once per target; at the model and on the wire
    asked = Counter(r.last_user_text for r in fake_llm.requests)
    assert asked == {"tick": INSTANTS, "cron": 2 * INSTANTS}
    on_wire = Counter((s.target.chat_id, s.text) for s in sent)
    assert on_wire == {
        ("ops", "re: tick"): INSTANTS,
        ("ops", "re: cron"): INSTANTS,
        ("audit", "re: cron"): INSTANTS,
    }
    for history in histories:
        instants = [r.instant for r in history]
        assert len(instants) == len(set(instants)) == INSTANTS  # one history line per instant


async def test_replicas_adding_a_chats_jobs_at_once_keep_its_cap(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    clock = ManualClock(wall_start=1_780_000_000.0)
    ctx = ToolContext(agent="default", channel="memory", sender_id="u1", chat="memory:c1")
    request = JobRequest("say hi", "memory:c1", "UTC", cron="0 8 * * *")
    async with contextlib.AsyncExitStack() as stack:
        replicas = [
            await stack.enter_async_context(
                running(replica_config(tmp_path / name, fake_llm, redis_db, name), clock=clock)
            )
            for name in ("r1", "r2")
        ]
        desks = [AgentJobs(gw.feature(Schedules).scheduler, str) for gw in replicas]
        results = await asyncio.gather(
            *(desk.add(ctx, request, 2) for desk in desks for _ in range(3)),
            return_exceptions=True,
        )
        stored = await replicas[0].feature(Schedules).scheduler.store.jobs()
    added = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, JobRefused)]
    assert len(added) == 2 and len(refused) == 4, results
    assert "2 jobs already" in str(refused[0])
    assert sorted(j.id for j in stored if j.source == "chat") == sorted(j.id for j in added)
