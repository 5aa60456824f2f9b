"""Hand-offs between two Telegram replicas, for the replicas scenario.

Two replicas poll one FakeTelegram through one Telegram lease on the scenario's private Redis.
Each round sends a DM from every user, waits until the holder's turns are at the fake model
(slow on purpose), then moves the lease to the other replica (``SET`` its key, as a standby that
took it over would): the old holder finishes its turns without the channel and hands each
answer to the new holder, which sends it. Hand-off latency is the ``handoff_ms`` the receiving
replica logs (Redis time of the hand-off to the answer sent). Every answer is checked: once,
and per user in the order of the DMs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from redis.asyncio import Redis

from bench.configs import DaemonConfig, telegram_api_base
from bench.procs import FakeLLMProc, Proc, daemon, free_port, started, wait_ready
from bench.procs import wait_until as wait_for
from bench.runner import Context
from bench.stats import Spec, Table, percentile
from tests.fakes.telegram import FakeTelegram

LEASE_TTL_S = 2.0
LOCK_TTL_S = 20.0
TURN_S = 1.5  # the fake model's latency here: longer than the old holder takes to see the move
ANSWERS_TIMEOUT_S = 120.0
REPLICAS = ("h0", "h1")
STALL_TTLS = 1.2  # a frozen holder loses the lease, and its liveness only just
Mode = Literal["move", "stall"]


@dataclass(frozen=True)
class HandOffs:
    handoff_ms: list[int]  # one per answer a replica sent for the other
    expected: int
    lost: int
    duplicated: int
    out_of_order: int


def handoff_ms(log_text: str) -> list[int]:
    """The ``handoff_ms`` of every answer a replica's JSON log says it sent for another."""
    out = []
    for line in log_text.splitlines():
        if line.startswith("{") and '"handoff_ms"' in line:
            out.append(int(json.loads(line)["handoff_ms"]))
    return out


def answers(fake: FakeTelegram) -> list[tuple[int, str]]:
    """(chat id, text) of every sendMessage, in the order the fake received them."""
    return [(int(c.params["chat_id"]), str(c.params["text"])) for c in fake.calls_of("sendMessage")]


def out_of_order(sent: list[tuple[int, str]]) -> int:
    """Answers sent after an answer to a later DM of the same user ("... r3" after "... r4")."""
    last: dict[int, int] = {}
    bad = 0
    for chat, text in sent:
        index = int(text.rsplit("r", 1)[-1])
        if index < last.get(chat, -1):
            bad += 1
        last[chat] = max(index, last.get(chat, -1))
    return bad


async def holder(client: Redis, prefix: str) -> tuple[str, str] | None:
    """(lease key, replica id) of the Telegram lease, if held."""
    keys = [str(k) async for k in client.scan_iter(match=f"{prefix}lease:telegram:*")]
    value = await client.get(keys[0]) if keys else None
    return None if value is None else (keys[0], str(value))


async def start(
    ctx: Context, stack: contextlib.AsyncExitStack, fake: FakeTelegram, redis_url: str,
    prefix: str, llm: FakeLLMProc, how: Mode,
) -> list[Proc]:  # fmt: skip
    procs = []
    for name in REPLICAS:
        port = free_port()
        extra = {
            "store": {"backend": "redis", "url": redis_url, "key_prefix": prefix},
            "turn_lock": {"backend": "redis", "ttl_s": LOCK_TTL_S},
            "redis": {"replica_id": name, "lease_ttl_s": LEASE_TTL_S},
        }
        config = DaemonConfig(
            port,
            llm_base=llm.base_url,
            telegram_base=telegram_api_base(fake.base_url),
            gateway_extra=extra,
        )
        proc = daemon(config.write(ctx.scratch(f"handoffs/{how}/{name}")))
        await stack.enter_async_context(started(proc))
        await wait_ready(ctx.http, proc, port)
        procs.append(proc)
    return procs


async def move(client: Redis, procs: list[Proc], key: str, name: str, how: Mode) -> None:
    """Take the lease from ``name``: set it to the other replica, or freeze ``name`` (SIGSTOP)
    a little longer than the lease TTL so the other replica takes it, then let it go on."""
    if how == "move":
        other = REPLICAS[1 - REPLICAS.index(name)] if name in REPLICAS else REPLICAS[0]
        await client.set(key, other, px=int(LEASE_TTL_S * 1000))
        return
    proc = procs[REPLICAS.index(name)]
    proc.send(signal.SIGSTOP)
    try:
        await asyncio.sleep(LEASE_TTL_S * STALL_TTLS)
    finally:
        proc.send(signal.SIGCONT)


async def run(
    ctx: Context,
    workdir: Path,
    client: Redis,
    redis_url: str,
    prefix: str,
    llm: FakeLLMProc,
    how: Mode = "move",
) -> HandOffs:
    """``ctx.pick(12, 3)`` rounds of one DM per user, the lease taken mid-turn each round."""
    users, rounds = ctx.pick(20, 5), ctx.pick(12, 3)
    await client.flushdb()
    await llm.configure(ctx.http, TURN_S)  # the scenario runs this last: no need to restore it
    try:
        async with contextlib.AsyncExitStack() as stack:
            fake = await stack.enter_async_context(FakeTelegram())
            procs = await start(ctx, stack, fake, redis_url, prefix, llm, how)

            async def held() -> bool:
                return await holder(client, prefix) is not None

            await wait_for(held, 60.0, "a Telegram lease holder", procs=procs)
            await llm.reset(ctx.http)
            for r in range(rounds):
                for user in range(1, users + 1):
                    fake.dm(user, f"u{user} r{r}")

                async def at_model(want: int = users * (r + 1)) -> bool:
                    return (await llm.stats(ctx.http))["requests"] >= want

                await wait_for(at_model, 60.0, "turns at the model", procs=procs)
                now = await holder(client, prefix)
                if now is not None and now[1] in REPLICAS:
                    await move(client, procs, now[0], now[1], how)
                await asyncio.sleep(TURN_S)
            expected = {(u, f"echo: u{u} r{r}") for u in range(1, users + 1) for r in range(rounds)}

            async def all_sent() -> bool:
                return expected <= set(answers(fake))

            with contextlib.suppress(Exception):
                await wait_for(all_sent, ANSWERS_TIMEOUT_S, "every answer", procs=procs)
            await asyncio.sleep(LEASE_TTL_S)  # a late duplicate shows here
            sent = answers(fake)
            counts = Counter(sent)
            ms = sorted(n for p in procs for n in handoff_ms(p.logs()))
    finally:
        await client.flushdb()
    return HandOffs(
        handoff_ms=ms,
        expected=len(expected),
        lost=len(expected - set(counts)),
        duplicated=sum(n - 1 for n in counts.values()),
        out_of_order=out_of_order(sent),
    )


WHAT = {"move": "lease moved", "stall": "holder frozen"}


def add_rows(table: Table, how: Mode, found: HandOffs) -> None:
    """Hand-off p50/p99 (target: p99 under 1 s) and what the run lost, repeated or reordered."""
    what = WHAT[how]
    p50, p99 = percentile(found.handoff_ms, 50), percentile(found.handoff_ms, 99)
    table.add(Spec(f"handoff_{how}_p50_ms", f"hand-off p50 ({what})", "ms", "lower"), p50)
    table.add(Spec(f"handoff_{how}_p99_ms", f"hand-off p99 ({what})", "ms", "lower", 1000.0), p99)
    table.add(Spec(f"handoff_{how}_count", f"answers handed off ({what})", "", "higher"),
              len(found.handoff_ms))  # fmt: skip
    for name, value in (
        ("lost", found.lost),
        ("duplicated", found.duplicated),
        ("out_of_order", found.out_of_order),
    ):
        spec = Spec(f"handoff_{how}_{name}", f"answers {name.replace('_', ' ')} ({what})", "",
                    "lower", 0.0)  # fmt: skip
        table.add(spec, value)
