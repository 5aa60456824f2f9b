"""Scenario turns_rss: RSS after 10,000 turns over 1,000 sessions, against the daemon's idle RSS.

The daemon runs as in the memory scenario (telegram + webhook, litellm default agent against
FakeLLM). Idle is sampled after one Telegram turn through litellm (so litellm and its first-call
modules are loaded); then 10,000 signed webhook requests go to the sessions route (echo agent,
``payload.s`` keyed, 32 at a time) over 1,000 sessions, ten turns each, and RSS is sampled again
once the daemon settled. Every session stays warm (``warm_max`` above 1,000), so the growth is
what the turns leave behind: transcripts, journal rows in memory, caches, fragmentation.
Goal: growth ≤ 60 MiB. No floor: a bare bot keeps no sessions to compare with.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from bench.configs import SESSION_HOOK_PATH, WEBHOOK_SECRET, DaemonConfig, telegram_api_base
from bench.procs import BenchError, FakeLLMProc, daemon, free_port, rss, started, wait_ready
from bench.runner import Context, Outcome
from bench.scenarios.memory import MB, SETTLE_S, telegram_turn
from bench.scenarios.webhook import hammer
from bench.stats import Spec, Table
from chatgate.channels.signatures import sign
from tests.fakes.telegram import FakeTelegram

IDLE = Spec("idle_vmrss_mb", "idle VmRSS (after one litellm turn)", "MB", "lower")
AFTER = Spec("after_vmrss_mb", "VmRSS after the turns", "MB", "lower")
GROWTH = Spec("growth_mb", "VmRSS growth over 10,000 turns / 1,000 sessions", "MB", "lower", 60.0)
GROWTH_ANON = Spec("growth_anon_mb", "RssAnon growth over the turns", "MB", "lower")
RATE = Spec("turns_per_s", "webhook turns/s while growing", "1/s", "higher")
CONCURRENCY = 32


def requests(turns: int, sessions: int) -> list[tuple[bytes, dict[str, str]]]:
    batch = []
    for i in range(turns):
        body = f'{{"s": "s{i % sessions}", "text": "turn {i}"}}'.encode()
        headers = sign("generic", WEBHOOK_SECRET, body, time.time())
        headers.update({"Content-Type": "application/json", "X-Request-Id": f"turn-{i}"})
        batch.append((body, headers))
    return batch


async def scenario(ctx: Context) -> Outcome:
    turns, sessions = ctx.pick(10_000, 1_000), ctx.pick(1_000, 100)
    table = Table()
    async with started(FakeLLMProc(ctx.scratch("turns_rss") / "fake-llm.log")) as llm:
        for rep in range(ctx.reps):
            row = await _one(ctx, llm.base_url, turns, sessions, rep)
            table.add(IDLE, row["idle_vm"])
            table.add(AFTER, row["after_vm"])
            table.add(GROWTH, row["after_vm"] - row["idle_vm"])
            table.add(GROWTH_ANON, row["after_anon"] - row["idle_anon"])
            table.add(RATE, row["rate"])
    params: dict[str, Any] = {
        "turns": turns,
        "sessions": sessions,
        "route": "webhook sessions route, echo agent, signed, 32 concurrent keep-alive clients",
        "idle": "after one Telegram turn through litellm",
        "reps": ctx.reps,
    }
    return Outcome(table, params)


async def _one(
    ctx: Context, llm_base: str, turns: int, sessions: int, rep: int
) -> dict[str, float]:
    directory = ctx.scratch(f"turns_rss/rep{rep}")
    port = free_port()
    async with contextlib.AsyncExitStack() as stack:
        fake = await stack.enter_async_context(FakeTelegram())
        config = DaemonConfig(
            port,
            llm_base=llm_base,
            telegram_base=telegram_api_base(fake.base_url),
            webhook=True,
            warm_max=sessions + 1000,
        )
        proc = await stack.enter_async_context(started(daemon(config.write(directory))))
        await wait_ready(ctx.http, proc, port, within_s=180.0)
        await telegram_turn(fake, proc, 1)
        await asyncio.sleep(ctx.settle(SETTLE_S))
        idle = rss(proc.pid)
        url = f"http://127.0.0.1:{port}{SESSION_HOOK_PATH}"
        load = await hammer(url, requests(turns, sessions), CONCURRENCY)
        if load.errors:
            raise BenchError(f"{load.errors} of {turns} turns failed")
        await asyncio.sleep(ctx.settle(SETTLE_S))
        after = rss(proc.pid)
    return {
        "idle_vm": idle["VmRSS"] / MB,
        "idle_anon": idle["RssAnon"] / MB,
        "after_vm": after["VmRSS"] / MB,
        "after_anon": after["RssAnon"] / MB,
        "rate": load.req_per_s,
    }
